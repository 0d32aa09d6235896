# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the override tests share: Serio with its override, float64 bit
patterns, and the conversions between floats and their bits.

The expected bits come from the patterns themselves (or the canonical NaN
for a NaN), never from the code under test.
"""

import os
import struct

import gi

gi.require_version('Serio', '1.0')
from gi.repository import Serio  # noqa: E402

__all__ = ['Serio', 'CANONICAL_NAN', 'SPECIAL_BITS', 'canonical', 'is_nan_bits',
           'load_patterns', 'to_bits', 'to_floats']

CANONICAL_NAN = 0x7ff8000000000000

SPECIAL_BITS = [
    0x0000000000000000,  # +0
    0x8000000000000000,  # -0
    0x7ff0000000000000,  # +inf
    0xfff0000000000000,  # -inf
    0x0000000000000001,  # smallest subnormal
    0x800fffffffffffff,  # largest subnormal, negative
    0x7fefffffffffffff,  # largest finite
    0x3fb999999999999a,  # 0.1
    0x43d0000000000000,  # 2^62
    0x7ff8000000000000,  # the canonical quiet NaN
    0xfff8000000000000,  # NaN with the sign set
    0x7ff0000000000001,  # signalling NaN
    0x7fffffffffffffff,  # NaN with a full payload
]


def is_nan_bits(pattern):
    return (pattern & 0x7ff0000000000000) == 0x7ff0000000000000 and \
        (pattern & 0x000fffffffffffff) != 0


def canonical(patterns):
    """The bits a bundle holds after appending patterns."""
    return [CANONICAL_NAN if is_nan_bits(p) else p for p in patterns]


def to_floats(patterns):
    return list(struct.unpack('<%dd' % len(patterns),
                              struct.pack('<%dQ' % len(patterns), *patterns)))


def to_bits(values):
    return list(struct.unpack('<%dQ' % len(values),
                              struct.pack('<%dd' % len(values), *values)))


def load_patterns():
    """The 44,286 hard float64 patterns of tests/data/f64_patterns.txt."""
    path = os.path.join(os.environ['SERIO_TEST_DATA'], 'f64_patterns.txt')
    with open(path, encoding='ascii') as f:
        return [int(line, 16) for line in f if line.strip()]
