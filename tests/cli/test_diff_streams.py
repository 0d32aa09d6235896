# SPDX-License-Identifier: LGPL-2.1-or-later
"""serio diff on streams: files read side by side in bounded memory.

Usage: test_diff_streams.py SERIO [VERSION] [unittest arguments]

Expected outputs are computed here, independently of libserio and of the
tool, with the models of test_serio_tool.py (serio text, diff_lines) and a
model of the pairing of arrays written from docs/cli.md.
"""

import ctypes
import math
import os
import random
import re
import select
import struct
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_serio_tool  # noqa: E402
from test_serio_tool import (CANONICAL_NAN, ToolTestCase, diff_lines, is_close,  # noqa: E402
                             record, sealed, serio_text)

# The reader's buffer is 1 MiB: arrays larger than this cross it.
LARGE = 120000


# --- A file's opens, seen through Linux's inotify -----------------------------

IN_CLOSE_NOWRITE = 0x10
IN_OPEN = 0x20


class OpenWatch:
    """Counts the opens of a file and its closes after reading (inotify on
    its directory, through ctypes, so that a file renamed into its place
    is watched too), for a test to act between two reads of it."""

    def __init__(self, directory, name):
        libc = ctypes.CDLL(None, use_errno=True)
        self.name = os.fsencode(name)
        self.fd = libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), 'inotify_init1')
        if libc.inotify_add_watch(self.fd, os.fsencode(directory), IN_OPEN | IN_CLOSE_NOWRITE) < 0:
            error = ctypes.get_errno()
            os.close(self.fd)
            raise OSError(error, 'inotify_add_watch')
        self.opens = 0
        self.closes = 0

    def close(self):
        os.close(self.fd)

    def read_events(self):
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        offset = 0
        while offset < len(data):
            _, mask, _, length = struct.unpack_from('iIII', data, offset)
            name = data[offset + 16:offset + 16 + length].rstrip(b'\0')
            offset += 16 + length
            if name == self.name:
                self.opens += (mask & IN_OPEN) != 0
                self.closes += (mask & IN_CLOSE_NOWRITE) != 0

    def reset(self):
        """Forgets the events so far (the test's own included)."""
        self.read_events()
        self.opens = self.closes = 0

    def wait_for_closes(self, closes, timeout=60):
        """Waits until the file has been closed @closes times after
        reading; returns the number of open events by then (inotify
        merges an event into the same one before it, unread)."""
        while self.closes < closes:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                raise AssertionError('%d opens and %d closes after %d s, waiting for %d closes' % (
                    self.opens, self.closes, timeout, closes))
            self.read_events()
        return self.opens


# --- Independent model of the whole output -----------------------------------

TYPE_MARKERS = ('float32', 'float16', 'bfloat16', 'int8', 'int16', 'int32', 'int64',
                'uint8', 'uint16', 'uint32', 'uint64', 'bool')


def typed_shape_of(name, count):
    """(base name, shape, type) as serio-v1-files.md §3 and docs/format.md
    have them: a type marker counts only before a valid shape suffix."""
    m = re.fullmatch(r'(.*)\[((?:0|[1-9][0-9]*)(?:x(?:0|[1-9][0-9]*))*)?\]', name, re.S)
    if m:
        dims = [int(d) for d in m.group(2).split('x')] if m.group(2) else []
        if len(dims) <= 32 and math.prod(dims) == count:
            base, at, marker = m.group(1).rpartition('@')
            if at and marker in TYPE_MARKERS:
                return base, tuple(dims), marker
            return m.group(1), tuple(dims), 'float64'
    return name, (count,), 'float64'


def shape_of(name, count):
    """(base name, shape)."""
    return typed_shape_of(name, count)[:2]


def shape_text(shape):
    assert len(shape) >= 2   # the only shapes the cases below print
    return '(%s)' % ', '.join(str(d) for d in shape)


def expected_diff(a_arrays, b_arrays, a_name='a.serio', b_name='b.serio', max_values=5,
                  tolerance=None):
    """(lines, status) of serio diff, from docs/cli.md: the k-th array whose
    base name is N in A goes with the k-th one in B; output in the order of
    A, then the arrays only in B."""
    queues = {}
    for j, (name, values) in enumerate(b_arrays):
        queues.setdefault(shape_of(name, len(values))[0], []).append(j)
    lines, paired, last, differ = [], set(), 0, False
    for i, (name, values) in enumerate(a_arrays):
        base, shape = shape_of(name, len(values))
        queue = queues.get(base)
        if not queue:
            lines.append('Only in %s: array %d “%s”' % (a_name, i, name))
            differ = True
            continue
        j = queue.pop(0)
        paired.add(j)
        if j < last:
            lines.append('“%s” is array %d in %s but array %d in %s: the order differs' % (
                name, i, a_name, j, b_name))
            differ = True
        last = max(last, j)
        b_name_j, b_values = b_arrays[j]
        b_shape = shape_of(b_name_j, len(b_values))[1]
        layout = shape != b_shape
        if layout and (len(shape) != 1 or len(b_shape) != 1):
            lines.append('“%s”: shape %s in %s, %s in %s' % (
                base, shape_text(shape), a_name, shape_text(b_shape), b_name))
        elif not layout and name != b_name_j:
            lines.append('“%s”: named “%s” in %s, “%s” in %s' % (base, name, a_name, b_name_j, b_name))
            layout = True
        elif len(values) != len(b_values):
            lines.append('“%s”: length %d in %s, %d in %s' % (
                base, len(values), a_name, len(b_values), b_name))
        dtype, b_dtype = typed_shape_of(name, len(values))[2], typed_shape_of(b_name_j, len(b_values))[2]
        value_lines = diff_lines(base, values, b_values, max_values, tolerance,
                                 dtype=dtype if dtype == b_dtype else 'float64')
        lines += value_lines
        outside = any(struct.pack('<d', x) != struct.pack('<d', y) and
                      (tolerance is None or not is_close(x, y, *tolerance))
                      for x, y in zip(values, b_values))
        differ = differ or layout or outside
    for j, (name, _) in enumerate(b_arrays):
        if j not in paired:
            lines.append('Only in %s: array %d “%s”' % (b_name, j, name))
            differ = True
    return lines, 1 if differ else 0


def float32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def write_integers(f, n, prefix=10 ** 10, block=100000, changed=None):
    """Writes n consecutive 16-digit integers as digit tokens, fast: a block
    of 100000 values is one join. @changed: (index, token) put instead."""
    suffixes = ['%05d' % k for k in range(block)]
    for start in range(0, n, block):
        head = str(prefix + start // block)
        count = min(block, n - start)
        tokens = suffixes[:count]
        if changed is not None and start <= changed[0] < start + count:
            tokens = list(tokens)
            tokens[changed[0] - start] = changed[1][len(head):]
            assert changed[1].startswith(head)
        f.write((',' if start else '').encode() + head.encode() +
                (',' + head).encode().join(t.encode() for t in tokens))


# --- Tests ------------------------------------------------------------------

class DiffStreamTests(ToolTestCase):

    def check(self, a_arrays, b_arrays, *options, max_values=5, tolerance=None, stdin_sides='AB'):
        """Diffs the two bundles as files, then with A and with B on the
        standard input, against the model."""
        a_text, b_text = serio_text(a_arrays), serio_text(b_arrays)
        self.write('a.serio', a_text)
        self.write('b.serio', b_text)
        lines, status = expected_diff(a_arrays, b_arrays, max_values=max_values,
                                      tolerance=tolerance)
        runs = [('a.serio', 'b.serio', b'', 'a.serio', 'b.serio')]
        if 'A' in stdin_sides:
            runs.append(('-', 'b.serio', a_text, '-', 'b.serio'))
        if 'B' in stdin_sides:
            runs.append(('a.serio', '-', b_text, 'a.serio', '-'))
        for path_a, path_b, stdin, shown_a, shown_b in runs:
            with self.subTest(a=path_a, b=path_b):
                expected = lines if (shown_a, shown_b) == ('a.serio', 'b.serio') else \
                    expected_diff(a_arrays, b_arrays, shown_a, shown_b, max_values, tolerance)[0]
                proc = self.run_tool('diff', *options, path_a, path_b, stdin=stdin, status=status)
                self.assertEqual(proc.stderr, b'')
                self.assertEqual(proc.stdout.decode().splitlines(), expected)
        return lines

    def test_same_arrays_in_another_order(self):
        big_x = [float(i) for i in range(LARGE)]
        big_y = [i * 0.5 for i in range(LARGE)]
        big_y2 = list(big_y)
        big_y2[LARGE - 3] = 1.25
        cases = [
            ([('x', [1.0]), ('y', [2.0]), ('z', [3.0])], [('z', [3.0]), ('x', [1.0]), ('y', [2.5])]),
            ([('x', [1.0]), ('y', [2.0]), ('z', [3.0])], [('z', [3.0]), ('y', [2.0]), ('x', [1.5])]),
            # the same prefix, then another order
            ([('p', [0.0]), ('x', [1.0]), ('y', [2.0])], [('p', [0.0]), ('y', [2.0]), ('x', [1.0])]),
            # duplicates: the k-th w goes with the k-th w, whatever comes between
            ([('w', [1.0]), ('v', []), ('w', [2.0]), ('w', [3.0])],
             [('w', [1.0]), ('w', [2.5]), ('v', []), ('w', [3.0]), ('w', [4.0])]),
            # arrays larger than the reader's buffer, fetched again from the file
            ([('x', big_x), ('y', big_y), ('s', [1.0])], [('s', [1.0]), ('y', big_y2), ('x', big_x)]),
            ([('y', big_y), ('x', big_x)], [('x', big_x[:-1] + [-1.0]), ('y', big_y2)]),
        ]
        for a, b in cases:
            with self.subTest(a=[n for n, _ in a], b=[n for n, _ in b]):
                lines = self.check(a, b)
                self.assertTrue(any('the order differs' in line for line in lines), lines)

    def test_typed_arrays_in_another_order(self):
        # typed arrays, some larger than the reader's buffer, read side by
        # side, then fetched out of order: ULPs of the recorded type, values
        # as decimals of their type, from files and from the standard input
        rng = random.Random(23)
        big = [float32(rng.uniform(-1, 1)) for _ in range(LARGE)]
        big2 = list(big)
        for k in (5, LARGE // 2, LARGE - 2):
            big2[k] = struct.unpack('<f', struct.pack('<I', struct.unpack('<I', struct.pack('<f', big[k]))[0] + 3))[0]
        steps = [float(i) for i in range(1000)]
        steps2 = steps[:999] + [2.0 ** 53]
        same = [('w@float32[%d]' % LARGE, big, big2), ('n@int64[1000]', steps, steps2),
                ('h@float16[2]', [0.5, 1.0], [1.0, 0.5]), ('m@bool[2x2]', [1.0, 0.0, 0.0, 1.0], [1.0] * 4)]
        a = [(name, x) for name, x, _ in same]
        self.check(a, [(name, y) for name, _, y in same], '-m', '4')
        lines = self.check(a, [(name, y) for name, _, y in reversed(same)], '-m', '4')
        # 0.5 to 1 is 1024 float16 steps (the likely precision, bfloat16, has 128)
        self.assertIn('  max absolute difference 0.5, relative 1, distance 1024 ULPs (float16)', lines)
        self.assertTrue(any(line.endswith('(3 ULPs)') and line.startswith('  [5] ') for line in lines), lines)

    def test_order_with_shapes_and_names(self):
        self.check([('m[2x3]', [1.0] * 6), ('v', [1.0, 2.0]), ('u', [1.0])],
                   [('u', [1.0, 2.0]), ('v[2]', [1.0, 2.0]), ('m[3x2]', [1.0] * 6)])
        self.check([('m[2x3]', [1.0] * 6), ('v', [1.0, 2.0])],
                   [('v[2]', [1.0, 2.0]), ('m[2x3]', [1.0] * 5 + [2.0])], '--atol', '1',
                   tolerance=(1.0, 1e-5))

    def test_arrays_only_in_one_file(self):
        cases = [
            ([('x', [1.0]), ('y', [2.0])], [('x', [1.0])]),
            ([('x', [1.0])], [('x', [1.0]), ('y', [2.0]), ('z', [])]),
            ([], [('x', [1.0])]),
            ([('x', [1.0])], []),
            ([('a', [1.0]), ('x', [1.0]), ('b', [2.0])], [('x', [1.5]), ('c', [3.0])]),
            ([('x', [1.0]), ('x', [2.0])], [('y', [1.0]), ('x', [2.0])]),
            ([('x', [float(i) for i in range(LARGE)])], [('y', [1.0]), ('x', [1.0])]),
        ]
        for a, b in cases:
            with self.subTest(a=[n for n, _ in a], b=[n for n, _ in b]):
                lines = self.check(a, b)
                self.assertTrue(any(line.startswith('Only in') for line in lines), lines)

    def test_one_difference_near_the_end_of_a_large_file(self):
        values = [float32(i * 0.001) for i in range(LARGE * 2)]
        other = list(values)
        other[-7] = float32(other[-7] * 1.5)
        lines = self.check([('w', values)], [('w', other)])
        self.assertEqual(lines[0], '“w”: 1 of %d values differs' % len(values))
        self.assertTrue(lines[1].endswith('(float32)'), lines)
        self.assertTrue(lines[2].startswith('  [%d] ' % (len(values) - 7)), lines)
        # lengths that differ, the extra values past the buffer
        self.check([('w', values)], [('w', other + [1.0, 2.0])])
        self.check([('w', values + [3.0])], [('w', other[:LARGE])], '-m', '0', max_values=0)

    def test_long_report(self):
        # more than a megabyte of report, and of values waiting for the
        # precision: held in a temporary file until both files are read;
        # in another order, with B on the standard input too
        a = [i * 0.25 for i in range(50000)]
        b = [i * 0.25 + 1 for i in range(50000)]
        lines = self.check([('s', [1.0]), ('w', a)], [('w', b), ('s', [2.0])], '-m', '60000',
                           max_values=60000)
        self.assertGreater(len(lines), 50000)

    def test_precision_takes_every_value_of_both_arrays(self):
        # float32 values but one, at the very end (past the common values):
        # the distances, those of the first values shown included, are in
        # float64 ULPs
        values = [float32(i / 7) for i in range(LARGE)]
        other = list(values)
        other[1] = float32(other[1] + 1)
        for tail in ([], [0.1], [CANONICAL_NAN], [math.inf]):
            with self.subTest(tail=tail):
                self.check([('w', values)], [('w', other + tail)], stdin_sides='B')
        # integers, with one that is not
        ints = [float(i) for i in range(LARGE)]
        self.check([('n', ints)], [('n', ints[:-1] + [0.5])], stdin_sides='')
        self.check([('n', ints[:5] + [ints[5] + 2] + ints[6:])], [('n', ints)], stdin_sides='')

    def test_integer_precision_needs_every_value_an_integer(self):
        # 2^24 + 1 is an integer that float32 cannot hold: what follows it
        # still counts (docs/cli.md: units only when every value is an
        # integer)
        lines = self.check([('w', [16777217.0, 0.5])], [('w', [16777218.0, 0.25])], stdin_sides='')
        self.assertTrue(lines[1].endswith('(float64)'), lines)

    def test_special_values(self):
        a = [0.0, -0.0, math.inf, -math.inf, CANONICAL_NAN, 1.0, 5e-324, CANONICAL_NAN]
        b = [-0.0, 0.0, -math.inf, math.inf, 1.0, CANONICAL_NAN, -5e-324, CANONICAL_NAN]
        self.check([('w', a), ('e', [])], [('w', b), ('e', [])])
        self.check([('e', [])], [('e', [1.0])])
        self.check([('w', a)], [('w', b)], '--rtol', '0.1', tolerance=(1e-8, 0.1))

    def test_sealed_and_plain(self):
        arrays = [('w', [float(i) for i in range(LARGE)]), ('b', [0.5])]
        self.write('plain.serio', serio_text(arrays))
        self.write('sealed.serio', sealed(serio_text(arrays[::-1])))
        lines, status = expected_diff(arrays, arrays[::-1], 'plain.serio', 'sealed.serio')
        proc = self.run_tool('diff', 'plain.serio', 'sealed.serio', status=status)
        self.assertEqual(proc.stdout.decode().splitlines(), lines)
        self.run_tool('diff', '-', 'plain.serio', stdin=sealed(serio_text(arrays)), status=0)

    def test_random_bundles(self):
        rng = random.Random(11)
        names = ['w', 'x', 'y', 'w[2]', '', 'm[2x3]', 'm[3x2]']

        def value(kind):
            if kind == 'int':
                return float(rng.randrange(-300, 300))
            if kind == 'f32':
                return float32(rng.uniform(-3, 3))
            if kind == 'special':
                return rng.choice([0.0, -0.0, math.inf, -math.inf, CANONICAL_NAN, 1.0, 5e-324])
            return rng.uniform(-1e3, 1e3)

        def array(name):
            kind = rng.choice(['int', 'f32', 'special', 'f64'])
            n = 6 if name.startswith('m') else rng.choice([0, 1, 3, rng.randrange(0, 60)])
            return [value(kind) for _ in range(n)]

        for _ in range(12):
            a = [(name, array(name)) for name in rng.sample(names, rng.randrange(0, 6))]
            b = [(name, [value('f64') if rng.random() < 0.2 else v for v in values])
                 for name, values in a if rng.random() < 0.85]
            if rng.random() < 0.5:
                rng.shuffle(b)
            if rng.random() < 0.3:
                b.append(('w', array('w')))
            self.check(a, b, '-m', '3', max_values=3)

    def run_with_fifos(self, args, contents, stdin=b''):
        """Runs serio diff with some files named FIFOs, written by threads."""
        threads = []
        for name, data in contents.items():
            os.mkfifo(self.path(name))

            def feed(name=name, data=data):
                with open(self.path(name), 'wb') as f:
                    try:
                        f.write(data)
                    except BrokenPipeError:
                        pass
            threads.append(threading.Thread(target=feed))
        for thread in threads:
            thread.start()
        try:
            return self.run_tool('diff', *args, stdin=stdin)
        finally:
            for thread in threads:
                thread.join()

    def test_pipes(self):
        # a named pipe cannot be read twice either
        a = [('x', [1.0]), ('y', [2.0, 3.0])]
        b = [('y', [2.0, 3.5]), ('x', [1.0])]
        self.write('a.serio', serio_text(a))
        lines, status = expected_diff(a, b, 'a.serio', 'b.fifo')
        proc = self.run_with_fifos(['a.serio', 'b.fifo'], {'b.fifo': serio_text(b)})
        self.assertEqual((proc.returncode, proc.stdout.decode().splitlines(), proc.stderr),
                         (status, lines, b''))
        lines, status = expected_diff(a, a[:1], 'a.fifo', 'c.fifo')
        proc = self.run_with_fifos(['a.fifo', 'c.fifo'], {'a.fifo': serio_text(a),
                                                          'c.fifo': serio_text(a[:1])})
        self.assertEqual((proc.returncode, proc.stdout.decode().splitlines(), proc.stderr),
                         (status, lines, b''))
        # another order, and neither can be read twice: an error, after
        # both files were checked
        proc = self.run_with_fifos(['a2.fifo', '-'], {'a2.fifo': serio_text(a)}, stdin=serio_text(a))
        self.assertEqual((proc.returncode, proc.stdout, proc.stderr), (0, b'', b''))
        for second in (serio_text(b), serio_text(b)[:-1]):
            with self.subTest(second=second[-5:]):
                os.unlink(self.path('a2.fifo'))
                proc = self.run_with_fifos(['a2.fifo', '-'], {'a2.fifo': serio_text(a)}, stdin=second)
                self.assertEqual((proc.returncode, proc.stdout), (2, b''))
                self.assertEqual(len(proc.stderr.decode().splitlines()), 1, proc.stderr)
                # the first problem of a file comes first
                self.assertEqual(proc.stderr.decode().startswith('-:'), second[-1:] != b'\n',
                                 proc.stderr)

    # --- errors: nothing but the error, from the first file that has one ---

    def large_bad(self, bad_index, n=LARGE * 2):
        tokens = ['%d' % i for i in range(n)]
        tokens[bad_index] = '1.5'
        return b'v1|small|1|1\nv1|w|%d|%s\n' % (n, ','.join(tokens).encode())

    def assert_error(self, proc, prefix):
        self.assertEqual(proc.stdout, b'')
        self.assertTrue(proc.stderr.decode().startswith(prefix), proc.stderr)
        self.assertEqual(len(proc.stderr.decode().splitlines()), 1, proc.stderr)

    def test_bad_token_near_the_end(self):
        good = serio_text([('small', [2.0]), ('w', [float(i) for i in range(LARGE * 2)])])
        self.write('a.serio', good)
        self.write('bad.serio', self.large_bad(LARGE * 2 - 5))
        proc = self.run_tool('diff', 'a.serio', 'bad.serio', status=2)
        self.assert_error(proc, 'bad.serio:2: ')
        self.assertIn('1.5', proc.stderr.decode())
        self.assert_error(self.run_tool('diff', 'bad.serio', 'a.serio', status=2), 'bad.serio:2: ')
        self.assert_error(self.run_tool('diff', '-', 'a.serio', stdin=self.large_bad(LARGE * 2 - 5),
                                        status=2), '-:2: ')
        self.assert_error(self.run_tool('diff', 'a.serio', '-', stdin=self.large_bad(LARGE * 2 - 5),
                                        status=2), '-:2: ')
        # the first of two bad files is the one reported
        self.write('bad2.serio', self.large_bad(3))
        self.assert_error(self.run_tool('diff', 'bad.serio', 'bad2.serio', status=2), 'bad.serio:2: ')
        self.assert_error(self.run_tool('diff', 'bad2.serio', 'bad.serio', status=2), 'bad2.serio:2: ')

    def test_bad_token_in_arrays_read_out_of_order_or_alone(self):
        bad_w = self.large_bad(LARGE - 2).split(b'\n')[1] + b'\n'
        self.write('a.serio', serio_text([('w', [float(i) for i in range(LARGE * 2)]),
                                          ('small', [1.0])]))
        # w is array 1 in B: paired out of order
        self.write('b1.serio', record('small', [1.0]).encode() + bad_w)
        # w only in B
        self.write('b2.serio', record('small', [1.0]).encode() + bad_w.replace(b'v1|w|', b'v1|q|'))
        for name in ('b1.serio', 'b2.serio'):
            with self.subTest(name=name):
                self.assert_error(self.run_tool('diff', 'a.serio', name, status=2), name + ':2: ')
                stdin = self.read(name)
                self.assert_error(self.run_tool('diff', 'a.serio', '-', stdin=stdin, status=2), '-:2: ')
                self.assert_error(self.run_tool('diff', '-', 'a.serio', stdin=stdin, status=2), '-:2: ')

    def test_damage_found_only_at_the_end(self):
        text = serio_text([('w', [float(i) for i in range(LARGE)]), ('v', [1.0])])
        self.write('a.serio', text)
        # a changed digit that leaves a valid token: only the seal tells
        changed = sealed(text).replace(b',%d,' % (LARGE - 10), b',%d,' % (LARGE - 11), 1)
        self.write('changed.serio', changed)
        proc = self.run_tool('diff', 'a.serio', 'changed.serio', status=2)
        self.assert_error(proc, 'changed.serio:')
        # cut short: at a line boundary (sealed) and within a line (plain)
        self.write('cut.serio', sealed(text)[:len(text) + 20])
        self.assert_error(self.run_tool('diff', 'a.serio', 'cut.serio', status=2), 'cut.serio:')
        self.write('cut2.serio', text[:-1])
        self.assert_error(self.run_tool('diff', 'cut2.serio', 'a.serio', status=2), 'cut2.serio:')
        self.assert_error(self.run_tool('diff', 'a.serio', '-', stdin=text[:-3], status=2), '-:')

    def run_changing_b(self, a, b, change):
        """serio diff - b.serio, A on the standard input, B's arrays in
        another order: diff reads B with its front reader (first open),
        indexes it with a second, and fetches the arrays behind the front
        with a third. A's first line goes in, the test waits until B's
        index is read and closed (diff then waits for A's second array),
        calls change(), and gives the rest of A: the third open of B finds
        the file that change() left."""
        self.write('b.serio', serio_text(b))
        watch = OpenWatch(self.dir, 'b.serio')
        self.addCleanup(watch.close)
        text = serio_text(a)
        first = text.index(b'\n') + 1
        proc = subprocess.Popen([test_serio_tool.SERIO, 'diff', '-', 'b.serio'],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=self.dir, env=self.env())
        try:
            proc.stdin.write(text[:first])
            proc.stdin.flush()
            # the front and the index opened B (inotify merges two opens
            # in a row into one event); the index is done, the front open
            self.assertGreaterEqual(watch.wait_for_closes(1), 1)
            change(self.path('b.serio'))
            watch.reset()
            proc.stdin.write(text[first:])
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        # and the third open came after the change
        self.assertGreaterEqual(watch.wait_for_closes(1), 1)
        return proc.returncode, out, err.decode()

    def assert_changed(self, status, out, err):
        self.assertEqual((status, out), (2, b''), err)
        self.assertEqual(err, 'serio diff: b.serio: the file changed while it was read\n')

    def test_file_replaced_between_reads(self):
        # B replaced by a new version (a save renames a new file into
        # place) after its index: same names, other values. Read as one
        # file, its arrays would mix the two versions.
        a = [('x', [1.0, 2.0, 3.0]), ('y', [4.0, 5.0])]
        b = [('y', [4.0, 5.0]), ('x', [1.0, 2.0, 3.0])]
        new_b = [('y', [4.0, 6.5]), ('x', [1.0, 2.0, 3.0])]
        self.write('new.serio', serio_text(new_b))

        def replace(path):
            os.replace(self.path('new.serio'), path)
        self.assert_changed(*self.run_changing_b(a, b, replace))
        # unchanged, the same run reports the order only
        lines, status = expected_diff(a, b, '-', 'b.serio')
        self.assertEqual(status, 1)
        self.assertEqual(self.run_changing_b(a, b, lambda path: None),
                         (status, ''.join(line + '\n' for line in lines).encode(), ''))

    def test_file_rewritten_in_place_between_reads(self):
        # B rewritten in place after its index, to the same size, with its
        # modification time put back: only what B's third reader finds
        # where the index saw "y" tells.
        a = [('x', [1.0, 2.0, 3.0]), ('y', [4.0, 5.0])]
        b = [('y', [4.0, 5.0]), ('x', [1.0, 2.0, 3.0])]
        new_text = serio_text([('z', [4.0, 5.0]), ('x', [1.0, 2.0, 3.0])])
        self.assertEqual(len(new_text), len(serio_text(b)))

        def rewrite(path):
            st = os.stat(path)
            with open(path, 'r+b') as f:
                f.write(new_text)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            self.assertEqual(os.stat(path).st_mtime_ns, st.st_mtime_ns)
        self.assert_changed(*self.run_changing_b(a, b, rewrite))

    def test_files_that_cannot_be_opened(self):
        self.write('a.serio', serio_text([('w', [1.0])]))
        self.write('bad.serio', b'v1|w|1|1.0\n')
        proc = self.run_tool('diff', 'a.serio', 'missing.serio', status=2)
        self.assertEqual(proc.stdout, b'')
        self.assertIn('missing.serio', proc.stderr.decode())
        # a bad A comes first, as when A is read before B is opened
        proc = self.run_tool('diff', 'bad.serio', 'missing.serio', status=2)
        self.assert_error(proc, 'bad.serio:1: ')
        proc = self.run_tool('diff', 'missing.serio', 'bad.serio', status=2)
        self.assertIn('missing.serio', proc.stderr.decode())
        self.assertNotIn('bad.serio', proc.stderr.decode())


class DiffMemoryTests(ToolTestCase):
    """Two files of 10^7 values each (~170 MB): the tool's peak memory."""

    N = 10 ** 7

    @classmethod
    def setUpClass(cls):
        cls.big_dir = tempfile.mkdtemp(prefix='serio-diff-big-')
        cls.changed = cls.N - 12
        # value i is 10^15 + i; in A, the one at cls.changed is one more
        token = str(10 ** 10 + cls.changed // 100000) + '%05d' % (cls.changed % 100000 + 1)
        for name, changed in (('a.serio', (cls.changed, token)), ('b.serio', None)):
            with open(os.path.join(cls.big_dir, name), 'wb') as f:
                f.write(record('v', [1.0, 2.0]).encode())
                f.write(b'v1|big|%d|' % cls.N)
                write_integers(f, cls.N, changed=changed)
                f.write(b'\n')

    @classmethod
    def tearDownClass(cls):
        for name in os.listdir(cls.big_dir):
            os.unlink(os.path.join(cls.big_dir, name))
        os.rmdir(cls.big_dir)

    def run_measured(self, *args, stdin=None):
        out_path = os.path.join(self.dir, 'out')
        with open(out_path, 'wb') as out, open(os.path.join(self.dir, 'err'), 'wb') as err:
            proc = subprocess.Popen([test_serio_tool.SERIO, 'diff'] + list(args), stdin=stdin,
                                    stdout=out, stderr=err, cwd=self.big_dir, env=self.env())
            _, wait_status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(wait_status)
        with open(out_path, 'rb') as f:
            return proc.returncode, f.read().decode(), usage.ru_maxrss

    def test_peak_memory(self):
        value = 10 ** 15 + self.changed
        expected = [
            '“big”: 1 of %d values differs' % self.N,
            '  max absolute difference 1, relative %s, distance 1 unit (integer)' % (
                test_serio_tool.shortest(1 / value)),
            '  [%d] %d → %d (1 unit)' % (self.changed, value + 1, value),
        ]
        for args, stdin in ((('a.serio', 'b.serio'), None),
                            (('a.serio', '-'), 'b.serio'),
                            (('-', 'b.serio'), 'a.serio')):
            with self.subTest(args=args):
                if stdin is not None:
                    with open(os.path.join(self.big_dir, stdin), 'rb') as f:
                        status, output, max_rss = self.run_measured(*args, stdin=f)
                else:
                    status, output, max_rss = self.run_measured(*args)
                self.assertEqual((status, output.splitlines()), (1, expected))
                # ru_maxrss is in KiB on Linux; see tool_is_sanitized()
                if not test_serio_tool.tool_is_sanitized():
                    self.assertLessEqual(max_rss, 64 * 1024, 'peak RSS %d KiB' % max_rss)


if __name__ == '__main__':
    test_serio_tool.SERIO = os.path.abspath(sys.argv[1])
    rest = sys.argv[2:]
    if rest and re.fullmatch(r'[0-9][0-9.]*', rest[0]):
        test_serio_tool.VERSION = rest.pop(0)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
