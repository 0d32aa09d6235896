# SPDX-License-Identifier: LGPL-2.1-or-later
"""Tests of the serio command-line tool, run through its command line.

Usage: test_serio_tool.py SERIO VERSION [unittest arguments]

Expected outputs are computed here, independently of libserio: serio text
by an encoder that follows the spec, checksums by FNV-1a in Python, numbers
by repr(), .npy files byte by byte from the NPY format description (NumPy,
when importable, only cross-checks).
"""

import errno
import fractions
import json
import locale
import math
import os
import pty
import random
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import unittest
import zipfile

SERIO = None
VERSION = None

CANONICAL_NAN = struct.unpack('<d', struct.pack('<Q', 0x7FF8000000000000))[0]
PROGRESS_THRESHOLD = 64 * 1024 * 1024


# --- Independent models -----------------------------------------------------

def bits(x):
    return struct.unpack('<Q', struct.pack('<d', x))[0]


def from_bits(b):
    return struct.unpack('<d', struct.pack('<Q', b))[0]


def token(x):
    """The canonical v1 token of x (spec section 3)."""
    if math.isnan(x):
        return 'nan'
    if math.isinf(x):
        return 'inf' if x > 0 else '-inf'
    if x == 0:
        return '-0' if math.copysign(1, x) < 0 else '0'
    sign = '-' if x < 0 else ''
    n, d = abs(x).as_integer_ratio()
    if d == 1 and n < 2 ** 62:
        return sign + str(n)
    if d == 1:
        e = (n & -n).bit_length() - 1
        m = n >> e
    else:
        e = -(d.bit_length() - 1)
        m = n
    return '%s%dp%d' % (sign, m, e)


def record(name, values):
    return 'v1|%s|%d|%s\n' % (name, len(values), ','.join(token(v) for v in values))


def serio_text(arrays):
    return ''.join(record(name, values) for name, values in arrays).encode('utf-8')


def sealed(text):
    """The sealed form of plain v1 @text (serio-v1-files.md §2), computed
    with the python3-xxhash module, independently of libserio."""
    import xxhash
    body = b'v1|serio.sealed|1|1\n' + text
    n = 1 + sum(1 for line in text.split(b'\n') if line.strip(b'\r'))
    h = xxhash.xxh3_64_intdigest(body)
    return body + b'v1|serio.seal|3|%d,%d,%d\n' % (n, h >> 32, h & 0xFFFFFFFF)


def seal_closing(body):
    """Appends the closing seal record to @body, which must open with
    v1|serio.sealed|1|1 (after blank lines, if any)."""
    import xxhash
    n = sum(1 for line in body.split(b'\n') if line.strip(b'\r'))
    h = xxhash.xxh3_64_intdigest(body)
    return body + b'v1|serio.seal|3|%d,%d,%d\n' % (n, h >> 32, h & 0xFFFFFFFF)


def fnv1a_folded(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h ^= byte
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return (h >> 32) ^ (h & 0xFFFFFFFF)


def shortest(x):
    """The text serio cat prints: Python's repr, less a trailing '.0'."""
    if math.isnan(x):
        return 'nan'
    if math.isinf(x):
        return 'inf' if x > 0 else '-inf'
    if x == 0:
        return '-0' if math.copysign(1, x) < 0 else '0'
    text = repr(x)
    return text[:-2] if text.endswith('.0') else text


# Element types (docs/format.md): the marker in a name, and how each prints.
INTEGER_DTYPES = {'int8': (-2 ** 7, 2 ** 7 - 1), 'int16': (-2 ** 15, 2 ** 15 - 1),
                  'int32': (-2 ** 31, 2 ** 31 - 1), 'int64': (-2 ** 63, 2 ** 63 - 1),
                  'uint8': (0, 2 ** 8 - 1), 'uint16': (0, 2 ** 16 - 1),
                  'uint32': (0, 2 ** 32 - 1), 'uint64': (0, 2 ** 64 - 1), 'bool': (0, 1)}
# (stored mantissa bits, exponent bits) of the narrow IEEE formats
NARROW_FORMATS = {'float32': (23, 8), 'float16': (10, 5), 'bfloat16': (7, 8)}


def narrow_bits(x, dtype):
    """The bit pattern of x (≥ 0, exactly of @dtype) in @dtype."""
    if dtype == 'float16':
        return struct.unpack('<H', struct.pack('<e', x))[0]
    pattern = f32_bits(x)
    return pattern >> 16 if dtype == 'bfloat16' else pattern


def narrow_value(pattern, dtype):
    """The exact value of a positive finite pattern of @dtype."""
    mantissa_bits, exponent_bits = NARROW_FORMATS[dtype]
    bias = (1 << (exponent_bits - 1)) - 1
    mantissa, exponent = pattern & ((1 << mantissa_bits) - 1), pattern >> mantissa_bits
    if exponent == 0:
        return fractions.Fraction(mantissa) * fractions.Fraction(2) ** (1 - bias - mantissa_bits)
    return (fractions.Fraction((1 << mantissa_bits) | mantissa)
            * fractions.Fraction(2) ** (exponent - bias - mantissa_bits))


def typed_shortest(x, dtype):
    """What the tool prints for a value of an array of @dtype: integers in
    full, float64 as repr() (shortest()), the narrow floats as the shortest
    decimal in the value's rounding interval of its own format, nearest,
    found by trying 1, 2, 3… digits with exact fractions."""
    if dtype in INTEGER_DTYPES:
        return str(int(x))
    if dtype == 'float64' or math.isnan(x) or math.isinf(x) or x == 0:
        return shortest(x)
    mantissa_bits, exponent_bits = NARROW_FORMATS[dtype]
    pattern = narrow_bits(abs(x), dtype)
    value = fractions.Fraction(abs(x))
    below = narrow_value(pattern - 1, dtype) if pattern > 1 else fractions.Fraction(0)
    if pattern + 1 == ((1 << exponent_bits) - 1) << mantissa_bits:
        above = value + (value - below)       # where rounding gives infinity
    else:
        above = narrow_value(pattern + 1, dtype)
    low, high = (below + value) / 2, (value + above) / 2

    def inside(d):
        return low < d < high or (pattern % 2 == 0 and d in (low, high))

    for n in range(1, 18):
        mantissa, exponent = ('%.*e' % (n - 1, abs(x))).split('e')
        digits, unit = int(mantissa.replace('.', '')), fractions.Fraction(10) ** (int(exponent) - n + 1)
        nearest = digits * unit
        if nearest > value:
            other = (10 ** n - 1) * unit / 10 if digits == 10 ** (n - 1) else nearest - unit
        else:
            other = nearest + unit
        found = [d for d in (nearest, other) if inside(d)]
        if found:
            # at most 9 digits: repr() of the double gives them back, in its layout
            return ('-' if x < 0 else '') + shortest(float(found[0]))
    raise AssertionError('no shortest decimal for %r' % x)


def typed_precision(dtype, values):
    """The precision of diff's distances: the recorded type's, or for
    float64 (unmarked) arrays the likely one."""
    if dtype in INTEGER_DTYPES:
        return 'integer'
    if dtype in NARROW_FORMATS:
        return dtype
    return likely_precision(values)


def ordered(x):
    b = bits(x)
    return (~b & 0xFFFFFFFFFFFFFFFF) if b >> 63 else b | (1 << 63)


def ulps(a, b):
    return abs(ordered(a) - ordered(b))


def f32_bits(x):
    return struct.unpack('<I', struct.pack('<f', x))[0]


def fits(x, fmt):
    """Whether x is exactly a float32 ('f') or a float16 ('e')."""
    try:
        return bits(struct.unpack('<' + fmt, struct.pack('<' + fmt, x))[0]) == bits(x)
    except OverflowError:
        return False


def likely_precision(values):
    """The narrowest type that holds every value (NaN aside) exactly."""
    numbers = [v for v in values if not math.isnan(v)]
    if all(math.isfinite(v) and v == int(v) and abs(v) <= 2 ** 53 for v in numbers):
        return 'integer'
    if all(fits(v, 'f') and f32_bits(v) & 0xFFFF == 0 for v in numbers):
        return 'bfloat16'
    if all(fits(v, 'e') for v in numbers):
        return 'float16'
    if all(fits(v, 'f') for v in numbers):
        return 'float32'
    return 'float64'


def ordered_width(b, width):
    sign, mask = 1 << (width - 1), (1 << width) - 1
    return (~b & mask) if b & sign else b | sign


def distance(a, b, precision):
    """ULPs of the precision between a and b; units for integers."""
    if precision == 'integer':
        return abs(int(a) - int(b))
    if precision == 'bfloat16':
        pattern, width = (lambda x: f32_bits(x) >> 16), 16
    elif precision == 'float16':
        pattern, width = (lambda x: struct.unpack('<H', struct.pack('<e', x))[0]), 16
    elif precision == 'float32':
        pattern, width = f32_bits, 32
    else:
        pattern, width = bits, 64
    return abs(ordered_width(pattern(a), width) - ordered_width(pattern(b), width))


def distance_text(n, precision):
    unit = 'unit' if precision == 'integer' else 'ULP'
    return '%d %s%s' % (n, unit, '' if n == 1 else 's')


def relative(a, b):
    d = abs(a - b)
    if d == 0:
        return 0.0
    if b == 0 or (math.isinf(d) and math.isinf(b)):
        return math.inf
    return d / abs(b)


def is_close(a, b, atol, rtol):
    """numpy.allclose for one pair, NaN equal to NaN."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a == b:
        return True
    if math.isinf(a) or math.isinf(b):
        return False
    return abs(a - b) <= atol + rtol * abs(b)


def diff_lines(name, a, b, max_values=5, tolerance=None, dtype='float64'):
    """What serio diff prints about the values of one array (of @dtype in
    both files)."""
    n = min(len(a), len(b))
    precision = typed_precision(dtype, a + b)
    differ = [i for i in range(n) if bits(a[i]) != bits(b[i])]
    if not differ:
        return []
    lines = ['“%s”: %d of %d values differ%s' % (name, len(differ), n, 's' if len(differ) == 1 else '')]
    numbers = [i for i in differ if not math.isnan(a[i]) and not math.isnan(b[i])]
    if numbers:
        lines.append('  max absolute difference %s, relative %s, distance %s (%s)' % (
            shortest(max(abs(a[i] - b[i]) for i in numbers)),
            shortest(max(relative(a[i], b[i]) for i in numbers)),
            distance_text(max(distance(a[i], b[i], precision) for i in numbers), precision),
            precision))
    shown = differ
    if tolerance is not None:
        shown = [i for i in differ if not is_close(a[i], b[i], *tolerance)]
        lines.append('  %d outside the tolerance' % len(shown) if shown else '  all within the tolerance')
    for i in shown[:max_values]:
        text = 'NaN' if math.isnan(a[i]) or math.isnan(b[i]) else \
            distance_text(distance(a[i], b[i], precision), precision)
        lines.append('  [%d] %s → %s (%s)' % (i, typed_shortest(a[i], dtype), typed_shortest(b[i], dtype),
                                              text))
    if len(shown) > max_values > 0:
        lines.append('  … and %d more' % (len(shown) - max_values))
    return lines


def npy_bytes(descr, shape, data, fortran_order=False, version=(1, 0), header=None):
    """A .npy file, following numpy.lib.format byte for byte."""
    if header is None:
        shape_text = '(%s)' % ''.join('%d,' % n for n in shape) if len(shape) == 1 else \
            '(%s)' % ', '.join(str(n) for n in shape)
        header = "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
            descr if descr.startswith('[') else repr(descr), fortran_order, shape_text)
    header = header.encode('latin-1' if version[0] < 3 else 'utf-8')
    length_size = 2 if version[0] == 1 else 4
    prefix_len = 6 + 2 + length_size
    padding = -(prefix_len + len(header) + 1) % 64
    header += b' ' * padding + b'\n'
    fmt = '<H' if length_size == 2 else '<I'
    return b'\x93NUMPY' + bytes(version) + struct.pack(fmt, len(header)) + header + data


def f8_data(values, byte_order='<'):
    return b''.join(struct.pack(byte_order + 'd', v) for v in values)


def parse_npy_vector(data):
    """(descr, fortran_order, shape, payload) of a .npy file, by the spec."""
    assert data[:6] == b'\x93NUMPY', data[:6]
    major = data[6]
    if major == 1:
        (length,) = struct.unpack('<H', data[8:10])
        start = 10
    else:
        (length,) = struct.unpack('<I', data[8:12])
        start = 12
    header = data[start:start + length].decode('latin-1')
    assert header.endswith('\n')
    assert (start + length) % 64 == 0
    fields = eval(header, {'__builtins__': {}})  # a Python literal, from our own tool
    return fields['descr'], fields['fortran_order'], fields['shape'], data[start + length:]


def tool_is_sanitized():
    """Whether the tool is built with AddressSanitizer, whose shadow memory
    and quarantine of freed blocks put its resident set far above what the
    tool itself uses: peak memory bounds apply to the ordinary build only
    (which CI runs too), while the sanitized run checks the same commands
    for memory errors."""
    with open(SERIO, 'rb') as f:
        return b'__asan_init' in f.read()


def have_locale(name):
    """Whether a locale is installed, and its decimal point."""
    saved = locale.setlocale(locale.LC_ALL)
    try:
        locale.setlocale(locale.LC_ALL, name)
        return locale.localeconv()['decimal_point']
    except locale.Error:
        return None
    finally:
        locale.setlocale(locale.LC_ALL, saved)


def special_values():
    return [0.0, -0.0, 1.0, -1.0, 0.1, -0.1, 1 / 3, 2.0 ** 61, 2.0 ** 62, -(2.0 ** 62),
            5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
            1.7976931348623157e308, -1.7976931348623157e308, 1e16, 1e15, 123456789012345680.0,
            1e-4, 1e-5, 0.00012345, 100.0, 1e22, 1e23, math.inf, -math.inf, CANONICAL_NAN,
            9007199254740993.0, 0.30000000000000004]


# --- Harness ----------------------------------------------------------------

class ToolTestCase(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='serio-cli-')
        self.addCleanup(self.remove_dir)

    def remove_dir(self):
        for root, dirs, _ in os.walk(self.dir):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        shutil.rmtree(self.dir)

    def path(self, name):
        return os.path.join(os.fsencode(self.dir), os.fsencode(name))

    def write(self, name, data):
        with open(self.path(name), 'wb') as f:
            f.write(data)
        return name

    def read(self, name):
        with open(self.path(name), 'rb') as f:
            return f.read()

    def env(self, lang='C.UTF-8'):
        env = dict(os.environ)
        env.pop('LANGUAGE', None)
        env['LC_ALL'] = lang
        return env

    def run_tool(self, *args, stdin=b'', lang='C.UTF-8', status=None, env=None):
        full_env = self.env(lang)
        full_env.update(env or {})
        proc = subprocess.run([SERIO] + [os.fsencode(a) for a in args], input=stdin,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              cwd=self.dir, env=full_env, timeout=120)
        if status is not None:
            self.assertEqual(proc.returncode, status,
                             'serio %r: exit %d, stdout %r, stderr %r' % (
                                 args, proc.returncode, proc.stdout[:2000], proc.stderr[:2000]))
        return proc

    def stderr_lines(self, proc):
        return proc.stderr.decode('utf-8').splitlines()


# --- serio (no command) -----------------------------------------------------

class MainTests(ToolTestCase):
    COMMANDS = ['cat', 'check', 'checksum', 'convert', 'diff', 'info', 'seal']

    def test_no_arguments(self):
        proc = self.run_tool(status=2)
        self.assertEqual(proc.stdout, b'')
        self.assertIn(b'Usage:', proc.stderr)

    def test_version(self):
        proc = self.run_tool('--version', status=0)
        self.assertEqual(proc.stdout, b'serio %s\n' % VERSION.encode())

    def test_help_lists_commands(self):
        for args in (['--help'], ['-h'], ['help']):
            proc = self.run_tool(*args, status=0)
            listed = re.findall(rb'^  (\w+) {2,}', proc.stdout, re.M)
            self.assertEqual(sorted(c.decode() for c in listed), sorted(self.COMMANDS + ['help']))
            self.assertEqual(proc.stderr, b'')

    def test_help_of_each_command(self):
        for command in self.COMMANDS:
            for args in (['help', command], [command, '--help']):
                proc = self.run_tool(*args, status=0)
                self.assertIn(b'serio %s [OPTION' % command.encode(), proc.stdout)
                self.assertIn(b'Exit status:', proc.stdout)

    def test_unknown_command(self):
        proc = self.run_tool('frobnicate', status=2)
        self.assertIn('“frobnicate”', proc.stderr.decode())
        proc = self.run_tool('help', 'frobnicate', status=2)
        self.assertIn('“frobnicate”', proc.stderr.decode())
        self.run_tool('help', 'check', 'info', status=2)

    def test_short_options_mean_one_thing(self):
        # A short option means the same long option in every command that
        # has it (issue 10: -n was --name in cat and convert, --max-values
        # in diff).
        meaning = {}
        for command in self.COMMANDS:
            proc = self.run_tool(command, '--help', status=0)
            for short, long in re.findall(r'^  -(\w), --([\w-]+)', proc.stdout.decode(), re.M):
                if short in ('h', '?'):
                    continue
                meaning.setdefault(short, set()).add(long)
        self.assertTrue(meaning)
        for short, longs in meaning.items():
            self.assertEqual(len(longs), 1, '-%s means %s' % (short, ', '.join(sorted(longs))))

    def test_unknown_option(self):
        for command in self.COMMANDS:
            proc = self.run_tool(command, '--no-such-option', 'x', status=2)
            self.assertIn('serio %s: ' % command, proc.stderr.decode())
            self.assertIn('--help', proc.stderr.decode())

    @unittest.skipUnless(os.path.exists('/dev/full'), 'no /dev/full')
    def test_write_error(self):
        self.write('a.serio', serio_text([('w', [1.0, 2.0])]))
        with open('/dev/full', 'wb') as full:
            proc = subprocess.run([SERIO, 'cat', 'a.serio'], stdout=full, stderr=subprocess.PIPE,
                                  cwd=self.dir, env=self.env())
        self.assertEqual(proc.returncode, 2)
        self.assertIn(os.strerror(errno.ENOSPC), proc.stderr.decode())


# --- serio check ------------------------------------------------------------

def f32(x):
    """x rounded to float32, as a double."""
    return struct.unpack('<f', struct.pack('<f', x))[0]


def f16(x):
    return struct.unpack('<e', struct.pack('<e', x))[0]


def bf16_of_bits(pattern):
    return struct.unpack('<f', struct.pack('<I', pattern << 16))[0]


def random_narrow(rng, dtype, n):
    """n finite values of @dtype from random bit patterns of every class."""
    values = []
    while len(values) < n:
        if dtype == 'float32':
            x = struct.unpack('<f', struct.pack('<I', rng.getrandbits(32)))[0]
        elif dtype == 'float16':
            x = struct.unpack('<e', struct.pack('<H', rng.getrandbits(16)))[0]
        else:
            x = bf16_of_bits(rng.getrandbits(16))
        if math.isfinite(x):
            values.append(x)
    return values


# One array of every type, as a writer of typed files writes them.
TYPED_ARRAYS = [
    ('w@float32[2x2]', 'float32', [f32(0.1), -0.5, f32(3.4e38), math.ldexp(1, -149)]),
    ('h@float16[3]', 'float16', [f16(0.1), 65504.0, -math.ldexp(1, -24)]),
    ('g@bfloat16[3]', 'bfloat16', [bf16_of_bits(0x3dcd), -1.0, bf16_of_bits(0x0001)]),
    ('step@int64[]', 'int64', [3.0]),
    ('big@uint64[2]', 'uint64', [2.0 ** 63, 2.0 ** 60]),
    ('low@int64[2]', 'int64', [-2.0 ** 63, 2.0 ** 62]),
    ('c@int8[3]', 'int8', [-128.0, 127.0, 0.0]),
    ('s@int16[1]', 'int16', [-32768.0]),
    ('i@int32[2]', 'int32', [-2.0 ** 31, 7.0]),
    ('u8@uint8[2]', 'uint8', [255.0, 0.0]),
    ('u16@uint16[1]', 'uint16', [65535.0]),
    ('u32@uint32[1]', 'uint32', [2.0 ** 32 - 1]),
    ('m@bool[4]', 'bool', [1.0, 0.0, 0.0, 1.0]),
    ('plain', 'float64', [0.1, f32(0.1)]),
]


class CheckTests(ToolTestCase):

    def assert_error_at(self, name, data, line):
        self.write(name, data)
        proc = self.run_tool('check', name, status=1)
        lines = self.stderr_lines(proc)
        self.assertEqual(len(lines), 1, lines)
        self.assertTrue(lines[0].startswith('%s:%d: ' % (name, line)), lines[0])
        # The line is the one the library's error carries, printed once:
        # not again in the message that follows.
        self.assertNotIn('Line', lines[0])
        self.assertEqual(proc.stdout, b'')

    def test_values_must_fit_their_type(self):
        # every value of every type, at its bounds, is valid
        self.write('typed.serio', serio_text([(name, values) for name, _, values in TYPED_ARRAYS]))
        self.run_tool('check', 'typed.serio', status=0)
        # a value the type cannot hold: DOMAIN, naming the line, the value's
        # index and its token, as the reader has it
        cases = [
            ('w@float32[1]', '3602879701896397p-55', 'float32'),   # the double 0.1
            ('w@float32[1]', '1p-150', 'float32'),                 # below float32's subnormals
            ('h@float16[1]', '65505', 'float16'),
            ('h@float16[1]', '1p-25', 'float16'),
            ('g@bfloat16[1]', '257', 'bfloat16'),
            ('c@int8[1]', '128', 'int8'),
            ('c@int32[1]', '1p-1', 'int32'),
            ('c@uint8[1]', '-1', 'uint8'),
            ('c@int64[1]', '-0', 'int64'),
            ('c@uint16[1]', 'inf', 'uint16'),
            ('c@int16[1]', 'nan', 'int16'),
            ('m@bool[1]', '2', 'bool'),
        ]
        for name, bad, dtype in cases:
            with self.subTest(name=name, token=bad):
                text = 'v1|w@float32[1]|1|1p-30\nv1|ok|2|1,2\nv1|%s|1|%s\n' % (name, bad)
                self.assert_error_at('bad.serio', text.encode(), 3)
                proc = self.run_tool('check', 'bad.serio', status=1)
                message = proc.stderr.decode()
                self.assertTrue(message.startswith('bad.serio:3: value 1 “%s”: ' % bad), message)
                self.assertIn(dtype, message)
        # the same value in a float64 (unmarked) array is fine
        self.write('plain.serio', b'v1|w[1]|1|3602879701896397p-55\nv1|w@float64[1]|1|3602879701896397p-55\n')
        self.run_tool('check', 'plain.serio', status=0)

    def test_valid_files(self):
        files = {
            'empty.serio': b'',
            'plain.serio': serio_text([('w', special_values()), ('e', []), ('', [1.0])]),
            'crlf.serio': b'v1|a|2|1,2\r\nv1|b|0|\r\n',
            'blank.serio': b'\n\nv1|a|1|1p-1\n\r\n\n',
        }
        for name, data in files.items():
            self.write(name, data)
        proc = self.run_tool('check', *files, status=0)
        self.assertEqual(proc.stderr, b'')
        self.assertEqual(proc.stdout.decode().splitlines(),
                         ['%s: plain, without a seal: valid, but it cannot be verified' % name
                          for name in files])
        proc = self.run_tool('check', '--quiet', *files, status=0)
        self.assertEqual(proc.stdout + proc.stderr, b'')

    def test_error_lines(self):
        cases = [
            (b'v1|a|1|1\n\nv1|b|2|1,1p0\n', 3),             # non-canonical token after a blank line
            (b'v1|a|1|1\r\nv1|b|1|01\r\n', 2),               # CR LF lines
            (b'v2|a|0|\n', 1),                               # version
            (b'v1|a|0|\nv1|b|0|\nV1|c|0|\n', 3),
            (b'v1|a|0|\nv1|b\x00c|0|\n', 2),                 # NUL in a name
            (b'v1|a|0|\nv1|\xffb|0|\n', 2),                  # name not UTF-8
            (b'v1|a|3|1,2\n', 1),                            # length
            (b'\n\n\n\nv1|x|1|1p1024\n', 5),                 # domain
            (b'v1|a|1|1\nv1|b|1|2', 2),                      # truncated
            (b'v1|a|1|1p0\n\nv1|b|1|2', 3),                  # truncation is reported first
            (b'v1|a|1|1\r', 1),                              # a lone CR at the end is truncation
            (b' v1|a|0|\n', 1),
        ]
        for i, (data, line) in enumerate(cases):
            with self.subTest(data=data):
                self.assert_error_at('case%d.serio' % i, data, line)

    def test_seal_status(self):
        text = serio_text([('w', special_values()), ('b', [1.0, 2.0])])
        self.write('sealed.serio', sealed(text))
        self.write('plain.serio', text)
        # blank lines and CR LF before and in a sealed text: still sealed
        self.write('blank.serio', seal_closing(b'\r\n\nv1|serio.sealed|1|1\r\n\nv1|a|1|1\n'))
        proc = self.run_tool('check', 'sealed.serio', 'plain.serio', 'blank.serio', status=0)
        self.assertEqual(proc.stdout.decode().splitlines(), [
            'sealed.serio: sealed, verified',
            'plain.serio: plain, without a seal: valid, but it cannot be verified',
            'blank.serio: sealed, verified'])
        self.assertEqual(proc.stderr, b'')
        # --require-seal: a plain file is an error, a sealed one is not
        proc = self.run_tool('check', '--require-seal', 'sealed.serio', 'plain.serio', status=1)
        self.assertEqual(proc.stdout.decode(), 'sealed.serio: sealed, verified\n')
        self.assertEqual(self.stderr_lines(proc),
                         ['plain.serio: not sealed, so it cannot be verified (--require-seal)'])
        self.run_tool('check', '-s', 'sealed.serio', 'blank.serio', status=0)
        self.run_tool('check', '-s', '-', stdin=text, status=1)
        self.run_tool('check', '-s', '-', stdin=sealed(text), status=0)

    def test_damaged_sealed_files(self):
        text = sealed(serio_text([('w', [0.1, 2.0, 3.0]), ('b', [4.0])]))
        lines = text.split(b'\n')[:-1]
        damaged = {
            # a digit changed into another valid token
            'digit': text.replace(b'|3|3602879701896397p-55', b'|3|3602879701896398p-55'),
            # cut at a record boundary: the closing record is gone
            'cut': b'\n'.join(lines[:-1]) + b'\n',
            'lost line': b'\n'.join(lines[:2] + lines[3:]) + b'\n',
            'doubled line': b'\n'.join(lines[:2] + lines[1:]) + b'\n',
            'swapped lines': b'\n'.join([lines[0], lines[2], lines[1]] + lines[3:]) + b'\n',
            'text after the seal': text + b'v1|x|0|\n',
        }
        self.assertNotEqual(damaged['digit'], text)
        for what, data in damaged.items():
            with self.subTest(what=what):
                name = what.replace(' ', '-') + '.serio'
                self.write(name, data)
                proc = self.run_tool('check', name, status=1)
                self.assertEqual(proc.stdout, b'')
                lines_err = self.stderr_lines(proc)
                self.assertEqual(len(lines_err), 1, lines_err)
                self.assertTrue(lines_err[0].startswith(name + ':'), lines_err)
                # every command that reads a file refuses it
                self.run_tool('cat', name, status=1)
                self.run_tool('info', name, status=1)
                self.run_tool('diff', name, name, status=2)
                self.run_tool('convert', name, 'x.npz', status=1)
                self.run_tool('seal', name, status=1)
                self.assertEqual(self.read(name), data)

    def test_exit_status_of_several_files(self):
        self.write('good.serio', b'v1|a|1|1\n')
        self.write('bad.serio', b'v1|a|1|1.0\n')
        self.run_tool('check', 'good.serio', 'good.serio', status=0)
        proc = self.run_tool('check', 'good.serio', 'bad.serio', 'good.serio', status=1)
        self.assertEqual(len(self.stderr_lines(proc)), 1)
        # An unreadable file wins over an invalid one, and the others are
        # still checked.
        proc = self.run_tool('check', 'missing.serio', 'bad.serio', status=2)
        err = proc.stderr.decode()
        self.assertIn('bad.serio:1: ', err)
        self.assertIn(os.strerror(errno.ENOENT), err)
        self.run_tool('check', 'bad.serio', 'missing.serio', status=2)

    def test_no_file(self):
        proc = self.run_tool('check', status=2)
        self.assertIn(b'--help', proc.stderr)

    def test_missing_file(self):
        proc = self.run_tool('check', 'missing.serio', status=2)
        err = proc.stderr.decode()
        self.assertTrue(err.startswith('serio check: '), err)
        self.assertIn('missing.serio', err)
        self.assertIn(os.strerror(errno.ENOENT), err)

    def test_directory(self):
        # Fails for root too, unlike a file without read permission.
        os.mkdir(self.path('dir.serio'))
        proc = self.run_tool('check', 'dir.serio', status=2)
        self.assertIn('dir.serio', proc.stderr.decode())

    @unittest.skipIf(os.geteuid() == 0, 'root reads files whatever their mode')
    def test_unreadable_file(self):
        self.write('secret.serio', b'v1|a|0|\n')
        os.chmod(self.path('secret.serio'), 0)
        proc = self.run_tool('check', 'secret.serio', status=2)
        self.assertIn(os.strerror(errno.EACCES), proc.stderr.decode())

    @unittest.skipUnless(sys.platform.startswith('linux'), '/proc/self/mem is Linux')
    def test_read_error(self):
        # /proc/self/mem opens, then fails with EIO at offset 0 (unmapped):
        # an error in the middle of reading, which root gets too.
        proc = self.run_tool('check', '/proc/self/mem', status=2)
        err = proc.stderr.decode()
        self.assertTrue(err.startswith('serio check: /proc/self/mem: '), err)
        self.assertIn(os.strerror(errno.EIO), err)

    def test_stdin(self):
        self.run_tool('check', '-', stdin=b'v1|a|1|1\n', status=0)
        proc = self.run_tool('check', '-', stdin=b'v1|a|1|1\nv1|b|1|+1\n', status=1)
        self.assertTrue(proc.stderr.decode().startswith('-:2: '))

    def test_non_utf8_file_name(self):
        name = b'bad\xff.serio'
        self.write(name, b'v1|a|1|1\n')
        self.run_tool('check', name, status=0)
        self.write(name, b'v1|a|1|1\nv1|b|1|x\n')
        proc = self.run_tool('check', name, status=1)
        self.assertTrue(proc.stderr.decode('utf-8').startswith('bad\ufffd.serio:2: '))


# --- serio info -------------------------------------------------------------

def expected_stats(values):
    numbers = [v for v in values if not math.isnan(v)]
    # -0 counts as below +0
    key = lambda v: (v, math.copysign(1, v))
    return {
        'length': len(values),
        'min': min(numbers, key=key) if numbers else None,
        'max': max(numbers, key=key) if numbers else None,
        'nan': sum(1 for v in values if math.isnan(v)),
        'inf': sum(1 for v in values if math.isinf(v)),
    }


class InfoTests(ToolTestCase):
    ARRAYS = [
        ('dense.w', [0.1, -0.0, math.inf, 0.0]),
        ('with "quotes", \\ and \ttab \x01', [CANONICAL_NAN, -5e-324, 2.0 ** 62]),
        ('Gewichte ü ∑ 🙂', [-math.inf, 1.0]),
        ('only nan', [CANONICAL_NAN, CANONICAL_NAN]),
        ('empty', []),
        ('dense.w', [1e300]),
    ]

    def json_of(self, *files, status=0, lang='C.UTF-8'):
        proc = self.run_tool('info', '--json', *files, status=status, lang=lang)
        return json.loads(proc.stdout.decode('utf-8')), proc

    def assert_number(self, got, want):
        if want is None:
            self.assertIsNone(got)
        elif math.isinf(want):
            self.assertEqual(got, 'inf' if want > 0 else '-inf')
        else:
            self.assertIsInstance(got, (int, float))
            self.assertEqual(bits(float(got)), bits(want))

    def test_json(self):
        data = serio_text(self.ARRAYS)
        self.write('a.serio', data)
        doc, _ = self.json_of('a.serio')
        self.assertEqual(len(doc), 1)
        self.assertEqual(doc[0]['file'], 'a.serio')
        self.assertEqual(doc[0]['checksum'], '%08x' % fnv1a_folded(data))
        self.assertEqual(len(doc[0]['arrays']), len(self.ARRAYS))
        for i, (entry, (name, values)) in enumerate(zip(doc[0]['arrays'], self.ARRAYS)):
            want = expected_stats(values)
            self.assertEqual(entry['index'], i)
            self.assertEqual(entry['name'], name)
            for key in ('length', 'nan', 'inf'):
                self.assertEqual(entry[key], want[key], (name, key))
            self.assert_number(entry['min'], want['min'])
            self.assert_number(entry['max'], want['max'])

    def test_json_random_values(self):
        rng = random.Random(5)
        values = [from_bits(rng.getrandbits(64)) for _ in range(2000)]
        values = [CANONICAL_NAN if math.isnan(v) else v for v in values]
        self.write('r.serio', serio_text([('r', values)]))
        doc, _ = self.json_of('r.serio')
        want = expected_stats(values)
        self.assert_number(doc[0]['arrays'][0]['min'], want['min'])
        self.assert_number(doc[0]['arrays'][0]['max'], want['max'])
        self.assertEqual(doc[0]['arrays'][0]['nan'], want['nan'])

    def test_json_several_files_and_an_invalid_one(self):
        self.write('a.serio', serio_text([('a', [1.0])]))
        self.write('empty.serio', b'')
        self.write('bad.serio', b'v1|a|1|1.5\n')
        doc, _ = self.json_of('a.serio', 'empty.serio', status=0)
        self.assertEqual([f['file'] for f in doc], ['a.serio', 'empty.serio'])
        self.assertEqual(doc[1], {'file': 'empty.serio', 'checksum': '4fd0bfc1', 'sealed': False,
                                  'arrays': [], 'metadata': []})
        doc, proc = self.json_of('a.serio', 'bad.serio', 'empty.serio', status=1)
        self.assertEqual([f['file'] for f in doc], ['a.serio', 'empty.serio'])
        self.assertTrue(proc.stderr.decode().startswith('bad.serio:1: '))
        doc, _ = self.json_of('bad.serio', status=1)
        self.assertEqual(doc, [])
        doc, _ = self.json_of('missing.serio', 'bad.serio', status=2)
        self.assertEqual(doc, [])

    def test_json_non_utf8_file_name(self):
        self.write(b'w\xff.serio', serio_text([('a', [1.0])]))
        doc, _ = self.json_of(b'w\xff.serio')
        self.assertEqual(doc[0]['file'], 'w\ufffd.serio')

    def test_json_same_in_comma_locales(self):
        self.write('a.serio', serio_text(self.ARRAYS))
        c_output = self.run_tool('info', '--json', 'a.serio', status=0).stdout
        tested = 0
        for lang in ('de_DE.UTF-8', 'fr_FR.UTF-8'):
            if have_locale(lang) != ',':
                continue
            tested += 1
            proc = self.run_tool('info', '--json', 'a.serio', lang=lang, status=0)
            self.assertEqual(proc.stdout, c_output)
        if tested == 0:
            self.skipTest('neither de_DE.UTF-8 nor fr_FR.UTF-8 is installed')

    def test_text(self):
        data = serio_text(self.ARRAYS[:1] + self.ARRAYS[3:5])
        self.write('a.serio', data)
        proc = self.run_tool('info', 'a.serio', status=0)
        self.assertEqual(proc.stdout.decode().splitlines(), [
            'a.serio: 3 arrays, checksum %08x, plain (no seal)' % fnv1a_folded(data),
            '  [0] dense.w float64: 4 values; min -0, max inf; NaN: 0, infinite: 1',
            '  [1] only nan float64: 2 values; NaN: 2',
            '  [2] empty float64: 0 values; NaN: 0',
        ])

    def test_shapes(self):
        arrays = [('conv.weight[2x1x3]', [float(i) for i in range(6)]), ('steps[]', [5.0]),
                  ('bias', [1.0, 2.0]), ('odd[5]', [1.0, 2.0]), ('v[0x3]', []), ('b[2]', [0.5, 1.0])]
        self.write('a.serio', serio_text(arrays))
        proc = self.run_tool('info', 'a.serio', status=0)
        self.assertEqual(proc.stdout.decode().splitlines()[1:], [
            '  [0] conv.weight (2, 1, 3) float64: 6 values; min 0, max 5; NaN: 0, infinite: 0',
            '  [1] steps () float64: 1 value; min 5, max 5; NaN: 0, infinite: 0',
            '  [2] bias float64: 2 values; min 1, max 2; NaN: 0, infinite: 0',
            '  [3] odd[5] float64: 2 values; min 1, max 2; NaN: 0, infinite: 0',
            '  [4] v (0, 3) float64: 0 values; NaN: 0',
            '  [5] b (2,) float64: 2 values; min 0.5, max 1; NaN: 0, infinite: 0'])
        doc, _ = self.json_of('a.serio')
        self.assertEqual([(a['name'], a['base_name'], a['shape']) for a in doc[0]['arrays']], [
            ('conv.weight[2x1x3]', 'conv.weight', [2, 1, 3]), ('steps[]', 'steps', []),
            ('bias', 'bias', [2]), ('odd[5]', 'odd[5]', [2]), ('v[0x3]', 'v', [0, 3]),
            ('b[2]', 'b', [2])])

    def typed_lines(self, arrays, legacy=None):
        """The text lines of arrays given as (name, dtype shown, values),
        from index @first on."""
        lines = []
        for index, (name, dtype, values) in arrays:
            m = re.fullmatch(r'(.*?)(?:@[a-z0-9]+)?\[([0-9x]*)\]', name)
            if m:
                dims = [int(d) for d in m.group(2).split('x')] if m.group(2) else []
                shape = '(%s)' % (', '.join(str(d) for d in dims) + (',' if len(dims) == 1 else ''))
                shown = '%s %s %s' % (m.group(1), shape, dtype)
            else:
                shown = '%s %s' % (name, dtype)
            stats = expected_stats(values)
            printed = legacy.get(index, dtype) if legacy else dtype
            lines.append('  [%d] %s: %d value%s; min %s, max %s; NaN: %d, infinite: %d' % (
                index, shown, len(values), '' if len(values) == 1 else 's',
                typed_shortest(stats['min'], printed), typed_shortest(stats['max'], printed),
                stats['nan'], stats['inf']))
        return lines

    def test_types(self):
        data = serio_text([(name, values) for name, _, values in TYPED_ARRAYS])
        self.write('typed.serio', data)
        lines = self.run_tool('info', 'typed.serio', status=0).stdout.decode().splitlines()
        self.assertEqual(lines, ['typed.serio: %d arrays, checksum %08x, plain (no seal)' % (
            len(TYPED_ARRAYS), fnv1a_folded(data))] + self.typed_lines(enumerate(TYPED_ARRAYS)))
        # a float32 0.1 is 0.1, not its double's 0.10000000149011612
        self.assertIn('  [0] w (2, 2) float32: 4 values; min -0.5, max 3.4e+38; NaN: 0, infinite: 0', lines)
        self.assertIn('  [13] plain float64: 2 values; min 0.1, max 0.10000000149011612; '
                      'NaN: 0, infinite: 0', lines)

        # JSON: the type, and min and max as the shortest decimals of the type
        proc = self.run_tool('info', '--json', 'typed.serio', status=0)
        doc = json.loads(proc.stdout, parse_float=str, parse_int=str)
        self.assertEqual(doc[0]['metadata'], [])
        self.assertEqual(len(doc[0]['arrays']), len(TYPED_ARRAYS))
        for entry, (name, dtype, values) in zip(doc[0]['arrays'], TYPED_ARRAYS):
            with self.subTest(name=name):
                stats = expected_stats(values)
                self.assertEqual((entry['name'], entry['dtype']), (name, dtype))
                self.assertEqual(entry['base_name'], name.split('@')[0].split('[')[0])
                self.assertEqual((entry['min'], entry['max']),
                                 (typed_shortest(stats['min'], dtype), typed_shortest(stats['max'], dtype)))
                # and they read back to the same values of their type
                read_back = {'float32': f32, 'float16': f16}.get(dtype, float if dtype != 'bfloat16' else None)
                if read_back is not None:
                    self.assertEqual(bits(read_back(float(entry['min']))), bits(stats['min']))

    def test_metadata_apart(self):
        # records named serio.* are the library's metadata, never arrays:
        # listed after the arrays with their index in the file, not counted
        arrays = [('serio.tree', [1.0, 2.0]), ('w@float32[2]', [0.5, 1.0]), ('serio.metadata.x', [7.0]),
                  ('b', [2.0])]
        data = serio_text(arrays)
        self.write('m.serio', data)
        lines = self.run_tool('info', 'm.serio', status=0).stdout.decode().splitlines()
        self.assertEqual(lines, [
            'm.serio: 2 arrays, checksum %08x, plain (no seal)' % fnv1a_folded(data),
            '  [1] w (2,) float32: 2 values; min 0.5, max 1; NaN: 0, infinite: 0',
            '  [3] b float64: 1 value; min 2, max 2; NaN: 0, infinite: 0',
            '  [0] serio.tree: metadata, 2 values',
            '  [2] serio.metadata.x: metadata, 1 value'])
        doc = json.loads(self.run_tool('info', '--json', 'm.serio', status=0).stdout)
        self.assertEqual([(a['index'], a['name'], a['dtype']) for a in doc[0]['arrays']],
                         [(1, 'w@float32[2]', 'float32'), (3, 'b', 'float64')])
        self.assertEqual(doc[0]['metadata'], [{'index': 0, 'name': 'serio.tree', 'length': 2},
                                              {'index': 2, 'name': 'serio.metadata.x', 'length': 1}])

    def test_json_escapes_control_characters_as_json_does(self):
        # One JSON string writer for the tool: a control character with a
        # short escape gets it (as Python's json and serde_json write it),
        # any other one \\u00XX, and the document reads back to the name.
        name = 'a\x08b\x0cc\td\x01e'
        self.write('c.serio', serio_text([(name, [1.0])]))
        raw = self.run_tool('info', '--json', 'c.serio', status=0).stdout.decode('utf-8')
        self.assertIn(json.dumps(name), raw)
        self.assertIn('a\\bb\\fc\\td\\u0001e', raw)
        self.assertEqual(json.loads(raw)[0]['arrays'][0]['name'], name)

    def test_legacy_dtypes_table(self):
        # the old Python Serio.save: a first record serio.dtypes with one
        # code per array (1 float32, 4 int64, 0 float64, 13 str, 12 bool),
        # and unmarked arrays; info shows the types it records. A code that
        # lies (float32 for a value that is not) prints the value as it is.
        arrays = [('serio.dtypes', [1.0, 4.0, 0.0, 13.0, 12.0, 1.0]),
                  ('w[3]', [f32(0.1), -2.0, 0.5]), ('step', [3.0]), ('b', [0.1, 0.2]),
                  ('name', [72.0, 105.0]), ('mask[2]', [1.0, 0.0]), ('lies', [0.1])]
        data = serio_text(arrays)
        self.write('legacy.serio', data)
        lines = self.run_tool('info', 'legacy.serio', status=0).stdout.decode().splitlines()
        self.assertEqual(lines, [
            'legacy.serio: 6 arrays, checksum %08x, plain (no seal)' % fnv1a_folded(data),
            '  [1] w (3,) float32: 3 values; min -2, max 0.5; NaN: 0, infinite: 0',
            '  [2] step int64: 1 value; min 3, max 3; NaN: 0, infinite: 0',
            '  [3] b float64: 2 values; min 0.1, max 0.2; NaN: 0, infinite: 0',
            '  [4] name str: 2 values; min 72, max 105; NaN: 0, infinite: 0',
            '  [5] mask (2,) bool: 2 values; min 0, max 1; NaN: 0, infinite: 0',
            '  [6] lies float32: 1 value; min 0.1, max 0.1; NaN: 0, infinite: 0',
            '  [0] serio.dtypes: metadata, 6 values'])
        self.assertEqual(lines[1], self.typed_lines([(1, ('w[3]', 'float32', arrays[1][1]))])[0])
        doc = json.loads(self.run_tool('info', '--json', 'legacy.serio', status=0).stdout)
        self.assertEqual([a['dtype'] for a in doc[0]['arrays']],
                         ['float32', 'int64', 'float64', 'str', 'bool', 'float32'])
        # not first, or marked: not a legacy table, and the types are the records' own
        self.write('late.serio', serio_text([('w', [f32(0.1)]), ('serio.dtypes', [1.0])]))
        lines = self.run_tool('info', 'late.serio', status=0).stdout.decode().splitlines()
        self.assertEqual(lines[1], '  [0] w float64: 1 value; min 0.10000000149011612, '
                                   'max 0.10000000149011612; NaN: 0, infinite: 0')

    def test_seal_status(self):
        text = serio_text(self.ARRAYS[:1])
        self.write('sealed.serio', sealed(text))
        self.write('plain.serio', text)
        proc = self.run_tool('info', 'sealed.serio', 'plain.serio', status=0)
        lines = proc.stdout.decode().splitlines()
        self.assertEqual(lines[0], 'sealed.serio: 1 array, checksum %08x, sealed (verified)' %
                         fnv1a_folded(sealed(text)))
        self.assertEqual(lines[2], 'plain.serio: 1 array, checksum %08x, plain (no seal)' %
                         fnv1a_folded(text))
        # the seal's records are not arrays
        self.assertEqual(lines[1], lines[3])
        doc, _ = self.json_of('sealed.serio', 'plain.serio')
        self.assertEqual([f['sealed'] for f in doc], [True, False])
        self.assertEqual(doc[0]['arrays'], doc[1]['arrays'])

    def test_text_escapes_control_characters(self):
        self.write('a.serio', serio_text([('a\x1b[31mb\\', [1.0])]))
        proc = self.run_tool('info', 'a.serio', status=0)
        self.assertIn('  [0] a\\x1B[31mb\\\\ float64: 1 value; min 1, max 1; NaN: 0, infinite: 0',
                      proc.stdout.decode().splitlines())

    def test_stdin_and_errors(self):
        doc, _ = self.json_of('-')
        self.assertEqual(doc, [{'file': '-', 'checksum': '4fd0bfc1', 'sealed': False, 'arrays': [],
                                'metadata': []}])
        self.run_tool('info', status=2)
        self.run_tool('info', 'missing.serio', status=2)
        self.write('bad.serio', b'v1|a|1|1\nv1|b|1|2')
        proc = self.run_tool('info', 'bad.serio', status=1)
        self.assertTrue(proc.stderr.decode().startswith('bad.serio:2: '))


# --- serio checksum ---------------------------------------------------------

class ChecksumTests(ToolTestCase):

    def test_spec_vectors(self):
        for name, data, want in (('empty', b'', '4fd0bfc1'), ('a', b'a', '296230c0'),
                                 ('foobar', b'foobar', '72ad2699')):
            self.write(name, data)
        proc = self.run_tool('checksum', 'empty', 'a', 'foobar', status=0)
        self.assertEqual(proc.stdout, b'4fd0bfc1  empty\n296230c0  a\n72ad2699  foobar\n')

    def test_noll_vectors(self):
        rows = []
        with open(os.path.join(os.environ['SERIO_TEST_DATA'], 'fnv1a64_vectors.tsv')) as f:
            for line in f:
                if line.startswith('#'):
                    continue
                input_hex, _, folded = line.rstrip('\n').split('\t')
                rows.append((bytes.fromhex(input_hex), folded))
        self.assertEqual(len(rows), 203)
        names = [self.write('v%03d' % i, data) for i, (data, _) in enumerate(rows)]
        proc = self.run_tool('checksum', *names, status=0)
        want = ''.join('%s  %s\n' % (folded, name) for name, (_, folded) in zip(names, rows))
        self.assertEqual(proc.stdout.decode(), want)
        # and the independent model agrees with the published values
        self.assertTrue(all('%08x' % fnv1a_folded(data) == folded for data, folded in rows))

    def test_stdin(self):
        data = serio_text([('w', special_values())])
        want = b'%08x  -\n' % fnv1a_folded(data)
        self.assertEqual(self.run_tool('checksum', '-', stdin=data, status=0).stdout, want)
        self.assertEqual(self.run_tool('checksum', stdin=data, status=0).stdout, want)

    def test_any_bytes(self):
        data = bytes(range(256)) * 3
        self.write('junk', data)
        proc = self.run_tool('checksum', 'junk', status=0)
        self.assertEqual(proc.stdout, b'%08x  junk\n' % fnv1a_folded(data))

    def test_file_names_written_as_given(self):
        self.write(b'\xff\xfe.serio', b'x')
        self.write('new\nline', b'x')
        self.write('back\\slash', b'x')
        proc = self.run_tool('checksum', b'\xff\xfe.serio', 'new\nline', 'back\\slash', status=0)
        c = b'%08x' % fnv1a_folded(b'x')
        self.assertEqual(proc.stdout, c + b'  \xff\xfe.serio\n' +
                         b'\\' + c + b'  new\\nline\n' +
                         b'\\' + c + b'  back\\\\slash\n')

    def test_unreadable(self):
        self.write('a', b'a')
        os.mkdir(self.path('dir'))
        proc = self.run_tool('checksum', 'missing', 'a', 'dir', status=2)
        self.assertEqual(proc.stdout, b'296230c0  a\n')
        self.assertEqual(len(self.stderr_lines(proc)), 2)

    def test_results_and_errors_keep_their_order(self):
        self.write('a', b'a')
        self.write('b', b'b')
        proc = subprocess.run([SERIO, 'checksum', 'a', 'missing', 'b'], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, cwd=self.dir, env=self.env('C.UTF-8'),
                              timeout=120)
        lines = proc.stdout.splitlines()
        self.assertEqual(proc.returncode, 2)
        self.assertEqual(len(lines), 3)
        self.assertEqual(lines[0], b'%08x  a' % fnv1a_folded(b'a'))
        self.assertIn(b'missing', lines[1])
        self.assertEqual(lines[2], b'%08x  b' % fnv1a_folded(b'b'))


# --- serio diff -------------------------------------------------------------

class DiffTests(ToolTestCase):

    def diff(self, a_arrays, b_arrays, *options, status):
        self.write('a.serio', serio_text(a_arrays))
        self.write('b.serio', serio_text(b_arrays))
        proc = self.run_tool('diff', *options, 'a.serio', 'b.serio', status=status)
        self.assertEqual(proc.stderr, b'')
        return proc.stdout.decode().splitlines()

    def test_recorded_types(self):
        # the distance is in ULPs of the recorded type, even when the
        # values would fit a narrower one (0.5 and 1 are bfloat16 values),
        # and the values print as the shortest decimals of their type
        rng = random.Random(19)
        cases = [
            ('w@float32[3]', 'float32', [0.5, f32(0.1), 1.0], [1.0, f32(0.1) + math.ldexp(1, -26), 0.5]),
            ('v@float32[2]', 'float32', [0.5, 1.0], [1.0, 0.5]),
            ('h@float16[2]', 'float16', [1.0, 2.0], [2.0, 1.0]),
            ('w@float32[200]', 'float32', random_narrow(rng, 'float32', 200), random_narrow(rng, 'float32', 200)),
            ('h@float16[3]', 'float16', [f16(0.1), 1.0, 65504.0], [f16(0.2), 1.0, -65504.0]),
            ('h@float16[100]', 'float16', random_narrow(rng, 'float16', 100), random_narrow(rng, 'float16', 100)),
            ('g@bfloat16[2]', 'bfloat16', [bf16_of_bits(0x3dcd), 1.0], [bf16_of_bits(0x3dce), 1.0]),
            ('i@int32[2]', 'int32', [5.0, -2.0 ** 31], [6.0, 2.0 ** 31 - 1]),
            ('u@uint64[2]', 'uint64', [2.0 ** 63, 0.0], [2.0 ** 63 + 2048, 2.0 ** 64 - 2048]),
            ('l@int64[1]', 'int64', [-2.0 ** 63], [2.0 ** 62]),
            ('m@bool[3]', 'bool', [1.0, 0.0, 1.0], [0.0, 0.0, 1.0]),
        ]
        for name, dtype, a, b in cases:
            with self.subTest(name=name):
                lines = self.diff([(name, a)], [(name, b)], '-m', '1000', status=1)
                base = name.split('@')[0]
                self.assertEqual(lines, diff_lines(base, a, b, max_values=1000, dtype=dtype))
                if name == 'v@float32[2]':
                    # 2^23 float32 steps from 0.5 to 1, where bfloat16 has 2^7
                    self.assertEqual(lines[1][-len('distance 8388608 ULPs (float32)'):],
                                     'distance 8388608 ULPs (float32)')
                if name == 'w@float32[3]':
                    self.assertEqual(lines[1][-len('(float32)'):], '(float32)')
                    self.assertEqual(lines[3], '  [1] 0.1 → 0.10000002 (2 ULPs)')
        # 2^64 - 2048 from 0: units beyond 2^63, without wrapping
        lines = self.diff([('u@uint64[1]', [0.0])], [('u@uint64[1]', [2.0 ** 64 - 2048])], status=1)
        self.assertEqual(lines[2], '  [0] 0 → 18446744073709549568 (18446744073709549568 units)')
        # unmarked arrays keep the likely precision: the same values, bfloat16
        lines = self.diff([('w[3]', [0.5, 1.0, 2.0])], [('w[3]', [1.0, 0.5, 2.0])], status=1)
        self.assertIn('(bfloat16)', lines[1])
        # another type is another name
        lines = self.diff([('w@float32[1]', [0.5])], [('w[1]', [0.5])], status=1)
        self.assertEqual(lines, ['“w”: named “w@float32[1]” in a.serio, “w[1]” in b.serio'])
        # a metadata record that one file has is not called an array
        lines = self.diff([('serio.dtypes', [1.0]), ('w[1]', [0.5])],
                          [('w[1]', [0.5]), ('serio.tree', [1.0])], status=1)
        self.assertEqual(lines, ['Only in a.serio: metadata record 0 “serio.dtypes”',
                                 'Only in b.serio: metadata record 1 “serio.tree”'])

    def test_identical(self):
        arrays = [('w', special_values()), ('w', [1.0]), ('', [])]
        self.assertEqual(self.diff(arrays, arrays, status=0), [])
        # the same bundle written with CR LF and blank lines is the same
        self.write('crlf.serio', serio_text(arrays).replace(b'\n', b'\r\n\n'))
        self.run_tool('diff', 'a.serio', 'crlf.serio', status=0)

    def test_values(self):
        a = [0.1, -0.0, 1.0, math.inf, 1.0, CANONICAL_NAN, 5e-324, 3.0]
        b = [from_bits(bits(0.1) + 2), 0.0, -1.0, 1.7976931348623157e308, CANONICAL_NAN, 1.0,
             -5e-324, 3.0]
        lines = self.diff([('w', a)], [('w', b)], status=1)
        self.assertEqual(lines, diff_lines('w', a, b))
        self.assertEqual(lines[:2], [
            '“w”: 7 of 8 values differ',
            '  max absolute difference inf, relative inf, distance %d ULPs (float64)' % (
                2 * (bits(1.0) + 1) - 1)])
        self.assertEqual(len(lines), 8)
        # ULPs computed independently for the cases that matter
        self.assertEqual(ulps(-0.0, 0.0), 1)
        self.assertEqual(ulps(math.inf, 1.7976931348623157e308), 1)
        self.assertEqual(ulps(5e-324, -5e-324), 3)
        self.assertIn('  [2] 1 → -1 (%d ULPs)' % (2 * (bits(1.0) + 1) - 1), lines)

    def test_distances_in_the_likely_precision(self):
        f32_next = struct.unpack('<f', struct.pack('<I', f32_bits(0.1) + 3))[0]
        f32_0_1 = struct.unpack('<f', struct.pack('<f', 0.1))[0]
        f32_1_ulp = struct.unpack('<f', struct.pack('<I', f32_bits(0.1) + 1))[0]
        cases = [
            # float32 weights: ULPs of float32, not 2^29 times as many
            ('float32', [f32_0_1, 2.5, -2.0 ** 100], [f32_next, 2.5, -2.0 ** 100], '3 ULPs'),
            # a counter: units
            ('integer', [5.0, 2.0 ** 53], [6.0, 2.0 ** 53 - 3], '3 units'),
            # bfloat16 (8 significant bits) and float16 (11, small range)
            ('bfloat16', [1.0, 2.0 ** -100], [1.0078125, 2.0 ** -100 * 1.5], '64 ULPs'),
            ('float16', [1.0, 2.0 ** -24], [1.0009765625, 2.0 ** -23], '1 ULP'),
            # below 2^-10, float16 still has 11 significant bits at most
            ('float32', [1.0, 2.0 ** -11 + 2.0 ** -24], [1.0009765625, 2.0 ** -11], '8192 ULPs'),
            ('float64', [0.1, 1.0], [0.1, 1.0000000000000002], '1 ULP'),
            # a NaN does not widen or narrow anything
            ('float32', [CANONICAL_NAN, f32_0_1], [1.5, f32_1_ulp], '1 ULP'),
        ]
        for precision, a, b, max_distance in cases:
            with self.subTest(precision=precision, a=a):
                self.assertEqual(likely_precision(a + b), precision)
                lines = self.diff([('w', a)], [('w', b)], status=1)
                self.assertEqual(lines, diff_lines('w', a, b))
                self.assertTrue(lines[1].endswith(', distance %s (%s)' % (max_distance, precision))
                                if precision != 'bfloat16' else
                                lines[1].endswith(' (bfloat16)'), lines)
        # the issue's two examples
        lines = self.diff([('steps', [5.0])], [('steps', [6.0])], status=1)
        self.assertIn('  [0] 5 → 6 (1 unit)', lines)
        lines = self.diff([('w', [f32_0_1])], [('w', [f32_1_ulp])], status=1)
        self.assertTrue(lines[-1].endswith('(1 ULP)'), lines)

    def test_random_float32_arrays(self):
        rng = random.Random(3)
        a = [struct.unpack('<f', struct.pack('<I', rng.getrandbits(31)))[0] for _ in range(300)]
        a = [v if math.isfinite(v) else 1.0 for v in a]
        b = [struct.unpack('<f', struct.pack('<I', f32_bits(v) + rng.choice([0, 0, 1, 2, 1000])))[0]
             if rng.random() < 0.5 else v for v in a]
        b = [v if math.isfinite(v) else 2.0 for v in b]
        lines = self.diff([('w', a)], [('w', b)], '-m', '400', status=1)
        self.assertEqual(lines, diff_lines('w', a, b, max_values=400))

    def test_tolerance(self):
        a = [1.0, 100.0, 0.0, math.inf, -math.inf, CANONICAL_NAN, 1e-9, -0.0, 1e6]
        b = [1.0 + 1e-6, 100.001, 1e-9, math.inf, math.inf, CANONICAL_NAN, 0.0, 0.0, 1e6 + 20]
        for options, tolerance in (([], None),
                                   (['--atol', '1e-8'], (1e-8, 1e-5)),
                                   (['--rtol=1e-3'], (1e-8, 1e-3)),
                                   (['--atol=0', '--rtol=0'], (0.0, 0.0)),
                                   (['--atol', '0.5', '--rtol', '0.5'], (0.5, 0.5))):
            with self.subTest(options=options):
                outside = tolerance is None or any(
                    not is_close(x, y, *tolerance) for x, y in zip(a, b))
                lines = self.diff([('w', a)], [('w', b)], *options, '-m', '20',
                                  status=1 if outside else 0)
                self.assertEqual(lines, diff_lines('w', a, b, 20, tolerance))
        # within tolerance: status 0, and numpy.allclose agrees
        a = [1.0, 2.0, 1e-10, math.inf]
        b = [1.0 + 5e-6, 2.0, 0.0, math.inf]
        lines = self.diff([('w', a)], [('w', b)], '--rtol', '1e-5', status=0)
        self.assertEqual(lines, diff_lines('w', a, b, tolerance=(1e-8, 1e-5)))
        self.assertIn('  all within the tolerance', lines)
        self.diff([('w', a)], [('w', b)], '--rtol', '1e-6', status=1)
        # numpy.allclose(a, b) is not symmetric: the tolerance is relative to B
        self.diff([('w', [100.0])], [('w', [110.0])], '--atol=0', '--rtol=0.095', status=0)
        self.diff([('w', [110.0])], [('w', [100.0])], '--atol=0', '--rtol=0.095', status=1)
        try:
            import numpy
        except ImportError:
            return
        rng = numpy.random.default_rng(7)
        x = rng.standard_normal(200)
        y = x + rng.standard_normal(200) * 1e-7
        for atol, rtol in ((1e-8, 1e-5), (0.0, 1e-6), (1e-7, 0.0), (0.0, 0.0)):
            with self.subTest(atol=atol, rtol=rtol):
                self.diff([('w', list(x))], [('w', list(y))], '--atol', repr(atol),
                          '--rtol', repr(rtol),
                          status=0 if numpy.allclose(x, y, rtol=rtol, atol=atol) else 1)

    def test_tolerance_does_not_hide_structure(self):
        # arrays only in one file, other lengths and another order still
        # count as differences
        self.diff([('w', [1.0]), ('x', [])], [('w', [1.0])], '--atol', '1', status=1)
        self.diff([('w', [1.0, 2.0])], [('w', [1.0])], '--atol', '1', status=1)
        self.diff([('w', [1.0]), ('x', [])], [('x', []), ('w', [1.0])], '--atol', '1', status=1)
        self.diff([('w', [1.0])], [('w', [1.0])], '--atol', '1', status=0)

    def test_bad_tolerances(self):
        self.write('a.serio', serio_text([('w', [1.0])]))
        for value in ('-1', 'nan', 'inf', 'abc', '', '1e-5x', '0,5'):
            with self.subTest(value=value):
                proc = self.run_tool('diff', '--atol', value, 'a.serio', 'a.serio', status=2)
                self.assertIn('--atol', proc.stderr.decode())
                self.run_tool('diff', '--rtol=' + value, 'a.serio', 'a.serio', status=2)

    def test_max_values(self):
        a = [float(i) for i in range(10)]
        b = [float(i) + 0.5 for i in range(10)]
        lines = self.diff([('w', a)], [('w', b)], '--max-values', '3', status=1)
        self.assertEqual(lines, diff_lines('w', a, b, 3))
        self.assertEqual(lines[-1], '  … and 7 more')
        # 0 shows only the counts, as the documentation says
        summary = diff_lines('w', a, b, 0)
        self.assertEqual(len(summary), 2)
        lines = self.diff([('w', a)], [('w', b)], '-m', '0', status=1)
        self.assertEqual(lines, summary)
        lines = self.diff([('w', a)], [('w', b)], '--max-values=0', status=1)
        self.assertEqual(lines, summary)
        lines = self.diff([('w', a[:1])], [('w', b[:1])], status=1)
        self.assertEqual(lines, diff_lines('w', a[:1], b[:1]))
        self.assertEqual(lines[0], '“w”: 1 of 1 values differs')
        self.run_tool('diff', '-m', '-1', 'a.serio', 'b.serio', status=2)

    def test_arrays_only_in_one_file_and_duplicates(self):
        # The k-th "w" of A goes with the k-th "w" of B.
        lines = self.diff([('w', [1.0]), ('w', [2.0]), ('x', [])],
                          [('w', [1.0]), ('x', []), ('y', [3.0])], status=1)
        self.assertEqual(lines, ['Only in a.serio: array 1 “w”', 'Only in b.serio: array 2 “y”'])
        lines = self.diff([('w', [1.0]), ('w', [2.0])], [('w', [1.0]), ('w', [2.5])], status=1)
        self.assertEqual(lines, diff_lines('w', [2.0], [2.5]))

    def test_lengths(self):
        lines = self.diff([('w', [1.0, 2.0, 3.0])], [('w', [1.0, 2.5])], status=1)
        self.assertEqual(lines, ['“w”: length 3 in a.serio, 2 in b.serio'] +
                         diff_lines('w', [1.0, 2.0, 3.0], [1.0, 2.5]))
        lines = self.diff([('w', [])], [('w', [1.0])], status=1)
        self.assertEqual(lines, ['“w”: length 0 in a.serio, 1 in b.serio'])

    def test_order(self):
        lines = self.diff([('x', [1.0]), ('y', [2.0])], [('y', [2.0]), ('x', [1.0])], status=1)
        self.assertEqual(lines, ['“y” is array 1 in a.serio but array 0 in b.serio: the order differs'])
        # a removed array shifts the others without changing their order
        lines = self.diff([('x', [1.0]), ('y', [2.0])], [('y', [2.0])], status=1)
        self.assertEqual(lines, ['Only in a.serio: array 0 “x”'])

    def test_shapes(self):
        # arrays are matched by base name; shapes, and the names of the
        # same shape written two ways, are differences
        lines = self.diff([('w[2x3]', [1.0] * 6), ('v', [1.0, 2.0]), ('u[2]', [1.0, 2.0]),
                           ('s[]', [3.0])],
                          [('w[3x2]', [1.0] * 6), ('v[2]', [1.0, 2.0]), ('u', [1.0, 2.0, 3.0]),
                           ('s[]', [3.0])], status=1)
        self.assertEqual(lines, ['“w”: shape (2, 3) in a.serio, (3, 2) in b.serio',
                                 '“v”: named “v” in a.serio, “v[2]” in b.serio',
                                 '“u”: length 2 in a.serio, 3 in b.serio'])
        # each alone is a difference, with a tolerance too
        self.diff([('v', [1.0, 2.0])], [('v[2]', [1.0, 2.0])], status=1)
        self.diff([('v', [1.0, 2.0])], [('v[2]', [1.0, 2.0])], '--atol', '1', status=1)
        self.diff([('w[2x3]', [1.0] * 6)], [('w[3x2]', [1.0] * 6)], status=1)
        self.diff([('w[2x3]', [1.0] * 6)], [('w[3x2]', [1.0] * 6)], '--atol', '1', status=1)
        self.diff([('w[2x3]', [1.0] * 6)], [('w[2x3]', [1.5] * 6)], '--atol', '1', status=0)
        # values are compared in C order
        lines = self.diff([('w[2x2]', [1.0, 2.0, 3.0, 4.0])], [('w[2x2]', [1.0, 2.0, 3.0, 5.0])],
                          status=1)
        self.assertEqual(lines, diff_lines('w', [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 5.0]))

    def test_sealed_files(self):
        # a sealed file and the plain file of the same bundle are the same
        text = serio_text([('w', [1.0, 0.5])])
        self.write('plain.serio', text)
        self.write('sealed.serio', sealed(text))
        self.write('other.serio', sealed(serio_text([('w', [1.0, 0.25])])))
        proc = self.run_tool('diff', 'plain.serio', 'sealed.serio', status=0)
        self.assertEqual(proc.stdout, b'')
        proc = self.run_tool('diff', 'sealed.serio', 'other.serio', status=1)
        self.assertEqual(proc.stdout.decode().splitlines(),
                         diff_lines('w', [1.0, 0.5], [1.0, 0.25]))

    def test_stdin(self):
        self.write('a.serio', serio_text([('w', [1.0])]))
        self.run_tool('diff', 'a.serio', '-', stdin=serio_text([('w', [1.0])]), status=0)
        self.run_tool('diff', '-', 'a.serio', stdin=serio_text([('w', [2.0])]), status=1)
        self.run_tool('diff', '-', '-', status=2)

    def test_errors(self):
        self.write('a.serio', serio_text([('w', [1.0])]))
        self.write('bad.serio', b'v1|w|1|1.0\n')
        proc = self.run_tool('diff', 'a.serio', 'bad.serio', status=2)
        self.assertTrue(proc.stderr.decode().startswith('bad.serio:1: '))
        self.run_tool('diff', 'missing.serio', 'a.serio', status=2)
        self.run_tool('diff', 'a.serio', status=2)
        self.run_tool('diff', 'a.serio', 'a.serio', 'a.serio', status=2)

    def test_non_utf8_file_name(self):
        self.write(b'\xff.serio', serio_text([('w', [1.0])]))
        self.write('b.serio', serio_text([]))
        proc = self.run_tool('diff', b'\xff.serio', 'b.serio', status=1)
        self.assertEqual(proc.stdout.decode(), 'Only in \ufffd.serio: array 0 “w”\n')


# --- serio cat --------------------------------------------------------------

def f64_patterns():
    with open(os.path.join(os.environ['SERIO_TEST_DATA'], 'f64_patterns.txt')) as f:
        values = [from_bits(int(line, 16)) for line in f if line.strip()]
    return [CANONICAL_NAN if math.isnan(v) else v for v in values]


class CatTests(ToolTestCase):

    def test_typed_values_print_in_their_type(self):
        # each value as the shortest decimal of its array's type: a float32
        # 0.1 is 0.1, an int64 2^63 - 1 … is written out whole
        rng = random.Random(18)
        arrays = [(name, dtype, values) for name, dtype, values in TYPED_ARRAYS]
        for dtype, n in (('float32', 3000), ('float16', 3000), ('bfloat16', 3000)):
            arrays.append(('r.%s@%s[%d]' % (dtype, dtype, n), dtype, random_narrow(rng, dtype, n)))
        # a power of two with both neighbours' decimals one digit long:
        # bfloat16's 2^-133 is 9e-41, nearer than 1e-40
        arrays.append(('tiny@bfloat16[2]', 'bfloat16', [bf16_of_bits(1), -bf16_of_bits(2)]))
        self.write('t.serio', serio_text([(name, values) for name, _, values in arrays]))
        out = self.run_tool('cat', 't.serio', status=0).stdout.decode('ascii')
        expected = ''.join('# %s (%d value%s)\n' % (name, len(values), '' if len(values) == 1 else 's') +
                           ''.join(typed_shortest(v, dtype) + '\n' for v in values)
                           for name, dtype, values in arrays)
        self.assertEqual(out, expected)
        self.assertIn('# w@float32[2x2] (4 values)\n0.1\n-0.5\n3.4e+38\n1e-45\n', out)
        self.assertIn('# big@uint64[2] (2 values)\n9223372036854775808\n1152921504606846976\n', out)
        self.assertIn('# tiny@bfloat16[2] (2 values)\n9e-41\n-2e-40\n', out)
        # every float32 and float16 printed reads back to its bits
        for name, dtype, values in arrays:
            if dtype in ('float32', 'float16'):
                lines = self.run_tool('cat', '-n', name, 't.serio', status=0).stdout.decode().split()
                read_back = f32 if dtype == 'float32' else f16
                self.assertEqual([bits(read_back(float(t))) for t in lines], [bits(v) for v in values])

    def test_metadata_records_are_not_printed(self):
        text = serio_text([('serio.dtypes', [1.0]), ('w[1]', [f32(0.1)]), ('serio.tree', [1.0, 2.0])])
        self.write('m.serio', text)
        proc = self.run_tool('cat', 'm.serio', status=0)
        # a legacy table is not applied: w is float64 as its record says
        self.assertEqual(proc.stdout, b'# w[1] (1 value)\n0.10000000149011612\n')
        proc = self.run_tool('cat', '-n', 'serio.tree', 'm.serio', status=0)
        self.assertEqual(proc.stdout, b'1\n2\n')
        # they are read, and so checked
        self.write('bad.serio', text.replace(b'1,2', b'1,2.0'))
        self.run_tool('cat', 'bad.serio', status=1)

    def test_shortest_round_trip(self):
        values = special_values() + f64_patterns()
        self.write('p.serio', serio_text([('p', values)]))
        proc = self.run_tool('cat', 'p.serio', '--name', 'p', status=0)
        lines = proc.stdout.decode('ascii').split('\n')
        self.assertEqual(lines[-1], '')
        lines = lines[:-1]
        self.assertEqual(len(lines), len(values))
        for line, value in zip(lines, values):
            self.assertEqual(line, shortest(value))
            if not math.isnan(value):
                self.assertEqual(bits(float(line)), bits(value))

    def test_random_values_match_python_repr(self):
        # Random bit patterns of every exponent, values near powers of two
        # and ten (lopsided intervals, ties), subnormals, float32-origin
        # values and integers: the shortest round trip, as repr() has it.
        rng = random.Random(17)
        values = [from_bits(rng.getrandbits(64)) for _ in range(60000)]
        values += [from_bits(rng.getrandbits(52) | (e << 52)) for e in range(0, 2047, 3)
                   for _ in range(20)]
        for e in range(-1074, 1024):
            p = math.ldexp(1.0, e)
            values += [p, from_bits(bits(p) + 1), from_bits(max(bits(p) - 1, 0))]
        for e in range(-325, 309):
            t = float('1e%d' % e)
            values += [t, from_bits(bits(t) + 1), from_bits(max(bits(t) - 1, 0))]
        values += [struct.unpack('<f', struct.pack('<I', rng.getrandbits(31)))[0]
                   for _ in range(20000)]
        values += [float(rng.randrange(-2 ** 53, 2 ** 53)) for _ in range(5000)]
        values += [from_bits(b) for b in range(1, 2000)]
        values = [v for v in values if not math.isnan(v)]
        self.write('r.serio', serio_text([('r', values)]))
        proc = self.run_tool('cat', '-n', 'r', 'r.serio', status=0)
        lines = proc.stdout.decode('ascii').split('\n')[:-1]
        self.assertEqual(len(lines), len(values))
        wrong = [(line, shortest(v)) for line, v in zip(lines, values) if line != shortest(v)]
        self.assertEqual(wrong[:5], [])

    def test_tables_are_generated(self):
        # tools/serio-ryu-tables.h is what tools/gen-ryu-tables.py writes
        tools = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools')
        generated = subprocess.run([sys.executable, os.path.join(tools, 'gen-ryu-tables.py')],
                                   stdout=subprocess.PIPE, check=True).stdout
        with open(os.path.join(tools, 'serio-ryu-tables.h'), 'rb') as f:
            self.assertEqual(f.read(), generated)

    def test_headers(self):
        self.write('a.serio', serio_text([('w', [1.0, 0.5]), ('one', [-0.0]), ('e', []),
                                          ('c\x01', [math.inf])]))
        proc = self.run_tool('cat', 'a.serio', status=0)
        self.assertEqual(proc.stdout, b'# w (2 values)\n1\n0.5\n# one (1 value)\n-0\n'
                                      b'# e (0 values)\n# c\\x01 (1 value)\ninf\n')

    def test_first_match_by_name(self):
        self.write('a.serio', serio_text([('w', [1.0]), ('w', [2.0])]))
        self.assertEqual(self.run_tool('cat', '-n', 'w', 'a.serio', status=0).stdout, b'1\n')
        proc = self.run_tool('cat', '--name', 'nope', 'a.serio', status=1)
        self.assertIn('“nope”', proc.stderr.decode())

    def test_several_names(self):
        # Every array asked for is printed, in the order given, each with
        # its header: a second --name is not silently dropped.
        self.write('a.serio', serio_text([('a', [1.0]), ('b', [2.0, 3.0]), ('a', [4.0])]))
        proc = self.run_tool('cat', '--name', 'b', '-n', 'a', 'a.serio', status=0)
        self.assertEqual(proc.stdout, b'# b (2 values)\n2\n3\n# a (1 value)\n1\n')
        proc = self.run_tool('cat', '-n', 'a', '-n', 'a', 'a.serio', status=0)
        self.assertEqual(proc.stdout, b'# a (1 value)\n1\n# a (1 value)\n1\n')
        # A missing name is reported once the file was read, after the
        # arrays that are there (changed with streaming: the names are no
        # longer all looked up before anything is printed).
        proc = self.run_tool('cat', '-n', 'a', '-n', 'nope', 'a.serio', status=1)
        self.assertEqual(proc.stdout, b'# a (1 value)\n1\n')
        self.assertEqual(self.stderr_lines(proc), ['serio cat: a.serio: no array is called “nope”'])

    def test_sealed_file(self):
        text = serio_text([('w', [1.0, 0.5]), ('b', [-0.0])])
        self.write('plain.serio', text)
        self.write('sealed.serio', sealed(text))
        plain = self.run_tool('cat', 'plain.serio', status=0).stdout
        self.assertEqual(self.run_tool('cat', 'sealed.serio', status=0).stdout, plain)
        self.assertEqual(self.run_tool('cat', '-', stdin=sealed(text), status=0).stdout, plain)

    def test_same_under_every_locale(self):
        values = special_values() + f64_patterns()[::50]
        self.write('a.serio', serio_text([('w', values)]))
        c_output = self.run_tool('cat', 'a.serio', status=0).stdout
        tested = 0
        for lang in ('de_DE.UTF-8', 'fr_FR.UTF-8'):
            if have_locale(lang) != ',':
                continue
            tested += 1
            self.assertEqual(self.run_tool('cat', 'a.serio', lang=lang, status=0).stdout, c_output)
        if tested == 0:
            self.skipTest('neither de_DE.UTF-8 nor fr_FR.UTF-8 is installed')

    def test_stdin_and_errors(self):
        proc = self.run_tool('cat', '-', stdin=b'v1|a|2|1p-1,-inf\n', status=0)
        self.assertEqual(proc.stdout, b'# a (2 values)\n0.5\n-inf\n')
        proc = self.run_tool('cat', '-', stdin=b'v1|a|2|1p-1,-Inf\n', status=1)
        self.assertTrue(proc.stderr.decode().startswith('-:1: '))
        self.run_tool('cat', 'missing.serio', status=2)
        self.run_tool('cat', status=2)
        self.run_tool('cat', '-', '-', status=2)


# --- serio convert ----------------------------------------------------------

class ConvertTests(ToolTestCase):
    VALUES = [0.1, -0.0, 0.0, math.inf, -math.inf, CANONICAL_NAN, 5e-324, -1.7976931348623157e308,
              2.0 ** 62, 42.0]

    def npy_to_serio(self, npy, out='out.serio', *options, status=0):
        self.write('in.npy', npy)
        proc = self.run_tool('convert', *options, 'in.npy', out, status=status)
        return proc

    def test_little_and_big_endian(self):
        for byte_order in '<>':
            with self.subTest(byte_order=byte_order):
                proc = self.npy_to_serio(npy_bytes(byte_order + 'f8', (len(self.VALUES),),
                                                   f8_data(self.VALUES, byte_order)))
                self.assertEqual(proc.stderr, b'')
                self.assertEqual(self.read('out.serio'), sealed(serio_text([('in', self.VALUES)])))

    def test_format_versions(self):
        for version in ((1, 0), (2, 0), (3, 0)):
            with self.subTest(version=version):
                self.npy_to_serio(npy_bytes('<f8', (3,), f8_data([1.0, 2.0, 3.0]), version=version))
                self.assertEqual(self.read('out.serio'), sealed(b'v1|in|3|1,2,3\n'))
        proc = self.npy_to_serio(npy_bytes('<f8', (3,), f8_data([1.0, 2.0, 3.0]), version=(4, 0)),
                                 status=1)
        self.assertIn('4.0', proc.stderr.decode())

    def test_shape_is_kept_in_the_name(self):
        # serio-v1-files.md §3: the shape travels in the name, C order
        values = [float(i) for i in range(24)]
        proc = self.npy_to_serio(npy_bytes('<f8', (2, 3, 4), f8_data(values)))
        self.assertEqual(self.read('out.serio'), sealed(serio_text([('in[2x3x4]', values)])))
        self.assertEqual(proc.stderr, b'')
        # back to .npy in its shape, looked up by its base name or its name
        for args in ([], ['--name', 'in'], ['--name', 'in[2x3x4]']):
            with self.subTest(args=args):
                self.run_tool('convert', *args, 'out.serio', 'back.npy', status=0)
                self.assertEqual(self.read('back.npy'), npy_bytes('<f8', (2, 3, 4), f8_data(values)))
        # a name that ends like a suffix keeps it, the shape's own follows
        self.write('odd.npy', npy_bytes('<f8', (2,), f8_data([1.0, 2.0])))
        self.run_tool('convert', '--name', 'w[2]', 'odd.npy', 'odd.serio', status=0)
        self.assertEqual(self.read('odd.serio'), sealed(b'v1|w[2][2]|2|1,2\n'))
        self.run_tool('convert', 'odd.serio', 'odd.npz', status=0)
        with zipfile.ZipFile(os.fsdecode(self.path('odd.npz'))) as z:
            self.assertEqual(z.namelist(), ['w[2].npy'])
        # more dimensions than a serio shape has
        proc = self.npy_to_serio(npy_bytes('<f8', (1,) * 33, f8_data([1.0])), status=1)
        self.assertIn('33 dimensions', proc.stderr.decode())
        self.npy_to_serio(npy_bytes('<f8', (1,) * 32, f8_data([1.0])))
        self.assertEqual(self.read('out.serio'), sealed(b'v1|in[%s]|1|1\n' % b'x'.join([b'1'] * 32)))

    def test_fortran_order_is_transposed(self):
        shape = (2, 3, 4)
        # element (i, j, k) holds 100i + 10j + k; Fortran order stores i fastest
        fortran = [100.0 * i + 10 * j + k for k in range(4) for j in range(3) for i in range(2)]
        c_order = [100.0 * i + 10 * j + k for i in range(2) for j in range(3) for k in range(4)]
        for byte_order in '<>':
            self.npy_to_serio(npy_bytes(byte_order + 'f8', shape, f8_data(fortran, byte_order),
                                        fortran_order=True))
            self.assertEqual(self.read('out.serio'), sealed(serio_text([('in[2x3x4]', c_order)])))
        # a vector is the same in both orders
        self.npy_to_serio(npy_bytes('<f8', (3,), f8_data([1.0, 2.0, 3.0]), fortran_order=True))
        self.assertEqual(self.read('out.serio'), sealed(b'v1|in|3|1,2,3\n'))

    def test_scalar_and_empty(self):
        self.npy_to_serio(npy_bytes('<f8', (), f8_data([2.5])))
        self.assertEqual(self.read('out.serio'), sealed(b'v1|in[]|1|5p-1\n'))
        self.run_tool('convert', 'out.serio', 'back.npy', status=0)
        self.assertEqual(self.read('back.npy'), npy_bytes('<f8', (), f8_data([2.5])))
        self.npy_to_serio(npy_bytes('<f8', (0,), b''))
        self.assertEqual(self.read('out.serio'), sealed(b'v1|in|0|\n'))
        # The largest that NumPy allows: 4 * 2^57 * 8 bytes is 2^62.
        self.npy_to_serio(npy_bytes('<f8', (4, 0, 1 << 57), b''))
        self.assertEqual(self.read('out.serio'), sealed(b'v1|in[4x0x144115188075855872]|0|\n'))
        self.run_tool('convert', 'out.serio', 'back.npy', status=0)
        self.assertEqual(self.read('back.npy'), npy_bytes('<f8', (4, 0, 1 << 57), b''))

    def test_header_variants(self):
        data = f8_data([1.0, 2.0])
        for header in ("{'shape': (2,), 'fortran_order': False, 'descr': '<f8'}",
                       '{"descr": "<f8", "fortran_order": False, "shape": (2L,)}',
                       "{'descr':'<f8','fortran_order':False,'shape':(2,)}"):
            with self.subTest(header=header):
                self.npy_to_serio(npy_bytes(None, None, data, header=header))
                self.assertEqual(self.read('out.serio'), sealed(b'v1|in|2|1,2\n'))
        self.npy_to_serio(npy_bytes(None, None, data,
                                    header="{'descr':'<f8','fortran_order':False,'shape':(1, 2)}"))
        self.assertEqual(self.read('out.serio'), sealed(b'v1|in[1x2]|2|1,2\n'))

    def test_array_name(self):
        self.write('dense.w.npy', npy_bytes('<f8', (1,), f8_data([1.0])))
        self.run_tool('convert', 'dense.w.npy', 'a.serio', status=0)
        self.assertEqual(self.read('a.serio'), sealed(b'v1|dense.w|1|1\n'))
        os.mkdir(self.path('sub'))
        self.write('sub/UPPER.NPY', npy_bytes('<f8', (1,), f8_data([1.0])))
        self.run_tool('convert', 'sub/UPPER.NPY', 'b.serio', status=0)
        self.assertEqual(self.read('b.serio'), sealed(b'v1|UPPER|1|1\n'))
        self.run_tool('convert', '--name', 'given | name', 'dense.w.npy', 'c.serio', status=0)
        self.assertEqual(self.read('c.serio'), sealed(b'v1|given _ name|1|1\n'))
        self.write(b'\xffx.npy', npy_bytes('<f8', (1,), f8_data([1.0])))
        self.run_tool('convert', b'\xffx.npy', 'd.serio', status=0)
        self.assertEqual(self.read('d.serio'), sealed('v1|\ufffdx|1|1\n'.encode()))

    def test_nan_payloads_are_noted(self):
        odd_nans = [from_bits(0x7FF8000000000001), from_bits(0xFFF8000000000000)]
        proc = self.npy_to_serio(npy_bytes('<f8', (3,), f8_data(odd_nans + [CANONICAL_NAN])))
        self.assertEqual(self.read('out.serio'), sealed(b'v1|in|3|nan,nan,nan\n'))
        self.assertIn('2 NaNs', proc.stderr.decode())

    def test_unsupported_dtypes(self):
        cases = [("'|O'", '|O'), ("'<c16'", '<c16'), ("'=f8'", '=f8'), ("'<f16'", '<f16'),
                 ("'<M8[s]'", '<M8[s]'), ("'|i2'", '|i2'), ("'<b1'", '<b1'), ("'<U1'", '<U1')]
        for descr, shown in cases:
            with self.subTest(descr=descr):
                header = "{'descr': %s, 'fortran_order': False, 'shape': (1,), }" % descr
                proc = self.npy_to_serio(npy_bytes(None, None, b'\0' * 8, header=header), status=1)
                self.assertIn('“%s” is not supported' % shown, proc.stderr.decode())
                self.assertFalse(os.path.exists(self.path('out.serio')))
        header = "{'descr': [('a', '<f8'), ('b', '<f8')], 'fortran_order': False, 'shape': (1,), }"
        proc = self.npy_to_serio(npy_bytes(None, None, b'\0' * 16, header=header), status=1)
        self.assertIn('structured', proc.stderr.decode())

    def test_float32_and_float16_are_widened_exactly(self):
        f32 = [struct.unpack('<f', struct.pack('<I', b))[0] for b in (
            0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x3F800000, 0x3DCCCCCD,
            0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x4B000001)]
        f16 = [struct.unpack('<e', struct.pack('<H', b))[0] for b in (
            0x0000, 0x8000, 0x0001, 0x83FF, 0x0400, 0x3C00, 0x3555, 0x7BFF, 0xFBFF, 0x7C00,
            0xFC00, 0x7E00, 0x1234, 0xC000)]
        for code, fmt, values, type_name in (('f4', 'f', f32, 'float32'),
                                             ('f2', 'e', f16, 'float16')):
            for byte_order in '<>':
                with self.subTest(dtype=byte_order + code):
                    data = b''.join(struct.pack(byte_order + fmt, v) for v in values)
                    self.npy_to_serio(npy_bytes(byte_order + code, (len(values),), data))
                    # struct widens exactly too: the values are those doubles,
                    # in a record of their type
                    name = 'in@%s[%d]' % (type_name, len(values))
                    self.assertEqual(self.read('out.serio'), sealed(serio_text([(name, values)])))
        # Fortran order, float32
        shape = (2, 3)
        fortran = [float(10 * i + j) + 0.5 for j in range(3) for i in range(2)]
        c_order = [float(10 * i + j) + 0.5 for i in range(2) for j in range(3)]
        self.npy_to_serio(npy_bytes('>f4', shape, b''.join(struct.pack('>f', v) for v in fortran),
                                    fortran_order=True))
        self.assertEqual(self.read('out.serio'),
                         sealed(serio_text([('in@float32[2x3]', c_order)])))
        # a NaN payload of float16 and float32 is noted like one of float64
        proc = self.npy_to_serio(npy_bytes('<f2', (2,), struct.pack('<HH', 0x7E01, 0xFE00)))
        self.assertEqual(self.read('out.serio'), sealed(b'v1|in@float16[2]|2|nan,nan\n'))
        self.assertIn('2 NaNs', proc.stderr.decode())

    def test_integers_and_booleans(self):
        cases = [('|i1', 'b', [-128, -1, 0, 127]), ('|u1', 'B', [0, 255]),
                 ('<i2', 'h', [-32768, 32767]), ('>u2', 'H', [65535, 1]),
                 ('<i4', 'i', [-2 ** 31, 2 ** 31 - 1]), ('>u4', 'I', [2 ** 32 - 1]),
                 ('<i8', 'q', [-2 ** 63, 2 ** 53, -2 ** 53, 2 ** 60 + 2 ** 8, 5]),
                 ('>u8', 'Q', [2 ** 64 - 2 ** 11, 2 ** 53]), ('|b1', '?', [True, False])]
        for descr, fmt, values in cases:
            with self.subTest(descr=descr):
                order = '>' if descr[0] == '>' else '<'
                data = b''.join(struct.pack(order + fmt, v) for v in values)
                self.npy_to_serio(npy_bytes(descr, (len(values),), data))
                name = 'in@%s%d[%d]' % ({'i': 'int', 'u': 'uint', 'b': 'bool'}[descr[1]],
                                        int(descr[2]) * 8, len(values))
                name = name.replace('bool8', 'bool')
                self.assertEqual(self.read('out.serio'),
                                 sealed(serio_text([(name, [float(v) for v in values])])))
        # an integer that no double holds is refused, with its index
        for descr, fmt, value in (('<i8', 'q', 2 ** 53 + 1), ('<i8', 'q', 2 ** 63 - 1),
                                  ('>u8', 'Q', 2 ** 64 - 1)):
            with self.subTest(value=value):
                if os.path.exists(self.path('out.serio')):
                    os.unlink(self.path('out.serio'))
                order = descr[0]
                data = struct.pack(order + fmt, 7) + struct.pack(order + fmt, value)
                proc = self.npy_to_serio(npy_bytes(descr, (2,), data), status=1)
                self.assertIn('%d at index 1' % value, proc.stderr.decode())
                self.assertFalse(os.path.exists(self.path('out.serio')))
        proc = self.npy_to_serio(npy_bytes('|b1', (1,), b'\x02'), status=1)
        self.assertIn('neither 0 nor 1', proc.stderr.decode())

    def npz(self, name, members, compression=zipfile.ZIP_STORED):
        """A .npz file made by the standard library's zipfile, as numpy.savez() does."""
        with zipfile.ZipFile(os.fsdecode(self.path(name)), 'w', compression) as z:
            for member, data in members:
                z.writestr(member, data)
        return name

    def test_npz_to_serio(self):
        members = [('w.npy', npy_bytes('<f4', (2, 2), struct.pack('<4f', 1.5, -0.0, 3.0, 0.25))),
                   ('b.npy', npy_bytes('>f8', (3,), f8_data([0.1, math.inf, -2.0], '>'))),
                   ('dir/ü.npy', npy_bytes('<i8', (), struct.pack('<q', 5))),
                   ('empty.npy', npy_bytes('<f2', (0,), b''))]
        want = serio_text([('w@float32[2x2]', [1.5, -0.0, 3.0, 0.25]),
                           ('b', [0.1, math.inf, -2.0]), ('dir/ü@int64[]', [5.0]),
                           ('empty@float16[0]', [])])
        for compression in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            with self.subTest(compression=compression):
                self.npz('in.npz', members, compression)
                self.run_tool('convert', 'in.npz', 'out.serio', status=0)
                self.assertEqual(self.read('out.serio'), sealed(want))
        # an empty archive is an empty bundle
        self.npz('none.npz', [])
        self.run_tool('convert', 'none.npz', 'none.serio', status=0)
        self.assertEqual(self.read('none.serio'), sealed(b''))

    def test_npz_zip64(self):
        # ZIP64 records, as a writer uses them for archives above 4 GiB or
        # 65535 members (NumPy's zipfile writes its extra field in local
        # headers always): an archive made here by hand, byte by byte from
        # APPNOTE, with ZIP64 sizes and offsets in the central directory
        # and a ZIP64 end of central directory record.
        import binascii
        members = [('a.npy', npy_bytes('<f8', (2,), f8_data([1.0, 2.0]))),
                   ('b.npy', npy_bytes('<f4', (1,), struct.pack('<f', 0.5)))]
        local, central = b'', b''
        for name, data in members:
            crc = binascii.crc32(data)
            offset = len(local)
            local += struct.pack('<IHHHHHIIIHH', 0x04034b50, 45, 0, 0, 0, 0x21, crc,
                                 len(data), len(data), len(name), 0) + name.encode() + data
            extra = struct.pack('<HHQQQ', 1, 24, len(data), len(data), offset)
            central += struct.pack('<IHHHHHHIIIHHHHHII', 0x02014b50, 45, 45, 0, 0, 0, 0x21, crc,
                                   0xFFFFFFFF, 0xFFFFFFFF, len(name), len(extra), 0, 0, 0, 0,
                                   0xFFFFFFFF) + name.encode() + extra
        eocd64_offset = len(local) + len(central)
        eocd64 = struct.pack('<IQHHIIQQQQ', 0x06064b50, 44, 45, 45, 0, 0, len(members),
                             len(members), len(central), len(local))
        locator = struct.pack('<IIQI', 0x07064b50, 0, eocd64_offset, 1)
        eocd = struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                           0xFFFFFFFF, 0)
        self.write('in.npz', local + central + eocd64 + locator + eocd)
        with zipfile.ZipFile(os.fsdecode(self.path('in.npz'))) as z:
            self.assertEqual(z.namelist(), ['a.npy', 'b.npy'])   # a valid archive
        self.run_tool('convert', '--plain', 'in.npz', 'out.serio', status=0)
        self.assertEqual(self.read('out.serio'), b'v1|a|2|1,2\nv1|b@float32[1]|1|1p-1\n')
        # a locator that points elsewhere, or a ZIP64 field missing
        self.write('bad.npz', local + central + eocd64 +
                   struct.pack('<IIQI', 0x07064b50, 0, eocd64_offset + 1, 1) + eocd)
        proc = self.run_tool('convert', 'bad.npz', 'out2.serio', status=1)
        self.assertIn('damaged', proc.stderr.decode())
        short = central.replace(struct.pack('<HHQQQ', 1, 24, 16 + len(members[0][1]) - 16,
                                            len(members[0][1]), 0),
                                struct.pack('<HHQQQ', 1, 16, len(members[0][1]),
                                            len(members[0][1]), 0), 1)
        self.assertNotEqual(short, central)
        self.write('bad.npz', local + short + eocd64 + locator + eocd)
        proc = self.run_tool('convert', 'bad.npz', 'out2.serio', status=1)
        self.assertIn('damaged', proc.stderr.decode())
        self.assertFalse(os.path.exists(self.path('out2.serio')))

    def test_npz_errors(self):
        good = npy_bytes('<f8', (2,), f8_data([1.0, 2.0]))
        cases = {
            'member not npy': ([('w.npy', good), ('notes.txt', b'hello')], 'notes.txt: '),
            'directory': ([('d/', b'')], 'd/: '),
            'bad member': ([('w.npy', good), ('x.npy', npy_bytes('<c8', (1,), b'\0' * 8))],
                           'x.npy: the data type'),
            'reserved name': ([('serio.seal.npy', good)], 'reserve'),
        }
        for what, (members, message) in cases.items():
            with self.subTest(what=what):
                self.npz('in.npz', members)
                proc = self.run_tool('convert', 'in.npz', 'out.serio', status=1)
                self.assertIn(message, proc.stderr.decode())
                self.assertFalse(os.path.exists(self.path('out.serio')))
        self.npz('in.npz', [('w.npy', good)], zipfile.ZIP_BZIP2)
        proc = self.run_tool('convert', 'in.npz', 'out.serio', status=1)
        self.assertIn('compression method 12', proc.stderr.decode())
        # --name belongs to .npy conversions
        proc = self.run_tool('convert', '--name', 'w', 'in.npz', 'out.serio', status=2)
        self.assertIn('--name', proc.stderr.decode())

    def test_npz_damage_is_refused(self):
        members = [('w.npy', npy_bytes('<f8', (3,), f8_data([1.0, 2.0, 3.0]))),
                   ('b.npy', npy_bytes('<f4', (2,), struct.pack('<2f', 0.5, 4.0)))]
        for compression in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            self.npz('good.npz', members, compression)
            good = self.read('good.npz')
            # every truncation
            for cut in range(len(good)):
                with self.subTest(compression=compression, cut=cut):
                    self.write('in.npz', good[:cut])
                    proc = self.run_tool('convert', 'in.npz', 'out.serio')
                    self.assertEqual(proc.returncode, 1, proc.stderr)
                    self.assertEqual(len(self.stderr_lines(proc)), 1, proc.stderr)
            self.assertFalse(os.path.exists(self.path('out.serio')))
            # a changed byte of a member's data is caught by its CRC-32
            with zipfile.ZipFile(os.fsdecode(self.path('good.npz'))) as z:
                info = z.getinfo('w.npy')
            start = info.header_offset + 30 + len('w.npy')
            for offset in (start, start + info.compress_size // 2, start + info.compress_size - 1):
                damaged = bytearray(good)
                damaged[offset] ^= 0x01
                self.write('in.npz', bytes(damaged))
                proc = self.run_tool('convert', 'in.npz', 'out.serio', status=1)
                self.assertIn('w.npy: ', proc.stderr.decode())

    def test_npz_hostile_sizes(self):
        # A central directory that declares 4 GiB for a member of a few
        # bytes: refused, without allocating what it declares (the tool
        # runs with 1 GiB of address space).
        self.npz('good.npz', [('w.npy', npy_bytes('<f8', (1,), f8_data([1.0])))],
                 zipfile.ZIP_DEFLATED)
        data = bytearray(self.read('good.npz'))
        central = data.rindex(b'PK\x01\x02')
        data[central + 24:central + 28] = b'\xfe\xff\xff\xff'
        self.write('in.npz', bytes(data))
        import resource

        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        # AddressSanitizer reserves terabytes of address space for its
        # shadow memory, so a tool built with it cannot run under the
        # limit; the ordinary build's run of this test applies it.
        sanitized = tool_is_sanitized()
        proc = subprocess.run([SERIO, 'convert', 'in.npz', 'out.serio'], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd=self.dir, env=self.env(), timeout=120,
                              preexec_fn=None if sanitized else limit)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn('damaged', proc.stderr.decode())
        # a member count beyond what the directory can hold
        data = bytearray(self.read('good.npz'))
        data[-12:-10] = b'\xff\xfe'
        data[-14:-12] = b'\xff\xfe'
        self.write('in.npz', bytes(data))
        proc = self.run_tool('convert', 'in.npz', 'out.serio', status=1)
        self.assertIn('damaged', proc.stderr.decode())

    def test_serio_to_npz(self):
        arrays = [('w', self.VALUES), ('b', [1.0, 2.0]), ('ü/x', []), ('', [0.5])]
        self.write('a.serio', serio_text(arrays))
        self.run_tool('convert', 'a.serio', 'a.npz', status=0)
        with zipfile.ZipFile(os.fsdecode(self.path('a.npz'))) as z:
            self.assertIsNone(z.testzip())
            infos = z.infolist()
            self.assertEqual([i.filename for i in infos], [n + '.npy' for n, _ in arrays])
            for info, (name, values) in zip(infos, arrays):
                self.assertEqual(info.compress_type, zipfile.ZIP_STORED)
                self.assertEqual(z.read(info), npy_bytes('<f8', (len(values),), f8_data(values)))
        # the same bytes each time: no time stamp
        first = self.read('a.npz')
        self.run_tool('convert', 'a.serio', 'a.npz', status=0)
        self.assertEqual(self.read('a.npz'), first)
        # and back
        self.run_tool('convert', 'a.npz', 'back.serio', status=0)
        self.assertEqual(self.read('back.serio'), sealed(serio_text(arrays)))
        # compressed, as numpy.savez_compressed() writes it: the same members
        self.run_tool('convert', '--compress', 'a.serio', 'z.npz', status=0)
        with zipfile.ZipFile(os.fsdecode(self.path('z.npz'))) as z:
            self.assertIsNone(z.testzip())
            infos = z.infolist()
            self.assertEqual([i.filename for i in infos], [n + '.npy' for n, _ in arrays])
            for info, (name, values) in zip(infos, arrays):
                self.assertEqual(info.compress_type, zipfile.ZIP_DEFLATED)
                self.assertEqual(z.read(info), npy_bytes('<f8', (len(values),), f8_data(values)))
        self.write('zeros.serio', serio_text([('z', [0.0] * 10000)]))
        self.run_tool('convert', '-z', 'zeros.serio', 'zeros.npz', status=0)
        self.assertLess(len(self.read('zeros.npz')), 1000)
        self.run_tool('convert', 'zeros.npz', 'zeros2.serio', status=0)
        self.assertEqual(self.read('zeros2.serio'), sealed(serio_text([('z', [0.0] * 10000)])))
        proc = self.run_tool('convert', '--compress', 'a.serio', 'x.npy', status=2)
        self.assertIn('--compress', proc.stderr.decode())
        # names must not repeat, shapes aside
        for dup in ([('w', [1.0]), ('b', []), ('w', [2.0])],
                    [('w[2]', [1.0, 2.0]), ('w[1x2]', [1.0, 2.0])]):
            self.write('dup.serio', serio_text(dup))
            proc = self.run_tool('convert', 'dup.serio', 'dup.npz', status=1)
            self.assertIn('“w”', proc.stderr.decode())
            self.assertFalse(os.path.exists(self.path('dup.npz')))
        # shapes: members named after the base names, in their shapes; a
        # suffix that is not a shape is part of the name
        shaped = [('conv.weight[2x1x3]', [float(i) for i in range(6)]), ('steps[]', [5.0]),
                  ('odd[5]', [1.0, 2.0]), ('v[0x3]', [])]
        self.write('s.serio', serio_text(shaped))
        self.run_tool('convert', 's.serio', 's.npz', status=0)
        with zipfile.ZipFile(os.fsdecode(self.path('s.npz'))) as z:
            self.assertEqual([(i.filename, z.read(i)) for i in z.infolist()], [
                ('conv.weight.npy', npy_bytes('<f8', (2, 1, 3), f8_data(shaped[0][1]))),
                ('steps.npy', npy_bytes('<f8', (), f8_data([5.0]))),
                ('odd[5].npy', npy_bytes('<f8', (2,), f8_data([1.0, 2.0]))),
                ('v.npy', npy_bytes('<f8', (0, 3), b''))])
        # back: the same names and shapes; a base name that ends like a
        # suffix gets its shape's suffix after it, so that it reads back
        self.run_tool('convert', 's.npz', 's2.serio', status=0)
        self.assertEqual(self.read('s2.serio'), sealed(serio_text(
            shaped[:2] + [('odd[5][2]', [1.0, 2.0])] + shaped[3:])))
        self.run_tool('convert', 's2.serio', 's2.npz', status=0)
        self.assertEqual(self.read('s2.npz'), self.read('s.npz'))
        # an empty bundle is an empty archive
        self.write('e.serio', b'')
        self.run_tool('convert', 'e.serio', 'e.npz', status=0)
        with zipfile.ZipFile(os.fsdecode(self.path('e.npz'))) as z:
            self.assertEqual(z.namelist(), [])

    def test_numpy_npz_round_trip(self):
        # .npz -> .serio -> .npz keeps every array's type and bits (big
        # endian ones made little endian, Fortran order C order), and the
        # order of the arrays.
        try:
            import numpy
        except ImportError:
            self.skipTest('NumPy is not installed')
        rng = numpy.random.default_rng(11)
        originals = {
            'conv.weight': rng.standard_normal((4, 3, 2, 2)).astype(numpy.float32),
            'fc.weight': numpy.asfortranarray(rng.standard_normal((5, 3))),
            'half': rng.standard_normal(9).astype('>f2'),
            'big.endian': rng.standard_normal((2, 2)).astype('>f4'),
            'steps': numpy.array(7, dtype=numpy.int64),
            'mask': numpy.array([True, False, True]),
            'specials': numpy.array([numpy.nan, -numpy.inf, -0.0, 5e-324, 1e308]),
        }
        for compressed in (False, True):
            with self.subTest(compressed=compressed):
                save = numpy.savez_compressed if compressed else numpy.savez
                save(self.path('in.npz').decode(), **originals)
                self.run_tool('convert', 'in.npz', 'mid.serio', status=0)
                self.run_tool('convert', *(['--compress'] if compressed else []),
                              'mid.serio', 'out.npz', status=0)
                with numpy.load(self.path('out.npz').decode()) as back:
                    self.assertEqual(list(back.keys()), list(originals))
                    for name, original in originals.items():
                        got = back[name]
                        self.assertEqual(got.dtype, original.dtype.newbyteorder('<'), name)
                        self.assertEqual(got.shape, original.shape, name)
                        self.assertTrue(got.flags.c_contiguous)
                        same = numpy.ascontiguousarray(original, dtype=got.dtype)
                        self.assertEqual(got.tobytes(), same.tobytes(), name)

    def test_malformed(self):
        good = npy_bytes('<f8', (2,), f8_data([1.0, 2.0]))
        cases = {
            'not npy': b'v1|a|0|\n',
            'short magic': b'\x93NUM',
            'no header length': b'\x93NUMPY\x01\x00\x10',
            'header beyond the file': good[:8] + b'\xff\xff' + good[10:80],
            'huge v2 header length': b'\x93NUMPY\x02\x00\xff\xff\xff\xff' + good[10:],
            'minor version': good[:7] + b'\x01' + good[8:],
            'missing key': npy_bytes(None, None, b'', header="{'descr': '<f8', 'shape': (0,)}"),
            'extra key': npy_bytes(None, None, b'',
                                   header="{'descr': '<f8', 'fortran_order': False, 'shape': (0,), 'x': 1}"),
            'repeated key': npy_bytes(None, None, b'',
                                      header="{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (0,)}"),
            'negative shape': npy_bytes(None, None, b'',
                                        header="{'descr': '<f8', 'fortran_order': False, 'shape': (-1,)}"),
            'shape not a tuple': npy_bytes(None, None, f8_data([1.0]),
                                           header="{'descr': '<f8', 'fortran_order': False, 'shape': (1)}"),
            'shape is a list': npy_bytes(None, None, f8_data([1.0]),
                                         header="{'descr': '<f8', 'fortran_order': False, 'shape': [1]}"),
            'leading zero': npy_bytes(None, None, f8_data([1.0]),
                                      header="{'descr': '<f8', 'fortran_order': False, 'shape': (01,)}"),
            'fortran_order not a bool': npy_bytes(None, None, b'',
                                                  header="{'descr': '<f8', 'fortran_order': 0, 'shape': (0,)}"),
            'unterminated string': npy_bytes(None, None, b'',
                                             header="{'descr: '<f8', 'fortran_order': False, 'shape': (0,)}"),
            'text after the dict': npy_bytes(None, None, b'',
                                             header="{'descr': '<f8', 'fortran_order': False, 'shape': (0,)} x"),
            'data too short': npy_bytes('<f8', (3,), f8_data([1.0, 2.0])),
            'data too long': npy_bytes('<f8', (1,), f8_data([1.0, 2.0])),
            'data not whole doubles': npy_bytes('<f8', (1,), f8_data([1.0]) + b'\0'),
            'hostile shape': npy_bytes('<f8', (1 << 62,), f8_data([1.0])),
            'overflowing shape': npy_bytes('<f8', (1 << 40, 1 << 40, 1 << 40), f8_data([1.0])),
            'overflowing dimension': npy_bytes(None, None, b'',
                                               header="{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,)}"),
            'too many dimensions': npy_bytes('<f8', (1,) * 65, f8_data([1.0])),
        }
        for what, data in cases.items():
            with self.subTest(what=what):
                proc = self.npy_to_serio(data, status=1)
                lines = self.stderr_lines(proc)
                self.assertEqual(len(lines), 1, lines)
                self.assertTrue(lines[0].startswith('serio convert: in.npy: '), lines[0])
                self.assertFalse(os.path.exists(self.path('out.serio')))

    def test_serio_to_npy(self):
        self.write('a.serio', serio_text([('w', self.VALUES)]))
        self.run_tool('convert', 'a.serio', 'w.npy', status=0)
        data = self.read('w.npy')
        self.assertEqual(data, npy_bytes('<f8', (len(self.VALUES),), f8_data(self.VALUES)))
        descr, fortran_order, shape, payload = parse_npy_vector(data)
        self.assertEqual((descr, fortran_order, shape), ('<f8', False, (len(self.VALUES),)))
        self.assertEqual(payload, f8_data(self.VALUES))

    def test_round_trip_bit_exact(self):
        values = f64_patterns()
        npy = npy_bytes('<f8', (len(values),), f8_data(values))
        self.write('p.npy', npy)
        self.run_tool('convert', 'p.npy', 'p.serio', status=0)
        self.assertEqual(self.read('p.serio'), sealed(serio_text([('p', values)])))
        self.run_tool('convert', 'p.serio', 'back.npy', status=0)
        self.assertEqual(self.read('back.npy'), npy)
        # from big-endian, back to little-endian, same values
        self.write('be.npy', npy_bytes('>f8', (len(values),), f8_data(values, '>')))
        self.run_tool('convert', 'be.npy', 'be.serio', status=0)
        self.run_tool('convert', 'be.serio', 'le.npy', status=0)
        self.assertEqual(parse_npy_vector(self.read('le.npy'))[3], f8_data(values))

    def test_choosing_the_array(self):
        self.write('a.serio', serio_text([('w', [1.0]), ('b', [2.0]), ('w', [3.0])]))
        proc = self.run_tool('convert', 'a.serio', 'x.npy', status=1)
        self.assertIn('3 arrays', proc.stderr.decode())
        self.assertIn('--name', proc.stderr.decode())
        self.run_tool('convert', '--name', 'w', 'a.serio', 'x.npy', status=0)
        self.assertEqual(parse_npy_vector(self.read('x.npy'))[3], f8_data([1.0]))
        self.run_tool('convert', '--name', 'nope', 'a.serio', 'y.npy', status=1)
        self.assertFalse(os.path.exists(self.path('y.npy')))
        self.write('e.serio', b'')
        proc = self.run_tool('convert', 'e.serio', 'e.npy', status=1)
        self.assertIn('holds no array', proc.stderr.decode())

    def test_sealed_by_default_plain_on_request(self):
        self.write('w.npy', npy_bytes('<f8', (2,), f8_data([1.0, 0.5])))
        self.run_tool('convert', 'w.npy', 'sealed.serio', status=0)
        self.assertEqual(self.read('sealed.serio'), sealed(b'v1|w|2|1,1p-1\n'))
        self.run_tool('convert', '--plain', 'w.npy', 'plain.serio', status=0)
        self.assertEqual(self.read('plain.serio'), b'v1|w|2|1,1p-1\n')
        self.npz('w.npz', [('w.npy', npy_bytes('<f8', (2,), f8_data([1.0, 0.5])))])
        self.run_tool('convert', '--plain', 'w.npz', 'plain2.serio', status=0)
        self.assertEqual(self.read('plain2.serio'), b'v1|w|2|1,1p-1\n')
        # sealed files convert back
        self.run_tool('convert', 'sealed.serio', 'back.npy', status=0)
        self.assertEqual(self.read('back.npy'), self.read('w.npy'))
        # --plain is about serio output only
        proc = self.run_tool('convert', '--plain', 'sealed.serio', 'x.npy', status=2)
        self.assertIn('--plain', proc.stderr.decode())

    def test_name_given_twice_is_refused(self):
        self.write('a.serio', serio_text([('w', [1.0]), ('b', [2.0])]))
        for args in (['--name', 'w', '--name', 'b'], ['-n', 'w', '-n', 'w']):
            proc = self.run_tool('convert', *args, 'a.serio', 'x.npy', status=2)
            self.assertIn('only once', proc.stderr.decode())
            self.assertFalse(os.path.exists(self.path('x.npy')))

    def test_stdin_to_npy(self):
        self.run_tool('convert', '-', 'x.npy', stdin=b'v1|x|1|1p-1\n', status=0)
        self.assertEqual(parse_npy_vector(self.read('x.npy'))[3], f8_data([0.5]))
        self.run_tool('convert', '-', 'x.npy', stdin=b'v1|x|1|1p-1', status=1)

    def test_usage_errors(self):
        self.write('a.serio', serio_text([('w', [1.0])]))
        self.write('a.npy', npy_bytes('<f8', (1,), f8_data([1.0])))
        self.run_tool('convert', 'a.serio', 'b.serio', status=2)
        self.run_tool('convert', 'a.npy', 'b.npy', status=2)
        self.run_tool('convert', 'a.npy', status=2)
        self.run_tool('convert', 'a.npy', 'b.serio', 'c.serio', status=2)
        proc = self.run_tool('convert', 'a.npy', '-', status=2)
        self.assertIn('“-”', proc.stderr.decode())
        self.assertFalse(os.path.exists(os.path.join(self.dir, '-')))

    def test_io_errors_and_failed_conversions_leave_the_output(self):
        self.write('a.serio', serio_text([('w', [1.0])]))
        self.write('a.npy', npy_bytes('<f8', (1,), f8_data([1.0])))
        self.write('bad.npy', npy_bytes('<c8', (1,), b'\0' * 8))
        self.run_tool('convert', 'missing.npy', 'out.serio', status=2)
        self.run_tool('convert', 'missing.serio', 'out.npy', status=2)
        proc = self.run_tool('convert', 'a.npy', 'no/such/dir/out.serio', status=2)
        self.assertIn('no/such/dir/out.serio', proc.stderr.decode())
        self.run_tool('convert', 'a.serio', 'no/such/dir/out.npy', status=2)
        self.write('keep.serio', b'old contents')
        self.write('keep.npy', b'old contents')
        self.run_tool('convert', 'bad.npy', 'keep.serio', status=1)
        self.assertEqual(self.read('keep.serio'), b'old contents')
        self.run_tool('convert', 'keep.serio', 'keep.npy', status=1)
        self.assertEqual(self.read('keep.npy'), b'old contents')
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ['a.npy', 'a.serio', 'bad.npy', 'keep.npy', 'keep.serio'])

    def test_numpy_cross_check(self):
        try:
            import numpy
        except ImportError:
            self.skipTest('NumPy is not installed')
        rng = numpy.random.default_rng(5)
        array = rng.standard_normal((3, 4)) * 1e10
        for name, saved in (('c', array), ('f', numpy.asfortranarray(array)),
                            ('be', array.astype('>f8'))):
            numpy.save(self.path(name + '.npy').decode(), saved)
            self.run_tool('convert', name + '.npy', name + '.serio', status=0)
            self.run_tool('convert', name + '.serio', name + '2.npy', status=0)
            back = numpy.load(self.path(name + '2.npy').decode())
            self.assertEqual(back.dtype, numpy.dtype('<f8'))
            self.assertEqual(back.shape, (3, 4))
            self.assertEqual(back.tobytes(), numpy.ascontiguousarray(array).tobytes())


# --- serio seal -------------------------------------------------------------

class SealTests(ToolTestCase):

    def test_seals_plain_files_in_place(self):
        text = serio_text([('w', special_values()), ('e', []), ('b', [2.5])])
        self.write('a.serio', text)
        # blank lines and CR LF are not kept: the text is written canonically
        self.write('crlf.serio', b'\r\n' + text.replace(b'\n', b'\r\n\n'))
        self.write('empty.serio', b'')
        proc = self.run_tool('seal', 'a.serio', 'crlf.serio', 'empty.serio', status=0)
        self.assertEqual(proc.stdout.decode().splitlines(),
                         ['a.serio: sealed', 'crlf.serio: sealed', 'empty.serio: sealed'])
        self.assertEqual(self.read('a.serio'), sealed(text))
        self.assertEqual(self.read('crlf.serio'), sealed(text))
        self.assertEqual(self.read('empty.serio'), sealed(b''))
        self.run_tool('check', '--require-seal', 'a.serio', 'crlf.serio', 'empty.serio', status=0)
        self.assertEqual(sorted(os.listdir(self.dir)), ['a.serio', 'crlf.serio', 'empty.serio'])

    def test_keeps_permissions_and_replaces_atomically(self):
        # The save keeps the file's mode; the new contents are a new file
        # renamed over the old one, so a reader holding the old file open
        # keeps reading the old contents whole.
        text = serio_text([('w', [1.0, 2.0])])
        for mode in (0o600, 0o640, 0o604):
            with self.subTest(mode=oct(mode)):
                self.write('m.serio', text)
                os.chmod(self.path('m.serio'), mode)
                with open(self.path('m.serio'), 'rb') as old:
                    self.run_tool('seal', 'm.serio', status=0)
                    self.assertEqual(old.read(), text)
                self.assertEqual(stat.S_IMODE(os.stat(self.path('m.serio')).st_mode), mode)
                self.assertEqual(self.read('m.serio'), sealed(text))
        self.assertEqual(os.listdir(self.dir), ['m.serio'])

    def test_sealed_files_are_left_alone(self):
        data = seal_closing(b'\nv1|serio.sealed|1|1\r\nv1|a|1|1\n')
        self.write('s.serio', data)
        before = os.stat(self.path('s.serio'))
        proc = self.run_tool('seal', 's.serio', status=0)
        self.assertEqual(proc.stdout.decode(), 's.serio: already sealed, left as it is\n')
        self.assertEqual(self.read('s.serio'), data)
        self.assertEqual(os.stat(self.path('s.serio')).st_ino, before.st_ino)

    def test_invalid_files_are_refused(self):
        self.write('good.serio', b'v1|a|1|1\n')
        self.write('bad.serio', b'v1|a|1|1.0\n')
        self.write('cut.serio', b'v1|a|1|1\nv1|b|1|2')
        proc = self.run_tool('seal', 'bad.serio', 'good.serio', 'cut.serio', status=1)
        self.assertEqual(proc.stdout.decode(), 'good.serio: sealed\n')
        err = proc.stderr.decode()
        self.assertIn('bad.serio:1: ', err)
        self.assertIn('cut.serio:2: ', err)
        self.assertEqual(self.read('bad.serio'), b'v1|a|1|1.0\n')
        self.assertEqual(self.read('cut.serio'), b'v1|a|1|1\nv1|b|1|2')
        self.assertEqual(self.read('good.serio'), sealed(b'v1|a|1|1\n'))

    def test_usage_and_io_errors(self):
        self.run_tool('seal', status=2)
        self.write('a.serio', b'v1|a|1|1\n')
        proc = self.run_tool('seal', 'a.serio', '-', stdin=b'v1|a|1|1\n', status=2)
        self.assertIn('standard input', proc.stderr.decode())
        self.assertEqual(self.read('a.serio'), b'v1|a|1|1\n')
        proc = self.run_tool('seal', 'missing.serio', 'a.serio', status=2)
        self.assertIn('missing.serio', proc.stderr.decode())
        self.assertEqual(self.read('a.serio'), sealed(b'v1|a|1|1\n'))


# --- streaming: standard input, long texts, order of names -----------------

def random_values(rng, n):
    """n values of every kind: random bit patterns (NaN made canonical),
    mostly finite, with zeros, infinities and NaN among them."""
    specials = [0.0, -0.0, math.inf, -math.inf, CANONICAL_NAN, 1.0, 0.5]
    values = []
    for _ in range(n):
        if rng.random() < 0.02:
            values.append(rng.choice(specials))
        else:
            v = from_bits(rng.getrandbits(64))
            values.append(CANONICAL_NAN if math.isnan(v) else v)
    return values


def base_name(name, count):
    """The base name of an array (serio-v1-files.md §3): less a shape
    suffix whose dimensions multiply to the count."""
    m = re.fullmatch(r'(.*)\[((?:0|[1-9][0-9]*)(?:x(?:0|[1-9][0-9]*))*)?\]', name, re.S)
    if m is None:
        return name
    dims = [int(d) for d in m.group(2).split('x')] if m.group(2) else []
    return m.group(1) if len(dims) <= 32 and math.prod(dims) == count else name


def lookup(arrays, name):
    """serio_bundle_lookup(): the first array of that name, or else the
    first whose base name it is."""
    for array in arrays:
        if array[0] == name:
            return array
    for array in arrays:
        if base_name(array[0], len(array[1])) == name:
            return array
    return None


def cat_output(arrays, names=None):
    """What serio cat prints: every array with its header, or the array
    each of @names finds (with headers when there are several)."""
    def block(name, values, header):
        head = '# %s (%d %s)\n' % (name, len(values), 'value' if len(values) == 1 else 'values')
        return (head if header else '') + ''.join(shortest(v) + '\n' for v in values)
    if names is None:
        return ''.join(block(n, v, True) for n, v in arrays).encode()
    found = [lookup(arrays, n) for n in names]
    return ''.join(block(a[0], a[1], len(names) > 1) for a in found if a is not None).encode()


class StreamTests(ToolTestCase):
    """The commands read through a stream reader, with a buffer of 1 MiB:
    texts far longer than it, errors near their end, the standard input,
    and cat's names in any order."""

    @classmethod
    def setUpClass(cls):
        rng = random.Random(8)
        # More than 4 MiB, so that the checksum of a file is hashed by a
        # thread of its own, and lines longer than the reader's buffer.
        cls.arrays = [('a', random_values(rng, 60000)), ('w[2x3]', random_values(rng, 6)),
                      ('e', []), ('c', random_values(rng, 160000)), ('', [2.0])]
        cls.text = serio_text(cls.arrays)
        assert len(cls.text) > 4 * 1024 * 1024
        cls.checksum = '%08x' % fnv1a_folded(cls.text)
        cls.cat = cat_output(cls.arrays)
        # a token of "c" near the end of the file made invalid
        tokens = record('c', cls.arrays[3][1]).rstrip('\n').split(',')
        cls.bad_index = len(tokens) - 3        # 0-based index in the record
        tokens[cls.bad_index] = '01'
        lines = cls.text.split(b'\n')
        lines[3] = ','.join(tokens).encode()
        cls.bad_text = b'\n'.join(lines)

    def test_check_on_files_and_stdin(self):
        self.write('big.serio', self.text)
        proc = self.run_tool('check', 'big.serio', '-', stdin=sealed(self.text), status=0)
        self.assertEqual(proc.stdout.decode().splitlines(), [
            'big.serio: plain, without a seal: valid, but it cannot be verified',
            '-: sealed, verified'])
        self.run_tool('check', '-s', '-', stdin=self.text, status=1)

    def test_info_matches_the_model_on_files_and_stdin(self):
        self.write('big.serio', self.text)
        text = self.run_tool('info', 'big.serio', status=0).stdout.decode()
        piped = self.run_tool('info', '-', stdin=self.text, status=0).stdout.decode()
        self.assertEqual(piped, text.replace('big.serio:', '-:', 1))
        self.assertEqual(text.splitlines()[0],
                         'big.serio: 5 arrays, checksum %s, plain (no seal)' % self.checksum)
        self.assertEqual(text.splitlines()[2],
                         '  [1] w (2, 3) float64: 6 values; min %s, max %s; NaN: %d, infinite: %d' % (
                             shortest(expected_stats(self.arrays[1][1])['min']),
                             shortest(expected_stats(self.arrays[1][1])['max']),
                             expected_stats(self.arrays[1][1])['nan'],
                             expected_stats(self.arrays[1][1])['inf']))
        for args, stdin in ((['big.serio'], b''), (['-'], self.text)):
            proc = self.run_tool('info', '--json', *args, stdin=stdin, status=0)
            doc = json.loads(proc.stdout.decode())
            self.assertEqual(doc[0]['checksum'], self.checksum)
            self.assertFalse(doc[0]['sealed'])
            self.assertEqual(len(doc[0]['arrays']), len(self.arrays))
            for entry, (name, values) in zip(doc[0]['arrays'], self.arrays):
                want = expected_stats(values)
                self.assertEqual(entry['name'], name)
                for key in ('length', 'nan', 'inf'):
                    self.assertEqual(entry[key], want[key], (name, key))
                InfoTests.assert_number(self, entry['min'], want['min'])
                InfoTests.assert_number(self, entry['max'], want['max'])
        # sealed, from the standard input: the checksum of the sealed bytes
        proc = self.run_tool('info', '-', stdin=sealed(self.text), status=0)
        self.assertEqual(proc.stdout.decode().splitlines()[0],
                         '-: 5 arrays, checksum %08x, sealed (verified)' % fnv1a_folded(sealed(self.text)))

    def test_checksum_on_files_and_stdin(self):
        self.write('big.serio', self.text)
        self.write('small', self.text[:1000])
        proc = self.run_tool('checksum', 'big.serio', '-', 'small', stdin=self.text, status=0)
        self.assertEqual(proc.stdout.decode(), '%s  big.serio\n%s  -\n%08x  small\n' % (
            self.checksum, self.checksum, fnv1a_folded(self.text[:1000])))

    def test_cat_on_files_and_stdin(self):
        self.write('big.serio', self.text)
        self.assertEqual(self.run_tool('cat', 'big.serio', status=0).stdout, self.cat)
        self.assertEqual(self.run_tool('cat', '-', stdin=sealed(self.text), status=0).stdout, self.cat)
        for threads in ('1', '2', '3'):
            proc = subprocess.run([SERIO, 'cat', '-n', 'c', 'big.serio'], stdout=subprocess.PIPE,
                                  cwd=self.dir, env=dict(self.env(), SERIO_THREADS=threads))
            self.assertEqual(proc.returncode, 0)
            self.assertEqual(proc.stdout, cat_output(self.arrays, ['c']), threads)

    def assert_bad_token_reported(self, proc, name):
        lines = self.stderr_lines(proc)
        self.assertEqual(len(lines), 1, lines)
        # line 4, value bad_index + 1 (1-based), as the in-memory reader has it
        self.assertTrue(lines[0].startswith('%s:4: value %d “01”: ' % (name, self.bad_index + 1)),
                        lines[0])

    def test_error_near_the_end_of_a_long_text(self):
        self.write('bad.serio', self.bad_text)
        for command in (['check'], ['info'], ['info', '--json'], ['cat'], ['cat', '-n', 'c']):
            with self.subTest(command=command):
                proc = self.run_tool(*command, 'bad.serio', status=1)
                self.assert_bad_token_reported(proc, 'bad.serio')
                proc = self.run_tool(*command, '-', stdin=self.bad_text, status=1)
                self.assert_bad_token_reported(proc, '-')
                if command[0] == 'cat':
                    # values printed before the error are those of the text
                    self.assertTrue(cat_output(self.arrays, command[2:] or None).startswith(proc.stdout))
                elif command[-1] == '--json':
                    self.assertEqual(json.loads(proc.stdout), [])
                else:
                    self.assertEqual(proc.stdout, b'')
        # a bad line after more than a megabyte of short lines
        data = b'v1|x|3|1,2,3\n' * 100000 + b'\n' + b'v2|y|0|\n' + b'v1|z|0|\n'
        self.write('lines.serio', data)
        for command in ('check', 'info', 'cat', 'seal'):
            proc = self.run_tool(command, 'lines.serio', status=1)
            self.assertTrue(self.stderr_lines(proc)[0].startswith('lines.serio:100002: '),
                            proc.stderr[:200])
        # truncation is reported first, however far the bad token is
        self.write('cut.serio', self.bad_text[:-1])
        proc = self.run_tool('check', 'cut.serio', status=1)
        self.assertTrue(self.stderr_lines(proc)[0].startswith('cut.serio:5: '), proc.stderr)
        self.assertEqual(self.read('lines.serio'), data)

    def test_seal_streams_and_leaves_damaged_files_alone(self):
        self.write('big.serio', self.text)
        self.write('bad.serio', self.bad_text)
        self.write('cut.serio', self.text[:-3])
        before = os.stat(self.path('bad.serio'))
        proc = self.run_tool('seal', 'bad.serio', 'big.serio', 'cut.serio', status=1)
        self.assertEqual(proc.stdout.decode(), 'big.serio: sealed\n')
        err = self.stderr_lines(proc)
        self.assertEqual(len(err), 2, err)
        self.assert_bad_token_reported(subprocess.CompletedProcess([], 1, b'', err[0].encode()),
                                       'bad.serio')
        self.assertTrue(err[1].startswith('cut.serio:5: '), err[1])
        self.assertEqual(self.read('bad.serio'), self.bad_text)
        self.assertEqual(os.stat(self.path('bad.serio')).st_ino, before.st_ino)
        self.assertEqual(self.read('cut.serio'), self.text[:-3])
        self.assertEqual(self.read('big.serio'), sealed(self.text))
        # nothing left behind by the aborted saves
        self.assertEqual(sorted(os.listdir(self.dir)), ['bad.serio', 'big.serio', 'cut.serio'])
        # a sealed file damaged far from its start is refused, and kept
        damaged = sealed(self.text).replace(b'\nv1|c|160000|', b'\nv1|c|160000|-', 1)
        self.write('damaged.serio', damaged)
        proc = self.run_tool('seal', 'damaged.serio', status=1)
        self.assertIn('seal', proc.stderr.decode())
        self.assertEqual(self.read('damaged.serio'), damaged)

    def test_cat_names_in_any_order(self):
        rng = random.Random(3)
        # "big" prints to more than the spool keeps in memory
        # Names find arrays as serio_bundle_lookup() does: "w" finds the
        # array "w" even after "w[2]", "g" finds "g[1x2]" by its base name,
        # "odd" finds nothing ("odd[5]" holds 2 values: not a shape).
        arrays = [('big', random_values(rng, 30000)), ('a', [1.0]), ('w[2]', [7.0, 8.0]),
                  ('b', [2.0, 3.0]), ('g[1x2]', [5.0, 6.0]), ('a', [4.0]), ('c', []),
                  ('w', [9.0]), ('odd[5]', [1.0, 2.0]), ('d', [0.5]), ('big[2]', [1.0, 2.0])]
        text = serio_text(arrays)
        self.write('n.serio', text)
        orders = [['a'], ['b'], ['a', 'b'], ['b', 'a'], ['d', 'c', 'b', 'a'], ['a', 'a'],
                  ['b', 'a', 'b'], ['d', 'big', 'a'], ['big', 'd', 'big'], ['c', 'd', 'a', 'big', 'b'],
                  ['a', 'nope', 'b'], ['nope', 'd', 'zip', 'a'], ['w'], ['g'], ['w[2]', 'w'],
                  ['w', 'g', 'w[2]', 'g[1x2]'], ['d', 'g', 'g'], ['odd', 'odd[5]'], ['big[2]', 'big']]
        for names in orders:
            with self.subTest(names=names):
                args = [x for n in names for x in ('-n', n)]
                missing = [n for n in names if lookup(arrays, n) is None]
                want = cat_output(arrays, names)
                for source, stdin in (('n.serio', b''), ('-', text), ('-', sealed(text))):
                    proc = self.run_tool('cat', *args, source, stdin=stdin, status=1 if missing else 0)
                    self.assertEqual(proc.stdout, want, source)
                    self.assertEqual(self.stderr_lines(proc),
                                     ['serio cat: %s: no array is called “%s”' % (source, n)
                                      for n in missing])

    def test_spools_go_to_tmpdir(self):
        # What cat and info keep before they can print it goes to a
        # temporary file in $TMPDIR once it outgrows memory: with a TMPDIR
        # that does not exist they fail, print nothing and name the file;
        # with one that does, they leave nothing in it.
        out_of_order = serio_text([('big', [float(i * 7 + 1) for i in range(100000)]), ('a', [1.0])])
        self.write('many.serio', serio_text([('array %d' % i, [float(i)]) for i in range(20000)]))
        missing = os.path.join(self.dir, 'missing')
        spools = os.path.join(self.dir, 'spools')
        os.mkdir(spools)
        for command, args, stdin in (('cat', ['-n', 'a', '-n', 'big', '-'], out_of_order),
                                     ('info', ['many.serio'], b'')):
            with self.subTest(command=command):
                proc = self.run_tool(command, *args, stdin=stdin, env={'TMPDIR': missing}, status=2)
                self.assertEqual(proc.stdout, b'')
                self.assertRegex(proc.stderr.decode(), r'^serio %s: .*“%s/serio-%s-\w{6}”'
                                 % (command, re.escape(missing), command))
                proc = self.run_tool(command, *args, stdin=stdin, env={'TMPDIR': spools}, status=0)
                self.assertGreater(len(proc.stdout), 256 * 1024)
                self.assertEqual(os.listdir(spools), [])

    def test_cat_skips_other_arrays_unparsed(self):
        # With --name, a damaged value in an array not asked for goes
        # unnoticed in a plain file (it is skipped, not parsed) but not in
        # a sealed one, whose seal covers every byte.
        text = serio_text([('a', [1.0, 2.0]), ('b', [0.5])])
        damaged_plain = text.replace(b'|1,2\n', b'|1,02\n')
        self.write('plain.serio', damaged_plain)
        self.assertEqual(self.run_tool('cat', '-n', 'b', 'plain.serio', status=0).stdout, b'0.5\n')
        self.run_tool('cat', 'plain.serio', status=1)
        damaged_sealed = sealed(text).replace(b'|1,2\n', b'|1,3\n')
        self.write('sealed.serio', damaged_sealed)
        proc = self.run_tool('cat', '-n', 'b', 'sealed.serio', status=1)
        self.assertTrue(proc.stderr.decode().startswith('sealed.serio:4: '), proc.stderr)

    def test_info_of_many_arrays(self):
        # more lines than the spool keeps in memory: they wait in a file
        arrays = [('array number %d' % i, [float(i)]) for i in range(20000)]
        self.write('many.serio', serio_text(arrays))
        lines = self.run_tool('info', 'many.serio', status=0).stdout.decode().splitlines()
        self.assertEqual(len(lines), 20001)
        self.assertTrue(lines[0].startswith('many.serio: 20000 arrays, checksum '))
        self.assertEqual(lines[1:], ['  [%d] array number %d float64: 1 value; min %d, max %d; NaN: 0, infinite: 0'
                                     % (i, i, i, i) for i in range(20000)])
        doc = json.loads(self.run_tool('info', '--json', 'many.serio', 'many.serio', status=0).stdout)
        self.assertEqual(len(doc), 2)
        self.assertEqual([a['name'] for a in doc[1]['arrays']], [n for n, _ in arrays])
        self.assertEqual(doc[0], doc[1])


# --- bounded memory on a large file -----------------------------------------

# Runs a command in a fresh, small Python process, so that the peak RSS
# reported is the command's (and not that of the test, whose memory a
# child starts with): prints the exit status and ru_maxrss in KiB.
RSS_RUNNER = r"""
import os, subprocess, sys
stdin_path, stdout_path = sys.argv[1:3]
stdin = open(stdin_path, 'rb') if stdin_path else subprocess.DEVNULL
stdout = open(stdout_path, 'wb') if stdout_path else subprocess.DEVNULL
p = subprocess.Popen(sys.argv[3:], stdin=stdin, stdout=stdout, stderr=subprocess.PIPE)
err = p.stderr.read()
_, status, usage = os.wait4(p.pid, 0)
p.returncode = os.waitstatus_to_exitcode(status)
print(p.returncode, usage.ru_maxrss)
sys.stderr.write(err.decode('utf-8', 'replace'))
"""

MAX_RSS_KIB = 64 * 1024


class MemoryTests(unittest.TestCase):
    """Every streaming command on a file of 10^7 values (about 200 MB)
    stays within 64 MiB."""
    N_VALUES = 10 ** 7

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix='serio-memory-')
        cls.path = os.path.join(cls.dir, 'big.serio')
        rng = random.Random(10)
        pool = [token(v) for v in random_values(rng, 997)]
        chunk = ','.join(pool[i % len(pool)] for i in range(10000))
        with open(cls.path, 'w') as f:
            f.write('v1|big|%d|' % cls.N_VALUES)
            for i in range(cls.N_VALUES // 10000):
                f.write(chunk if i == 0 else ',' + chunk)
            f.write('\nv1|tail|2|1,2\n')
        cls.size = os.path.getsize(cls.path)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def run_measured(self, *args, stdin='', stdout='', status=0):
        env = dict(os.environ, LC_ALL='C.UTF-8')
        proc = subprocess.run([sys.executable, '-c', RSS_RUNNER, stdin, stdout, SERIO] + list(args),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=self.dir, env=env,
                              timeout=300, check=True)
        code, rss = map(int, proc.stdout.split())
        self.assertEqual(code, status, (args, proc.stderr[:2000]))
        if not tool_is_sanitized():
            self.assertLessEqual(rss, MAX_RSS_KIB, '%r: peak RSS %d KiB' % (args, rss))
        return rss

    def test_file_is_large(self):
        self.assertGreater(self.size, 150 * 1024 * 1024)

    def test_check(self):
        self.run_measured('check', self.path)
        self.run_measured('check', '-', stdin=self.path)

    def test_checksum(self):
        self.run_measured('checksum', self.path)

    def test_info(self):
        out = os.path.join(self.dir, 'info.json')
        self.run_measured('info', '--json', '-', stdin=self.path, stdout=out)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual([a['length'] for a in doc[0]['arrays']], [self.N_VALUES, 2])
        self.run_measured('info', self.path)

    def test_cat(self):
        self.run_measured('cat', self.path)
        out = os.path.join(self.dir, 'tail.txt')
        # after the large array, skipped; then before it, in a second pass
        self.run_measured('cat', '-n', 'tail', '-n', 'big', self.path)
        self.run_measured('cat', '-n', 'tail', '-', stdin=self.path, stdout=out)
        with open(out, 'rb') as f:
            self.assertEqual(f.read(), b'1\n2\n')

    def test_seal(self):
        copy = os.path.join(self.dir, 'copy.serio')
        shutil.copyfile(self.path, copy)
        try:
            self.run_measured('seal', copy)
            self.run_measured('check', '--require-seal', copy)
        finally:
            os.unlink(copy)


# --- progress on a terminal -------------------------------------------------

class ProgressTests(ToolTestCase):

    def run_with_terminal_stderr(self, *args):
        master, slave = pty.openpty()
        chunks = []

        def read_terminal():
            while True:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    break
                if not data:
                    break
                chunks.append(data)

        reader = threading.Thread(target=read_terminal)
        reader.start()
        try:
            proc = subprocess.run([SERIO] + list(args), stdout=subprocess.PIPE, stderr=slave,
                                  cwd=self.dir, env=self.env(), timeout=300)
        finally:
            os.close(slave)
            reader.join()
            os.close(master)
        return proc, b''.join(chunks)

    def test_large_file(self):
        # Blank lines are a valid empty bundle.
        size = PROGRESS_THRESHOLD + 1
        with open(self.path('big.serio'), 'wb') as f:
            f.write(b'\n' * size)
        proc, terminal = self.run_with_terminal_stderr('check', 'big.serio')
        self.assertEqual(proc.returncode, 0)
        text = terminal.decode()
        self.assertIn('Reading big.serio: 0%', text)
        self.assertIn('Reading big.serio: 100%', text)
        # The file is parsed as it is read (changed with streaming): no
        # separate parsing step.
        self.assertNotIn('Parsing', text)
        self.assertTrue(text.endswith('\r\x1b[K'), repr(text[-40:]))
        # not on a pipe
        proc = self.run_tool('check', 'big.serio', status=0)
        self.assertEqual(proc.stderr, b'')
        # the standard output is the same with the progress on the terminal
        # (the checksum itself is checked on small files: FNV in Python
        # would take a while on 64 MB)
        piped = self.run_tool('checksum', 'big.serio', status=0)
        self.assertRegex(piped.stdout, b'^[0-9a-f]{8}  big.serio\n$')
        proc, terminal = self.run_with_terminal_stderr('checksum', 'big.serio')
        self.assertEqual(proc.stdout, piped.stdout)
        self.assertIn(b'100%', terminal)
        self.assertNotIn(b'Parsing', terminal)
        # the streaming commands count the bytes as the reader takes them
        for command in ('info', 'cat', 'seal'):
            with self.subTest(command=command):
                proc, terminal = self.run_with_terminal_stderr(command, 'big.serio')
                self.assertEqual(proc.returncode, 0)
                self.assertIn(b'Reading big.serio: 100%', terminal)
                self.assertTrue(terminal.endswith(b'\r\x1b[K'), terminal[-40:])

    def write_large(self, name, tail=b''):
        # Blank lines (a valid empty bundle) to above the threshold, then
        # @tail.
        with open(self.path(name), 'wb') as f:
            f.write(b'\n' * (PROGRESS_THRESHOLD + 1))
            f.write(tail)
        return name

    def assert_progress_erased(self, terminal, *names):
        for name in names:
            self.assertIn(b'Reading %s: 0%%' % name.encode(), terminal)
            self.assertIn(b'Reading %s: 100%%' % name.encode(), terminal)
        self.assertTrue(terminal.endswith(b'\r\x1b[K'), terminal[-40:])

    def test_diff(self):
        # Both files are read side by side, the progress of each shown on
        # the same line, and erased before the report is printed.
        self.write_large('a.serio', b'v1|x|1|1\nv1|y|2|1,2\n')
        self.write_large('b.serio', b'v1|x|1|1\nv1|y|2|1,3\n')
        piped = self.run_tool('diff', 'a.serio', 'b.serio', status=1)
        self.assertEqual(piped.stderr, b'')
        self.assertIn(b'\xe2\x80\x9cy\xe2\x80\x9d: 1 of 2 values differs', piped.stdout)
        proc, terminal = self.run_with_terminal_stderr('diff', 'a.serio', 'b.serio')
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(proc.stdout, piped.stdout)
        self.assert_progress_erased(terminal, 'a.serio', 'b.serio')
        # Arrays in another order: B is read again to find them, without
        # a progress of its own.
        self.write_large('c.serio', b'v1|y|2|1,3\nv1|x|1|1\n')
        piped = self.run_tool('diff', 'a.serio', 'c.serio', status=1)
        self.assertIn(b'the order differs', piped.stdout)
        proc, terminal = self.run_with_terminal_stderr('diff', 'a.serio', 'c.serio')
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(proc.stdout, piped.stdout)
        self.assert_progress_erased(terminal, 'a.serio', 'c.serio')
        self.assertEqual(terminal.count(b'Reading c.serio: 0%'), 1)
        # An invalid file stops the reading: its error follows the erased
        # progress.
        self.write_large('bad.serio', b'v1|x|1|zz\n')
        piped = self.run_tool('diff', 'bad.serio', 'b.serio', status=2)
        proc, terminal = self.run_with_terminal_stderr('diff', 'bad.serio', 'b.serio')
        self.assertEqual(proc.returncode, 2)
        error = piped.stderr.replace(b'\n', b'\r\n')
        self.assertRegex(error, b'^bad.serio:%d: ' % (PROGRESS_THRESHOLD + 2))
        self.assertTrue(terminal.endswith(b'\r\x1b[K' + error), terminal[-200:])
        self.assertIn(b'Reading bad.serio: 0%', terminal)

    def test_convert(self):
        # serio to NumPy
        self.write_large('big.serio', b'v1|x|2|1,2\n')
        proc, terminal = self.run_with_terminal_stderr('convert', 'big.serio', 'x.npy')
        self.assertEqual(proc.returncode, 0)
        self.assert_progress_erased(terminal, 'big.serio')
        self.assertEqual(parse_npy_vector(self.read('x.npy'))[3], f8_data([1.0, 2.0]))
        self.write_large('bad.serio', b'v1|x|1|zz\n')
        piped = self.run_tool('convert', 'bad.serio', 'x.npz', status=1)
        proc, terminal = self.run_with_terminal_stderr('convert', 'bad.serio', 'x.npz')
        self.assertEqual(proc.returncode, 1)
        self.assertTrue(terminal.endswith(b'\r\x1b[K' + piped.stderr.replace(b'\n', b'\r\n')),
                        terminal[-200:])
        # NumPy to serio: a .npy file is read as a stream, a .npz archive by
        # offset (its directory first); a note comes after the progress.
        n = PROGRESS_THRESHOLD // 8 + 1
        nan = struct.pack('<Q', 0x7FF8000000000001)
        data = npy_bytes('<f8', (n,), nan + bytes(8 * (n - 1)))
        with open(self.path('big.npy'), 'wb') as f:
            f.write(data)
        with zipfile.ZipFile(os.fsdecode(self.path('big.npz')), 'w') as z:
            z.writestr('w.npy', data)
        for name in ('big.npy', 'big.npz'):
            with self.subTest(input=name):
                piped = self.run_tool('convert', name, 'piped.serio', status=0)
                self.assertIn(b'note: 1 NaN', piped.stderr)
                proc, terminal = self.run_with_terminal_stderr('convert', name, 'out.serio')
                self.assertEqual(proc.returncode, 0)
                self.assertEqual(self.read('out.serio'), self.read('piped.serio'))
                self.assertIn(b'Reading %s: 0%%' % name.encode(), terminal)
                self.assertIn(b'Reading %s: 100%%' % name.encode(), terminal)
                self.assertTrue(terminal.endswith(
                    b'\r\x1b[K' + piped.stderr.replace(b'\n', b'\r\n')), terminal[-200:])

    def test_small_file(self):
        with open(self.path('small.serio'), 'wb') as f:
            f.write(b'\n' * PROGRESS_THRESHOLD)
        proc, terminal = self.run_with_terminal_stderr('check', 'small.serio')
        self.assertEqual(proc.returncode, 0)
        self.assertEqual(terminal, b'')


if __name__ == '__main__':
    SERIO, VERSION = os.path.abspath(sys.argv[1]), sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
