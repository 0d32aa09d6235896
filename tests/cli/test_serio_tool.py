# SPDX-License-Identifier: LGPL-2.1-or-later
"""Tests of the serio command-line tool, run through its command line.

Usage: test_serio_tool.py SERIO VERSION [unittest arguments]

Expected outputs are computed here, independently of libserio: serio text
by an encoder that follows the spec, checksums by FNV-1a in Python, numbers
by repr(), .npy files byte by byte from the NPY format description (NumPy,
when importable, only cross-checks).
"""

import errno
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


def ordered(x):
    b = bits(x)
    return (~b & 0xFFFFFFFFFFFFFFFF) if b >> 63 else b | (1 << 63)


def ulps(a, b):
    return abs(ordered(a) - ordered(b))


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

    def run_tool(self, *args, stdin=b'', lang='C.UTF-8', status=None):
        proc = subprocess.run([SERIO] + [os.fsencode(a) for a in args], input=stdin,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              cwd=self.dir, env=self.env(lang), timeout=120)
        if status is not None:
            self.assertEqual(proc.returncode, status,
                             'serio %r: exit %d, stdout %r, stderr %r' % (
                                 args, proc.returncode, proc.stdout[:2000], proc.stderr[:2000]))
        return proc

    def stderr_lines(self, proc):
        return proc.stderr.decode('utf-8').splitlines()


# --- serio (no command) -----------------------------------------------------

class MainTests(ToolTestCase):
    COMMANDS = ['cat', 'check', 'checksum', 'convert', 'diff', 'info']

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
        self.assertEqual(doc[1], {'file': 'empty.serio', 'checksum': '4fd0bfc1', 'arrays': []})
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
            'a.serio: 3 arrays, checksum %08x' % fnv1a_folded(data),
            '  [0] dense.w: 4 values; min -0, max inf; NaN: 0, infinite: 1',
            '  [1] only nan: 2 values; NaN: 2',
            '  [2] empty: 0 values; NaN: 0',
        ])

    def test_text_escapes_control_characters(self):
        self.write('a.serio', serio_text([('a\x1b[31mb\\', [1.0])]))
        proc = self.run_tool('info', 'a.serio', status=0)
        self.assertIn('  [0] a\\x1B[31mb\\\\: 1 value; min 1, max 1; NaN: 0, infinite: 0',
                      proc.stdout.decode().splitlines())

    def test_stdin_and_errors(self):
        doc, _ = self.json_of('-')
        self.assertEqual(doc, [{'file': '-', 'checksum': '4fd0bfc1', 'arrays': []}])
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

    def value_line(self, index, a, b):
        distance = 'NaN' if math.isnan(a) or math.isnan(b) else \
            '%d ULP%s' % (ulps(a, b), '' if ulps(a, b) == 1 else 's')
        return '  [%d] %s → %s (%s)' % (index, shortest(a), shortest(b), distance)

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
        self.assertEqual(lines, ['“w”: 7 of 8 values differ'] +
                         [self.value_line(i, a[i], b[i]) for i in range(5)] +
                         ['  … and 2 more'])
        # ULPs computed independently for the cases that matter
        self.assertEqual(ulps(-0.0, 0.0), 1)
        self.assertEqual(ulps(math.inf, 1.7976931348623157e308), 1)
        self.assertEqual(ulps(5e-324, -5e-324), 3)
        self.assertIn('  [2] 1 → -1 (%d ULPs)' % (2 * (bits(1.0) + 1) - 1), lines)

    def test_max_values(self):
        a = [float(i) for i in range(10)]
        b = [float(i) + 0.5 for i in range(10)]
        lines = self.diff([('w', a)], [('w', b)], '--max-values', '3', status=1)
        self.assertEqual(lines, ['“w”: 10 of 10 values differ'] +
                         [self.value_line(i, a[i], b[i]) for i in range(3)] +
                         ['  … and 7 more'])
        lines = self.diff([('w', a)], [('w', b)], '-n', '0', status=1)
        self.assertEqual(lines, ['“w”: 10 of 10 values differ', '  … and 10 more'])
        lines = self.diff([('w', a[:1])], [('w', b[:1])], status=1)
        self.assertEqual(lines, ['“w”: 1 of 1 values differs', self.value_line(0, a[0], b[0])])
        self.run_tool('diff', '-n', '-1', 'a.serio', 'b.serio', status=2)

    def test_arrays_only_in_one_file_and_duplicates(self):
        # The k-th "w" of A goes with the k-th "w" of B.
        lines = self.diff([('w', [1.0]), ('w', [2.0]), ('x', [])],
                          [('w', [1.0]), ('x', []), ('y', [3.0])], status=1)
        self.assertEqual(lines, ['Only in a.serio: array 1 “w”', 'Only in b.serio: array 2 “y”'])
        lines = self.diff([('w', [1.0]), ('w', [2.0])], [('w', [1.0]), ('w', [2.5])], status=1)
        self.assertEqual(lines, ['“w”: 1 of 1 values differs', self.value_line(0, 2.0, 2.5)])

    def test_lengths(self):
        lines = self.diff([('w', [1.0, 2.0, 3.0])], [('w', [1.0, 2.5])], status=1)
        self.assertEqual(lines, ['“w”: length 3 in a.serio, 2 in b.serio',
                                 '“w”: 1 of 2 values differs', self.value_line(1, 2.0, 2.5)])
        lines = self.diff([('w', [])], [('w', [1.0])], status=1)
        self.assertEqual(lines, ['“w”: length 0 in a.serio, 1 in b.serio'])

    def test_order(self):
        lines = self.diff([('x', [1.0]), ('y', [2.0])], [('y', [2.0]), ('x', [1.0])], status=1)
        self.assertEqual(lines, ['“y” is array 1 in a.serio but array 0 in b.serio: the order differs'])
        # a removed array shifts the others without changing their order
        lines = self.diff([('x', [1.0]), ('y', [2.0])], [('y', [2.0])], status=1)
        self.assertEqual(lines, ['Only in a.serio: array 0 “x”'])

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

    def test_c_order_is_flattened_with_a_note(self):
        values = [float(i) for i in range(24)]
        proc = self.npy_to_serio(npy_bytes('<f8', (2, 3, 4), f8_data(values)))
        self.assertEqual(self.read('out.serio'), sealed(serio_text([('in', values)])))
        self.assertIn('(2, 3, 4)', proc.stderr.decode())
        self.assertIn('24 values', proc.stderr.decode())

    def test_fortran_order_is_transposed(self):
        shape = (2, 3, 4)
        # element (i, j, k) holds 100i + 10j + k; Fortran order stores i fastest
        fortran = [100.0 * i + 10 * j + k for k in range(4) for j in range(3) for i in range(2)]
        c_order = [100.0 * i + 10 * j + k for i in range(2) for j in range(3) for k in range(4)]
        for byte_order in '<>':
            self.npy_to_serio(npy_bytes(byte_order + 'f8', shape, f8_data(fortran, byte_order),
                                        fortran_order=True))
            self.assertEqual(self.read('out.serio'), sealed(serio_text([('in', c_order)])))
        # a vector is the same in both orders
        self.npy_to_serio(npy_bytes('<f8', (3,), f8_data([1.0, 2.0, 3.0]), fortran_order=True))
        self.assertEqual(self.read('out.serio'), sealed(b'v1|in|3|1,2,3\n'))

    def test_scalar_and_empty(self):
        proc = self.npy_to_serio(npy_bytes('<f8', (), f8_data([2.5])))
        self.assertEqual(self.read('out.serio'), sealed(b'v1|in|1|5p-1\n'))
        self.assertIn('shape ()', proc.stderr.decode())
        self.npy_to_serio(npy_bytes('<f8', (0,), b''))
        self.assertEqual(self.read('out.serio'), sealed(b'v1|in|0|\n'))
        self.npy_to_serio(npy_bytes('<f8', (4, 0, 1 << 62), b''))
        self.assertEqual(self.read('out.serio'), sealed(b'v1|in|0|\n'))

    def test_header_variants(self):
        data = f8_data([1.0, 2.0])
        for header in ("{'shape': (2,), 'fortran_order': False, 'descr': '<f8'}",
                       '{"descr": "<f8", "fortran_order": False, "shape": (2L,)}',
                       "{'descr':'<f8','fortran_order':False,'shape':(1, 2)}"):
            with self.subTest(header=header):
                self.npy_to_serio(npy_bytes(None, None, data, header=header))
                self.assertEqual(self.read('out.serio'), sealed(b'v1|in|2|1,2\n'))

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
        cases = [("'<f4'", '<f4'), ("'<i8'", '<i8'), ("'|O'", '|O'), ("'<c16'", '<c16'),
                 ("'=f8'", '=f8'), ("'|b1'", '|b1')]
        for descr, shown in cases:
            with self.subTest(descr=descr):
                header = "{'descr': %s, 'fortran_order': False, 'shape': (1,), }" % descr
                proc = self.npy_to_serio(npy_bytes(None, None, b'\0' * 8, header=header), status=1)
                self.assertIn('“%s” is not supported' % shown, proc.stderr.decode())
                self.assertFalse(os.path.exists(self.path('out.serio')))
        header = "{'descr': [('a', '<f8'), ('b', '<f8')], 'fortran_order': False, 'shape': (1,), }"
        proc = self.npy_to_serio(npy_bytes(None, None, b'\0' * 16, header=header), status=1)
        self.assertIn('structured', proc.stderr.decode())

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
        self.write('bad.npy', npy_bytes('<f4', (1,), b'\0' * 4))
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
            self.assertEqual(back.tobytes(), numpy.ascontiguousarray(array).ravel().tobytes())


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
        self.assertIn('Parsing big.serio…', text)
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

    def test_small_file(self):
        with open(self.path('small.serio'), 'wb') as f:
            f.write(b'\n' * PROGRESS_THRESHOLD)
        proc, terminal = self.run_with_terminal_stderr('check', 'small.serio')
        self.assertEqual(proc.returncode, 0)
        self.assertEqual(terminal, b'')


if __name__ == '__main__':
    SERIO, VERSION = os.path.abspath(sys.argv[1]), sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
