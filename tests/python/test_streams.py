# SPDX-License-Identifier: LGPL-2.1-or-later
"""Serio.Writer and Serio.Reader from Python: NumPy arrays written in
pieces through GLib.Bytes and read back in pieces, bit for bit, with the
same text as the bundle and the same errors as the in-memory reader.

Exits with 77 (a skip for meson) when NumPy is not installed.
"""

import sys
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
    writer = Serio.Writer.new(stream) if sealed else Serio.Writer.new_plain(stream)
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
        self.assertEqual(sealed.get_data(), self.bundle.to_sealed_bytes().get_data())
        plain = write(self.arrays, sealed=False, piece=777)
        self.assertEqual(plain.get_data(), self.bundle.to_bytes().get_data())

    def test_round_trip_bits(self):
        for sealed in (True, False):
            arrays, was_sealed = read(write(self.arrays, sealed=sealed))
            self.assertEqual(was_sealed, sealed)
            self.assertEqual([name for name, _ in arrays],
                             [name.replace('|', '_') for name in self.arrays])
            for (_, got), want in zip(arrays, self.arrays.values()):
                self.assertEqual(got.tobytes(), want.tobytes())

    def test_too_many_values(self):
        stream = Gio.MemoryOutputStream.new_resizable()
        writer = Serio.Writer.new_plain(stream)
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
                Serio.Bundle.from_bytes(GLib.Bytes.new(text))
            with self.assertRaises(GLib.Error) as streamed:
                read(GLib.Bytes.new(text))
            self.assertEqual(streamed.exception.domain, whole.exception.domain)
            self.assertEqual(streamed.exception.code, whole.exception.code)
            self.assertEqual(streamed.exception.message, whole.exception.message)


if __name__ == '__main__':
    unittest.main()
