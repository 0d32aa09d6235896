# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""serio.dcp: ``torch.distributed.checkpoint`` storage on sealed serio files.

::

    import serio.dcp

    # every rank, in SPMD style
    torch.distributed.checkpoint.save_state_dict(
        state_dict, storage_writer=serio.dcp.StorageWriter("ckpt"))
    torch.distributed.checkpoint.load_state_dict(
        state_dict, storage_reader=serio.dcp.StorageReader("ckpt"))

A checkpoint is a directory: one sealed serio file per rank that has data
(``rank-00000.serio``, …), each record a tensor or a chunk of a sharded
tensor in its own element type (``w@float32[8x4]``) or a plain value, and
``serio-dcp.json``, the checkpoint's metadata: a format name and version,
the tensors' sizes, properties and chunks, where each item is stored, and
the size and seal of every rank file. Nothing in a checkpoint is a pickle:
loading a downloaded one runs no code from it. Non-tensor values (an
``int`` step, a ``float``, a ``bool``, a ``str``, ``bytes``, ``None``) are
serio records too; any other object is refused, naming its key, and
nothing is written for that rank.

Loading checks, before it uses a file, that each rank file is the one the
metadata names (its size and the seal written into its last line), and
reads the whole file so that its seal is verified before any value is
handed to the planner: a rank file of another save, a half-written one or
one with a changed digit fails the load with an error naming the file.

Works with the API of torch ≥ 2.0 (``torch.distributed.checkpoint``,
``set_up_storage_writer``/``reset``/``validate_checkpoint_id``) and with
torch 1.13's ``torch.distributed._shard.checkpoint``. Under Python 3.11,
torch 1.13 cannot import ``torch.distributed._shard`` at all (a dataclass
default, fixed in torch 2.0 by pytorch PR #91795): upgrade torch, or apply
that one-line fix before importing this module — see
``docs/python-guide.md``.
"""

from __future__ import annotations

import dataclasses
import io
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import numpy
import torch

from . import _errors, _io, _tree
from ._files import seal_of as _seal_of, strict_json, write_json
from ._errors import UnstorableError
from gi.repository import Serio

try:
    import torch.distributed.checkpoint as _dcp  # torch >= 2.0
    from torch.distributed.checkpoint.metadata import (
        BytesStorageMetadata, ChunkStorageMetadata, Metadata, MetadataIndex,
        TensorStorageMetadata)
    from torch.distributed.checkpoint.planner import LoadItemType, WriteItemType
    from torch.distributed.checkpoint.storage import WriteResult
except ImportError:
    try:
        import torch.distributed._shard.checkpoint as _dcp
    except ValueError as error:
        raise ImportError(
            'serio.dcp needs torch.distributed._shard.checkpoint, which torch %s '
            'cannot import under this Python (%s); torch 2.0 fixed it (pytorch PR '
            '#91795): see the Python guide' % (torch.__version__, error)) from error
    from torch.distributed._shard.checkpoint.metadata import (
        BytesStorageMetadata, ChunkStorageMetadata, Metadata, MetadataIndex,
        TensorStorageMetadata)
    from torch.distributed._shard.checkpoint.planner import LoadItemType, WriteItemType
    from torch.distributed._shard.checkpoint.storage import WriteResult
try:
    from torch.distributed.checkpoint.metadata import TensorProperties
except ImportError:
    from torch.distributed._shard.sharded_tensor.metadata import TensorProperties

from torch.futures import Future

__all__ = ['StorageWriter', 'StorageReader', 'METADATA_NAME', 'FORMAT', 'FORMAT_VERSION']

# The metadata file of a checkpoint directory, and what it says it is.
METADATA_NAME = 'serio-dcp.json'
FORMAT = 'serio-dcp'
FORMAT_VERSION = 1

_PathLike = Union[str, 'os.PathLike[str]']

_DTYPE_OF_TORCH = {
    torch.float64: 'float64', torch.float32: 'float32', torch.float16: 'float16',
    torch.bfloat16: 'bfloat16', torch.int8: 'int8', torch.int16: 'int16',
    torch.int32: 'int32', torch.int64: 'int64', torch.uint8: 'uint8',
    torch.bool: 'bool',
}
_TORCH_OF_DTYPE = {name: dtype for dtype, name in _DTYPE_OF_TORCH.items()}

_MEMORY_FORMATS = {
    'contiguous_format': torch.contiguous_format,
    'channels_last': torch.channels_last,
    'preserve_format': torch.preserve_format,
}

# Python ints beyond this are not exactly float64, which int64 records hold.
_MAX_EXACT_INT = 2 ** 53


@dataclasses.dataclass(frozen=True)
class _Stored:
    """Where one item is: its rank file, its position among the file's
    records, the record's base name and what kind of value it holds."""
    file: str
    position: int
    name: str
    kind: str
    seal: str = ''
    size: int = 0


@dataclasses.dataclass(frozen=True)
class _RankFile:
    name: str


def _record_name(item) -> str:
    """A readable base name for a write item: its key, with the chunk's
    offsets for a shard of a larger tensor (``w/chunk-4-0``). Loading
    finds records by position, so the name is only for people and other
    readers."""
    index = item.index
    name = index.fqn.replace('|', '_').replace('\r', '_').replace('\n', '_')
    if _tree.is_metadata(name):
        name = '_' + name
    data = item.tensor_data
    if data is not None and index.offset is not None and (
            any(int(o) for o in data.chunk.offsets) or
            list(data.chunk.sizes) != list(data.size)):
        name += '/chunk-' + '-'.join(str(int(o)) for o in index.offset)
    return name


def _value_record(fqn: str, value: Any):
    """(kind, dtype, shape, array) of a non-tensor value, or
    UnstorableError naming its key."""
    if value is None:
        return 'none', 'uint8', (0,), numpy.zeros(0, numpy.uint8)
    if isinstance(value, bool):
        return 'bool', 'bool', (), numpy.array(value, numpy.bool_)
    if isinstance(value, int):
        if not -_MAX_EXACT_INT <= value <= _MAX_EXACT_INT:
            raise UnstorableError(
                '%s: the int %d is beyond ±2**53, which a serio int64 record cannot '
                'hold exactly' % (fqn, value), key=fqn)
        return 'int', 'int64', (), numpy.array(value, numpy.int64)
    if isinstance(value, float):
        return 'float', 'float64', (), numpy.array(value, numpy.float64)
    if isinstance(value, str):
        data = value.encode('utf-8', errors='strict')
        return 'str', 'uint8', (len(data),), numpy.frombuffer(data, numpy.uint8)
    if isinstance(value, (bytes, bytearray)):
        data = bytes(value)
        return 'bytes', 'uint8', (len(data),), numpy.frombuffer(data, numpy.uint8)
    raise UnstorableError(
        '%s: serio.dcp stores tensors, int, float, bool, str, bytes and None, not %s '
        '(a value that would have to be pickled)' % (fqn, type(value).__name__), key=fqn)


def _value_of(kind: str, array, fqn: str, path: str):
    if kind == 'none':
        return None
    if kind in ('bool', 'int', 'float'):
        return {'bool': bool, 'int': int, 'float': float}[kind](array[()])
    if kind == 'str':
        try:
            return array.tobytes().decode('utf-8', errors='strict')
        except UnicodeDecodeError as error:
            raise _errors.data_error(path, fqn, 'the string is not valid UTF-8: %s' % error,
                                     int(Serio.Error.DOMAIN)) from None
    if kind == 'bytes':
        return array.tobytes()
    raise _errors.data_error(path, fqn, 'unknown kind of value %r' % kind,
                             int(Serio.Error.SYNTAX))


# ------------------------------------------------------------ metadata JSON

def _encode_properties(fqn: str, properties) -> Dict[str, Any]:
    dtype = _DTYPE_OF_TORCH.get(properties.dtype)
    if dtype is None:
        raise UnstorableError('%s: serio has no element type for %s' % (fqn, properties.dtype),
                              key=fqn)
    if properties.layout != torch.strided:
        raise UnstorableError('%s: only strided tensors can be stored, not %s'
                              % (fqn, properties.layout), key=fqn)
    formats = [name for name, value in _MEMORY_FORMATS.items()
               if value == properties.memory_format]
    return {'dtype': dtype, 'requires_grad': bool(properties.requires_grad),
            'memory_format': formats[0] if formats else 'contiguous_format',
            'pin_memory': bool(properties.pin_memory)}


def _encode_item(fqn: str, item) -> Dict[str, Any]:
    if isinstance(item, BytesStorageMetadata):
        return {'kind': 'value'}
    return {'kind': 'tensor',
            'properties': _encode_properties(fqn, item.properties),
            'size': [int(d) for d in item.size],
            'chunks': [{'offsets': [int(o) for o in chunk.offsets],
                        'sizes': [int(s) for s in chunk.sizes]} for chunk in item.chunks]}


def _encode_planner_data(planner_data):
    """torch >= 2.0's flattening map (key → path of str and int keys), or
    None."""
    if planner_data is None:
        return None
    if not isinstance(planner_data, dict):
        raise UnstorableError('the planner data is a %s, which serio.dcp cannot store '
                              'without a pickle' % type(planner_data).__name__)
    encoded = {}
    for fqn, path in planner_data.items():
        parts = []
        for part in path:
            if isinstance(part, bool) or not isinstance(part, (str, int)):
                raise UnstorableError('%s: the planner data holds a %s key'
                                      % (fqn, type(part).__name__), key=fqn)
            parts.append(['s' if isinstance(part, str) else 'i', part])
        encoded[fqn] = parts
    return encoded


class _Malformed(Exception):
    pass


def _need(condition: bool, what: str) -> None:
    if not condition:
        raise _Malformed(what)


def _ints(value, what: str) -> List[int]:
    _need(isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value),
        '%s must be a list of non-negative integers' % what)
    return value


def _decode_item(fqn: str, item):
    _need(isinstance(item, dict), '%s: an entry must be an object' % fqn)
    if item.get('kind') == 'value':
        _need(set(item) == {'kind'}, '%s: unknown fields' % fqn)
        return BytesStorageMetadata()
    _need(item.get('kind') == 'tensor' and set(item) == {'kind', 'properties', 'size', 'chunks'},
          '%s: not a tensor or value entry' % fqn)
    properties = item['properties']
    _need(isinstance(properties, dict) and set(properties) ==
          {'dtype', 'requires_grad', 'memory_format', 'pin_memory'}
          and properties['dtype'] in _TORCH_OF_DTYPE
          and properties['memory_format'] in _MEMORY_FORMATS
          and isinstance(properties['requires_grad'], bool)
          and isinstance(properties['pin_memory'], bool), '%s: bad properties' % fqn)
    size = _ints(item['size'], '%s: size' % fqn)
    chunks = []
    _need(isinstance(item['chunks'], list), '%s: chunks must be a list' % fqn)
    for chunk in item['chunks']:
        _need(isinstance(chunk, dict) and set(chunk) == {'offsets', 'sizes'},
              '%s: a chunk must have offsets and sizes' % fqn)
        offsets = _ints(chunk['offsets'], '%s: offsets' % fqn)
        sizes = _ints(chunk['sizes'], '%s: sizes' % fqn)
        _need(len(offsets) == len(size) == len(sizes)
              and all(o + s <= d for o, s, d in zip(offsets, sizes, size)),
              '%s: a chunk lies outside the tensor' % fqn)
        chunks.append(ChunkStorageMetadata(offsets=torch.Size(offsets), sizes=torch.Size(sizes)))
    return TensorStorageMetadata(
        properties=TensorProperties(
            dtype=_TORCH_OF_DTYPE[properties['dtype']], layout=torch.strided,
            requires_grad=properties['requires_grad'],
            memory_format=_MEMORY_FORMATS[properties['memory_format']],
            pin_memory=properties['pin_memory']),
        size=torch.Size(size), chunks=chunks)


def _decode_planner_data(data):
    if data is None:
        return None
    _need(isinstance(data, dict), 'planner_data must be an object or null')
    decoded = {}
    for fqn, parts in data.items():
        _need(isinstance(parts, list) and all(
            isinstance(p, list) and len(p) == 2 and (
                (p[0] == 's' and isinstance(p[1], str)) or
                (p[0] == 'i' and isinstance(p[1], int) and not isinstance(p[1], bool)))
            for p in parts), '%s: bad planner data' % fqn)
        decoded[fqn] = tuple(p[1] for p in parts)
    return decoded


# ------------------------------------------------------------ the writer

class StorageWriter(_dcp.StorageWriter):
    """Writes a distributed checkpoint into the directory path: one sealed
    serio file per rank with data, and ``serio-dcp.json`` (written last,
    atomically, by the coordinator). Each file is saved the way every
    serio file is: in a temporary file put in place once complete."""

    def __init__(self, path: _PathLike) -> None:
        super().__init__()
        self.path = Path(path)
        self.is_coordinator = False

    # torch >= 2.0 hooks
    def reset(self, checkpoint_id: Optional[_PathLike] = None) -> None:
        if checkpoint_id is not None:
            self.path = Path(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id) -> bool:
        return isinstance(checkpoint_id, (str, os.PathLike))

    def storage_meta(self):
        return None

    def set_up_storage_writer(self, is_coordinator: bool) -> None:
        self.is_coordinator = is_coordinator

    def init(self, is_coordinator: bool) -> None:
        self.set_up_storage_writer(is_coordinator)

    def prepare_local_plan(self, plan):
        return plan

    def prepare_global_plan(self, plans):
        self.path.mkdir(parents=True, exist_ok=True)
        return [dataclasses.replace(plan, storage_data=_RankFile('rank-%05d.serio' % rank))
                for rank, plan in enumerate(plans)]

    def write_data(self, plan, planner) -> Future:
        results = []
        if plan.items:
            file_name = plan.storage_data.name
            path = self.path / file_name
            writer = _io.open_writer(path, sealed=True)
            stored = []
            try:
                for position, item in enumerate(plan.items):
                    fqn = item.index.fqn
                    name = _record_name(item)
                    if item.type == WriteItemType.BYTE_IO:
                        value = planner.lookup_object(item.index)
                        kind, dtype, shape, array = _value_record(fqn, value)
                        nbytes = array.nbytes
                    else:
                        tensor = planner.resolve_data(item).detach().cpu()
                        dtype = _DTYPE_OF_TORCH.get(tensor.dtype)
                        if dtype is None:
                            raise UnstorableError('%s: serio has no element type for %s'
                                                  % (fqn, tensor.dtype), key=fqn)
                        kind, shape, array = 'tensor', tuple(tensor.shape), tensor
                        nbytes = tensor.numel() * tensor.element_size()
                    writer.write(name, dtype, shape, array, key=fqn)
                    stored.append((item, position, name, kind, nbytes))
            except BaseException:
                writer.abandon()
                raise
            writer.close()
            seal, size = _seal_of(path)
            for item, position, name, kind, nbytes in stored:
                results.append(WriteResult(
                    index=item.index, size_in_bytes=nbytes,
                    storage_data=_Stored(file_name, position, name, kind, seal, size)))
        future: Future = Future()
        future.set_result(results)
        return future

    def finish(self, metadata, results) -> None:
        files: Dict[str, Dict[str, Any]] = {}
        storage = []
        for rank_results in results:
            for result in rank_results:
                where = result.storage_data
                files[where.file] = {'size': where.size, 'seal': where.seal}
                index = result.index
                storage.append({
                    'fqn': index.fqn,
                    'offset': None if index.offset is None else [int(o) for o in index.offset],
                    'file': where.file, 'position': where.position,
                    'name': where.name, 'kind': where.kind})
        document = {
            'format': FORMAT,
            'version': FORMAT_VERSION,
            'torch': torch.__version__,
            'files': files,
            'state_dict_metadata': {fqn: _encode_item(fqn, item)
                                    for fqn, item in metadata.state_dict_metadata.items()},
            'planner_data': _encode_planner_data(metadata.planner_data),
            'storage': storage,
        }
        write_json(self.path / METADATA_NAME, document, sort_keys=True)


# ------------------------------------------------------------ the reader

def _narrow(tensor, offsets, lengths):
    for dim, (offset, length) in enumerate(zip(offsets, lengths)):
        if offset != 0 or length != tensor.size(dim):
            tensor = tensor.narrow(dim, offset, length)
    return tensor


class StorageReader(_dcp.StorageReader):
    """Reads a checkpoint that :class:`StorageWriter` wrote into the
    directory path, on any number of ranks (or with ``no_dist=True``)."""

    def __init__(self, path: _PathLike) -> None:
        super().__init__()
        self.path = Path(path)
        self.storage: Dict[Any, _Stored] = {}

    def reset(self, checkpoint_id: Optional[_PathLike] = None) -> None:
        if checkpoint_id is not None:
            self.path = Path(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id) -> bool:
        return isinstance(checkpoint_id, (str, os.PathLike))

    def read_metadata(self):
        path = self.path / METADATA_NAME
        name = str(path)
        with open(path, 'rb') as stream:
            raw = stream.read()
        try:
            document = strict_json(raw)
            _need(isinstance(document, dict), 'not a JSON object')
            _need(document.get('format') == FORMAT,
                  'not a serio.dcp checkpoint (format %r)' % (document.get('format'),))
            _need(document.get('version') == FORMAT_VERSION,
                  'format version %r, this serio reads version %d'
                  % (document.get('version'), FORMAT_VERSION))
            _need(set(document) == {'format', 'version', 'torch', 'files', 'state_dict_metadata',
                                    'planner_data', 'storage'}, 'unknown or missing fields')
            files = document['files']
            _need(isinstance(files, dict) and all(
                isinstance(f, str) and '/' not in f and f not in ('', '.', '..')
                and isinstance(v, dict) and set(v) == {'size', 'seal'}
                and isinstance(v['size'], int) and isinstance(v['seal'], str)
                for f, v in files.items()), 'bad files table')
            items = document['state_dict_metadata']
            _need(isinstance(items, dict), 'state_dict_metadata must be an object')
            state_dict_metadata = {fqn: _decode_item(fqn, item) for fqn, item in items.items()}
            planner_data = _decode_planner_data(document['planner_data'])
            storage = {}
            _need(isinstance(document['storage'], list), 'storage must be a list')
            for entry in document['storage']:
                _need(isinstance(entry, dict) and set(entry) ==
                      {'fqn', 'offset', 'file', 'position', 'name', 'kind'},
                      'a storage entry has unknown or missing fields')
                _need(entry['fqn'] in state_dict_metadata,
                      'the stored item %r is not in state_dict_metadata' % (entry['fqn'],))
                _need(entry['file'] in files, 'the stored item %r is in %r, which the files '
                      'table does not list' % (entry['fqn'], entry['file']))
                _need(isinstance(entry['position'], int) and entry['position'] >= 0,
                      'bad position')
                offset = entry['offset']
                index = MetadataIndex(entry['fqn'], None if offset is None else
                                      _ints(offset, 'offset'))
                _need(index not in storage, 'the item %r is stored twice' % (entry['fqn'],))
                where = files[entry['file']]
                storage[index] = _Stored(entry['file'], entry['position'], entry['name'],
                                         entry['kind'], where['seal'], where['size'])
        except (_Malformed, ValueError, TypeError, KeyError) as error:
            raise _errors.data_error(name, None, 'the checkpoint metadata is malformed: %s'
                                     % error, int(Serio.Error.SYNTAX)) from None
        return Metadata(state_dict_metadata=state_dict_metadata, planner_data=planner_data,
                        storage_data=storage)

    def set_up_storage_reader(self, metadata, is_coordinator: bool) -> None:
        self.storage = metadata.storage_data

    def init(self, metadata, is_coordinator: bool) -> None:
        self.set_up_storage_reader(metadata, is_coordinator)

    def prepare_local_plan(self, plan):
        return plan

    def prepare_global_plan(self, plans):
        return plans

    def _read_file(self, file_name: str, wanted: Dict[int, _Stored]):
        """The arrays at the positions wanted of one rank file, after the
        whole file was read and its seal verified."""
        path = self.path / file_name
        name = str(path)
        any_item = next(iter(wanted.values()))
        seal, size = _seal_of(path)
        if (seal, size) != (any_item.seal, any_item.size):
            raise _errors.data_error(
                name, None, 'this is not the file the checkpoint saved: its size or seal '
                'differs from the metadata (a rank file of another save, or a damaged one)',
                int(Serio.Error.INTEGRITY))
        records = _io.open_reader(path)
        arrays = {}
        position = 0
        try:
            while records.next():
                base, dtype, shape = records.header()
                stored = wanted.get(position)
                if stored is None:
                    records.skip(base)
                else:
                    arrays[position] = (dtype, records.read(stored.name, dtype, shape))
                position += 1
        finally:
            records.close()
        missing = sorted(set(wanted) - set(arrays))
        if missing:
            raise _errors.data_error(name, wanted[missing[0]].name,
                                     'the file has no record at position %d' % missing[0],
                                     int(Serio.Error.TRUNCATED))
        return arrays

    def read_data(self, plan, planner) -> Future:
        per_file: Dict[str, List[Any]] = {}
        for request in plan.items:
            per_file.setdefault(self.storage[request.storage_index].file, []).append(request)
        for file_name, requests in per_file.items():
            wanted = {}
            for request in requests:
                stored = self.storage[request.storage_index]
                wanted[stored.position] = stored
            arrays = self._read_file(file_name, wanted)
            for request in requests:
                stored = self.storage[request.storage_index]
                dtype, array = arrays[stored.position]
                fqn = request.dest_index.fqn
                if request.type == LoadItemType.BYTE_IO:
                    if stored.kind == 'tensor':
                        raise _errors.data_error(str(self.path / file_name), fqn,
                                                 'a value was expected, the file holds a '
                                                 'tensor', int(Serio.Error.SYNTAX))
                    value = _value_of(stored.kind, array, fqn, str(self.path / file_name))
                    # The planner takes values as torch.save() bytes; these are
                    # made here from the record, never read from the file.
                    buffer = io.BytesIO()
                    torch.save(value, buffer)
                    buffer.seek(0)
                    planner.load_bytes(request, buffer)
                    continue
                if stored.kind != 'tensor':
                    raise _errors.data_error(str(self.path / file_name), fqn,
                                             'a tensor was expected, the file holds a %s'
                                             % stored.kind, int(Serio.Error.SYNTAX))
                tensor = _io.to_tensor(numpy, array, fqn, str(self.path / file_name), dtype)
                tensor = _narrow(tensor, request.storage_offsets, request.lengths)
                target = planner.resolve_tensor(request).detach()
                if target.size() != tensor.size():
                    raise _errors.data_error(
                        str(self.path / file_name), fqn, 'the stored chunk has size %s, the '
                        'destination %s' % (list(tensor.size()), list(target.size())),
                        int(Serio.Error.LENGTH))
                target.copy_(tensor)
                planner.commit_tensor(request, target)
        future: Future = Future()
        future.set_result(None)
        return future
