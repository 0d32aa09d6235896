# SPDX-License-Identifier: LGPL-2.1-or-later
"""The NumPy side of the Serio.Bundle overrides: to_numpy, append_numpy and
from_dict with arrays of any shape, compared bit for bit with
ndarray.tobytes() and struct.pack.

Exits with 77 (a skip for meson) when NumPy is not installed; the
ImportError of that case is tested by test_overrides.py.
"""

import gc
import struct
import sys
import unittest

try:
    import numpy
except ImportError:
    print('NumPy is not installed (Debian: python3-numpy)', file=sys.stderr)
    sys.exit(77)

from overrides_common import (Serio, SPECIAL_BITS, canonical, load_patterns,
                              to_bits, to_floats)

PATTERNS = load_patterns() + SPECIAL_BITS


def from_bits(patterns):
    return numpy.array(patterns, dtype=numpy.uint64).view(numpy.float64)


def packed(patterns):
    """The native bytes of the doubles with these bit patterns."""
    return struct.pack('=%dQ' % len(patterns), *patterns)


class TestToNumpy(unittest.TestCase):

    def setUp(self):
        self.bundle = Serio.Bundle.new()
        self.bundle.append('p', to_floats(PATTERNS))
        self.bundle.append('e', [])
        self.bundle.append('p', [1.0])

    def test_bit_exact_float64(self):
        array = self.bundle.to_numpy('p')
        self.assertEqual(array.dtype, numpy.dtype(numpy.float64))
        self.assertTrue(array.dtype.isnative)
        self.assertEqual(array.shape, (len(PATTERNS),))
        self.assertEqual(array.tobytes(), packed(canonical(PATTERNS)))

    def test_read_only_and_copy_writable(self):
        array = self.bundle.to_numpy('p')
        self.assertFalse(array.flags.writeable)
        with self.assertRaises(ValueError):
            array[0] = 1.0
        copy = array.copy()
        copy[0] = 1.0
        self.assertEqual(to_bits([copy[0]]), to_bits([1.0]))

    def test_writable(self):
        array = self.bundle.to_numpy('p', writable=True)
        self.assertTrue(array.flags.writeable)
        self.assertEqual(array.tobytes(), packed(canonical(PATTERNS)))
        array[0] = 1.0
        self.assertEqual(self.bundle.to_numpy('p').tobytes(), packed(canonical(PATTERNS)))
        self.assertEqual(to_bits(self.bundle['p'][:1]), canonical(PATTERNS[:1]))

    def test_outlives_the_bundle(self):
        array = self.bundle.to_numpy('p')
        # The array keeps the bytes object holding its memory alive.
        base = array
        while isinstance(base, numpy.ndarray):
            base = base.base
        self.assertIsInstance(base, bytes)
        self.bundle = None
        gc.collect()
        self.assertEqual(array.tobytes(), packed(canonical(PATTERNS)))

    def test_empty_array(self):
        array = self.bundle.to_numpy('e')
        self.assertEqual(array.shape, (0,))
        self.assertEqual(array.dtype, numpy.dtype(numpy.float64))

    def test_first_match_and_errors(self):
        self.assertEqual(self.bundle.to_numpy('p').shape, (len(PATTERNS),))
        for name in ('x', 'p\0', '\udc80'):
            with self.assertRaises(KeyError):
                self.bundle.to_numpy(name)
        for name in (0, None, b'p'):
            with self.assertRaises(TypeError):
                self.bundle.to_numpy(name)


class TestAppendNumpy(unittest.TestCase):

    def appended(self, array):
        bundle = Serio.Bundle.new()
        bundle.append_numpy('a', array)
        self.assertEqual(len(bundle), 1)
        return bundle

    def test_bit_exact_with_canonical_nan_and_negative_zero(self):
        bundle = self.appended(from_bits(PATTERNS))
        self.assertEqual(bundle.get_bytes(0).get_data(), packed(canonical(PATTERNS)))
        self.assertEqual(to_bits(bundle['a']), canonical(PATTERNS))

    def test_matches_the_list_path(self):
        expected = Serio.Bundle.new()
        expected.append('a', to_floats(PATTERNS))
        self.assertTrue(self.appended(from_bits(PATTERNS)).equal(expected))

    def test_round_trip_with_to_numpy(self):
        array = self.appended(from_bits(PATTERNS)).to_numpy('a')
        self.assertEqual(self.appended(array).to_numpy('a').tobytes(), array.tobytes())

    def test_byte_order_and_layout(self):
        native = from_bits(canonical(SPECIAL_BITS))
        for array in (native.astype('>f8'), native.astype('<f8'),
                      numpy.repeat(native, 2)[::2],
                      numpy.asfortranarray(native)):
            self.assertEqual(self.appended(array).to_numpy('a').tobytes(),
                             native.tobytes())

    def test_safe_conversions(self):
        cases = [
            (numpy.array([0.1, -0.0, numpy.inf], dtype=numpy.float32),
             [struct.unpack('<f', struct.pack('<f', 0.1))[0], -0.0, float('inf')]),
            (numpy.array([-3, 0, 2**53, -2**53], dtype=numpy.int64),
             [-3.0, 0.0, 2.0**53, -2.0**53]),
            (numpy.array([0.1, -0.0], dtype=numpy.float16),
             [struct.unpack('<e', struct.pack('<e', 0.1))[0], -0.0]),
            (numpy.array([True, False]), [1.0, 0.0]),
            ([0.5, -0.0, 7], [0.5, -0.0, 7.0]),
            ((), []),
        ]
        for array, expected in cases:
            self.assertEqual(to_bits(self.appended(array)['a']), to_bits(expected),
                             repr(array))

    def test_unsafe_dtypes_raise_type_error(self):
        unsafe = [numpy.array([1 + 2j]), numpy.array(['1.5']),
                  numpy.array([1.0, None], dtype=object)]
        if numpy.dtype(numpy.longdouble).itemsize > 8:
            unsafe.append(numpy.array([1.0], dtype=numpy.longdouble))
        for array in unsafe:
            bundle = Serio.Bundle.new()
            with self.assertRaises(TypeError, msg=repr(array)) as caught:
                bundle.append_numpy('a', array)
            self.assertIn("'a'", str(caught.exception))
            self.assertEqual(len(bundle), 0)

    def test_shapes_are_recorded(self):
        cases = [
            (numpy.arange(6.0).reshape(2, 3), 'a[2x3]', [2, 3]),
            (numpy.float64(-0.0), 'a[]', []),
            (numpy.array(2.5), 'a[]', []),
            (numpy.zeros((1, 1, 1)), 'a[1x1x1]', [1, 1, 1]),
            (numpy.zeros((3, 0)), 'a[3x0]', [3, 0]),
            (numpy.zeros(4), 'a', [4]),
            (numpy.arange(24, dtype=numpy.int16).reshape(2, 3, 4).transpose(2, 0, 1),
             'a[4x2x3]', [4, 2, 3]),
        ]
        for array, name, shape in cases:
            bundle = self.appended(array)
            self.assertEqual(bundle.get_name(0), name)
            self.assertEqual(bundle.get_shape(0), shape)
            restored = bundle.to_numpy('a')
            self.assertEqual(restored.shape, numpy.shape(array))
            self.assertEqual(restored.tobytes(),
                             numpy.asarray(array, dtype=numpy.float64).tobytes(), name)
            # Through the text, by stored name and by base name.
            parsed = Serio.Bundle.new_from_string(bundle.to_string(Serio.SaveFlags.PLAIN))
            self.assertEqual(parsed.to_numpy(name).tobytes(), restored.tobytes())
            self.assertEqual(parsed.to_numpy('a').shape, restored.shape)

    def test_hand_made_suffix_gives_the_shape(self):
        # The convention the guide used to recommend is now the real one.
        weights = from_bits(PATTERNS[:12]).reshape(3, 4)
        bundle = self.appended(numpy.zeros(1))
        bundle.append_numpy('dense.weight[3x4]', weights.ravel())
        restored = bundle.to_numpy('dense.weight')
        self.assertEqual(restored.shape, (3, 4))
        self.assertEqual(restored.tobytes(), packed(canonical(PATTERNS[:12])))
        # A suffix that does not match the count is part of the name.
        bundle.append_numpy('v[5]', numpy.zeros(3))
        self.assertEqual(bundle.to_numpy('v[5]').shape, (3,))
        with self.assertRaises(KeyError):
            bundle.to_numpy('v')

    def test_integers_beyond_2_53_name_the_key(self):
        for array in (numpy.array([2**53 + 1]), numpy.array([-2**53 - 1]),
                      numpy.array([2**64 - 1], dtype=numpy.uint64)):
            bundle = Serio.Bundle.new()
            with self.assertRaises(ValueError, msg=repr(array)) as caught:
                bundle.append_numpy('counter', array)
            self.assertIn("'counter'", str(caught.exception))
            self.assertEqual(len(bundle), 0)

    def test_bad_names(self):
        bundle = Serio.Bundle.new()
        for name in (0, None, b'a'):
            with self.assertRaises(TypeError):
                bundle.append_numpy(name, numpy.zeros(1))
        with self.assertRaises(ValueError):
            bundle.append_numpy('a\0b', numpy.zeros(1))
        self.assertEqual(len(bundle), 0)

    def test_name_is_sanitized(self):
        bundle = self.appended(numpy.zeros(1))
        bundle.append_numpy('x|y', numpy.zeros(2))
        self.assertEqual(bundle.get_name(1), 'x_y')
        self.assertEqual(bundle.to_numpy('x_y').shape, (2,))

    def test_input_array_is_not_shared(self):
        array = numpy.array([1.0, 2.0])
        bundle = self.appended(array)
        array[0] = 5.0
        self.assertEqual(to_bits(bundle['a']), to_bits([1.0, 2.0]))


class TestFromDictWithArrays(unittest.TestCase):

    def test_arrays_and_lists_mixed(self):
        bundle = Serio.Bundle.from_dict({
            'p': from_bits(PATTERNS),
            'l': [0.5, -0.0],
            'f': numpy.array([0.25], dtype='>f4'),
        })
        self.assertEqual(list(bundle), ['p', 'l', 'f'])
        self.assertEqual(bundle.to_numpy('p').tobytes(), packed(canonical(PATTERNS)))
        self.assertEqual(to_bits(bundle['l']), to_bits([0.5, -0.0]))
        self.assertEqual(to_bits(bundle['f']), to_bits([0.25]))

    def test_nd_and_0d(self):
        bundle = Serio.Bundle.from_dict({
            'm': numpy.arange(6.0).reshape(3, 2),
            's': numpy.float32(0.5),
            'z': numpy.array(7, dtype=numpy.int64),
        })
        self.assertEqual(list(bundle), ['m[3x2]', 's[]', 'z[]'])
        self.assertEqual(bundle.to_numpy('m').shape, (3, 2))
        self.assertEqual(bundle.to_numpy('s').shape, ())
        self.assertEqual(to_bits(bundle['z']), to_bits([7.0]))

    def test_array_errors_name_the_key(self):
        with self.assertRaises(TypeError) as caught:
            Serio.Bundle.from_dict({'ok': numpy.zeros(1), 'cplx': numpy.array([1j])})
        self.assertEqual(str(caught.exception).count("'cplx'"), 1)
        with self.assertRaises(ValueError) as caught:
            Serio.Bundle.from_dict({'steps': numpy.array(2**62)})
        self.assertIn("'steps'", str(caught.exception))


if __name__ == '__main__':
    unittest.main(verbosity=2)
