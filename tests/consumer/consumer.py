# SPDX-License-Identifier: LGPL-2.1-or-later
"""An installed libserio from PyGObject, run by run.sh.

SERIO_CONSUMER_ROOT is the DESTDIR: the typelib, the shared library and the
Serio override must all come from under it. Exits 0 when a round trip
through the override keeps every bit and a bad version line fails with
Serio.Error.VERSION; otherwise raises.
"""

import os
import struct
import sys

import gi

gi.require_version('Serio', '1.0')
from gi.repository import GLib, Serio  # noqa: E402

ROOT = os.path.realpath(os.environ['SERIO_CONSUMER_ROOT']) + os.sep

INPUT_BITS = [
    0x0000000000000000,  # +0
    0x8000000000000000,  # -0
    0x7ff0000000000000,  # +inf
    0xfff0000000000000,  # -inf
    0x0000000000000001,  # smallest subnormal
    0x7fefffffffffffff,  # largest finite
    0x3fb999999999999a,  # 0.1
    0x43d0000000000000,  # 2^62
    0x7ff0000000000001,  # signalling NaN
    0xfff8000000000000,  # NaN with the sign set
]
EXPECTED_BITS = INPUT_BITS[:8] + [0x7ff8000000000000] * 2


def pack_bits(patterns):
    return struct.pack('<%dQ' % len(patterns), *patterns)


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def under_root(path):
    return os.path.realpath(path).startswith(ROOT)


typelib = gi.Repository.get_default().get_typelib_path('Serio')
check(under_root(typelib), 'typelib %s is not the installed one' % typelib)
override = sys.modules['gi.overrides.Serio'].__file__
check(under_root(override), 'override %s is not the installed one' % override)
check(Serio.Bundle.__module__ == 'gi.overrides.Serio', 'the override is not active')

values = list(struct.unpack('<%dd' % len(INPUT_BITS), pack_bits(INPUT_BITS)))
bundle = Serio.Bundle.from_dict({'dense.w': values})
parsed = Serio.Bundle.new_from_string(bundle.to_string(Serio.SaveFlags.PLAIN))
round_trip = parsed['dense.w']
check(struct.pack('<%dd' % len(round_trip), *round_trip) == pack_bits(EXPECTED_BITS),
      'the round trip changed bits')
check(len(parsed) == 1 and parsed.equal(bundle), 'the round trip differs')

try:
    Serio.Bundle.new_from_string('v2|x|0|\n')
except GLib.Error as error:
    check(error.matches(Serio.error_quark(), Serio.Error.VERSION),
          'a v2 line failed with %s' % error)
else:
    raise AssertionError('a v2 line was accepted')

# The serio package, installed beside the override: a checkpoint of a
# float32 array and an int comes back with its types and bits.
import tempfile  # noqa: E402

import numpy  # noqa: E402
import serio  # noqa: E402

check(under_root(serio.__file__), 'the serio package %s is not the installed one'
      % serio.__file__)
# 0.1f, -0, inf, the smallest subnormal and the largest float32.
weights = numpy.array([0x3dcccccd, 0x80000000, 0x7f800000, 0x00000001, 0x7f7fffff],
                      dtype=numpy.uint32).view(numpy.float32)
with tempfile.TemporaryDirectory() as scratch:
    path = os.path.join(scratch, 'ckpt.serio')
    serio.save(path, {'w': weights, 'step': 3})
    state = serio.load(path)
check(state['w'].dtype == numpy.float32 and
      state['w'].view(numpy.uint32).tobytes() == weights.view(numpy.uint32).tobytes(),
      'serio.load changed the float32 array')
check(type(state['step']) is int and state['step'] == 3, 'serio.load changed the int')

# The library is opened lazily, at the first call into it: look only now.
with open('/proc/self/maps', encoding='utf-8') as maps:
    libraries = {line.split()[-1] for line in maps if 'libserio-1.0.so' in line}
check(libraries and all(under_root(p) for p in libraries),
      'libserio loaded from %s' % sorted(libraries))

print('override %s, typelib %s: round trip, error code and serio package ok'
      % tuple(os.sep + os.path.relpath(p, ROOT) for p in (override, typelib)))
