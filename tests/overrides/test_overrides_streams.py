# SPDX-License-Identifier: LGPL-2.1-or-later
"""Files through the override's Serio.Reader: open(), read_array() and
iteration, bit for bit, mixed with the C calls. (serio.save()/serio.load(),
which stream through Serio.Writer and Serio.Reader, are tested in
tests/python/test_package_streams.py.)

Exits with 77 (a skip for meson) without NumPy.
"""

import pathlib
import sys
import tempfile
import unittest

try:
    import numpy
except ImportError:
    print('NumPy is not installed (Debian: python3-numpy)', file=sys.stderr)
    sys.exit(77)

from overrides_common import Serio, SPECIAL_BITS  # noqa: E402
from gi.repository import GLib  # noqa: E402



def bits(array):
    """The bytes of an array's values, in C order: compare these, not
    floats."""
    return numpy.ascontiguousarray(array).view(numpy.uint8).tobytes()


def random_float64(rng, shape):
    values = rng.integers(0, 2**64, size=shape, dtype=numpy.uint64).view(numpy.float64)
    # A NaN comes back as the canonical one: keep them out here.
    values[numpy.isnan(values)] = 0.5
    return values


def serio_error(test, caught, code):
    error = caught.exception
    test.assertTrue(error.matches(Serio.error_quark(), code),
                    '%s, not %s' % (error, code))


class TempDirTestCase(unittest.TestCase):

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix='serio-streams-')
        self.addCleanup(tmp.cleanup)
        self.dir = pathlib.Path(tmp.name)

    def write(self, name, data):
        path = self.dir / name
        path.write_bytes(data)
        return path


class TestReader(TempDirTestCase):

    def setUp(self):
        super().setUp()
        rng = numpy.random.default_rng(7)
        self.w = random_float64(rng, (3, 5))
        self.b = numpy.array(SPECIAL_BITS[:9], dtype=numpy.uint64).view(numpy.float64)
        bundle = Serio.Bundle.new()
        bundle.append_numpy('dense.w', self.w)
        bundle.append_numpy('dense.b', self.b)
        bundle.append_with_shape('steps', [], [4.0])
        bundle.append('dense.w', [1.0])
        self.sealed = self.write('sealed.serio', bundle.to_bytes(Serio.SaveFlags.NONE).get_data())
        self.plain = self.write('plain.serio', bundle.to_bytes(Serio.SaveFlags.PLAIN).get_data())

    def test_pairs_from_sealed_and_plain_files(self):
        for path, sealed in ((self.sealed, True), (str(self.plain), False)):
            with Serio.Reader.open(path) as reader:
                self.assertIsInstance(reader, Serio.Reader)
                names, arrays = [], []
                for name, array in reader:
                    names.append((name, reader.get_name()))
                    arrays.append(array)
                self.assertTrue(reader.get_finished())
                self.assertEqual(reader.get_sealed(), sealed)
            self.assertEqual(names, [('dense.w', 'dense.w[3x5]'), ('dense.b', 'dense.b'),
                                     ('steps', 'steps[]'), ('dense.w', 'dense.w')])
            self.assertEqual([a.shape for a in arrays], [(3, 5), (9,), (), (1,)])
            for array in arrays:
                self.assertEqual(array.dtype, numpy.float64)
                self.assertTrue(array.flags.writeable and array.flags.c_contiguous)
            self.assertEqual(bits(arrays[0]), bits(self.w))
            self.assertEqual(arrays[1].view('<u8').tolist(), SPECIAL_BITS[:9])
            self.assertEqual(arrays[2].reshape(1).view('<u8').tolist(), [0x4010000000000000])

    def test_with_closes_the_stream(self):
        with Serio.Reader.open(self.sealed) as reader:
            stream = reader.get_stream()
            self.assertEqual(next(reader)[0], 'dense.w')
            self.assertFalse(stream.is_closed())
        self.assertTrue(stream.is_closed())
        self.assertFalse(reader.get_finished())

    def test_read_array_and_the_c_calls_mix(self):
        with Serio.Reader.open(self.plain) as reader:
            with self.assertRaises(ValueError):
                reader.read_array()
            self.assertTrue(reader.next())
            reader.skip_array()
            with self.assertRaises(ValueError):
                reader.read_array()
            self.assertTrue(reader.next())
            self.assertEqual(reader.read_bytes(2).get_size(), 16)
            with self.assertRaises(ValueError):
                reader.read_array()
            self.assertTrue(reader.next())
            self.assertEqual(reader.read_array().shape, ())
            self.assertEqual([name for name, _ in reader], ['dense.w'])

    def test_open_takes_paths_and_files(self):
        with self.assertRaises(TypeError):
            Serio.Reader.open(3)
        with self.assertRaises(GLib.Error) as caught:
            Serio.Reader.open(self.dir / 'missing.serio')
        self.assertEqual(caught.exception.domain, 'g-io-error-quark')

    def test_hostile_count_is_not_allocated(self):
        # 2**60 values declared, two given: the reader must fail on the
        # record, not on an allocation of 8 EiB.
        path = self.write('hostile.serio', b'v1|w|1152921504606846976|1,2\n')
        with Serio.Reader.open(path) as reader, self.assertRaises(GLib.Error) as caught:
            list(reader)
        serio_error(self, caught, Serio.Error.LENGTH)

    def test_documented(self):
        for attr in ('open', 'read_array', '__iter__', '__next__', 'close',
                     '__enter__', '__exit__'):
            self.assertTrue(getattr(Serio.Reader, attr).__doc__, attr)
        self.assertTrue(Serio.Reader.__doc__)

    def test_read_array_after_a_partial_read(self):
        # read_array() after read_bytes() took part of the array: refused
        # with its own message (not a short array, not the values of the
        # next one), and the rest is still there for read_bytes().
        with Serio.Reader.open(self.plain) as reader:
            self.assertTrue(reader.next())
            self.assertEqual(reader.get_name(), 'dense.w[3x5]')
            first = reader.read_bytes(4).get_data()
            self.assertEqual(first, bits(self.w)[:32])
            with self.assertRaises(ValueError) as caught:
                reader.read_array()
            self.assertEqual(str(caught.exception),
                             "'dense.w[3x5]': values of this array were read already")
            self.assertEqual(reader.get_n_left(), 11)
            rest = reader.read_bytes(100).get_data()
            self.assertEqual(first + rest, bits(self.w))
            self.assertEqual(reader.get_n_left(), 0)
            self.assertTrue(reader.next())
            self.assertEqual(bits(reader.read_array()), bits(self.b))


if __name__ == '__main__':
    unittest.main(verbosity=2)
