# SPDX-License-Identifier: LGPL-2.1-or-later
"""serio convert keeps element types both ways (issue 18): NumPy's own
arrays of every type that the format has go .npz -> serio -> .npz with
the same dtype and the same bytes; a serio file's typed records go out
as .npy of their type; metadata records never become members; a legacy
file's serio.dtypes table is applied.

Usage: test_convert_types.py SERIO VERSION [unittest arguments]

Arrays are compared by dtype, shape and bytes (tobytes()), never with ==.
Needs NumPy (the tests are skipped without it).
"""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_serio_tool as base  # noqa: E402
from test_serio_tool import ToolTestCase  # noqa: E402

try:
    import numpy
except ImportError:
    numpy = None

# The types of CONTRACT.md that NumPy has, and the marker of each.
TYPES = ['float64', 'float32', 'float16', 'int8', 'int16', 'int32', 'int64',
         'uint8', 'uint16', 'uint32', 'uint64', 'bool']


def sample(dtype, rng, shape):
    """Values of @dtype that float64 holds exactly, the extremes included."""
    n = int(numpy.prod(shape))
    if dtype == 'bool':
        values = rng.integers(0, 2, n).astype(bool)
    elif dtype.startswith('float'):
        values = (rng.standard_normal(n) * 0.05).astype(dtype)
        info = numpy.finfo(dtype)
        special = numpy.array([0.0, -0.0, numpy.inf, -numpy.inf, info.max, info.tiny,
                               info.smallest_subnormal], dtype=dtype)
        values[:len(special)] = special[:n]
    else:
        info = numpy.iinfo(dtype)
        lo, hi = max(info.min, -2 ** 53), min(info.max, 2 ** 53)
        values = rng.integers(lo, hi, n, dtype=dtype, endpoint=True)
        # The extremes that float64 holds exactly (int64's are powers of 2).
        ends = [info.min, info.max] if info.bits < 64 else \
            ([-2 ** 63, 2 ** 62] if info.min < 0 else [0, 2 ** 64 - 2048])
        values[:2] = numpy.array(ends, dtype=dtype)[:n]
    return values.reshape(shape)


def need_numpy(test):
    return unittest.skipIf(numpy is None, 'NumPy is not installed')(test)


class ConvertTypesTests(ToolTestCase):

    def p(self, name):
        return os.fsdecode(self.path(name))

    def assert_same_array(self, got, want):
        self.assertEqual(got.dtype, want.dtype.newbyteorder('<') if want.dtype.byteorder == '>'
                         else want.dtype)
        self.assertEqual(got.shape, want.shape)
        self.assertEqual(numpy.ascontiguousarray(got).tobytes(),
                         numpy.ascontiguousarray(want.astype(got.dtype)).tobytes())

    @need_numpy
    def test_npz_round_trip_keeps_types(self):
        rng = numpy.random.default_rng(18)
        arrays = {}
        for i, dtype in enumerate(TYPES):
            arrays['a_' + dtype] = sample(dtype, rng, [(7,), (2, 3), ()][i % 3])
        for compressed in (False, True):
            with self.subTest(compressed=compressed):
                (numpy.savez_compressed if compressed else numpy.savez)(self.p('in.npz'), **arrays)
                self.run_tool('convert', 'in.npz', 'mid.serio', status=0)
                self.run_tool('convert', *(['-z'] if compressed else []), 'mid.serio', 'out.npz',
                              status=0)
                with numpy.load(self.p('out.npz')) as back:
                    self.assertEqual(list(back.keys()), list(arrays))
                    for name, want in arrays.items():
                        self.assert_same_array(back[name], want)
        # The serio file says each type in its names, and float64 none.
        names = re.findall(rb'^v1\|([^|]*)\|', self.read('mid.serio'), re.M)
        self.assertEqual(names[1:-1], [
            b'a_float64', b'a_float32@float32[2x3]', b'a_float16@float16[]',
            b'a_int8@int8[7]', b'a_int16@int16[2x3]', b'a_int32@int32[]',
            b'a_int64@int64[7]', b'a_uint8@uint8[2x3]', b'a_uint16@uint16[]',
            b'a_uint32@uint32[7]', b'a_uint64@uint64[2x3]', b'a_bool@bool[]'])

    @need_numpy
    def test_npy_both_byte_orders_and_fortran(self):
        rng = numpy.random.default_rng(5)
        for dtype in TYPES:
            for order in '<>':
                want = sample(dtype, rng, (3, 4))
                stored = want.astype(numpy.dtype(dtype).newbyteorder(order))
                for fortran in (False, True):
                    with self.subTest(dtype=dtype, order=order, fortran=fortran):
                        numpy.save(self.p('in.npy'),
                                   numpy.asfortranarray(stored) if fortran else stored)
                        self.run_tool('convert', 'in.npy', 'mid.serio', status=0)
                        self.run_tool('convert', 'mid.serio', 'out.npy', status=0)
                        self.assert_same_array(numpy.load(self.p('out.npy')), want)

    @need_numpy
    def test_float32_costs_float32_tokens(self):
        """About 13 bytes a value for N(0, 0.05) float32 weights (each
        token the exact float32 value), and back to .npz at 4 bytes a
        value, not float64's 8."""
        rng = numpy.random.default_rng(1)
        w = (rng.standard_normal(20000) * 0.05).astype(numpy.float32)
        numpy.save(self.p('w.npy'), w)
        self.run_tool('convert', '--plain', 'w.npy', 'w.serio', status=0)
        text = self.read('w.serio')
        self.assertTrue(text.startswith(b'v1|w@float32[20000]|20000|'))
        self.assertLess(len(text) / w.size, 14.0)
        self.run_tool('convert', 'w.serio', 'back.npz', status=0)
        self.assertLess(os.path.getsize(self.p('back.npz')), 4 * w.size + 1024)

    @need_numpy
    def test_typed_records_to_npy(self):
        cases = [
            (b'v1|m@bool[4]|4|1,0,0,1\n', numpy.array([True, False, False, True])),
            (b'v1|s@int64[]|1|-9007199254740992\n', numpy.array(-2 ** 53, dtype=numpy.int64)),
            (b'v1|h@float16[2x1]|2|1p-24,-65504\n',
             numpy.array([[2.0 ** -24], [-65504.0]], dtype=numpy.float16)),
            (b'v1|u@uint16[3]|3|0,65535,7\n', numpy.array([0, 65535, 7], dtype=numpy.uint16)),
        ]
        for text, want in cases:
            with self.subTest(text=text):
                self.write('in.serio', text)
                self.run_tool('convert', 'in.serio', 'out.npy', status=0)
                self.assert_same_array(numpy.load(self.p('out.npy')), want)

    @need_numpy
    def test_bfloat16_goes_out_as_float32(self):
        """NumPy has no bfloat16: its values are written exactly as float32."""
        self.write('in.serio', b'v1|b@bfloat16[3]|3|1p-1,-3,inf\n')
        proc = self.run_tool('convert', 'in.serio', 'out.npz', status=0)
        self.assertIn('bfloat16', proc.stderr.decode())
        with numpy.load(self.p('out.npz')) as back:
            self.assert_same_array(back['b'], numpy.array([0.5, -3.0, numpy.inf], numpy.float32))

    @need_numpy
    def test_metadata_never_becomes_a_member(self):
        self.write('in.serio', b'v1|serio.tree|2|1,2\nv1|w@float32[2]|2|1p-1,1\n'
                   b'v1|serio.metadata.note|1|7\nv1|b|1|3\n')
        self.run_tool('convert', 'in.serio', 'out.npz', status=0)
        with numpy.load(self.p('out.npz')) as back:
            self.assertEqual(list(back.keys()), ['w', 'b'])
            self.assert_same_array(back['w'], numpy.array([0.5, 1.0], numpy.float32))
        # To .npy, a file of one array and metadata holds one array.
        self.write('one.serio', b'v1|serio.tree|1|0\nv1|w@int8[2]|2|-128,127\n')
        self.run_tool('convert', 'one.serio', 'one.npy', status=0)
        self.assert_same_array(numpy.load(self.p('one.npy')), numpy.array([-128, 127], numpy.int8))

    @need_numpy
    def test_float64_name_like_a_marker(self):
        """A float64 matrix called w@int8 would be stored as w@int8[2x2],
        an int8 array w: refused. As a vector it keeps its plain name."""
        numpy.save(self.p('w@int8.npy'), numpy.zeros((2, 2)))
        self.write('out.serio', b'old')
        proc = self.run_tool('convert', 'w@int8.npy', 'out.serio', status=1)
        self.assertIn('type marker', proc.stderr.decode())
        self.assertEqual(self.read('out.serio'), b'old')
        numpy.save(self.p('w@int8.npy'), numpy.zeros(2))
        self.run_tool('convert', '--plain', 'w@int8.npy', 'out.serio', status=0)
        self.assertEqual(self.read('out.serio'), b'v1|w@int8|2|0,0\n')
        # w@float64 is no marker (float64 has none): a plain base name.
        numpy.save(self.p('w@float64.npy'), numpy.zeros((1, 2)))
        self.run_tool('convert', '--plain', 'w@float64.npy', 'out.serio', status=0)
        self.assertEqual(self.read('out.serio'), b'v1|w@float64[1x2]|2|0,0\n')

    @need_numpy
    def test_legacy_dtypes_table(self):
        """A first record serio.dtypes (codes of CONTRACT.md: 1 float32,
        4 int64, 12 bool, 2 float16) types the arrays that follow."""
        text = (b'v1|serio.dtypes|4|1,4,12,2\nv1|w[2]|2|1p-1,-3\nv1|n[]|1|5\n'
                b'v1|m|3|1,0,1\nv1|h|4|65504,1p-24,-1p-14,-1023p-24\n')
        self.write('legacy.serio', text)
        self.run_tool('convert', 'legacy.serio', 'out.npz', status=0)
        with numpy.load(self.p('out.npz')) as back:
            self.assertEqual(list(back.keys()), ['w', 'n', 'm', 'h'])
            self.assert_same_array(back['w'], numpy.array([0.5, -3.0], numpy.float32))
            self.assert_same_array(back['n'], numpy.array(5, numpy.int64))
            self.assert_same_array(back['m'], numpy.array([True, False, True]))
            self.assert_same_array(back['h'], numpy.array([65504.0, 2.0 ** -24, -2.0 ** -14,
                                                           -1023 * 2.0 ** -24], numpy.float16))
        self.run_tool('convert', '--name', 'n', 'legacy.serio', 'n.npy', status=0)
        self.assert_same_array(numpy.load(self.p('n.npy')), numpy.array(5, numpy.int64))

    @need_numpy
    def test_legacy_dtypes_refused(self):
        cases = {
            b'v1|serio.dtypes|1|1\nv1|w|1|3602879701896397p-55\n': 'float32',
            b'v1|serio.dtypes|1|12\nv1|w|1|2\n': 'bool',
            b'v1|serio.dtypes|2|1,1\nv1|w|1|1\n': 'serio.dtypes',
            b'v1|serio.dtypes|1|99\nv1|w|1|1\n': 'serio.dtypes',
            b'v1|serio.dtypes|1|13\nv1|w|2|72,105\n': 'text',
        }
        for text, message in cases.items():
            with self.subTest(text=text):
                self.write('legacy.serio', text)
                self.write('out.npz', b'old')
                proc = self.run_tool('convert', 'legacy.serio', 'out.npz', status=1)
                self.assertIn(message, proc.stderr.decode())
                self.assertEqual(self.read('out.npz'), b'old')


if __name__ == '__main__':
    base.SERIO, base.VERSION = os.path.abspath(sys.argv[1]), sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
