# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shapes in names (serio-v1-files.md §3) through the C API from Python,
without the override: append_with_shape, get_shape, get_base_name,
dup_values and the lookup rule.
"""

import struct
import unittest

import gi

gi.require_version('Serio', '1.0')
from gi.repository import GLib, Serio  # noqa: E402


def bits(values):
    return struct.pack('<%dd' % len(values), *values)


class ShapeTest(unittest.TestCase):

    def test_append_with_shape_writes_the_suffix(self):
        b = Serio.Bundle.new()
        b.append_with_shape('conv.weight', [2, 1, 3], [1.0, 2.0, 3.0, 4.0, 5.0, -0.0])
        b.append_with_shape('steps', [], [5.0])
        b.append_bytes_with_shape('g', [1, 2], GLib.Bytes.new(bits([0.5, 0.25])))
        b.append('bias', [0.5, 0.25])
        self.assertEqual(b.to_string(Serio.SaveFlags.PLAIN),
                         'v1|conv.weight[2x1x3]|6|1,2,3,4,5,-0\n'
                         'v1|steps[]|1|5\n'
                         'v1|g[1x2]|2|1p-1,1p-2\n'
                         'v1|bias|2|1p-1,1p-2\n')
        self.assertEqual(b.get_shape(0), [2, 1, 3])
        self.assertEqual(b.get_shape(1), [])
        self.assertEqual(b.get_shape(2), [1, 2])
        self.assertEqual(b.get_shape(3), [2])
        self.assertEqual([b.get_base_name(i) for i in range(4)],
                         ['conv.weight', 'steps', 'g', 'bias'])
        self.assertEqual(Serio.SHAPE_MAX_DIMS, 32)

    def test_parsed_names(self):
        b = Serio.Bundle.new_from_string('v1|a[2x2]|4|1,2,3,4\nv1|b[2x2]|3|1,2,3\n'
                                     'v1|c[]|1|7\nv1|d[02]|2|1,2\n')
        self.assertEqual([b.get_shape(i) for i in range(4)], [[2, 2], [3], [], [2]])
        self.assertEqual([b.get_base_name(i) for i in range(4)],
                         ['a', 'b[2x2]', 'c', 'd[02]'])

    def test_large_dims(self):
        b = Serio.Bundle.new_from_string('v1|z[18446744073709551615x0]|0|\n')
        self.assertEqual(b.get_shape(0), [2**64 - 1, 0])

    def test_lookup_rule(self):
        b = Serio.Bundle.new()
        for name, n in (('w[2]', 2), ('w', 3), ('x[1]', 1), ('x[2]', 2), ('y[5]', 1)):
            b.append(name, [0.0] * n)
        self.assertEqual(b.lookup('w'), (True, 1))
        self.assertEqual(b.lookup('w[2]'), (True, 0))
        self.assertEqual(b.lookup('x'), (True, 2))
        self.assertEqual(b.lookup('y[5]'), (True, 4))
        self.assertFalse(b.lookup('y')[0])

    def test_dup_values_is_a_copy(self):
        b = Serio.Bundle.new()
        b.append('w', [0.5, -0.0])
        values = b.dup_values(0)
        self.assertEqual(bits(values), bits([0.5, -0.0]))
        self.assertEqual(b.dup_values(0), values)
        b.append('e', [])
        self.assertEqual(b.dup_values(1), [])


if __name__ == '__main__':
    unittest.main(verbosity=2)
