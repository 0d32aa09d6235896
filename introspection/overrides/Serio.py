# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Serio.py: PyGObject overrides that give Serio.Bundle and Serio.Reader the
# Python protocols
#
# Copyright 2026 The libserio authors

"""Pythonic access to :class:`Serio.Bundle`, and one-call save and load for
NumPy, PyTorch and scikit-learn.

PyGObject loads this module by itself on ``from gi.repository import Serio``
when it lies in a ``gi/overrides/`` directory on ``sys.path``.

Module functions, like ``np.savez``/``np.load`` and ``torch.save``/
``torch.load``::

    Serio.save("model.serio", {"w": w, "b": b})       # a mapping of arrays
    arrays = Serio.load("model.serio")                # {"w": w, "b": b}
    Serio.save_torch("model.serio", model)            # or a state_dict
    Serio.load_torch("model.serio", model)            # into the model
    Serio.save_estimator("mlp.serio", clf)            # scikit-learn
    Serio.load_estimator("mlp.serio", MLPClassifier(...))

Every array keeps its shape (in its name, as ``w[256x128]``) and its data
type (in a small ``serio.dtypes`` array, see :func:`save`), bit for bit.

They stream: :func:`save` writes each array in pieces through
``Serio.Writer.new_for_file()`` (the old file is kept if anything fails
midway), and :func:`load` reads each array straight into its ndarray
through a ``Serio.Reader``, so that neither the text nor a second copy of
the arrays is in memory. To go through a large file array by array::

    with Serio.iter_arrays("model.serio") as arrays:   # as load() gives them
        for name, array in arrays:
            ...
    small = Serio.load("model.serio", names=["fc.bias"])   # skips the rest
    with Serio.Reader.open("model.serio") as reader:   # raw float64 arrays
        for name, array in reader:
            ...

What an iteration gives is provisional until it ends without an exception:
a truncated or damaged file raises ``GLib.Error`` where it is found.

A bundle reads like a read-only mapping from names to lists of floats, in
bundle order::

    b = Serio.Bundle.from_dict({"dense.w": [0.1, -0.0], "dense.b": []})
    len(b)               # 2: the number of names
    "dense.w" in b       # True
    b["dense.w"]         # [0.1, -0.0]; the first array of that name
    list(b)              # ["dense.w", "dense.b"]: the names
    b.items()            # [("dense.w", [0.1, -0.0]), ("dense.b", [])]
    b.to_dict()          # {"dense.w": [0.1, -0.0], "dense.b": []}

and, with NumPy, ``b.to_numpy("dense.w")`` and ``b.append_numpy(name, array)``
move the values through a GBytes rather than one Python float at a time.

Semantics worth knowing:

* Keys are names, and names are ``str``: any other key type (an ``int``
  included) raises :exc:`TypeError`. Reach arrays by position with
  ``get_name(i)`` and ``get_values(i)``, for ``i`` below ``b.n_arrays``; an
  index out of range raises :exc:`IndexError`.
* A key finds an array as ``lookup()`` does: the exact stored name first,
  then the base name, so ``b["conv.weight"]`` finds ``conv.weight[2x3]``.
* Duplicate names are legal in a bundle but not in a mapping: iteration,
  ``keys()``, ``items()``, ``values()``, ``len()``, ``to_dict()`` and
  ``b[name]`` see each name once, with its first array. ``b.n_arrays``
  counts every array, and ``get_name(i)``/``get_values(i)`` reach them all.
* Values are flat lists of floats, in C order, as ``get_values()`` returns
  them; ``to_numpy()`` gives an array in its shape.
* ``bool(b)`` is always ``True``, as for other GObject containers
  (``Gio.Settings``, ``Gtk.TreeModel``): ``if b:`` tests for ``None``, not
  for emptiness. Use ``len(b) == 0`` for that.
* ``==`` and ``hash()`` stay those of every GObject wrapper, identity: a
  bundle is mutable. Compare names and bits with ``a.equal(b)``.
"""

import collections
import collections.abc
import math
import os
import sys

from ..overrides import override
from ..module import get_introspection_module

from gi.repository import Gio, GLib

Serio = get_introspection_module('Serio')

__all__ = []

# How many names __repr__ lists before it summarizes the rest.
_REPR_MAX_NAMES = 8

# The name of the array that records the data types of the others.
DTYPES_NAME = 'serio.dtypes'

# The codes of serio.dtypes, in the order of the table in the docs. Every
# one of these types converts to float64 and back exactly (integers of 64
# bits within ±2**53 only); 'str' is a text stored as its code points.
_DTYPE_CODES = ['float64', 'float32', 'float16', 'bfloat16',
                'int64', 'int32', 'int16', 'int8',
                'uint64', 'uint32', 'uint16', 'uint8',
                'bool', 'str']
_CODE_OF_DTYPE = {name: code for code, name in enumerate(_DTYPE_CODES)}

# Integers of 64 bits beyond this lose bits as float64.
_MAX_EXACT_INT = 2 ** 53

# The names of the records of a seal, which no array can have.
_RESERVED_NAMES = ('serio.sealed', 'serio.seal')

# How many values save() converts and writes, and load() reads, at a time:
# 8 MiB as float64.
_CHUNK_VALUES = 1 << 20


def _import_numpy(method):
    try:
        import numpy
    except ImportError as error:
        raise ImportError(
            '%s needs NumPy, which cannot be imported: %s'
            % (method, error)) from error
    return numpy


def _import_torch(method):
    try:
        import torch
    except ImportError as error:
        raise ImportError(
            '%s needs PyTorch, which cannot be imported: %s'
            % (method, error)) from error
    return torch


def _require_str(name):
    if not isinstance(name, str):
        raise TypeError('array names are str, not %s' % type(name).__name__)


def _check_name(name):
    _require_str(name)
    # PyGObject would silently cut the name at the NUL.
    if '\0' in name:
        raise ValueError('array names cannot contain NUL: %r' % (name,))


def _plural(count, word):
    return '%d %s%s' % (count, word, '' if count == 1 else 's')


def _keyed(name, error):
    """The same kind of exception as error, with the key in front."""
    prefix = '%r: ' % (name,)
    if str(error).startswith(prefix):
        return error
    message = prefix + str(error)
    for kind in (type(error), TypeError, ValueError, OverflowError):
        if isinstance(error, kind):
            try:
                return kind(message)
            except TypeError:
                continue
    return ValueError(message)


def _as_file(path):
    """A Gio.File for a Gio.File, a str or an os.PathLike."""
    if isinstance(path, Gio.File):
        return path
    if isinstance(path, (str, os.PathLike)):
        path = os.fspath(path)
        if isinstance(path, str):
            return Gio.File.new_for_path(path)
    raise TypeError('expected a str, os.PathLike or Gio.File, not %s'
                    % type(path).__name__)


def _as_bytes(data):
    """A GLib.Bytes for GLib.Bytes, bytes, bytearray or a memoryview."""
    if isinstance(data, GLib.Bytes):
        return data
    if isinstance(data, (bytes, bytearray)):
        return GLib.Bytes.new(bytes(data))
    if isinstance(data, memoryview):
        return GLib.Bytes.new(data.tobytes())
    raise TypeError('expected bytes, bytearray, memoryview or GLib.Bytes, '
                    'not %s' % type(data).__name__)


def _float64_of(numpy, name, value):
    """(float64 ndarray in C order, dtype name) for one value to save.

    value is a NumPy array, a torch tensor, a number or a sequence of
    numbers. Raises TypeError or ValueError naming the key when the values
    cannot come back exactly (the checks of :func:`_source_of`).
    """
    source, dtype, _ = _source_of(numpy, name, value)
    torch = sys.modules.get('torch')
    if torch is not None and isinstance(source, torch.Tensor):
        source = source.cpu().to(torch.float64).contiguous().numpy()
    # asarray keeps a 0-d array 0-d, where ascontiguousarray would not.
    return numpy.asarray(source, dtype=numpy.float64, order='C'), dtype


def _append_float64(bundle, name, array, keep_name=False):
    """Appends a float64 C-order ndarray, recording its shape unless 1-D.

    With keep_name, a 1-D array whose name ends in ']' gets a suffix too, so
    that its base name is the whole name: "w[3]" is stored as "w[3][3]".
    """
    data = GLib.Bytes.new(array.tobytes())
    if array.ndim == 1 and not (keep_name and name.endswith(']')):
        bundle.append_bytes(name, data)
    else:
        bundle.append_bytes_with_shape(name, list(array.shape), data)


def _stored_name(name, shape):
    """The stored name of an array saved under the key name: a 1-D array
    keeps the plain name unless it ends in ']', any other shape gets its
    suffix, so that the base name is always the whole key."""
    if len(shape) == 1 and not name.endswith(']'):
        return name
    return '%s[%s]' % (name, 'x'.join(str(int(dim)) for dim in shape))


def _source_of(numpy, name, value):
    """(array or tensor, dtype name, shape) for one value to save, checked
    but not converted: the float64 conversion is done piece by piece while
    writing.

    Raises TypeError or ValueError naming the key when the values cannot
    come back exactly, without a copy of the values (the range check of
    64-bit integers is a min and a max).
    """
    torch = sys.modules.get('torch')
    if torch is not None and isinstance(value, torch.Tensor):
        dtype = str(value.dtype).replace('torch.', '')
        if dtype not in _CODE_OF_DTYPE:
            raise TypeError('%r: %s tensors cannot be stored exactly as float64'
                            % (name, value.dtype))
        tensor = value.detach()
        if dtype in ('int64', 'uint64') and tensor.numel() > 0:
            if int(tensor.max()) > _MAX_EXACT_INT or int(tensor.min()) < -_MAX_EXACT_INT:
                raise ValueError('%r: %s values beyond 2**53 cannot be stored '
                                 'exactly as float64' % (name, value.dtype))
        return tensor, dtype, tuple(tensor.shape)
    if isinstance(value, str):
        raise TypeError('%r: a str is not an array of numbers' % (name,))
    array = numpy.asarray(value)
    kind = array.dtype.kind
    if kind not in 'fiub' or array.dtype.itemsize > 8:
        raise TypeError('%r: %s values cannot be stored exactly as float64'
                        % (name, array.dtype))
    dtype = array.dtype.name
    if kind in 'iu' and array.dtype.itemsize == 8 and array.size > 0:
        if int(array.max()) > _MAX_EXACT_INT or (kind == 'i' and int(array.min()) < -_MAX_EXACT_INT):
            raise ValueError('%r: %s values beyond 2**53 cannot be stored '
                             'exactly as float64' % (name, dtype))
    return array, dtype, array.shape


def _pieces(array, limit):
    """Yield views of array (an ndarray or a tensor, any layout) that
    together hold its values in C order, each of at most limit values
    (unless one row of the last dimension is longer): slices of the first
    dimension, of one of its rows when a row is too long."""
    if len(array.shape) <= 1:
        flat = array.reshape(-1)
        for start in range(0, flat.shape[0], limit):
            yield flat[start:start + limit]
        return
    row = math.prod(array.shape[1:])
    if row == 0:
        return
    if row <= limit:
        step = limit // row
        for start in range(0, array.shape[0], step):
            yield array[start:start + step]
        return
    for index in range(array.shape[0]):
        yield from _pieces(array[index], limit)


def _float64_bytes(numpy, piece):
    """The values of a piece as native float64 bytes in C order."""
    torch = sys.modules.get('torch')
    if torch is not None and isinstance(piece, torch.Tensor):
        piece = piece.to(device='cpu', dtype=torch.float64).contiguous().numpy()
    return numpy.ascontiguousarray(piece, dtype=numpy.float64).tobytes()


def _abandon(writer):
    """Close writer as cancelled: a file being replaced keeps its old
    contents, and the temporary file is removed at once (not whenever the
    last reference goes, which a traceback may hold)."""
    cancelled = Gio.Cancellable()
    cancelled.cancel()
    try:
        writer.close(cancelled)
    except GLib.Error:
        pass


def _save_arrays(path, items, method):
    """Save (name, value) pairs to path through a writer of the file.

    Every value is checked first; the file is only touched once all are
    known to be storable. Each array is then written piece by piece
    (_CHUNK_VALUES values converted to float64 at a time), so that the
    memory needed is bounded whatever the size of the arrays. On any
    exception while writing, the writer is abandoned and the file keeps
    its old contents.
    """
    file = _as_file(path)
    numpy = _import_numpy(method)
    arrays = []
    for name, value in items:
        _check_name(name)
        # PyGObject would raise this while writing: raise it before.
        name.encode('utf-8')
        if name == DTYPES_NAME:
            raise ValueError('%r is reserved for the data types' % (name,))
        if isinstance(value, str):
            source = numpy.array([ord(c) for c in value], dtype=numpy.float64)
            arrays.append((name, source, 'str', source.shape))
            continue
        source, dtype, shape = _source_of(numpy, name, value)
        if len(shape) > Serio.SHAPE_MAX_DIMS:
            raise ValueError('%r: %d dimensions, more than %d' % (
                name, len(shape), Serio.SHAPE_MAX_DIMS))
        if _stored_name(name, shape) in _RESERVED_NAMES:
            raise ValueError('%r is reserved for the seal of a text' % (name,))
        arrays.append((name, source, dtype, shape))

    writer = Serio.Writer.new_for_file(file, Serio.SaveFlags.NONE, None)
    try:
        if any(dtype != 'float64' for _, _, dtype, _ in arrays):
            codes = numpy.array([_CODE_OF_DTYPE[dtype] for _, _, dtype, _ in arrays],
                                dtype=numpy.float64)
            writer.write_bytes(DTYPES_NAME, GLib.Bytes.new(codes.tobytes()), None)
        for name, source, _, shape in arrays:
            writer.begin_array(_stored_name(name, shape), math.prod(shape), None)
            for piece in _pieces(source, _CHUNK_VALUES):
                writer.add_bytes(GLib.Bytes.new(_float64_bytes(numpy, piece)), None)
    except BaseException:
        _abandon(writer)
        raise
    # Puts the new file in place, or keeps the old one and raises.
    writer.close(None)


def _dtype_names(numpy, codes):
    """The dtype names that the values of serio.dtypes code."""
    known = (codes >= 0) & (codes < len(_DTYPE_CODES)) & (numpy.floor(codes) == codes)
    if not known.all():
        raise ValueError('%r does not list one known data type code per array'
                         % (DTYPES_NAME,))
    return [_DTYPE_CODES[int(code)] for code in codes]


def _same_bits(numpy, a, b):
    return numpy.array_equal(a.view(numpy.uint64), b.view(numpy.uint64))


def _reader_of(numpy, name, dtype):
    """(storage dtype, converter) to read an array saved as dtype.

    The converter takes a piece of float64 values and returns them in the
    storage type, or raises ValueError naming the key when a value does not
    fit the type exactly; None for float64 (and texts, kept as float64 code
    points). bfloat16 values are stored as their 16 bits (uint16), which
    become a tensor at the end.
    """
    if dtype in ('float64', 'str'):
        return numpy.float64, None

    def misfit():
        return ValueError('%r: the values do not fit its data type, %s' % (name, dtype))

    if dtype == 'bfloat16':
        def convert(part):
            with numpy.errstate(all='ignore'):
                single = part.astype(numpy.float32)
            bits = single.view(numpy.uint32)
            # A bfloat16 is the high half of a float32.
            if (bits & 0xffff).any() or not _same_bits(numpy, single.astype(numpy.float64), part):
                raise misfit()
            return (bits >> 16).astype(numpy.uint16)
        return numpy.uint16, convert

    def convert(part):
        with numpy.errstate(all='ignore'):
            converted = part.astype(dtype)
            back = converted.astype(numpy.float64)
        if not _same_bits(numpy, back, part):
            raise misfit()
        return converted
    return numpy.dtype(dtype), convert


def _read_values(numpy, reader, storage=None, convert=None, cancellable=None):
    """The values of the current array that were not read yet, as a new
    flat ndarray of storage (float64 by default), read in pieces of
    _CHUNK_VALUES values and, with convert, converted piece by piece.

    The count comes from the text: the array grows with the values that
    really come, at most to twice as many as have come, never to the count
    alone. It grows in place (ndarray.resize(), a realloc(), which moves
    large blocks without a copy), so that the peak is about the array
    itself plus one piece.
    """
    count = reader.get_n_left()
    room = min(count, _CHUNK_VALUES)
    values = numpy.empty(room, dtype=numpy.float64 if storage is None else storage)
    filled = 0
    while True:
        data = reader.read_bytes(_CHUNK_VALUES, cancellable).get_data()
        if not data:
            break
        part = numpy.frombuffer(data, dtype=numpy.float64)
        if convert is not None:
            part = convert(part)
        end = filled + part.shape[0]
        if end > room:
            room = min(count, max(end, 2 * room))
            values.resize(room, refcheck=False)
        values[filled:end] = part
        filled = end
        del data, part
    if filled != room:
        values.resize(filled, refcheck=False)
    return values


def _discard_values(reader, cancellable=None):
    """Parse what is left of the current array and drop it: unlike
    skip_array(), this validates the values of a plain text too."""
    while reader.read_bytes(_CHUNK_VALUES, cancellable).get_size() > 0:
        pass


def _with_file_name(file, error):
    """A Serio.Error as Bundle.from_file() reports it, after the name of
    the file; any other error as it is."""
    if not error.matches(Serio.error_quark(), error.code):
        return error
    return GLib.Error.new_literal(Serio.error_quark(),
                                  '%s: %s' % (file.get_parse_name(), error.message),
                                  error.code)


def _names_filter(names):
    """names as a list of str without repeats, or None."""
    if names is None:
        return None
    if isinstance(names, str):
        raise TypeError('names is a collection of str, not a str: '
                        'pass [%r] for one name' % (names,))
    wanted = []
    for name in names:
        _require_str(name)
        if name not in wanted:
            wanted.append(name)
    return wanted


def _typed_arrays(numpy, file, stream, finish, names=None, first_only=True,
                  cancellable=None):
    """Yield (base name, finish(name, values, dtype)) for the arrays of the
    text in stream, read through a Serio.Reader, with the data types of
    serio.dtypes applied; values is a new ndarray in its shape, of the
    storage type of dtype (see _reader_of).

    With first_only, of the arrays that share a base name only the first
    is given. With names (a list of base names), the arrays whose base
    names are not in it are skipped without being parsed, and KeyError
    names the ones that the text does not hold. Without names, the values
    of every array are parsed, those of arrays not given too, so that the
    text is validated as Bundle.from_file() validates it.

    Errors come in the order of Bundle.from_file() and of the old, whole
    bundle load: when a value does not fit its type (ValueError) the rest
    of the text is still read, so that a text that is not valid raises its
    GLib.Error rather than the ValueError, and a serio.dtypes that does not
    list one code per array raises before any error about a value. The
    stream is closed at the end, and when the generator is closed.
    """
    wanted = None if names is None else set(names)
    try:
        reader = Reader.new(stream)
        dtypes = None
        dtypes_error = None
        failure = None
        n_arrays = 0
        seen = set()
        first = True
        while reader.next(cancellable):
            if first and reader.get_name() == DTYPES_NAME:
                first = False
                codes = _read_values(numpy, reader, cancellable=cancellable)
                try:
                    dtypes = _dtype_names(numpy, codes)
                except ValueError as error:
                    dtypes_error = error
                continue
            first = False
            position = n_arrays
            n_arrays += 1
            if dtypes is not None and position >= len(dtypes):
                dtypes_error = ValueError('%r does not list one known data type '
                                          'code per array' % (DTYPES_NAME,))
            base = reader.get_base_name()
            skip = (failure is not None or dtypes_error is not None
                    or (first_only and base in seen)
                    or (wanted is not None and base not in wanted))
            if skip:
                if names is None:
                    _discard_values(reader, cancellable)
                continue
            seen.add(base)
            dtype = 'float64' if dtypes is None else dtypes[position]
            try:
                storage, convert = _reader_of(numpy, base, dtype)
                values = _read_values(numpy, reader, storage, convert, cancellable)
                values.shape = tuple(reader.get_shape())
                value = finish(base, values, dtype)
            except (TypeError, ValueError, ImportError) as error:
                failure = error
                if names is None:
                    _discard_values(reader, cancellable)
                continue
            del values
            yield base, value
            del value
        if dtypes is not None and n_arrays != len(dtypes):
            dtypes_error = ValueError('%r does not list one known data type '
                                      'code per array' % (DTYPES_NAME,))
        if dtypes_error is not None:
            raise dtypes_error
        if failure is not None:
            raise failure
        if names is not None:
            missing = [name for name in names if name not in seen]
            if missing:
                raise KeyError('%s not in %s' % (', '.join(map(repr, missing)),
                                                 file.get_parse_name()))
    except GLib.Error as error:
        raise _with_file_name(file, error) from None
    finally:
        stream.close(None)


def _numpy_value(numpy, name, values, dtype):
    """What load() gives for an array: an ndarray, a str for a text, a
    tensor for bfloat16."""
    if dtype == 'str':
        return _string_of(name, values)
    if dtype == 'bfloat16':
        torch = _import_torch('an array saved as bfloat16')
        return torch.from_numpy(values.view(numpy.int16)).view(torch.bfloat16)
    return values


def _string_of(name, array):
    try:
        return ''.join(chr(int(c)) for c in array.ravel())
    except (ValueError, OverflowError) as error:
        raise ValueError('%r: not a text: %s' % (name, error)) from error


class _ArrayIterator:
    """The iterator of :func:`iter_arrays`: (name, value) pairs, and a
    context manager whose exit (or close()) closes the file."""

    def __init__(self, pairs, stream):
        self._pairs = pairs
        self._stream = stream

    def __iter__(self):
        return self

    def __next__(self):
        """Return the next (name, value) pair; StopIteration once the whole
        file was read and found valid."""
        return next(self._pairs)

    def close(self):
        """Stop reading and close the file."""
        self._pairs.close()
        # A generator that never started does not run its finally.
        self._stream.close(None)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False


def iter_arrays(path, names=None, cancellable=None):
    """Iterate over the arrays of a file as ``(name, array)`` pairs, as
    :func:`load` would give them, reading the file array by array.

    path is a ``str``, an ``os.PathLike`` or a ``Gio.File``, opened at
    once. Each pair is a base name (``w`` for ``w[2x3]``) and a new,
    writable ndarray in its shape and data type (see :func:`load`: a text
    comes as a ``str``, a bfloat16 array as a PyTorch tensor), in file
    order; of two arrays with the same base name only the first is given.
    Only one array is in memory at a time, in its own data type (a float32
    array takes 4 bytes a value), plus the reader's buffers, a few
    megabytes: a file may be far larger than the memory.

    With names (a collection of ``str``), only the arrays of those base
    names are given; the others are skipped **without being parsed**, so
    that finding a few arrays in a large file costs little more than
    reading its bytes. In a plain (unsealed) file a damaged value in a
    skipped array then goes unnoticed; a sealed file is still verified
    whole. After the last pair, KeyError names the wanted names that the
    file does not hold.

    **The pairs are provisional until the iteration ends**: a truncated or
    damaged file, or one whose seal does not match, raises ``GLib.Error``
    (``Serio.Error`` codes, the message after the file name, as
    ``Bundle.from_file()`` gives) where the reader finds the problem,
    possibly after some pairs were given, and only a loop that ended
    without an exception read a valid file. A value that does not fit its
    data type raises ValueError naming the key, once the rest of the file
    was read and found valid.

    The result is an iterator and a context manager: leaving a ``with``
    block, or ``close()``, closes the file before the end::

        with Serio.iter_arrays("model.serio") as arrays:
            for name, array in arrays:
                ...
    """
    return _open_arrays(path, names, cancellable, 'Serio.iter_arrays()')


def _open_arrays(path, names, cancellable, method):
    """iter_arrays(), with the name of the calling function for an
    ImportError."""
    numpy = _import_numpy(method)
    names = _names_filter(names)
    file = _as_file(path)
    stream = file.read(cancellable)
    return _ArrayIterator(_typed_arrays(
        numpy, file, stream,
        lambda name, values, dtype: _numpy_value(numpy, name, values, dtype),
        names=names, cancellable=cancellable), stream)


def save(path, arrays):
    """Save a mapping of names to arrays to path, like ``numpy.savez``.

    path is a ``str``, an ``os.PathLike`` or a ``Gio.File``; the file is
    replaced atomically, as by ``Bundle.save_to_file()``, through a
    ``Serio.Writer.new_for_file()``. arrays maps each name (a ``str``) to
    a NumPy array of any shape (0-d included), a PyTorch tensor, a number
    or a sequence of numbers. Each is stored as float64 with its shape in
    its name (``w[2x3]``; a 1-D array keeps its plain name, unless the name
    ends in ``]``: ``w[3]`` is stored as ``w[3][3]``) and comes back from
    :func:`load`, under its key, with its shape and data type:

    * floats of 16, 32 and 64 bits and bfloat16, integers of up to 64 bits
      and booleans are stored exactly; an integer beyond ±2**53, a complex,
      ``longdouble``, string or object array raises ValueError or TypeError
      naming its key;
    * when an array is not float64, the first array of the file,
      ``serio.dtypes``, lists one data type code per other array.

    Every array is checked before the file is touched. The arrays are then
    written one after the other, converted to float64 a million values at
    a time, so that saving needs a few tens of megabytes beyond the arrays
    themselves, whatever their size and data type, and the text is never
    in memory. If anything fails while writing (a tensor that cannot be
    copied, a full disk, a ``KeyboardInterrupt``), the file keeps its old
    contents, or stays absent.
    """
    _as_file(path)
    if not isinstance(arrays, collections.abc.Mapping):
        raise TypeError('save() needs a mapping of names to arrays, not %s'
                        % type(arrays).__name__)
    for name, value in arrays.items():
        if isinstance(value, str):
            raise TypeError('%r: a str is not an array of numbers' % (name,))
    _save_arrays(path, arrays.items(), 'Serio.save()')


def load(path, names=None):
    """Load the arrays of a file as a dict of name → ndarray, like
    ``numpy.load``.

    path is a ``str``, an ``os.PathLike`` or a ``Gio.File``. The keys are
    base names (``w`` for ``w[2x3]``) in file order; each array is a new,
    writable ndarray in its shape and, when the file has ``serio.dtypes``
    (see :func:`save`), in its data type (float64 otherwise). Of two arrays
    with the same base name, the first wins, as for ``Bundle.lookup()``.

    With names (a collection of ``str``), only the arrays of those base
    names are loaded; the others are skipped without being parsed (see
    :func:`iter_arrays`: in a plain file, damage in a skipped array goes
    unnoticed), and KeyError names those the file does not hold.

    The file is read array by array (see :func:`iter_arrays`), each array
    straight into its own ndarray, so that loading needs memory for the
    arrays, in their data types, and a few megabytes more: neither the
    text nor a float64 copy of the arrays is held.

    Raises GLib.Error for a file that cannot be read or is not valid v1
    text, and ValueError naming the key for a value that does not fit its
    recorded data type.
    """
    with _open_arrays(path, names, None, 'Serio.load()') as arrays:
        return dict(arrays)


def save_torch(path, model):
    """Save a PyTorch ``state_dict``, or a module's, to path in one call.

    model is a ``torch.nn.Module`` (its ``state_dict()`` is saved) or a
    mapping of names to tensors. Every tensor is stored as in :func:`save`:
    its shape in its name, its data type in ``serio.dtypes``, so that
    :func:`load_torch` gives back float64, float32, float16 and bfloat16
    tensors, and integer and boolean buffers, bit for bit. A tensor that
    cannot come back exactly (an int64 beyond ±2**53, a complex tensor)
    raises ValueError or TypeError naming it, before anything is written.
    Tensors are converted to float64 piece by piece, on their device, and
    copied to the CPU a piece at a time, as :func:`save` does.
    """
    _import_torch('Serio.save_torch()')
    state = model.state_dict() if hasattr(model, 'state_dict') else model
    if not isinstance(state, collections.abc.Mapping):
        raise TypeError('save_torch() needs a module or a state_dict, not %s'
                        % type(model).__name__)
    _as_file(path)
    _save_arrays(path, state.items(), 'Serio.save_torch()')


def load_torch(path, model=None):
    """Load a file saved by :func:`save_torch` as tensors, in one call.

    Returns the ``state_dict`` (an ``OrderedDict`` of name → tensor, each in
    its shape and data type, on the CPU) or, when model is given, loads it
    into model with ``model.load_state_dict()`` (strict: every key must
    match) and returns model. The file is read as by :func:`load`, each
    tensor sharing the memory of the array it was read into.
    """
    torch = _import_torch('Serio.load_torch()')
    numpy = _import_numpy('Serio.load_torch()')

    def finish(name, values, dtype):
        if dtype == 'str':
            raise ValueError('%r: a text is not a tensor' % (name,))
        if dtype == 'bfloat16':
            return torch.from_numpy(values.view(numpy.int16)).view(torch.bfloat16)
        return torch.from_numpy(values)

    file = _as_file(path)
    state = collections.OrderedDict(
        _typed_arrays(numpy, file, file.read(None), finish))
    if model is None:
        return state
    model.load_state_dict(state)
    return model


def _fitted_attributes(estimator):
    """Yield (stored name, value) for the fitted attributes to save."""
    for attribute, value in vars(estimator).items():
        if not attribute.endswith('_') or attribute.startswith('_'):
            continue
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                yield '%s.%d' % (attribute, i), item
        elif value is not None:
            yield attribute, value


def save_estimator(path, estimator):
    """Save the fitted state of a scikit-learn estimator to path.

    What is saved are the public fitted attributes (``coefs_``,
    ``intercepts_``, ``classes_``, ``n_features_in_``, ...: the names that
    end in ``_``) that are numbers, arrays, texts, or lists of those (an
    item ``i`` of ``coefs_`` is stored as ``coefs_.i``); attributes that
    are ``None`` are left out. Any other value (an object) raises TypeError
    naming the attribute: such an estimator cannot be saved as numbers.
    The hyper-parameters are not saved: they are code, not data (see
    :func:`load_estimator`). The file is written as by :func:`save`.
    """
    _as_file(path)
    _save_arrays(path, _fitted_attributes(estimator), 'Serio.save_estimator()')


def load_estimator(path, estimator):
    """Restore the fitted state saved by :func:`save_estimator` into
    estimator, and return it.

    estimator is a new estimator of the same class, made with the same
    hyper-parameters as the saved one (``MLPClassifier(hidden_layer_sizes=
    (64,))``). Arrays come back writable, in their shape and data type;
    0-d numbers as Python numbers, lists as lists. What the estimator keeps
    in private attributes is not restored: for an ``MLPClassifier``,
    ``predict_proba()`` works on the result; for ``predict()`` and
    ``partial_fit()``, pass an estimator that one ``partial_fit()`` call
    has set up (``MLPClassifier(...).partial_fit(x[:1], y[:1],
    classes=classes)``), whose private state the loaded attributes then
    complete. The file is read as by :func:`load`, but every array is
    set, in file order: of two with the same name, the last wins. Nothing
    is set on estimator unless the whole file is valid.
    """
    numpy = _import_numpy('Serio.load_estimator()')

    def finish(name, values, dtype):
        value = _numpy_value(numpy, name, values, dtype)
        # An ndarray or a bfloat16 tensor; a str has no ndim.
        if getattr(value, 'ndim', None) == 0:
            value = value.item()
        return value

    file = _as_file(path)
    attributes = list(_typed_arrays(numpy, file, file.read(None), finish,
                                    first_only=False))
    lists = {}
    for name, value in attributes:
        attribute, dot, item = name.rpartition('.')
        if dot and item.isdigit() and attribute.endswith('_'):
            lists.setdefault(attribute, []).append((int(item), value))
        else:
            setattr(estimator, name, value)
    for attribute, items in lists.items():
        setattr(estimator, attribute, [value for _, value in sorted(items, key=lambda i: i[0])])
    return estimator


def checksum_bytes(data):
    """Return the FNV-1a checksum of data, as ``Serio.checksum_bytes()``
    does, for ``GLib.Bytes``, ``bytes``, ``bytearray`` or a ``memoryview``.
    """
    return Serio.checksum_bytes(_as_bytes(data))


class Reader(Serio.Reader):
    """Reads v1 text from a Gio.InputStream array by array, with bounded
    memory; see the C documentation of Serio.Reader.

    On top of the C API, a reader opens a path (:meth:`open`), reads the
    current array into an ndarray (:meth:`read_array`), iterates over
    ``(base name, float64 ndarray)`` pairs and is a context manager that
    closes its stream::

        with Serio.Reader.open("model.serio") as reader:
            for name, array in reader:
                ...
            assert reader.get_finished()

    Iteration is the raw view of the text: every array, ``serio.dtypes``
    and repeated base names included, as float64 (``reader.get_name()``
    gives the stored name of the array just given). :func:`iter_arrays`
    and :func:`load` apply the data types. What a reader gives is
    provisional until the iteration ends without an exception.
    """

    @classmethod
    def open(cls, file, cancellable=None):
        """Return a reader of a file given as a str, an os.PathLike or a
        Gio.File, opened at once (GLib.Error if it cannot be read)."""
        return cls.new(_as_file(file).read(cancellable))

    def read_array(self, cancellable=None):
        """Read the values of the current array into a new, writable
        float64 ndarray in its shape (see ``get_shape()``).

        The values are read in pieces of a million straight into the
        array, which grows with the values that come, never to the count
        of the text alone: the peak is about the array plus one piece.
        They are provisional until the whole text was read.

        Raises ImportError without NumPy, ValueError without a current
        array or when some of its values were read already, and
        GLib.Error where the text is not valid.
        """
        numpy = _import_numpy('Serio.Reader.read_array()')
        if self.get_name() is None:
            raise ValueError('no current array: call next() first')
        if self.get_n_left() != self.get_n_values():
            raise ValueError('%r: values of this array were read already'
                             % (self.get_name(),))
        values = _read_values(numpy, self, cancellable=cancellable)
        values.shape = tuple(self.get_shape())
        return values

    def __iter__(self):
        """Return the reader, an iterator of (base name, ndarray) pairs."""
        return self

    def __next__(self):
        """Move to the next array and return its base name and its values
        as by :meth:`read_array`.

        Raises StopIteration at the end of a valid text (get_finished() is
        then True), and GLib.Error where the text is not valid.
        """
        if not self.next(None):
            raise StopIteration
        return self.get_base_name(), self.read_array()

    def close(self, cancellable=None):
        """Close the stream the reader reads."""
        self.get_stream().close(cancellable)

    def __enter__(self):
        """Return the reader."""
        return self

    def __exit__(self, *exc_info):
        """Close the stream."""
        self.close()
        return False


Reader = override(Reader)


class Bundle(Serio.Bundle):
    """An ordered list of named Float64 arrays.

    On top of the C API, a bundle is a read-only mapping of names to flat
    lists of floats (``len()``, ``name in bundle``, ``bundle[name]``,
    iteration over names, ``keys()``, ``items()``, ``values()``,
    ``get()``), and converts from and to dicts and NumPy arrays. See the
    module documentation for the exact semantics.
    """

    def _find(self, name):
        """Return the index of the array that name finds, or None."""
        _require_str(name)
        # A stored name holds neither a NUL nor a lone surrogate (it is
        # UTF-8); PyGObject would cut the first and refuse the second.
        if '\0' in name:
            return None
        try:
            found, index = self.lookup(name)
        except UnicodeEncodeError:
            return None
        return index if found else None

    def _index(self, index):
        """Raise IndexError for an index that is not that of an array."""
        if not isinstance(index, int):
            raise TypeError('array indexes are int, not %s' % type(index).__name__)
        n_arrays = self.get_n_arrays()
        if not 0 <= index < n_arrays:
            raise IndexError('array index %d out of range: the bundle holds %s'
                             % (index, _plural(n_arrays, 'array')))
        return index

    def _first_indexes(self):
        """The index of the first array of each name, in bundle order."""
        first = {}
        for index in range(self.get_n_arrays()):
            first.setdefault(self.get_name(index), index)
        return first

    @property
    def n_arrays(self):
        """The number of arrays, duplicate names included."""
        return self.get_n_arrays()

    def get_name(self, index):
        """Return the stored name of the array at index.

        Raises IndexError unless 0 <= index < n_arrays.
        """
        return super().get_name(self._index(index))

    def get_values(self, index):
        """Return the values of the array at index as a flat list of floats.

        Raises IndexError unless 0 <= index < n_arrays.
        """
        return super().get_values(self._index(index))

    def dup_values(self, index):
        """Return the values of the array at index as a flat list of floats.

        Raises IndexError unless 0 <= index < n_arrays.
        """
        return super().dup_values(self._index(index))

    def get_bytes(self, index):
        """Return the values of the array at index as a GLib.Bytes.

        Raises IndexError unless 0 <= index < n_arrays.
        """
        return super().get_bytes(self._index(index))

    def get_shape(self, index):
        """Return the shape of the array at index as a list of ints.

        Raises IndexError unless 0 <= index < n_arrays.
        """
        return super().get_shape(self._index(index))

    def get_base_name(self, index):
        """Return the name of the array at index without its shape suffix.

        Raises IndexError unless 0 <= index < n_arrays.
        """
        return super().get_base_name(self._index(index))

    @classmethod
    def from_bytes(cls, data):
        """Parse v1 text given as GLib.Bytes, bytes, bytearray or a
        memoryview into a new bundle."""
        return super().from_bytes(_as_bytes(data))

    @classmethod
    def from_file(cls, file, cancellable=None):
        """Read and parse a file given as a str, an os.PathLike or a
        Gio.File."""
        return super().from_file(_as_file(file), cancellable)

    @classmethod
    def from_file_async(cls, file, *args, **kwargs):
        """Read and parse a file (a str, an os.PathLike or a Gio.File) in a
        worker thread; see Serio.Bundle.from_file_finish()."""
        return super().from_file_async(_as_file(file), *args, **kwargs)

    def save_to_file(self, file, cancellable=None):
        """Save the bundle to a file given as a str, an os.PathLike or a
        Gio.File, replacing it atomically."""
        return super().save_to_file(_as_file(file), cancellable)

    def save_to_file_full(self, file, flags, cancellable=None):
        """Save the bundle to a file given as a str, an os.PathLike or a
        Gio.File, with Serio.SaveFlags."""
        return super().save_to_file_full(_as_file(file), flags, cancellable)

    def save_to_file_full_async(self, file, *args, **kwargs):
        """Save the bundle with Serio.SaveFlags to a file (a str, an
        os.PathLike or a Gio.File) in a worker thread."""
        return super().save_to_file_full_async(_as_file(file), *args, **kwargs)

    def save_to_file_async(self, file, *args, **kwargs):
        """Save the bundle to a file (a str, an os.PathLike or a Gio.File)
        in a worker thread; see save_to_file_finish()."""
        return super().save_to_file_async(_as_file(file), *args, **kwargs)

    def __len__(self):
        """Return the number of names, each counted once (n_arrays counts
        the arrays)."""
        return len(self._first_indexes())

    def __bool__(self):
        """Return True: a bundle is true even when it is empty."""
        return True

    def __contains__(self, name):
        """Return whether a name (a str) finds an array, as lookup() does."""
        return self._find(name) is not None

    def __getitem__(self, name):
        """Return the values of the array that name finds, as a flat list.

        Raises KeyError if no array has that name, and TypeError if name
        is not a str.
        """
        index = self._find(name)
        if index is None:
            raise KeyError(name)
        return super().get_values(index)

    def __iter__(self):
        """Yield each stored name once, in the order of its first array.

        Arrays appended while iterating are not visited.
        """
        return iter(list(self._first_indexes()))

    def __repr__(self):
        """Return the number of arrays, and the first names and lengths."""
        n_arrays = self.get_n_arrays()
        arrays = ['%r (%s)' % (super(Bundle, self).get_name(index),
                               _plural(super(Bundle, self).get_bytes(index).get_size() // 8,
                                       'value'))
                  for index in range(min(n_arrays, _REPR_MAX_NAMES))]
        if n_arrays > _REPR_MAX_NAMES:
            arrays.append('and %d more' % (n_arrays - _REPR_MAX_NAMES))
        if not arrays:
            return '<Serio.Bundle with 0 arrays>'
        return '<Serio.Bundle with %s: %s>' % (_plural(n_arrays, 'array'),
                                               ', '.join(arrays))

    def keys(self):
        """Return the names as a list, each once, in the order of their first
        array."""
        return list(self._first_indexes())

    def values(self):
        """Return the values of the first array of each name, as lists."""
        return [super(Bundle, self).get_values(index)
                for index in self._first_indexes().values()]

    def items(self):
        """Return a (name, values) pair per name, for its first array."""
        return [(name, super(Bundle, self).get_values(index))
                for name, index in self._first_indexes().items()]

    def get(self, name, default=None):
        """Return bundle[name], or default if no array has that name."""
        index = self._find(name)
        return default if index is None else super().get_values(index)

    def to_dict(self):
        """Return a dict that maps each name to its values, as a flat list.

        When names repeat, the first array of a name wins, as for
        ``bundle[name]``; the dict keeps bundle order.
        """
        return dict(self.items())

    @classmethod
    def from_dict(cls, arrays):
        """Return a new bundle holding the arrays of a mapping, in its order.

        Each value is a sequence of numbers (a list, a tuple, ...), a
        number (stored as a 0-d array, ``name[]``), a NumPy array of any
        shape or a PyTorch tensor; arrays and tensors go through
        :meth:`append_numpy`, which records a shape other than 1-D in the
        name. Names are sanitized as by ``append`` (``|``, CR and LF become
        ``_``), and NaNs become the default quiet NaN.

        Raises TypeError if arrays is not a mapping, or for a name that is
        not a str or a value that is not numbers (None included);
        OverflowError for an integer too large for a float; and ValueError
        for a name holding a NUL, or UnicodeEncodeError (a ValueError) for
        one holding a lone surrogate. Every error but the first names its
        key.
        """
        if not isinstance(arrays, collections.abc.Mapping):
            raise TypeError('from_dict() needs a mapping, not %s'
                            % type(arrays).__name__)
        # Only an already imported NumPy or PyTorch can have made an array.
        numpy = sys.modules.get('numpy')
        torch = sys.modules.get('torch')
        bundle = cls.new()
        for name, values in arrays.items():
            _check_name(name)
            try:
                if (numpy is not None and isinstance(values, (numpy.ndarray, numpy.generic))) or \
                        (torch is not None and isinstance(values, torch.Tensor)):
                    bundle.append_numpy(name, values)
                elif isinstance(values, (int, float)):
                    if isinstance(values, int) and abs(values) > _MAX_EXACT_INT:
                        raise ValueError('%d is beyond 2**53, where float64 '
                                         'loses bits' % values)
                    bundle.append_with_shape(name, [], [float(values)])
                elif values is None:
                    # None is no array here, whether or not append() takes it.
                    raise TypeError('needs a sequence of numbers, not None')
                else:
                    bundle.append(name, values)
            except (TypeError, ValueError, OverflowError) as error:
                raise _keyed(name, error) from error
        return bundle

    def to_numpy(self, name, writable=False):
        """Return the array that name finds as a NumPy array in its shape.

        The result is a ``float64`` array in native byte order, bit for bit
        what the bundle holds, in the shape its name records (see
        ``get_shape()``; C order). By default it is a read-only view of a
        private copy of the values (``GLib.Bytes.get_data()`` copies them
        into a ``bytes`` object, which the array keeps alive), so it
        outlives the bundle; with ``writable=True`` it is a writable array
        of its own (one more copy), as ``partial_fit()`` and in-place
        training need.

        Raises ImportError without NumPy, KeyError if no array has that
        name, and TypeError if name is not a str.
        """
        numpy = _import_numpy('Serio.Bundle.to_numpy()')
        index = self._find(name)
        if index is None:
            raise KeyError(name)
        array = numpy.frombuffer(super().get_bytes(index).get_data(),
                                 dtype=numpy.float64)
        array = array.reshape(super().get_shape(index))
        return array.copy() if writable else array

    def append_numpy(self, name, array):
        """Append an array-like of numbers, of any shape, as a new array.

        array is anything ``numpy.asarray()`` takes (an ndarray, a list,
        a number, ...) or a PyTorch tensor, whose data type converts to
        ``float64`` exactly: floats of up to 64 bits (bfloat16 included),
        integers within ±2**53 and booleans, in any byte order and memory
        layout. A shape other than 1-D is recorded in the name, with
        ``append_bytes_with_shape()``: ``w`` of shape (2, 3) is stored as
        ``w[2x3]``, a 0-d array as ``w[]``; a 1-D array keeps the plain
        name. The values reach the library as one ``GLib.Bytes``; -0.0
        stays -0.0 and NaNs become the default quiet NaN.

        Raises ImportError without NumPy; TypeError for a name that is not
        a str or a data type that does not convert exactly (complex,
        longdouble, strings, objects); ValueError for a name holding a NUL
        or an integer beyond ±2**53, or UnicodeEncodeError (a ValueError)
        for a name holding a lone surrogate. Errors name the key.
        """
        numpy = _import_numpy('Serio.Bundle.append_numpy()')
        _check_name(name)
        values, _ = _float64_of(numpy, name, array)
        if values.ndim > Serio.SHAPE_MAX_DIMS:
            raise ValueError('%r: %d dimensions, more than %d' % (
                name, values.ndim, Serio.SHAPE_MAX_DIMS))
        _append_float64(self, name, values)


Bundle = override(Bundle)
collections.abc.Mapping.register(Bundle)
__all__ += ['Bundle', 'Reader', 'save', 'load', 'iter_arrays', 'save_torch',
            'load_torch', 'save_estimator', 'load_estimator', 'checksum_bytes',
            'DTYPES_NAME']
