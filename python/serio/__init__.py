# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""serio: save and load checkpoints (trees of arrays and numbers) as serio
v1 text, bit for bit.

::

    import serio

    serio.save("run.serio", {"model": model.state_dict(),
                             "optimizer": optimizer.state_dict(),
                             "epoch": 3, "name": "run-1"})
    state = serio.load("run.serio")      # the same tree, the same types

    serio.torch.save("run.serio", model, optimizer, epoch=3)
    extra = serio.torch.load("run.serio", model, optimizer)   # {"epoch": 3}

A state is a tree of ``dict`` (str or int keys), ``collections.OrderedDict``,
``list`` and ``tuple`` whose leaves are NumPy arrays and scalars, PyTorch
tensors (bfloat16 included), ``int``, ``float``, ``bool``, ``bytes``,
``str`` and ``None``. The file stays plain v1 text: each array is a record
named by its key path, with its element type and shape
(``optimizer.state.0.exp_avg@float32[10]``), each number a 0-d record
(``epoch@int64[]``), so that C, GJS, Vala and the ``serio`` tool read every
array by name; the structure is the ``serio.tree`` record, the first one.

Submodules: :mod:`serio.torch` (model and optimizer in one call),
:mod:`serio.numpy` (``savez``/``load`` of flat mappings of arrays),
:mod:`serio.sklearn` (fitted estimators and pipelines) and
:mod:`serio.dcp` (``torch.distributed.checkpoint`` storage); the last two
are imported when first used.
Errors are :class:`serio.Error` (a ``GLib.Error``) and, by their kind,
``OSError``, ``ValueError`` or ``TypeError`` subclasses: see
:mod:`serio._errors`.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Collection, Dict, List, Optional, Union

import gi

gi.require_version('Serio', '1.0')
from gi.repository import Serio  # noqa: E402

from . import _io, _shards, _tree  # noqa: E402
from ._errors import (DataError, Error, FileError, IsDirectoryError,  # noqa: E402
                      NotDirectoryError, NotFoundError, PermissionDeniedError,
                      UnstorableError, data_error)
from ._io import PathLike  # noqa: E402
from ._tree import TREE_NAME  # noqa: E402

__all__ = ['save', 'load', 'Error', 'FileError', 'NotFoundError', 'IsDirectoryError',
           'NotDirectoryError', 'PermissionDeniedError', 'DataError', 'UnstorableError',
           'TREE_NAME', 'LEGACY_DTYPES_NAME']

__version__ = '1.0.0'

# The table of element types that the old Serio.save() wrote first.
LEGACY_DTYPES_NAME = 'serio.dtypes'

# The codes of serio.dtypes (CONTRACT.md); 13 is a str stored as its code
# points.
_LEGACY_CODES = ('float64', 'float32', 'float16', 'bfloat16', 'int64', 'int32', 'int16',
                 'int8', 'uint64', 'uint32', 'uint16', 'uint8', 'bool', 'str')


def save(path: PathLike, state: Any, *, sealed: bool = True,
         max_shard_size: Optional[Union[int, str]] = None,
         progress: Optional[Callable[[int, int], Any]] = None) -> None:
    """Save a tree of arrays and numbers to path, replacing the file
    atomically.

    path is a ``str``, an ``os.PathLike`` or a ``Gio.File``. state is a
    ``dict``, ``OrderedDict``, ``list`` or ``tuple`` (see the module
    documentation for the leaves). :func:`load` gives back the same tree:
    an ``int`` stays an ``int``, a tuple a tuple, a key ``0`` stays ``0``,
    an ndarray an ndarray and a tensor a tensor of its dtype, bit for bit
    (every NaN comes back as the default quiet NaN, the format's only
    loss). With ``sealed=False`` the text has no seal (plain v1).

    Everything is checked before the file is touched: what cannot be
    stored exactly (an object, a complex or object array, an ``int``
    beyond what an int64 record holds, a str with a lone surrogate, two
    key paths of the same record name) raises :class:`UnstorableError`
    (a ``TypeError`` and a ``ValueError``) naming its key path, and
    nothing is written. The arrays are then written one after the other, a
    million values at a time, through a ``Serio.Writer``; if anything
    fails midway (a full disk, ``KeyboardInterrupt``), the file keeps its
    old contents, or stays absent. I/O errors are :class:`FileError`.

    With max_shard_size (bytes as an int, or a str such as ``"2GB"`` or
    ``"500MB"``), a state whose arrays hold more than that many bytes is
    saved as a sharded checkpoint: shards ``model-00001-of-00003.serio``,
    … of at most max_shard_size bytes of arrays each (an array larger
    than that alone in its shard) and the index ``model.serio.index.json``
    (path + ``.index.json``), written last, which :func:`load` reads when
    given path or the index; a smaller state is the one file path, as
    without it. See :mod:`serio._shards`.

    progress, when given, is called as ``progress(done, total)`` after
    each piece written: ``done`` the bytes of values written so far (in
    their own types, as in memory), ``total`` those of the whole state
    (for a progress bar, such as ``tqdm``'s ``update``); the last call has
    ``done == total``, before the file is put in place. (A sharded save
    reports nothing.)

    Python's cycle collector is held off while the save runs (``gc`` is
    turned back on after it, if it was on): the objects of a large tree
    are not garbage, and collections would walk them all.
    """
    _io.as_file(path)
    limit = None
    if max_shard_size is not None:
        limit = _shards.check_arguments(path, max_shard_size, sealed)
    with _io.cycles_held():
        tree, leaves = _tree.flatten(state)
        if limit is not None:
            _shards.save(path, tree, leaves, limit,
                         lambda name: _save_one(name, tree, leaves, True))
            return
        _save_one(path, tree, leaves, sealed, progress)


def _save_one(path: PathLike, tree: bytes, leaves, sealed: bool,
              progress: Optional[Callable[[int, int], Any]] = None) -> None:
    np = _io.numpy_module()
    writer = _io.open_writer(path, sealed)
    if progress is not None:
        writer.progress = progress
        writer.total = len(tree) + sum(
            math.prod(leaf.shape) * Serio.dtype_get_size(getattr(Serio.Dtype, leaf.dtype.upper()))
            for leaf in leaves)
    try:
        writer.write(TREE_NAME, 'uint8', (len(tree),), np.frombuffer(tree, np.uint8),
                     key=TREE_NAME)
        writer.write_all((leaf.name, leaf.dtype, leaf.shape, leaf.value, leaf.name)
                         for leaf in leaves)
    except BaseException:
        writer.abandon()
        raise
    writer.close()


def _names_filter(names: Optional[Collection[str]]) -> Optional[List[str]]:
    if names is None:
        return None
    if isinstance(names, str):
        raise TypeError('names is a collection of str, not a str: pass [%r] for one name'
                        % (names,))
    wanted: List[str] = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError('names are str, not %s' % type(name).__name__)
        if name not in wanted:
            wanted.append(name)
    return wanted


def _missing(path, names, found):
    missing = [name for name in names if name not in found]
    if missing:
        raise KeyError('%s: no key %s in the file' % (path, ', '.join(map(repr, missing))))


def _load_tree(records: _io.RecordReader, names: Optional[List[str]]):
    np = records.numpy
    path = records.path
    data = records.read(TREE_NAME, 'uint8', (records.reader.get_n_values(),))
    template = _tree.parse(data.tobytes(), path)
    del data
    wanted = None
    if names is not None:
        _missing(path, names, template.nodes)
        wanted = {index for name in names
                  for index in template.slots_under(template.nodes[name])}
    # The record name and kind of each leaf, in order.
    leaf_names = template.names
    kinds = template.kinds
    count = len(template)
    values: List[Any] = [None] * count
    # The record name of each ndarray leaf, and of each tensor leaf (None
    # for the other kinds).
    ndarray_names = template.names_of_kind('ndarray')
    tensor_names = template.names_of_kind('tensor')

    def check(index, header, name):
        base, dtype, shape = header
        if base != leaf_names[index]:
            raise _tree.tree_error(path, template.key_path(index), 'the record %r stands where '
                                   'the tree describes %r' % (name(), leaf_names[index]))
        template.check_record(index, dtype, shape, path)

    def ended(index):
        return _tree.tree_error(path, template.key_path(index), 'the file ends before the '
                                'record %r that the tree describes' % leaf_names[index])

    index = 0
    while index < count:
        pending = False
        if wanted is None and records.batches:
            # Records a batch at a time, checked in order as below.
            (bases, dtypes, shapes, arrays), pending, failure = \
                records.read_batch(count - index)
            end = index + len(arrays)
            if bases == ndarray_names[index:end] and 'bfloat16' not in dtypes:
                # ndarray leaves of their own names and of types NumPy
                # has, as a model's are: what check() and to_value() give,
                # for the whole batch at once.
                values[index:end] = arrays
                index = end
            elif bases == tensor_names[index:end]:
                # the same for tensor leaves, when torch takes every array
                tensors = _io.tensors_of(np, arrays, dtypes)
                if tensors is not None:
                    values[index:end] = tensors
                    index = end
            if index != end:
                for base, dtype, shape, array in zip(bases, dtypes, shapes, arrays):
                    kind = kinds[index]
                    if kind != 'ndarray' or base != leaf_names[index] or dtype == 'bfloat16':
                        check(index, (base, dtype, shape),
                              lambda: Serio.name_compose(base, _io._DTYPE_ENUMS[dtype], shape))
                        array = _io.to_value(np, kind, array, dtype, leaf_names[index], path)
                    values[index] = array
                    index += 1
            if failure is not None:
                error, header = failure
                if header is not None and index < count:
                    check(index, header, lambda: Serio.name_compose(
                        header[0], _io._DTYPE_ENUMS[header[1]], header[2]))
                raise records.error_of(error, leaf_names[index] if index < count else None)
            if index == count:
                break
            if not pending:
                if not arrays:
                    raise ended(index)
                continue
        name = leaf_names[index]
        if not pending and not records.next(name):
            raise ended(index)
        base, dtype, shape = records.header()
        check(index, (base, dtype, shape), records.reader.get_name)
        if wanted is not None and index not in wanted:
            records.skip(name)
        else:
            array = records.read(name, dtype, shape)
            values[index] = _io.to_value(np, kinds[index], array, dtype, name, path)
        index += 1
    if records.next():
        raise _tree.tree_error(path, None, 'the record %r is not in the tree'
                               % records.reader.get_name())
    if names is None:
        return template.build(template.root, values)
    return {name: template.build(template.nodes[name], values) for name in names}


def _legacy_codes(records: _io.RecordReader) -> List[str]:
    """The element types that a legacy serio.dtypes record lists."""
    np = records.numpy
    codes = records.read(LEGACY_DTYPES_NAME, 'float64', (records.reader.get_n_values(),))
    known = (codes >= 0) & (codes < len(_LEGACY_CODES)) & (np.floor(codes) == codes)
    if not known.all():
        index = int(np.argmax(~known))
        raise data_error(records.path, LEGACY_DTYPES_NAME,
                         'value %d “%r” is not one of the %d data type codes'
                         % (index + 1, float(codes[index]), len(_LEGACY_CODES)),
                         Serio.Error.SYNTAX, value_index=index + 1)
    return [_LEGACY_CODES[int(code)] for code in codes]


def _text_of(records: _io.RecordReader, key: str, array) -> str:
    """A legacy 'str' record: its values are Unicode code points."""
    np = records.numpy
    flat = array.reshape(-1)
    good = (flat >= 0) & (flat <= 0x10FFFF) & (np.floor(flat) == flat) & \
        ~((flat >= 0xD800) & (flat <= 0xDFFF))
    if not good.all():
        index = int(np.argmax(~good))
        raise data_error(records.path, key,
                         'value %d “%r” is not the code point of a character, which a '
                         'str must hold' % (index + 1, float(flat[index])),
                         Serio.Error.DOMAIN, value_index=index + 1)
    return ''.join(map(chr, flat.astype(np.int64).tolist()))


def _load_flat(records: _io.RecordReader, names: Optional[List[str]], first: bool,
               tree_first: bool = False):
    """name → array for a file without serio.tree (first: the reader stands
    on its first record; tree_first: it is a serio.tree, to pass over); a
    legacy serio.dtypes table is applied."""
    np = records.numpy
    path = records.path
    result: Dict[str, Any] = {}
    codes = None
    position = 0
    wanted = None if names is None else set(names)
    if tree_first:
        records.discard(TREE_NAME)
        first = False
    while first or records.next():
        first = False
        stored = records.reader.get_name()
        if codes is None and position == 0 and stored == LEGACY_DTYPES_NAME:
            codes = _legacy_codes(records)
            continue
        base, dtype, shape = records.header()
        if base == TREE_NAME:
            raise _tree.tree_error(path, None, 'the tree is not a uint8 array that comes '
                                   'first')
        if codes is None and _tree.is_metadata(base):
            # Metadata (a binding's or a later version's), not an array.
            records.discard(base) if names is None else records.skip(base)
            continue
        code = None
        if codes is not None:
            if position >= len(codes):
                raise data_error(path, LEGACY_DTYPES_NAME, 'fewer codes than arrays',
                                 Serio.Error.SYNTAX)
            code = codes[position]
        position += 1
        if base in result or (wanted is not None and base not in wanted):
            records.discard(base) if names is None else records.skip(base)
            continue
        if code is not None and code != 'float64' and dtype != 'float64':
            raise data_error(path, base, 'a %s record that %s calls %s'
                             % (dtype, LEGACY_DTYPES_NAME, code), Serio.Error.SYNTAX)
        if code == 'str':
            result[base] = _text_of(records, base, records.read(base, 'float64', shape))
            continue
        storage = code if code not in (None, 'float64') else None
        array = records.read(base, dtype if storage is None else 'float64', shape,
                             storage=storage)
        record_dtype = storage or dtype
        if record_dtype == 'bfloat16':
            result[base] = _io.to_tensor(np, array, base, path, 'bfloat16')
        else:
            result[base] = array
    if codes is not None and position != len(codes):
        raise data_error(path, LEGACY_DTYPES_NAME, '%d codes for %d arrays'
                         % (len(codes), position), Serio.Error.SYNTAX)
    if names is not None:
        _missing(path, names, result)
        return {name: result[name] for name in names}
    return result


def load(path: PathLike, *, names: Optional[Collection[str]] = None,
         progress: Optional[Callable[[int, int], Any]] = None) -> Any:
    """Load what :func:`save` saved: the same tree, with the same types.

    path is a ``str``, an ``os.PathLike`` or a ``Gio.File``. The file is
    read record by record through a ``Serio.Reader``, each array straight
    into its own ndarray (or tensor) of its element type: memory holds the
    arrays once, plus a piece of a million values.

    A file without ``serio.tree`` (written by C, the ``serio`` tool, or
    ``Serio.Bundle``) loads as a dict of base name → ndarray in file order
    (of two arrays of one base name, the first); a legacy ``serio.dtypes``
    table (the old ``Serio.save()``) is applied.

    With names (a collection of key paths, such as ``"model"`` or
    ``"optimizer.state.0.exp_avg"``; base names for a file without a
    tree), only those are loaded, as a dict of name → value (a subtree or
    a leaf); the records of the others are skipped without being parsed.
    KeyError names the ones the file does not hold.

    A sharded checkpoint (see :func:`save`) loads from its index, or from
    the path it was saved to when no file is there: each shard must be the
    one the index names (its size and seal), hold exactly the records the
    index puts in it, and be whole; with names, only the shards holding
    them are read.

    Errors name the file and the key concerned: :class:`FileError` (an
    ``OSError``: ``FileNotFoundError``, ``IsADirectoryError``,
    ``PermissionError``) when the file cannot be read; :class:`DataError`
    (a ``ValueError``, with ``code``, ``line`` and ``value_index``) when
    it is not valid v1 text, when a value does not fit its element type,
    or when ``serio.tree`` does not describe the records exactly. Nothing
    is returned unless the whole file is valid.

    progress, when given, is called as ``progress(done, total)`` as the
    file is read, in pieces of up to a megabyte: ``done`` the bytes read so far,
    ``total`` the size of the file (0 when not known, as for a pipe); a
    file read to its end reports ``done == total`` last. (A sharded
    checkpoint reports nothing.)

    As :func:`save` does, the load holds off Python's cycle collector
    while it runs.
    """
    return _load(path, names, flat=False, progress=progress)


def _load(path: PathLike, names: Optional[Collection[str]], flat: bool,
          progress: Optional[Callable[[int, int], Any]] = None) -> Any:
    """load(), or with flat the records of a tree file as a flat dict."""
    with _io.cycles_held():
        return _load_held(path, names, flat, progress)


def _load_held(path: PathLike, names: Optional[Collection[str]], flat: bool,
               progress: Optional[Callable[[int, int], Any]]) -> Any:
    wanted = _names_filter(names)
    index = _shards.index_of(path)
    if index is not None:
        return _shards.load(index, wanted, flat)
    records = _io.open_reader(path, progress)
    try:
        if not records.next():
            if wanted:
                _missing(records.path, wanted, {})
            return {}
        base, dtype, shape = records.header()
        has_tree = base == TREE_NAME and dtype == 'uint8' and len(shape) == 1
        try:
            if has_tree and not flat:
                return _load_tree(records, wanted)
            return _load_flat(records, wanted, True, tree_first=has_tree)
        except DataError as error:
            # An error of the text itself comes first, as when the whole
            # file is parsed before it is looked at.
            if not error.from_library:
                records.drain()
            raise
    finally:
        records.close()


from . import numpy, torch  # noqa: E402,F401  (the submodules, as attributes)


def __getattr__(name: str) -> Any:
    # serio.sklearn imports scikit-learn, serio.dcp torch.distributed:
    # only when they are asked for.
    if name in ('sklearn', 'dcp'):
        import importlib
        return importlib.import_module('.' + name, __name__)
    raise AttributeError('module %r has no attribute %r' % (__name__, name))
