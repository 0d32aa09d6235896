# SPDX-License-Identifier: LGPL-2.1-or-later
"""Serio.Writer and Serio.Reader from Python: NumPy arrays written in
pieces through GLib.Bytes and read back in pieces, bit for bit, with the
same text as the bundle and the same errors as the in-memory reader; a
writer of a file (Serio.Writer.new_for_file) that only replaces it on a
successful close; values read piece by piece into one growing array.

These use the C API through GObject Introspection only, without the
override module (tests/overrides/ tests that).

Exits with 77 (a skip for meson) when NumPy is not installed.
"""

import gc
import os
import sys
import tempfile
import unittest

try:
    import numpy
except ImportError:
    print('NumPy is not installed (Debian: python3-numpy)', file=sys.stderr)
    sys.exit(77)

import gi

gi.require_version('Serio', '1.0')
from gi.repository import Gio, GLib, Serio  # noqa: E402

SEED = 20261201


def random_arrays(rng):
    arrays = {}
    for i, n in enumerate([0, 1, 7, 1000, 70000]):
        bits = rng.integers(0, 2**64, size=n, dtype=numpy.uint64)
        # NaNs become the canonical NaN in a text: keep them out here.
        values = bits.view(numpy.float64)
        values[numpy.isnan(values)] = 0.25
        arrays['w%d|x' % i] = values
    return arrays


def write(arrays, sealed=True, piece=4096):
    stream = Gio.MemoryOutputStream.new_resizable()
    writer = Serio.Writer.new(stream, Serio.SaveFlags.NONE) if sealed else Serio.Writer.new(stream, Serio.SaveFlags.PLAIN)
    for name, values in arrays.items():
        writer.begin_array(name, len(values), None)
        for start in range(0, len(values), piece):
            chunk = values[start:start + piece]
            writer.add_bytes(GLib.Bytes.new(chunk.tobytes()), None)
        assert writer.get_n_missing() == 0
    writer.close(None)
    return stream.steal_as_bytes()


def read(data, piece=3000):
    stream = Gio.MemoryInputStream.new_from_bytes(data)
    reader = Serio.Reader.new(stream)
    arrays = []
    while reader.next(None):
        chunks = []
        while True:
            chunk = reader.read_bytes(piece, None)
            if chunk.get_size() == 0:
                break
            chunks.append(numpy.frombuffer(chunk.get_data(), dtype=numpy.float64))
        values = numpy.concatenate(chunks) if chunks else numpy.zeros(0)
        assert len(values) == reader.get_n_values()
        arrays.append((reader.get_name(), values))
    assert reader.get_finished()
    return arrays, reader.get_sealed()


class StreamTests(unittest.TestCase):
    def setUp(self):
        self.arrays = random_arrays(numpy.random.default_rng(SEED))
        self.bundle = Serio.Bundle.new()
        for name, values in self.arrays.items():
            self.bundle.append_bytes(name, GLib.Bytes.new(values.tobytes()))

    def test_writer_matches_bundle(self):
        sealed = write(self.arrays)
        self.assertEqual(sealed.get_data(), self.bundle.to_bytes(Serio.SaveFlags.NONE).get_data())
        plain = write(self.arrays, sealed=False, piece=777)
        self.assertEqual(plain.get_data(), self.bundle.to_bytes(Serio.SaveFlags.PLAIN).get_data())

    def test_round_trip_bits(self):
        for sealed in (True, False):
            arrays, was_sealed = read(write(self.arrays, sealed=sealed))
            self.assertEqual(was_sealed, sealed)
            self.assertEqual([name for name, _ in arrays],
                             [name.replace('|', '_') for name in self.arrays])
            for (_, got), want in zip(arrays, self.arrays.values()):
                self.assertEqual(got.tobytes(), want.tobytes())

    def test_reader_of_bytes_reads_in_place(self):
        # Serio.Reader.new_for_bytes: no stream, the same arrays, bit for bit
        text = self.bundle.to_bytes(Serio.SaveFlags.NONE)
        reader = Serio.Reader.new_for_bytes(text)
        self.assertIsNone(reader.get_stream())
        self.assertEqual(reader.get_size(), text.get_size())
        got = []
        while reader.next(None):
            data = reader.read_bytes(1 << 20, None).get_data()
            got.append((reader.get_name(), numpy.frombuffer(data, dtype=numpy.float64)))
        self.assertTrue(reader.get_finished())
        self.assertEqual([name for name, _ in got], [name.replace('|', '_') for name in self.arrays])
        for (_, values), want in zip(got, self.arrays.values()):
            self.assertEqual(values.tobytes(), want.tobytes())

    def test_too_many_values(self):
        stream = Gio.MemoryOutputStream.new_resizable()
        writer = Serio.Writer.new(stream, Serio.SaveFlags.PLAIN)
        writer.begin_array('w', 2, None)
        with self.assertRaises(GLib.Error) as caught:
            writer.add_bytes(GLib.Bytes.new(numpy.zeros(3).tobytes()), None)
        self.assertTrue(caught.exception.matches(Gio.io_error_quark(),
                                                 Gio.IOErrorEnum.INVALID_ARGUMENT))
        writer.add_values([1.0, 2.0], None)
        writer.close(None)
        self.assertEqual(stream.steal_as_bytes().get_data(), b'v1|w|2|1,2\n')

    def test_same_errors(self):
        good = write(self.arrays).get_data()
        damaged = bytearray(good)
        damaged[len(good) // 2] = ord('x')
        for text in (bytes(damaged), good[:-1], good.replace(b'\n', b'\n\n', 3)):
            with self.assertRaises(GLib.Error) as whole:
                Serio.Bundle.new_from_bytes(GLib.Bytes.new(text))
            with self.assertRaises(GLib.Error) as streamed:
                read(GLib.Bytes.new(text))
            self.assertEqual(streamed.exception.domain, whole.exception.domain)
            self.assertEqual(streamed.exception.code, whole.exception.code)
            self.assertEqual(streamed.exception.message, whole.exception.message)


def read_into_array(reader, piece):
    """The values of the current array in one ndarray, read piece by piece
    straight into it, as docs/streams.md shows: the array grows with the
    values that come (at most to twice as many), never to the count the
    text declares."""
    count = reader.get_n_values()
    values = numpy.empty(min(count, piece))
    filled = 0
    while (chunk := reader.read_bytes(piece, None)).get_size() > 0:
        part = numpy.frombuffer(chunk.get_data(), dtype=numpy.float64)
        if filled + len(part) > len(values):
            values.resize(min(count, max(filled + len(part), 2 * len(values))), refcheck=False)
        values[filled:filled + len(part)] = part
        filled += len(part)
    values.resize(filled, refcheck=False)
    return values.reshape(reader.get_shape())


class ReadIntoArrayTests(unittest.TestCase):
    def test_pieces_fill_one_array(self):
        arrays = random_arrays(numpy.random.default_rng(SEED + 1))
        bundle = Serio.Bundle.new()
        for name, values in arrays.items():
            bundle.append_bytes_with_shape(name, [1, len(values)], GLib.Bytes.new(values.tobytes()))
        for piece in (1, 999, 1 << 20):
            reader = Serio.Reader.new(Gio.MemoryInputStream.new_from_bytes(bundle.to_bytes(Serio.SaveFlags.NONE)))
            got = []
            while reader.next(None):
                got.append(read_into_array(reader, piece))
            self.assertTrue(reader.get_finished())
            self.assertEqual([a.shape for a in got], [(1, len(v)) for v in arrays.values()])
            for array, want in zip(got, arrays.values()):
                self.assertEqual(array.tobytes(), want.tobytes())

    def test_a_hostile_count_fails_without_its_room(self):
        text = b'v1|w|1152921504606846976|1,2\n'
        reader = Serio.Reader.new(Gio.MemoryInputStream.new_from_bytes(GLib.Bytes.new(text)))
        self.assertTrue(reader.next(None))
        self.assertEqual(reader.get_n_values(), 2**60)
        with self.assertRaises(GLib.Error) as caught:
            read_into_array(reader, 1 << 20)
        self.assertTrue(caught.exception.matches(Serio.error_quark(), Serio.Error.LENGTH))


class WriterForFileTests(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix='serio-writer-')
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name
        self.path = os.path.join(self.dir, 'model.serio')
        with open(self.path, 'wb') as f:
            f.write(b'v1|old|1|1\n')
        self.file = Gio.File.new_for_path(self.path)
        self.values = numpy.random.default_rng(SEED).normal(size=5000)

    def contents(self):
        with open(self.path, 'rb') as f:
            return f.read()

    def assert_old_file_kept(self):
        gc.collect()
        self.assertEqual(self.contents(), b'v1|old|1|1\n')
        self.assertEqual(os.listdir(self.dir), ['model.serio'])

    def begin(self, flags=Serio.SaveFlags.NONE):
        writer = Serio.Writer.new_for_file(self.file, flags, None)
        writer.begin_array('w', len(self.values), None)
        writer.add_bytes(GLib.Bytes.new(self.values[:3000].tobytes()), None)
        return writer

    def test_close_replaces_the_file(self):
        for flags in (Serio.SaveFlags.NONE, Serio.SaveFlags.PLAIN):
            before = self.contents()
            writer = self.begin(flags)
            writer.add_bytes(GLib.Bytes.new(self.values[3000:].tobytes()), None)
            self.assertEqual(self.contents(), before)
            self.assertTrue(writer.close(None))
            bundle = Serio.Bundle.new()
            bundle.append_bytes('w', GLib.Bytes.new(self.values.tobytes()))
            self.assertEqual(self.contents(), bundle.to_bytes(flags).get_data())
            self.assertEqual(os.listdir(self.dir), ['model.serio'])

    def test_dropped_writer_keeps_the_old_file(self):
        writer = self.begin()
        writer.add_bytes(GLib.Bytes.new(self.values[3000:].tobytes()), None)
        writer.end(None)
        del writer
        self.assert_old_file_kept()

    def test_cancelled_close_keeps_the_old_file(self):
        # What the override does when an exception stops a save midway.
        writer = self.begin()
        cancellable = Gio.Cancellable()
        cancellable.cancel()
        with self.assertRaises(GLib.Error) as caught:
            writer.close(cancellable)
        self.assertTrue(caught.exception.matches(Gio.io_error_quark(), Gio.IOErrorEnum.CANCELLED))
        self.assert_old_file_kept()
        del writer
        self.assert_old_file_kept()


if __name__ == '__main__':
    unittest.main()
