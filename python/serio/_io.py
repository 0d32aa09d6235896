# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""Typed records in and out of Serio.Writer and Serio.Reader, a piece at a
time, so that memory holds the arrays once and one piece of a megavalue.

A record's element type travels in its name (``w@float32[2x3]``,
docs/format.md); the values go as typed bytes (``begin_typed_array`` and
``add_typed_bytes``, ``read_typed_bytes``), and the library checks that
each fits its type. Only the legacy ``serio.dtypes`` files, whose records
are float64, have their types checked here (:func:`fit`).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import itertools
import math
import operator
import os
import sys
from typing import Optional, Tuple, Union

from gi.repository import Gio, GLib, Serio

from . import _errors
from ._errors import DataError, SERIO_DOMAIN
from ._tree import DTYPES

# How many values are converted, written or read at a time.
CHUNK_VALUES = 1 << 20

# Records are read BATCH_RECORDS at most at a time, into one buffer of
# BATCH_BYTES at most that their arrays then share; a record too long for
# it is read on its own, into an array of its own.
BATCH_RECORDS = 4096
BATCH_BYTES = 8 << 20
# The size of a transparent huge page of x86-64 Linux, and of arm64 Linux
# with 4 KiB pages (_aligned_buffer()).
HUGE_PAGE = 2 << 20
# Records shorter than this are written BATCH_RECORDS (and about
# BATCH_BYTES) at a time, with serio_writer_write_records(), which formats
# short records together on every thread: the writer's own bound of a
# record it formats on one thread.
SHORT_VALUES = 2 * 16384

# What a path argument may be.
PathLike = Union[str, 'os.PathLike[str]', Gio.File]

_NUMPY_OF_DTYPE = {name: ('uint16' if name == 'bfloat16' else name) for name in DTYPES}

# The Serio.Dtype of each element type, and back.
_DTYPE_ENUMS = {name: getattr(Serio.Dtype, name.upper()) for name in DTYPES}
_DTYPE_NAMES = {value: name for name, value in _DTYPE_ENUMS.items()}
_DTYPE_CODES = {name: int(value) for name, value in _DTYPE_ENUMS.items()}


def _addresses(arrays) -> list:
    """The address of the first element of each C-order ndarray of arrays.
    A writable one's comes from its buffer, which takes a third of the
    time that making its __array_interface__ does; should one of them be
    read-only or empty, which have no writable buffer, all come from
    their __array_interface__."""
    addressof, from_buffer = ctypes.addressof, ctypes.c_char.from_buffer
    try:
        return [addressof(from_buffer(array)) for array in arrays]
    except (TypeError, ValueError, BufferError):
        return [array.__array_interface__['data'][0] for array in arrays]


def _aligned_buffer(numpy, size: int):
    """A uint8 ndarray of size bytes for a batch of records. One of more
    than a huge page starts at a multiple of HUGE_PAGE, in a block one huge
    page longer whose head is never touched. NumPy asks the kernel for huge
    pages for such blocks, which it gives only for the aligned 2 MiB of
    them: a block at malloc()'s address has up to 2 MiB at each end in
    small pages, a fault each 4 KiB (a quarter of an 8 MiB batch: 2 to 4
    ms of a load of 10,000 small arrays). The block keeps its length, the
    untouched part of it never given memory."""
    if size <= HUGE_PAGE:
        return numpy.empty(size, dtype=numpy.uint8)
    block = numpy.empty(size + HUGE_PAGE, dtype=numpy.uint8)
    start = -block.__array_interface__['data'][0] % HUGE_PAGE
    return block[start:start + size]


def _vectors(numpy, flat, info) -> list:
    """The vectors of a batch whose records are all of one type, as views
    of flat, the batch's buffer seen as that type (each record's values
    start at a multiple of 8 bytes), info their _RecordInfo. Records of
    one count at one distance from each other, as a model's runs of
    layers are, are the rows of one strided view, which NumPy hands out
    in about half the time of a slice each and its offsets; any others
    are slices."""
    size = flat.itemsize
    offsets = info['offset']
    counts = info['n_values']
    n = len(info)
    step = int(offsets[1] - offsets[0]) if n > 1 else 0
    if n > 1 and offsets[0] == 0 and step % size == 0 and (counts == counts[0]).all() and \
            (numpy.diff(offsets) == step).all():
        rows = numpy.lib.stride_tricks.as_strided(
            flat, shape=(n, int(counts[0])), strides=(step, size))
        return list(rows)
    starts = offsets // size
    ends = (starts + counts).tolist()
    return [flat[start:end] for start, end in zip(starts.tolist(), ends)]


@contextlib.contextmanager
def cycles_held():
    """Hold off Python's cycle collector for the block, and turn it back
    on after it if it was on. A load or a save of thousands of small
    arrays makes tens of thousands of objects (the tree's nodes, the
    arrays, their names), none of them garbage; every 700 would set off
    a collection of the young objects, and every few of those one of
    older ones, up to all that the program holds. In a fresh process,
    that was an eighth of the load of 10,000 arrays. Reference counting still frees what is dropped; cycles made
    meanwhile (by a progress callback, say) wait for the next
    collection."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def numpy_module():
    try:
        import numpy
    except ImportError as error:
        raise ImportError('serio needs NumPy, which cannot be imported: %s'
                          % (error,)) from error
    return numpy


def as_file(path) -> Tuple[Gio.File, Optional[str]]:
    """A Gio.File for a str, an os.PathLike or a Gio.File, and the name
    errors give it."""
    if isinstance(path, Gio.File):
        return path, path.get_path() or path.get_uri()
    if isinstance(path, (str, os.PathLike)):
        name = os.fspath(path)
        if isinstance(name, str):
            return Gio.File.new_for_path(name), name
    raise TypeError('expected a str, os.PathLike or Gio.File, not %s'
                    % type(path).__name__)


_STORAGE_DTYPES: dict = {}


def storage_dtype(numpy, dtype: str):
    """The NumPy dtype that holds the elements of a record type: its own,
    uint16 bit patterns for bfloat16 (made once: a lookup costs far less
    than numpy.dtype() in the loops over many small arrays)."""
    found = _STORAGE_DTYPES.get(dtype)
    if found is None:
        found = _STORAGE_DTYPES[dtype] = numpy.dtype(_NUMPY_OF_DTYPE[dtype])
    return found


# ------------------------------------------------------------- writing

def _pieces(array, limit):
    """Views of array (ndarray or tensor, any layout) that hold its values
    in C order, each of at most limit values (unless one row of the last
    dimension is longer)."""
    if len(array.shape) <= 1:
        flat = array.reshape(-1)
        for start in range(0, flat.shape[0], limit):
            yield flat[start:start + limit]
        return
    row = math.prod(array.shape[1:])
    if row == 0:
        return
    if row <= limit:
        step = max(1, limit // row)
        for start in range(0, array.shape[0], step):
            yield array[start:start + step]
        return
    for index in range(array.shape[0]):
        yield from _pieces(array[index], limit)


def _piece_array(numpy, piece, dtype: str):
    """A piece as a C-order ndarray of the storage type of dtype."""
    torch = sys.modules.get('torch')
    if torch is not None and isinstance(piece, torch.Tensor):
        piece = piece.detach().to('cpu').contiguous()
        if dtype == 'bfloat16':
            piece = piece.view(torch.int16)
        piece = piece.numpy()
    return numpy.ascontiguousarray(piece, dtype=storage_dtype(numpy, dtype))


def _whole(numpy, source, dtype: str):
    """source itself as a C-order ndarray of the storage type of dtype
    (a CPU tensor as the ndarray sharing its memory), or None if that
    takes a copy."""
    torch = sys.modules.get('torch')
    if torch is not None and isinstance(source, torch.Tensor):
        if source.device.type != 'cpu' or not source.is_contiguous():
            return None
        source = source.detach()
        if dtype == 'bfloat16':
            source = source.view(torch.int16)
        source = source.numpy()
    if (isinstance(source, numpy.ndarray) and source.flags.c_contiguous
            and source.dtype == storage_dtype(numpy, dtype)):
        return source
    return None


def _bfloat16_to_float64(numpy, bits):
    return (bits.astype(numpy.uint32) << 16).view(numpy.float32).astype(numpy.float64)


class RecordWriter:
    """Writes typed records through a Serio.Writer of a file (or stream)."""

    def __init__(self, writer: Serio.Writer, path: Optional[str]) -> None:
        self.numpy = numpy_module()
        self.writer = writer
        self.path = path
        # progress(done, total) in bytes of values, when asked for
        self.progress = None
        self.total = 0
        self.done = 0

    def write(self, base: str, dtype: str, shape, source, key: Optional[str] = None) -> None:
        """Write one record of source (an ndarray or tensor of that shape)."""
        numpy = self.numpy
        # Every record has a shape suffix (b@float32[10], w[3]), so that
        # its base name is the whole key.
        try:
            self.writer.begin_typed_array(base, _DTYPE_ENUMS[dtype],
                                          [int(d) for d in shape], None)
            whole = _whole(numpy, source, dtype) if _native.add_typed is not None else None
            if whole is not None:
                # Views of the array's own memory: no copy of it, and a
                # KeyboardInterrupt between two pieces.
                for piece in _pieces(whole, CHUNK_VALUES):
                    _native.add_from(self.writer, piece)
                    self._report(piece.nbytes)
                return
            for piece in _pieces(source, CHUNK_VALUES):
                part = _piece_array(numpy, piece, dtype)
                if _native.add_typed is not None:
                    _native.add_from(self.writer, part)
                else:
                    self.writer.add_typed_bytes(GLib.Bytes.new(memoryview(part).cast('B')),
                                                None)
                self._report(part.nbytes)
        except GLib.Error as error:
            raise _errors.from_glib(error, path=self.path, key=key) from None

    def write_all(self, records) -> None:
        """Write the records, each (base, dtype, shape, source, key) as
        write() takes them, in order: those of fewer than SHORT_VALUES
        values BATCH_RECORDS (and about BATCH_BYTES) at a time, in one
        call of the library each, which formats them on every thread; the
        others with write()."""
        if _native.write_records is None:
            for record in records:
                self.write(*record)
            return
        numpy = self.numpy
        batch: list = []
        size = 0
        for base, dtype, shape, source, key in records:
            if math.prod(shape) >= SHORT_VALUES:
                self._write_batch(batch)
                batch, size = [], 0
                self.write(base, dtype, shape, source, key)
                continue
            whole = _whole(numpy, source, dtype)
            if whole is None:
                whole = _piece_array(numpy, source, dtype)
            batch.append((base, dtype, shape, whole, key))
            size += whole.nbytes
            if len(batch) == BATCH_RECORDS or size >= BATCH_BYTES:
                self._write_batch(batch)
                batch, size = [], 0
        self._write_batch(batch)

    def _write_batch(self, batch) -> None:
        """Write the records of batch, each (base, dtype, shape, C-order
        ndarray of its storage type, key), in one call; should the
        library refuse one, which it does before it writes any, they are
        written one at a time, so that the error names its key."""
        if not batch:
            return
        numpy = self.numpy
        bases, dtypes, shapes, arrays, _ = zip(*batch)
        # The names one after the other, each ended by a NUL, and the
        # dimensions in one block, as serio_reader_read_records() gives
        # them. (The names are text: flattening refused lone surrogates.)
        text = '\0'.join(bases) + '\0'
        blob = numpy.frombuffer(text.encode('utf-8'), dtype=numpy.uint8)
        # each name's bytes and its NUL (as many as its characters, when
        # the names are all ASCII)
        lengths = numpy.fromiter(map(len, bases) if blob.size == len(text) else
                                 (len(base.encode('utf-8')) for base in bases),
                                 dtype=numpy.uint64, count=len(bases)) + 1
        ranks = numpy.fromiter(map(len, shapes), dtype=numpy.uint64, count=len(shapes))
        dims = numpy.array(list(itertools.chain.from_iterable(shapes)) or [0], dtype=numpy.uint64)
        info = numpy.zeros(len(batch), dtype=numpy.dtype(_RecordInfo))
        info['name'] = blob.__array_interface__['data'][0] + numpy.cumsum(lengths) - lengths
        info['dims'] = dims.__array_interface__['data'][0] + 8 * (numpy.cumsum(ranks) - ranks)
        info['n_dims'] = ranks
        info['n_values'] = list(map(operator.attrgetter('size'), arrays))
        info['dtype'] = list(map(_DTYPE_CODES.__getitem__, dtypes))
        data = numpy.array(_addresses(arrays), dtype=numpy.uintp)
        try:
            _native.records_from(self.writer, info, data, len(batch))
        except GLib.Error:
            pass
        else:
            self._report(sum(map(operator.attrgetter('nbytes'), arrays)))
            return
        for base, dtype, shape, array, key in batch:
            self.write(base, dtype, shape, array, key)

    def _report(self, nbytes: int) -> None:
        if self.progress is not None:
            self.done += nbytes
            self.progress(self.done, self.total)

    def abandon(self) -> None:
        """Close as cancelled: a file being replaced keeps its contents and
        the temporary file is removed at once."""
        cancelled = Gio.Cancellable()
        cancelled.cancel()
        try:
            self.writer.close(cancelled)
        except GLib.Error:
            pass

    def close(self) -> None:
        """Put the new file in place (or keep the old one and raise)."""
        try:
            self.writer.close(None)
        except GLib.Error as error:
            raise _errors.from_glib(error, path=self.path) from None


def open_writer(path, sealed: bool) -> RecordWriter:
    file, name = as_file(path)
    flags = Serio.SaveFlags.NONE if sealed else Serio.SaveFlags.PLAIN
    try:
        writer = Serio.Writer.new_for_file(file, flags, None)
    except GLib.Error as error:
        raise _errors.from_glib(error, path=name) from None
    return RecordWriter(writer, name)


# ------------------------------------------------------------- reading

class _GError(ctypes.Structure):
    _fields_ = [('domain', ctypes.c_uint32), ('code', ctypes.c_int),
                ('message', ctypes.c_char_p)]


class _RecordInfo(ctypes.Structure):
    """SerioRecordInfo."""
    _fields_ = [('name', ctypes.c_void_p), ('dims', ctypes.c_void_p),
                ('offset', ctypes.c_uint64), ('n_values', ctypes.c_uint64),
                ('dtype', ctypes.c_int), ('n_dims', ctypes.c_uint)]


class _Native:
    """serio_reader_read_typed(), serio_reader_read_records() and
    serio_writer_write_records(), which introspection skips (they take
    caller memory), and serio_writer_add_typed_bytes() of a GBytes that
    wraps an array without a copy, called through ctypes on the library
    PyGObject loaded, so that the values go from the parser into the
    array's own memory and from it to the formatter. read_typed,
    read_records, add_typed and write_records are None where the
    library's symbols cannot be found: then the values go through
    read_typed_bytes() and GLib.Bytes.new(), a record at a time."""

    def __init__(self) -> None:
        self.read_typed = None
        self.read_records = None
        self.add_typed = None
        self.write_records = None
        try:
            lib = ctypes.CDLL(None)
            read_typed = lib.serio_reader_read_typed
            read_records = lib.serio_reader_read_records
            add_typed = lib.serio_writer_add_typed_bytes
            write_records = lib.serio_writer_write_records
            self.bytes_new_static = lib.g_bytes_new_static
            self.bytes_unref = lib.g_bytes_unref
            self.error_free = lib.g_error_free
            self.quark_to_string = lib.g_quark_to_string
            self.capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        except (OSError, AttributeError):
            return
        read_typed.restype = ctypes.c_int
        read_typed.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                               ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p,
                               ctypes.POINTER(ctypes.POINTER(_GError))]
        self.error_free.argtypes = [ctypes.POINTER(_GError)]
        self.error_free.restype = None
        self.quark_to_string.argtypes = [ctypes.c_uint32]
        self.quark_to_string.restype = ctypes.c_char_p
        self.capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        self.capsule_pointer.restype = ctypes.c_void_p
        add_typed.restype = ctypes.c_int
        add_typed.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.POINTER(ctypes.POINTER(_GError))]
        self.bytes_new_static.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self.bytes_new_static.restype = ctypes.c_void_p
        self.bytes_unref.argtypes = [ctypes.c_void_p]
        self.bytes_unref.restype = None
        read_records.restype = ctypes.c_int
        read_records.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                 ctypes.c_void_p, ctypes.c_size_t,
                                 ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p,
                                 ctypes.POINTER(ctypes.POINTER(_GError))]
        write_records.restype = ctypes.c_int
        write_records.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                  ctypes.c_size_t, ctypes.c_void_p,
                                  ctypes.POINTER(ctypes.POINTER(_GError))]
        self.read_typed = read_typed
        self.read_records = read_records
        self.add_typed = add_typed
        self.write_records = write_records

    def pointer_of(self, reader: Serio.Reader) -> int:
        """The address of reader's C object, for read_into()."""
        return self.capsule_pointer(reader.__gpointer__, None)

    def read_into(self, pointer: int, values, count: int) -> int:
        """Read count values of the current record of the reader at
        pointer (pointer_of()) into the C-order ndarray values (of the
        record's storage type) and check the end of the record; the count
        read, or GLib.Error. Reading the record's last value checks its
        end; a record that has fewer values than count, or none, is
        checked by an empty read, as an empty read_typed_bytes() does."""
        n_read = ctypes.c_size_t(0)
        error = ctypes.POINTER(_GError)()
        data = values.__array_interface__['data'][0] if count else None
        if not self.read_typed(pointer, data, count, ctypes.byref(n_read), None,
                               ctypes.byref(error)):
            self.raise_error(error)
        filled = n_read.value
        if (filled < count or count == 0) and \
                not self.read_typed(pointer, None, 0, ctypes.byref(n_read), None,
                                    ctypes.byref(error)):
            self.raise_error(error)
        return filled

    def records_into(self, pointer: int, buffer, info, max_records: int) -> int:
        """serio_reader_read_records() of up to max_records records of the
        reader at pointer into the uint8 ndarray buffer, described in the
        _RecordInfo ndarray info; the count read, or a GLib.Error whose
        records_read attribute is the count of those read before the one
        that failed."""
        n_read = ctypes.c_size_t(0)
        error = ctypes.POINTER(_GError)()
        if not self.read_records(pointer, buffer.__array_interface__['data'][0], buffer.nbytes,
                                 info.__array_interface__['data'][0], max_records,
                                 ctypes.byref(n_read), None, ctypes.byref(error)):
            try:
                self.raise_error(error)
            except GLib.Error as raised:
                raised.records_read = n_read.value
                raise
        return n_read.value

    def add_from(self, writer: Serio.Writer, values) -> None:
        """Add the values of the C-order ndarray values (of the current
        record's storage type) to the record writer is writing, read in
        place: the writer formats them before it returns and keeps no
        reference to them. GLib.Error if it fails."""
        pointer = self.capsule_pointer(writer.__gpointer__, None)
        data = self.bytes_new_static(values.ctypes.data, values.nbytes)
        error = ctypes.POINTER(_GError)()
        try:
            done = self.add_typed(pointer, data, None, ctypes.byref(error))
        finally:
            self.bytes_unref(data)
        if not done:
            self.raise_error(error)

    def records_from(self, writer: Serio.Writer, info, data, count: int) -> None:
        """serio_writer_write_records() of the count records described in
        the _RecordInfo ndarray info, their elements at the addresses of
        the uintp ndarray data. GLib.Error if it fails."""
        pointer = self.capsule_pointer(writer.__gpointer__, None)
        error = ctypes.POINTER(_GError)()
        if not self.write_records(pointer, info.__array_interface__['data'][0],
                                  data.__array_interface__['data'][0], count, None,
                                  ctypes.byref(error)):
            self.raise_error(error)

    def raise_error(self, error) -> None:
        content = error.contents
        made = GLib.Error(content.message.decode('utf-8', 'replace'),
                          self.quark_to_string(content.domain).decode(), content.code)
        self.error_free(error)
        raise made


_native = _Native()


def _value_error(path, key, index, value, dtype) -> DataError:
    detail = 'value %d “%r”: the value is not exactly a %s, which a %s array must hold' % (
        index + 1, value, dtype, dtype)
    if dtype == 'bool':
        detail = 'value %d “%r”: a bool array holds only 0 and 1' % (index + 1, value)
    parts = [p for p in (path, key) if p is not None]
    return DataError(': '.join(parts + [detail]), SERIO_DOMAIN, int(Serio.Error.DOMAIN),
                     path=path, key=key, value_index=index + 1, detail=detail)


def fit(numpy, part, dtype: str, path, key, first: int):
    """float64 values (of a legacy serio.dtypes file) as the storage type
    of dtype, bit for bit, or the DataError (DOMAIN) of the first one the
    type cannot hold exactly, as the library refuses it in a typed record;
    first is the index of part[0] in its record."""
    if dtype == 'float64':
        return part
    with numpy.errstate(all='ignore'):
        if dtype == 'bfloat16':
            single = part.astype(numpy.float32)
            bits = single.view(numpy.uint32)
            converted = (bits >> 16).astype(numpy.uint16)
            back = _bfloat16_to_float64(numpy, converted)
        else:
            converted = part.astype(storage_dtype(numpy, dtype))
            back = converted.astype(numpy.float64)
        bad = back.view(numpy.uint64) != part.view(numpy.uint64)
        if dtype in ('int64', 'uint64'):
            limit = 2.0 ** (64 if dtype == 'uint64' else 63)
            bad |= ~(part < limit)
    if bad.any():
        index = int(numpy.argmax(bad))
        raise _value_error(path, key, first + index, float(part[index]), dtype)
    return converted


class RecordReader:
    """Reads the records of a text through a Serio.Reader, each typed."""

    def __init__(self, reader: Serio.Reader, path: Optional[str],
                 size: Optional[int] = None) -> None:
        self.numpy = numpy_module()
        # storage_dtype() of each record type
        self.storage = {name: storage_dtype(self.numpy, name) for name in DTYPES}
        self.stream = reader.get_stream()
        self.path = path
        self.reader = reader
        self.pointer: Optional[int] = None  # reader's C object, for _native
        self.info = None  # the _RecordInfo of read_batch(), made on first use
        # Whether read_batch() can be used.
        self.batches = _native.read_records is not None
        # The most values the text can hold (each takes two bytes at
        # least, a digit and a comma or line end): a record that declares
        # no more is read into an array of its count at once.
        self.room = CHUNK_VALUES if size is None else max(CHUNK_VALUES, size // 2 + 1)
        # Room for a batch of records: no more than the text can hold
        # (8 bytes an element at most, for 2 bytes of text at least).
        self.batch_bytes = BATCH_BYTES if size is None else min(BATCH_BYTES, 4 * size + 8)
        # what the progress callback raised (PyGObject would only print
        # it): raised again after the library call it interrupted
        self.raised: list = []

    def _check_progress(self) -> None:
        if self.raised:
            raise self.raised.pop(0)

    def _glib(self, error, key=None):
        return _errors.from_glib(error, path=self.path, key=key, reader=self.reader)

    def error_of(self, error, key: Optional[str]):
        """The serio error of a GLib.Error of the library (or a serio
        error, as it is) about the array of key path key."""
        return self._glib(error, key)

    def next(self, key: Optional[str] = None) -> bool:
        """Move to the next record; key is the one a tree expects there,
        which an error then names."""
        try:
            found = self.reader.next(None)
        except GLib.Error as error:
            self._check_progress()
            raise self._glib(error, key) from None
        self._check_progress()
        return found

    def header(self) -> Tuple[str, str, Tuple[int, ...]]:
        """The base name, element type and shape of the current record."""
        reader = self.reader
        base = reader.get_base_name()
        dtype = _DTYPE_NAMES[reader.get_dtype()]
        shape = tuple(reader.get_shape())
        count = reader.get_n_values()
        if math.prod(shape) != count or (shape and max(shape) > sys.maxsize):
            raise self._shape_error(base, reader.get_name(), shape)
        return base, dtype, shape

    def _shape_error(self, base: str, name: str, shape) -> DataError:
        parts = [p for p in (self.path, base) if p is not None]
        detail = 'the shape [%s] of %r is not one NumPy can hold' % (
            'x'.join(map(str, shape)), name)
        return DataError(': '.join(parts + [detail]), SERIO_DOMAIN, int(Serio.Error.SYNTAX),
                         path=self.path, key=base, detail=detail)

    def read(self, key: str, dtype: str, shape, storage: Optional[str] = None):
        """The values of the current record as a new ndarray of the storage
        type of dtype (or of the record type storage, for a legacy
        serio.dtypes file whose records are float64), in its shape. The
        array grows with the values that come, never to the declared count
        alone, unless the text is long enough to hold them all."""
        reader = self.reader
        count = reader.get_n_left()
        if storage is None and count <= self.room and _native.read_typed is not None:
            # Straight into the array, in one call: the library parses on
            # its worker threads and converts to the type in place.
            values = self.numpy.empty(count, dtype=self.storage[dtype])
            if self.pointer is None:
                self.pointer = _native.pointer_of(reader)
            try:
                filled = _native.read_into(self.pointer, values, count)
            except GLib.Error as error:
                raise self._glib(error, key) from None
            self._check_progress()
            if filled != count:
                values.resize(filled, refcheck=False)
            return values.reshape(shape)
        return self._read_growing(key, dtype, shape, storage, count)

    def read_batch(self, max_records: int):
        """Move to each of the next records and read it whole, up to
        max_records of them, for as long as they fit in a batch
        (serio_reader_read_records()). Returns (batch, pending, failure):
        batch is four lists of the records read, in order: their base
        names, element types, shapes and ndarrays (views of one buffer);
        pending says that the current record is then one that did not
        fit, none of its values read (to read with read()); no records and
        nothing pending: the text ended. failure is None, or (error,
        header): the GLib.Error of the record after those of the batch
        with its header (base name, element type, shape) when its values
        failed, None when its start did; or the DataError of the first
        record whose shape NumPy cannot hold (as header() raises it), with
        None, the batch then the records before it."""
        numpy = self.numpy
        if self.pointer is None:
            self.pointer = _native.pointer_of(self.reader)
        if self.info is None:
            self.info = numpy.empty(BATCH_RECORDS, dtype=numpy.dtype(_RecordInfo))
        buffer = _aligned_buffer(numpy, self.batch_bytes)
        failure = None
        try:
            n = _native.records_into(self.pointer, buffer, self.info,
                                     min(max_records, BATCH_RECORDS))
        except GLib.Error as error:
            n = error.records_read
            failure = error
        self._check_progress()
        # The records described: those read, and the one that failed.
        described = n + (failure is not None and self.info[n]['name'] != 0)
        pending = failure is None and n < max_records and self.reader.get_n_left() > 0
        bases, dtypes, shapes = [], [], []
        vectors = False
        if described:
            bad, vectors = self._batch_headers(self.info[:described], bases, dtypes, shapes)
            if bad is not None:
                failure = (bad, None)
                n = len(shapes)
                pending = False
            elif failure is not None:
                failure = (failure, (bases[n], dtypes[n], shapes[n]) if described > n else None)
        arrays = []
        if n > 0:
            del bases[n:], dtypes[n:], shapes[n:]
            info = self.info[:n]
            storage = self.storage
            last = n - 1
            end = int(info['offset'][last]) + int(info['n_values'][last]) * \
                storage[dtypes[last]].itemsize
            if buffer.base is None:
                # Shrunk in place before any view of it is made (an aligned
                # one is not: see _aligned_buffer()).
                buffer.resize(end, refcheck=False)
            if vectors and dtypes.count(dtypes[0]) == n:
                arrays = _vectors(numpy, buffer[:end].view(storage[dtypes[0]]), info)
            else:
                ndarray = numpy.ndarray
                arrays = [ndarray(shape, storage[dtype], buffer, offset)
                          for shape, dtype, offset in zip(shapes, dtypes,
                                                          info['offset'].tolist())]
        else:
            bases, dtypes, shapes = [], [], []
        return (bases, dtypes, shapes, arrays), pending, failure

    def _batch_headers(self, info, bases, dtypes, shapes):
        """Appends the base name, element type and shape of each
        _RecordInfo of info, whose names and dimensions are each one
        block, to bases, dtypes and shapes, up to the first whose shape
        NumPy cannot hold. Returns (its DataError, or None; whether every
        record is a vector)."""
        numpy = self.numpy
        ranks = info['n_dims'].tolist()
        first, last = int(info['name'][0]), int(info['name'][-1])
        names = ctypes.string_at(first, last - first + len(ctypes.string_at(last)))
        names = names.decode('utf-8').split('\0')
        first = int(info['dims'][0])
        n_dims = (int(info['dims'][-1]) - first) // 8 + ranks[-1]
        dims = numpy.frombuffer((ctypes.c_uint64 * n_dims).from_address(first),
                                dtype=numpy.uint64).tolist() if n_dims else []
        counts = info['n_values'].tolist()
        codes = info['dtype'].tolist()
        bases.extend(names[:len(ranks)])
        if codes.count(codes[0]) == len(codes):
            # One type, as a model's batches mostly are: its name looked
            # up once (a tenth of the time of a lookup each).
            dtypes.extend([_DTYPE_NAMES[codes[0]]] * len(codes))
        else:
            dtypes.extend([_DTYPE_NAMES[code] for code in codes])
        maxsize = sys.maxsize
        if ranks.count(1) == len(ranks) and dims == counts:
            # Vectors only, as a model's batches mostly are: each shape is
            # its count, checked for all at once (a count in a batch fits
            # in its buffer, so in an ndarray's dimension).
            shapes.extend(zip(dims))
            return None, True
        at = 0
        for i, rank in enumerate(ranks):
            if rank == 1:
                # A vector, as most are: one dimension, its count.
                dim = dims[at]
                shape = (dim,)
                at += 1
                good = dim == counts[i] and dim <= maxsize
            else:
                shape = tuple(dims[at:at + rank])
                at += rank
                good = math.prod(shape) == counts[i] and not (shape and max(shape) > maxsize)
            if not good:
                del bases[i:], dtypes[i:]
                return self._shape_error(names[i], Serio.name_compose(names[i], codes[i], shape),
                                         shape), False
            shapes.append(shape)
        return None, False

    def _read_growing(self, key, dtype, shape, storage, count):
        numpy = self.numpy
        reader = self.reader
        target = storage or dtype
        values = numpy.empty(min(count, CHUNK_VALUES), dtype=storage_dtype(numpy, target))
        filled = 0
        try:
            while True:
                data = reader.read_typed_bytes(CHUNK_VALUES, None).get_data()
                self._check_progress()
                if not data:
                    break
                part = numpy.frombuffer(data, dtype=storage_dtype(numpy, dtype))
                if storage is not None:
                    part = fit(numpy, part.astype(numpy.float64), storage, self.path, key,
                               filled)
                end = filled + part.shape[0]
                if end > values.shape[0]:
                    values.resize(min(count, max(end, 2 * values.shape[0])), refcheck=False)
                values[filled:end] = part
                filled = end
                del data, part
        except GLib.Error as error:
            raise self._glib(error, key) from None
        if filled != values.shape[0]:
            values.resize(filled, refcheck=False)
        return values.reshape(shape)

    def skip(self, key: str) -> None:
        try:
            self.reader.skip_array(None)
        except GLib.Error as error:
            raise self._glib(error, key) from None

    def discard(self, key: str) -> None:
        """Parse the rest of the current record and drop it (unlike skip,
        the values of a plain text are validated)."""
        try:
            while self.reader.read_bytes(CHUNK_VALUES, None).get_size() > 0:
                pass
        except GLib.Error as error:
            raise self._glib(error, key) from None

    def drain(self) -> None:
        """Read the rest of the text, so that an error of the library in
        it (a record cut short, a seal that does not match) is raised
        before one the package found in what it read so far."""
        self.discard(None)
        while self.next():
            self.discard(None)

    def close(self) -> None:
        self.stream.close(None)


def open_reader(path, progress=None) -> RecordReader:
    """A RecordReader of the file at path; progress, when given, is called
    as progress(done, total) with the bytes read and the file's size."""
    file, name = as_file(path)
    try:
        reader = Serio.Reader.new_for_file(file, None)
    except GLib.Error as error:
        raise _errors.from_glib(error, path=name) from None
    records = RecordReader(reader, name, reader.get_size() or None)
    if progress is not None:
        def report(done, total):
            if records.raised:
                # It raised: not called again before the load stops (a
                # library call can read a few megabytes).
                return
            try:
                progress(int(done), int(total))
            except BaseException as error:  # KeyboardInterrupt included
                records.raised.append(error)
        reader.set_progress_callback(report)
    return records


def to_value(numpy, kind: str, array, dtype: str, key: str, path):
    """What a record leaf of kind comes back as."""
    if kind == 'int':
        return int(array[()])
    if kind == 'float':
        return float(array[()])
    if kind == 'bool':
        return bool(array[()])
    if kind == 'bytes':
        return array.tobytes()
    if kind == 'numpy':
        return array[()]
    if kind == 'tensor':
        return to_tensor(numpy, array, key, path, dtype)
    return array


def tensors_of(numpy, arrays, dtypes) -> Optional[list]:
    """The torch tensors sharing the memory of the ndarrays arrays, of the
    element types dtypes, as to_tensor() makes each; None when torch
    cannot be imported or refuses one of them (to_tensor() then says
    which)."""
    try:
        import torch
        if 'bfloat16' not in dtypes:
            return list(map(torch.from_numpy, arrays))
        return [torch.from_numpy(array.view(numpy.int16)).view(torch.bfloat16)
                if dtype == 'bfloat16' else torch.from_numpy(array)
                for array, dtype in zip(arrays, dtypes)]
    except (ImportError, TypeError):
        return None


def to_tensor(numpy, array, key, path, dtype=None):
    """A torch tensor sharing the memory of array (bfloat16 from its bit
    patterns when dtype says so)."""
    try:
        import torch
    except ImportError as error:
        raise ImportError('%s: the array %s is a torch tensor, and torch cannot be '
                          'imported: %s' % (path, key, error)) from error
    if dtype == 'bfloat16':
        return torch.from_numpy(array.view(numpy.int16)).view(torch.bfloat16)
    try:
        return torch.from_numpy(array)
    except TypeError as error:
        detail = 'a %s array cannot be a torch tensor: %s' % (array.dtype, error)
        raise DataError('%s: %s: %s' % (path, key, detail), SERIO_DOMAIN,
                        int(Serio.Error.SYNTAX), path=path, key=key, detail=detail) from None
