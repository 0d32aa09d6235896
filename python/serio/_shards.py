# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""Sharded checkpoints: a state saved as several sealed serio files and
an index that names them, as Hugging Face shards its models.

``serio.save("model.serio", state, max_shard_size="2GB")`` writes
``model.serio`` as always when the state's arrays hold at most 2 GB, and
otherwise the shards ``model-00001-of-00003.serio``, … beside the index
``model.serio.index.json``. A path that ends with ``.index.json`` always
gives an index (one shard or more). The index is JSON::

    {"metadata": {"format": "serio-shards", "version": 1,
                  "total_size": 123456},
     "weight_map": {"model.fc.weight": "model-00001-of-00003.serio", …},
     "shards": {"model-00001-of-00003.serio": {"size": 4096,
                                               "seal": "3,123,456"}, …},
     "tree": {"format": "serio.tree", "version": 1, "root": …}}

``weight_map`` maps every record's base name (a key path) to the shard
holding it, as in Hugging Face's ``model.safetensors.index.json``;
``total_size`` is the bytes of the arrays in their element types (the
sizes ``max_shard_size`` counts, not those of the text); ``shards`` gives,
in the order the shards are read, each one's size in bytes and the tokens
of its seal record (its last line), which tell it from any other file;
``tree`` is the state's ``serio.tree`` document (absent for a checkpoint
converted from another format: it loads as a flat dict). The shards are
plain sealed serio files of records only (no ``serio.tree``), each
readable alone.

A save writes every shard under a temporary name first, puts them in
place, then writes the index last, atomically: a save that fails midway
leaves the previous checkpoint as it was and no index naming a shard that
is not there.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any, Dict, List, Optional, Tuple

from gi.repository import Gio, Serio

from . import _errors, _files, _io, _tree
from ._errors import DataError, NotFoundError

__all__ = ['FORMAT', 'FORMAT_VERSION', 'INDEX_SUFFIX', 'parse_size', 'index_of', 'save',
           'load']

FORMAT = 'serio-shards'
FORMAT_VERSION = 1
INDEX_SUFFIX = '.index.json'
SHARD_SUFFIX = '.serio'

# An index larger than this is refused before it is read.
MAX_INDEX_BYTES = 256 << 20

_UNITS = {'': 1, 'B': 1, 'KB': 10 ** 3, 'MB': 10 ** 6, 'GB': 10 ** 9, 'TB': 10 ** 12,
          'KIB': 1 << 10, 'MIB': 1 << 20, 'GIB': 1 << 30, 'TIB': 1 << 40}
_SIZE = re.compile(r'([0-9]+)\s*([A-Za-z]*)')


def parse_size(value) -> int:
    """max_shard_size in bytes: a positive int, or a str such as ``"2GB"``,
    ``"500MB"`` or ``"1GiB"`` (KB, MB, GB, TB are powers of 1000, KiB, MiB,
    GiB, TiB of 1024; as in Hugging Face's save_pretrained, a unit ending
    in a lower-case ``b``, such as ``"8Gb"``, counts bits)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError('max_shard_size is an int or a str such as "2GB", not %s'
                        % type(value).__name__)
    if isinstance(value, int):
        size = value
    else:
        match = _SIZE.fullmatch(value.strip())
        unit = match.group(2).upper() if match else None
        if unit not in _UNITS:
            raise ValueError('max_shard_size %r is not a size such as "2GB", "500MB" or '
                             '"1GiB"' % (value,))
        size = int(match.group(1)) * _UNITS[unit]
        if match.group(2)[-1:] == 'b' and len(match.group(2)) > 1:
            size //= 8
    if size <= 0:
        raise ValueError('max_shard_size must be positive, not %r' % (value,))
    return size


def _local(path) -> str:
    """The local file name of a path argument (sharded checkpoints are
    local files)."""
    if isinstance(path, Gio.File):
        name = path.get_path()
        if name is None:
            raise ValueError('a sharded checkpoint is a set of local files; %s is not one'
                             % path.get_uri())
        return name
    return _io.as_file(path)[1]


def index_of(path) -> Optional[str]:
    """The index that load(path) reads, or None for a single file: path
    itself when it ends with ``.index.json``, ``path + ".index.json"``
    when path does not exist and that does."""
    if isinstance(path, Gio.File):
        name = path.get_path()
        if name is None:
            return None
    elif isinstance(path, (str, os.PathLike)) and isinstance(os.fspath(path), str):
        name = os.fspath(path)
    else:
        return None
    if name.endswith(INDEX_SUFFIX):
        return name
    if not os.path.lexists(name) and os.path.isfile(name + INDEX_SUFFIX):
        return name + INDEX_SUFFIX
    return None


def _names(path: str) -> Tuple[str, str, str]:
    """(directory, single file, index) of a save to path."""
    if path.endswith(INDEX_SUFFIX):
        index = path
        single = path[:-len(INDEX_SUFFIX)]
    else:
        single = path
        index = path + INDEX_SUFFIX
    return os.path.dirname(single) or '.', single, index


def _stem(single: str) -> str:
    base = os.path.basename(single)
    stem, _ = os.path.splitext(base)
    return stem or base


def _shard_name(stem: str, number: int, count: int) -> str:
    return '%s-%05d-of-%05d%s' % (stem, number, count, SHARD_SUFFIX)


def _nbytes(numpy, leaf) -> int:
    return math.prod(leaf.shape) * _io.storage_dtype(numpy, leaf.dtype).itemsize


def _old_shards(index: str, stem: str) -> List[str]:
    """The shards an earlier index at that path names (only names of this
    stem's pattern), to remove once the new checkpoint is in place."""
    pattern = re.compile(re.escape(stem) + r'-[0-9]{5}-of-[0-9]{5}' + re.escape(SHARD_SUFFIX))
    try:
        with open(index, 'rb') as stream:
            document = _files.strict_json(stream.read(MAX_INDEX_BYTES))
        shards = document['shards']
        return [name for name in shards if isinstance(name, str) and pattern.fullmatch(name)]
    except (OSError, ValueError, RecursionError, KeyError, TypeError):
        return []


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def check_arguments(path, max_shard_size, sealed: bool) -> int:
    """The limit in bytes, once path and the options are known to suit a
    sharded save."""
    limit = parse_size(max_shard_size)
    if not sealed:
        raise ValueError('the shards of a checkpoint are sealed: sealed=False and '
                         'max_shard_size cannot go together')
    _local(path)
    return limit


def save(path, tree: bytes, leaves, limit: int, save_one) -> None:
    """serio.save() with max_shard_size (limit, in bytes) of the flattened
    state; save_one(path) saves it as one file."""
    name = _local(path)
    directory, single, index = _names(name)
    numpy = _io.numpy_module()
    sizes = [_nbytes(numpy, leaf) for leaf in leaves]
    total = sum(sizes)
    stem = _stem(single)
    if not name.endswith(INDEX_SUFFIX) and total <= limit:
        save_one(name)
        stale = _old_shards(index, stem)
        _remove(index)
        for shard in stale:
            _remove(os.path.join(directory, shard))
        return
    groups: List[List[int]] = []
    used = 0
    for position, size in enumerate(sizes):
        if not groups or (used + size > limit and groups[-1]):
            groups.append([])
            used = 0
        groups[-1].append(position)
        used += size
    if len(groups) > 99999:
        raise ValueError('%d shards: max_shard_size %d is too small (at most 99999 shards)'
                         % (len(groups), limit))
    shard_names = [_shard_name(stem, number + 1, len(groups)) for number in range(len(groups))]
    temporaries: List[str] = []
    shards: Dict[str, Dict[str, Any]] = {}
    weight_map: Dict[str, str] = {}
    try:
        for shard, group in zip(shard_names, groups):
            temporary = os.path.join(directory, '.%s.%d.tmp' % (shard, os.getpid()))
            writer = _io.open_writer(temporary, sealed=True)
            temporaries.append(temporary)
            try:
                for position in group:
                    leaf = leaves[position]
                    writer.write(leaf.name, leaf.dtype, leaf.shape, leaf.value, key=leaf.name)
                    weight_map[leaf.name] = shard
            except BaseException:
                writer.abandon()
                raise
            writer.close()
            seal, size = _files.seal_of(temporary)
            shards[shard] = {'size': size, 'seal': seal}
        stale = [shard for shard in _old_shards(index, stem) if shard not in shards]
        for temporary, shard in zip(temporaries, shard_names):
            os.replace(temporary, os.path.join(directory, shard))
    except BaseException:
        for temporary in temporaries:
            _remove(temporary)
        raise
    document = {
        'metadata': {'format': FORMAT, 'version': FORMAT_VERSION, 'total_size': total},
        'weight_map': weight_map,
        'shards': shards,
        'tree': _files.strict_json(tree),
    }
    try:
        _files.write_json(index, document)
    except OSError as error:
        raise _file_error(error, index) from None
    if single != index and os.path.isfile(single):
        _remove(single)
    for shard in stale:
        _remove(os.path.join(directory, shard))


# ------------------------------------------------------------ loading

class _Index:
    """A validated index: its shards in order, the weight map and the
    tree's template (or None)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.directory = os.path.dirname(path) or '.'
        self.shards: Dict[str, Dict[str, Any]] = {}
        self.weight_map: Dict[str, str] = {}
        self.template: Optional[_tree.Template] = None

    def fail(self, what: str, key: Optional[str] = None, code=Serio.Error.SYNTAX) -> DataError:
        return _errors.data_error(self.path, key, what, int(code))


def _read_index(path: str) -> _Index:
    index = _Index(path)
    try:
        with open(path, 'rb') as stream:
            raw = stream.read(MAX_INDEX_BYTES + 1)
    except OSError as error:
        raise _file_error(error, path) from None
    if len(raw) > MAX_INDEX_BYTES:
        raise index.fail('the index is larger than %d bytes' % MAX_INDEX_BYTES)
    try:
        document = _files.strict_json(raw, floats=False)
    except RecursionError:
        raise index.fail('the index is not valid JSON: nested too deeply') from None
    except ValueError as error:
        raise index.fail('the index is not valid JSON: %s' % error) from None
    if not isinstance(document, dict):
        raise index.fail('the index is not a JSON object')
    metadata = document.get('metadata')
    if not isinstance(metadata, dict) or metadata.get('format') != FORMAT:
        raise index.fail('not the index of a sharded serio checkpoint (its metadata has '
                         'no "format": "%s")' % FORMAT)
    if metadata.get('version') != FORMAT_VERSION or type(metadata.get('version')) is not int:
        raise index.fail('format version %r, where this serio reads version %d'
                         % (metadata.get('version'), FORMAT_VERSION), code=Serio.Error.VERSION)
    unknown = sorted(set(metadata) - {'format', 'version', 'total_size'}) + \
        sorted(set(document) - {'metadata', 'weight_map', 'shards', 'tree'})
    if unknown:
        raise index.fail('unknown field “%s”' % unknown[0])
    for field in ('weight_map', 'shards'):
        if not isinstance(document.get(field), dict):
            raise index.fail('the index has no "%s" object' % field)
    total = metadata.get('total_size')
    if type(total) is not int or total < 0:
        raise index.fail('"total_size" is not a non-negative integer')
    for shard, entry in document['shards'].items():
        if shard in ('', '.', '..') or '/' in shard or '\\' in shard or '\0' in shard:
            raise index.fail('the shard name %r is not the name of a file beside the index'
                             % shard)
        if not isinstance(entry, dict) or set(entry) != {'size', 'seal'} or \
                type(entry['size']) is not int or entry['size'] < 0 or \
                not isinstance(entry['seal'], str):
            raise index.fail('the entry of shard %r is not {"size": bytes, "seal": tokens}'
                             % shard)
        index.shards[shard] = entry
    used = set()
    for key, shard in document['weight_map'].items():
        if not isinstance(shard, str) or shard not in index.shards:
            raise index.fail('the weight map puts the key in %r, which is not a shard of the '
                             'index' % (shard,), key)
        index.weight_map[key] = shard
        used.add(shard)
    for shard in index.shards:
        if shard not in used:
            raise index.fail('the shard %r holds no key of the weight map' % shard)
    if 'tree' in document:
        template = _tree.parse(_tree_bytes(document['tree']), path)
        slots = set(template.names)
        for name in template.names:
            if name not in index.weight_map:
                raise index.fail('the tree holds the key, which is in no shard (the weight '
                                 'map does not list it)', name)
        for key in index.weight_map:
            if key not in slots:
                raise index.fail('the weight map lists the key, which the tree does not hold',
                                 key)
        index.template = template
    return index


def _tree_bytes(tree) -> bytes:
    return json.dumps(tree, ensure_ascii=False, separators=(',', ':')).encode('utf-8')


def _file_error(error: OSError, path: str) -> _errors.FileError:
    """The FileError subclass of an OSError about path."""
    code = int(Gio.io_error_from_errno(error.errno or 0))
    cls = _errors._CLASS_OF_CODE.get(code, _errors.FileError)
    return cls('%s: %s' % (path, error.strerror or error), code=code, path=path)


def _shard_error(index: _Index, shard: str, what: str, key: Optional[str] = None,
                 code=Serio.Error.INTEGRITY) -> DataError:
    path = os.path.join(index.directory, shard)
    return _errors.data_error(path, key, what, int(code))


def _read_shard(index: _Index, shard: str, wanted: Optional[set], found: Dict[str, Any],
                seen: Dict[str, str]) -> None:
    """Verify one shard against the index, and read into found the
    records of it that wanted holds (all, when None)."""
    path = os.path.join(index.directory, shard)
    entry = index.shards[shard]
    if not os.path.lexists(path):
        raise NotFoundError('%s: the shard that the index %s names is missing'
                            % (path, index.path), code=int(Gio.IOErrorEnum.NOT_FOUND),
                            path=path)
    try:
        seal, size = _files.seal_of(path)
    except OSError as error:
        raise _file_error(error, path) from None
    if size != entry['size'] or seal != entry['seal']:
        what = 'size %d where the index says %d' % (size, entry['size']) \
            if size != entry['size'] else 'seal “%s” where the index says “%s”' % (
                seal, entry['seal'])
        raise _shard_error(index, shard, 'this is not the shard the index %s names (its %s): '
                           'a shard of another save, or a stale or damaged one'
                           % (index.path, what))
    records = _io.open_reader(path)
    try:
        while records.next():
            base, dtype, shape = records.header()
            if _tree.is_metadata(base):
                records.skip(base)
                continue
            if base in seen:
                raise _shard_error(index, shard, 'the shard holds the record twice'
                                   if seen[base] == shard else 'the record is in this shard '
                                   'and in %s' % seen[base], base, Serio.Error.SYNTAX)
            seen[base] = shard
            if index.weight_map.get(base) != shard:
                where = index.weight_map.get(base)
                raise _shard_error(index, shard, 'the shard holds a record that the index %s '
                                   % index.path + ('does not list' if where is None else
                                                   'puts in %s' % where),
                                   base, Serio.Error.SYNTAX)
            if wanted is not None and base not in wanted:
                records.skip(base)
                continue
            array = records.read(base, dtype, shape)
            found[base] = (dtype, shape, array)
    except DataError as error:
        if not error.from_library:
            records.drain()
        raise
    finally:
        records.close()
    for key, where in index.weight_map.items():
        if where == shard and key not in seen:
            raise _shard_error(index, shard, 'the index %s puts the key in this shard, which '
                               'does not hold it' % index.path, key, Serio.Error.TRUNCATED)


def load(path: str, names: Optional[List[str]], flat: bool) -> Any:
    """serio.load() (flat: serio.numpy.load()) of the checkpoint whose
    index is at path."""
    index = _read_index(path)
    template = index.template if not flat else None
    wanted = None
    if names is not None:
        if template is not None:
            missing = [name for name in names if name not in template.nodes]
            keys = {template.names[leaf] for name in names if name in template.nodes
                    for leaf in template.slots_under(template.nodes[name])}
        else:
            missing = [name for name in names if name not in index.weight_map]
            keys = set(names)
        if missing:
            raise KeyError('%s: no key %s in the checkpoint'
                           % (path, ', '.join(map(repr, missing))))
        wanted = keys
    needed = set(index.shards) if wanted is None else {index.weight_map[k] for k in wanted}
    found: Dict[str, Any] = {}
    seen: Dict[str, str] = {}
    for shard in index.shards:
        if shard in needed:
            _read_shard(index, shard, wanted, found, seen)
    numpy = _io.numpy_module()
    if template is None:
        result = {}
        for key, shard in index.weight_map.items():
            if key in found:
                dtype, shape, array = found[key]
                result[key] = _io.to_tensor(numpy, array, key, path, 'bfloat16') \
                    if dtype == 'bfloat16' else array
        if names is not None:
            return {name: result[name] for name in names}
        return result
    values: List[Any] = [None] * len(template)
    for leaf, (name, kind) in enumerate(zip(template.names, template.kinds)):
        if name not in found:
            continue
        dtype, shape, array = found[name]
        shard_path = os.path.join(index.directory, index.weight_map[name])
        template.check_record(leaf, dtype, shape, shard_path)
        values[leaf] = _io.to_value(numpy, kind, array, dtype, name, shard_path)
    if names is None:
        return template.build(template.root, values)
    return {name: template.build(template.nodes[name], values) for name in names}
