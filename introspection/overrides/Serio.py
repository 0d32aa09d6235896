# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Serio.py: PyGObject overrides that give Serio.Bundle and Serio.Reader the
# Python protocols
#
# Copyright 2026 The libserio authors

"""Pythonic access to :class:`Serio.Bundle` and :class:`Serio.Reader`.

PyGObject loads this module by itself on ``from gi.repository import Serio``
when it lies in a ``gi/overrides/`` directory on ``sys.path``.

Checkpoints (trees of arrays, tensors and numbers, PyTorch models and
optimizers, scikit-learn estimators) are the ``serio`` package's job:
``import serio``, then ``serio.save()``/``serio.load()``,
``serio.torch``, ``serio.sklearn`` and ``serio.numpy``. This module only
makes the library's own classes Pythonic.

A reader opens a path, iterates over ``(base name, float64 ndarray)``
pairs, and closes its stream as a context manager::

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
import os
import sys

from ..overrides import override
from ..module import get_introspection_module

from gi.repository import Gio, GLib

Serio = get_introspection_module('Serio')

__all__ = []

# How many names __repr__ lists before it summarizes the rest.
_REPR_MAX_NAMES = 8

# The element types that convert to float64 and back exactly (integers
# of 64 bits within ±2**53 only).
_EXACT_DTYPES = frozenset(['float64', 'float32', 'float16', 'bfloat16',
                           'int64', 'int32', 'int16', 'int8',
                           'uint64', 'uint32', 'uint16', 'uint8', 'bool'])

# Integers of 64 bits beyond this lose bits as float64.
_MAX_EXACT_INT = 2 ** 53

# How many values Reader.read_array() reads at a time: 8 MiB.
_CHUNK_VALUES = 1 << 20


def _import_numpy(method):
    try:
        import numpy
    except ImportError as error:
        raise ImportError(
            '%s needs NumPy, which cannot be imported: %s'
            % (method, error)) from error
    return numpy


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


def _file_error(error, file, reader=None):
    """The exception of the serio package for a GLib.Error about file: a
    GLib.Error that is also the matching OSError (FileNotFoundError,
    IsADirectoryError, PermissionError) or, for bad contents, a
    ValueError, whose str() is its message and which carries the line and
    value index (from reader, the Serio.Reader that failed, if any). The
    GLib.Error itself when the package is not installed."""
    try:
        from serio import _errors
    except ImportError:
        return error
    path = None if file is None else (file.peek_path() or file.get_uri())
    return _errors.from_glib(error, path=path, reader=reader)


def _load(reader, cancellable, file):
    """A new bundle of the arrays of reader (of file, or of memory when
    None), or the exception of :func:`_file_error`."""
    try:
        return Serio.Bundle.new_from_reader(reader, cancellable)
    except GLib.Error as error:
        raise _file_error(error, file, reader) from None
    finally:
        reader.get_stream().close(None)


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


def _source_of(numpy, name, value):
    """(array or tensor, dtype name, shape) for one value to append,
    checked but not converted.

    Raises TypeError or ValueError naming the key when the values cannot
    come back exactly, without a copy of the values (the range check of
    64-bit integers is a min and a max).
    """
    torch = sys.modules.get('torch')
    if torch is not None and isinstance(value, torch.Tensor):
        dtype = str(value.dtype).replace('torch.', '')
        if dtype not in _EXACT_DTYPES:
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


def _read_values(numpy, reader, cancellable=None):
    """The values of the current array that were not read yet, as a new
    flat float64 ndarray, read in pieces of _CHUNK_VALUES values.

    The count comes from the text: the array grows with the values that
    really come, at most to twice as many as have come, never to the count
    alone. It grows in place (ndarray.resize(), a realloc(), which moves
    large blocks without a copy), so that the peak is about the array
    itself plus one piece.
    """
    count = reader.get_n_left()
    room = min(count, _CHUNK_VALUES)
    values = numpy.empty(room, dtype=numpy.float64)
    filled = 0
    while True:
        data = reader.read_bytes(_CHUNK_VALUES, cancellable).get_data()
        if not data:
            break
        part = numpy.frombuffer(data, dtype=numpy.float64)
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


def compute_checksum_for_bytes(data):
    """Return the FNV-1a checksum of data, as ``Serio.compute_checksum_for_bytes()``
    does, for ``GLib.Bytes``, ``bytes``, ``bytearray`` or a ``memoryview``.
    """
    return Serio.compute_checksum_for_bytes(_as_bytes(data))


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

    Iteration is the raw view of the text: every array, metadata records
    (``serio.tree``) and repeated base names included, as float64
    (``reader.get_name()`` gives the stored name of the array just given);
    ``serio.load()`` gives each array in its own type. What a reader gives
    is provisional until the iteration ends without an exception.
    """

    @classmethod
    def open(cls, file, cancellable=None):
        """Return a reader of a file given as a str, an os.PathLike or a
        Gio.File, opened at once.

        A file that cannot be opened raises a GLib.Error that is also the
        matching OSError (FileNotFoundError, IsADirectoryError,
        PermissionError; a ``serio.FileError``)."""
        file = _as_file(file)
        try:
            return cls.new_for_file(file, cancellable)
        except GLib.Error as error:
            raise _file_error(error, file) from None

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
    def new_from_bytes(cls, data):
        """Parse v1 text given as GLib.Bytes, bytes, bytearray or a
        memoryview into a new bundle.

        Text that is not valid raises a GLib.Error that is also a
        ValueError (``serio.DataError``), whose str() is its message, with
        ``line`` and ``value_index``: the text is read through a
        Serio.Reader, which keeps the location PyGObject drops from the
        GLib.Error (Serio.Reader.get_error_line())."""
        return _load(Serio.Reader.new(Gio.MemoryInputStream.new_from_bytes(_as_bytes(data))),
                     None, None)

    @classmethod
    def new_from_string(cls, text):
        """Parse v1 text given as a str into a new bundle; errors as for
        :meth:`new_from_bytes`."""
        if not isinstance(text, str):
            raise TypeError('expected a str, not %s' % type(text).__name__)
        return cls.new_from_bytes(text.encode('utf-8'))

    @classmethod
    def new_from_file(cls, file, cancellable=None, progress=None):
        """Read and parse a file given as a str, an os.PathLike or a
        Gio.File; progress, when given, is called as progress(done, total)
        with the bytes read and the size of the file.

        Errors are GLib.Errors that are also the Python exception for
        them: a ``serio.FileError`` (an OSError such as FileNotFoundError)
        when the file cannot be read, a ``serio.DataError`` (a ValueError,
        with ``line`` and ``value_index``) when it is not valid v1 text;
        ``str()`` is the message."""
        file = _as_file(file)
        try:
            reader = Serio.Reader.new_for_file(file, cancellable)
        except GLib.Error as error:
            raise _file_error(error, file) from None
        if progress is not None:
            reader.set_progress_callback(progress)
        return _load(reader, cancellable, file)

    @classmethod
    def new_from_file_async(cls, file, io_priority, cancellable, callback, *user_data,
                            progress=None):
        """Read and parse a file (a str, an os.PathLike or a Gio.File) in a
        worker thread, then call callback(source, result, *user_data); see
        Serio.Bundle.new_from_file_finish(). progress, when given, is
        called as progress(done, total) in the main context, before
        callback, as for :meth:`new_from_file`."""
        return super().new_from_file_async(_as_file(file), io_priority, cancellable,
                                           progress, (), callback, *user_data)

    def save_to_file(self, file, flags=Serio.SaveFlags.NONE, cancellable=None,
                     progress=None):
        """Save the bundle to a file given as a str, an os.PathLike or a
        Gio.File, replacing it atomically: sealed unless flags is
        Serio.SaveFlags.PLAIN. progress, when given, is called as
        progress(done, total) with the bytes of values written and those
        of the bundle. Errors as for :meth:`new_from_file`."""
        file = _as_file(file)
        try:
            return super().save_to_file(file, flags, cancellable, progress)
        except GLib.Error as error:
            raise _file_error(error, file) from None

    def save_to_file_async(self, file, flags, io_priority, cancellable, callback, *user_data,
                           progress=None):
        """Save the bundle to a file (a str, an os.PathLike or a Gio.File)
        in a worker thread, then call callback(source, result, *user_data);
        see save_to_file_finish(). progress, when given, is called as
        progress(done, total) in the main context, before callback, as for
        :meth:`save_to_file`."""
        return super().save_to_file_async(_as_file(file), flags, io_priority, cancellable,
                                          progress, (), callback, *user_data)

    def to_bytes(self, flags=Serio.SaveFlags.NONE):
        """The text of the bundle as GLib.Bytes: sealed unless flags is
        Serio.SaveFlags.PLAIN, as every call that writes text."""
        return super().to_bytes(flags)

    def to_string(self, flags=Serio.SaveFlags.NONE):
        """The text of the bundle as a str: sealed unless flags is
        Serio.SaveFlags.PLAIN, as every call that writes text."""
        return super().to_string(flags)

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
__all__ += ['Bundle', 'Reader', 'compute_checksum_for_bytes']
