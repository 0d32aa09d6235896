# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the serio package tests share: NumPy (the test exits 77, a skip
for meson, without it), PyTorch or None, Serio and the package, and the
bytes of an array to compare."""

import sys

try:
    import numpy
except ImportError:
    print('NumPy is not installed (Debian: python3-numpy)', file=sys.stderr)
    sys.exit(77)

try:
    import torch
except ImportError:
    torch = None

import gi

gi.require_version('Serio', '1.0')
from gi.repository import Gio, GLib, Serio  # noqa: E402

import serio  # noqa: E402

__all__ = ['numpy', 'torch', 'Gio', 'GLib', 'Serio', 'serio', 'bits']


def bits(array):
    """The bytes of an array's values, in C order: compare these, not
    floats."""
    return numpy.ascontiguousarray(array).view(numpy.uint8).tobytes()
