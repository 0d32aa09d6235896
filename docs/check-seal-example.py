#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks the worked example of docs/format.md, "Sealed texts".

Usage: check-seal-example.py FORMAT_MD

The seal of the example is recomputed with the python3-xxhash module,
independently of libserio, together with the numbers the page quotes (the
hash in hexadecimal, its two halves, the number of bytes hashed); then
libserio must read the example into the arrays the page describes, bit for
bit, and reject it with one digit changed.
"""

import re
import struct
import sys

try:
    import xxhash
except ImportError:
    print('python3-xxhash is not installed', file=sys.stderr)
    sys.exit(77)

import gi
gi.require_version('Serio', '1.0')
from gi.repository import GLib, Serio  # noqa: E402


def fail(message):
    print('check-seal-example: ' + message, file=sys.stderr)
    sys.exit(1)


def main():
    with open(sys.argv[1], encoding='utf-8') as f:
        page = f.read()
    section = page.split('## Sealed texts', 1)[1].split('\n## ', 1)[0]
    example = re.search(r'```\n(.*?)```', section, re.S).group(1).encode()

    lines = example.split(b'\n')[:-1]
    if lines[0] != b'v1|serio.sealed|1|1':
        fail('the example does not open with the seal record')
    body = b''.join(line + b'\n' for line in lines[:-1])
    seal = re.fullmatch(rb'v1\|serio\.seal\|3\|(\d+),(\d+),(\d+)', lines[-1])
    if seal is None:
        fail('the example does not end with a seal record')
    n, hi, lo = (int(x) for x in seal.groups())

    digest = xxhash.xxh3_64_intdigest(body)
    if (n, hi, lo) != (len(lines) - 1, digest >> 32, digest & 0xFFFFFFFF):
        fail('the seal of the example is wrong: expected %d,%d,%d'
             % (len(lines) - 1, digest >> 32, digest & 0xFFFFFFFF))
    for quoted in ('`0x%016x`' % digest, '`0x%08x` = %d' % (hi, hi),
                   '`0x%08x` =\n  %d' % (lo, lo), 'the %d bytes' % len(body)):
        if quoted not in section:
            fail('the page does not say %r' % quoted)

    bundle = Serio.Bundle.new_from_bytes(GLib.Bytes.new(example))
    expected = [('dense.w', [0.1, -0.0, float('inf')]), ('dense.b', [-1.25])]
    if bundle.get_n_arrays() != len(expected):
        fail('libserio reads %d arrays' % bundle.get_n_arrays())
    for i, (name, values) in enumerate(expected):
        got = bundle.get_bytes(i).get_data()
        if bundle.get_name(i) != name or got != struct.pack('=%dd' % len(values), *values):
            fail('array %d is not %s = %r' % (i, name, values))

    damaged = example.replace(b'3602879701896397p-55', b'3602879701896399p-55')
    try:
        Serio.Bundle.new_from_bytes(GLib.Bytes.new(damaged))
    except GLib.Error as e:
        if not e.matches(Serio.Error.quark(), Serio.Error.INTEGRITY):
            fail('a changed digit gave %s, not INTEGRITY' % e)
    else:
        fail('the example with a changed digit loaded')


if __name__ == '__main__':
    main()
