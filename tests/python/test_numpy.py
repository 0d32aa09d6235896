# SPDX-License-Identifier: LGPL-2.1-or-later
"""NumPy float64 arrays through libserio: the list path (append/get_values)
and the bytes bridge (append_bytes/get_bytes), compared bit for bit with
ndarray.tobytes().

Exits with 77 (a skip for meson) when NumPy is not installed.
"""

import os
import subprocess
import sys
import textwrap
import unittest

try:
    import numpy
except ImportError:
    print('NumPy is not installed (Debian: python3-numpy)', file=sys.stderr)
    sys.exit(77)

import gi

gi.require_version('Serio', '1.0')
from gi.repository import GLib, Serio  # noqa: E402

SEED = 20260501
CANONICAL_NAN = 0x7ff8000000000000
N_RANDOM = 10**4 if os.environ.get('SERIO_TEST_SLOW_TOOL') else 2 * 10**5

SPECIAL_BITS = [
    0x0000000000000000,  # +0
    0x8000000000000000,  # -0
    0x7ff0000000000000,  # +inf
    0xfff0000000000000,  # -inf
    0x0000000000000001,  # smallest subnormal
    0x8000000000000001,
    0x000fffffffffffff,  # largest subnormal
    0x800fffffffffffff,
    0x0010000000000000,  # smallest normal
    0x8010000000000000,
    0x7fefffffffffffff,  # largest finite
    0xffefffffffffffff,
    0x3fb999999999999a,  # 0.1
    0x433fffffffffffff,  # 2^53 - 1
    0x4340000000000001,  # 2^53 + 2
    0x43cfffffffffffff,  # 2^62 - 512
    0x43d0000000000000,  # 2^62
    0x7ff8000000000000,  # the canonical quiet NaN
    0xfff8000000000000,  # NaN with the sign set
    0x7ff0000000000001,  # signalling NaN
    0x7fffffffffffffff,  # NaN with a full payload
    0xfff0000000000001,
]


def from_bits(patterns):
    return numpy.array(patterns, dtype=numpy.uint64).view(numpy.float64)


def canonical(array):
    """What the bundle must hold: the same bits, with every NaN made the quiet NaN."""
    patterns = array.view(numpy.uint64).copy()
    patterns[numpy.isnan(array)] = CANONICAL_NAN
    return patterns.view(numpy.float64)


def weights(n):
    return numpy.random.default_rng(SEED).normal(0.0, 0.05, n)


def random_patterns(n):
    rng = numpy.random.default_rng(SEED + 1)
    patterns = rng.integers(0, 2**64 - 1, size=n, dtype=numpy.uint64, endpoint=True)
    return patterns.view(numpy.float64)


def bytes_of(bundle, index):
    return numpy.frombuffer(bundle.get_bytes(index).get_data(), dtype=numpy.float64)


class BitExactTestCase(unittest.TestCase):
    def assert_same_bits(self, got, expected):
        got = numpy.asarray(got, dtype=numpy.float64)
        self.assertEqual(got.shape, expected.shape)
        if got.tobytes() != expected.tobytes():
            diff = numpy.flatnonzero(got.view(numpy.uint64) != expected.view(numpy.uint64))
            self.fail('%d of %d values differ; first at %d: %016x != %016x'
                      % (diff.size, got.size, diff[0],
                         got.view(numpy.uint64)[diff[0]], expected.view(numpy.uint64)[diff[0]]))


class ListPathTest(BitExactTestCase):
    """append(name, array.tolist()) and get_values(), through the text."""

    def check_round_trip(self, array):
        expected = canonical(array)
        b = Serio.Bundle.new()
        b.append('w', array.tolist())
        self.assert_same_bits(b.get_values(0), expected)
        text = b.to_string(Serio.SaveFlags.PLAIN)
        c = Serio.Bundle.new_from_string(text)
        self.assert_same_bits(c.get_values(0), expected)
        self.assertTrue(b.equal(c))
        self.assertEqual(c.to_string(Serio.SaveFlags.PLAIN), text)

    def test_weights(self):
        self.check_round_trip(weights(N_RANDOM))

    def test_special_values(self):
        self.check_round_trip(from_bits(SPECIAL_BITS))

    def test_random_bit_patterns(self):
        array = random_patterns(N_RANDOM)
        self.assertTrue(numpy.isnan(array).any())
        self.check_round_trip(array)

    def test_canonical_helper(self):
        expected = from_bits(SPECIAL_BITS[:17] + [CANONICAL_NAN] * 5)
        self.assertEqual(canonical(from_bits(SPECIAL_BITS)).tobytes(), expected.tobytes())


class BytesBridgeTest(BitExactTestCase):
    """append_bytes(name, GLib.Bytes.new(array.tobytes())) and
    numpy.frombuffer(get_bytes(i).get_data(), dtype=numpy.float64)."""

    def check_bridge(self, array):
        expected = canonical(array)
        b = Serio.Bundle.new()
        b.append_bytes('w', GLib.Bytes.new(array.tobytes()))
        self.assert_same_bits(bytes_of(b, 0), expected)
        self.assert_same_bits(b.get_values(0), expected)
        c = Serio.Bundle.new_from_string(b.to_string(Serio.SaveFlags.PLAIN))
        self.assert_same_bits(bytes_of(c, 0), expected)
        self.assertTrue(b.equal(c))

        listed = Serio.Bundle.new()
        listed.append('w', array.tolist())
        self.assertTrue(b.equal(listed))
        self.assertEqual(b.to_string(Serio.SaveFlags.PLAIN), listed.to_string(Serio.SaveFlags.PLAIN))

    def test_weights(self):
        self.check_bridge(weights(N_RANDOM))

    def test_special_values(self):
        array = from_bits(SPECIAL_BITS)
        self.check_bridge(array)
        b = Serio.Bundle.new()
        b.append_bytes('s', GLib.Bytes.new(array.tobytes()))
        got = bytes_of(b, 0).view(numpy.uint64)
        self.assertEqual(int(got[1]), 0x8000000000000000)
        self.assertTrue((got[17:] == CANONICAL_NAN).all())

    def test_random_bit_patterns(self):
        self.check_bridge(random_patterns(N_RANDOM))

    def test_empty(self):
        b = Serio.Bundle.new()
        b.append_bytes('e', GLib.Bytes.new(b''))
        self.assertEqual(b.to_string(Serio.SaveFlags.PLAIN), 'v1|e|0|\n')
        self.assertEqual(b.get_bytes(0).get_size(), 0)
        self.assertEqual(bytes_of(b, 0).size, 0)

    def test_unaligned_slice(self):
        array = from_bits(SPECIAL_BITS)
        whole = GLib.Bytes.new(b'\xff' + array.tobytes())
        b = Serio.Bundle.new()
        b.append_bytes('u', GLib.Bytes.new_from_bytes(whole, 1, array.nbytes))
        self.assert_same_bits(bytes_of(b, 0), canonical(array))

    def test_bundle_owns_its_values(self):
        array = weights(64)
        expected = array.copy()
        b = Serio.Bundle.new()
        b.append_bytes('w', GLib.Bytes.new(array.tobytes()))
        array[:] = 0.0
        self.assert_same_bits(bytes_of(b, 0), expected)
        view = bytes_of(b, 0)
        self.assertFalse(view.flags.writeable)

    def test_wrong_size_is_a_precondition_failure(self):
        child = textwrap.dedent('''
            import gi
            gi.require_version('Serio', '1.0')
            from gi.repository import GLib, Serio
            b = Serio.Bundle.new()
            b.append_bytes('w', GLib.Bytes.new(bytes(12)))
            print(b.get_n_arrays())
        ''')
        env = dict(os.environ)
        env.pop('G_DEBUG', None)
        result = subprocess.run([sys.executable, '-B', '-c', child], env=env,
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), '0')
        self.assertIn('CRITICAL', result.stderr)
        self.assertIn('serio_bundle_append_bytes', result.stderr)


if __name__ == '__main__':
    unittest.main(verbosity=2)
