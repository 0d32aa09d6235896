# SPDX-License-Identifier: LGPL-2.1-or-later
"""serio convert streams both ways: files larger than the reader's and the
writer's buffers, damage found late, and the peak memory of the child.

Usage: test_convert_streams.py SERIO [unittest arguments]

Values are compared by their bit patterns (.view('<u8') or the canonical
serio text that test_serio_tool.py computes independently of libserio),
never with ==. NumPy is needed for most tests (they are skipped without
it); the expected serio texts come from test_serio_tool's own encoder.
"""

import os
import re
import struct
import subprocess
import sys
import unittest
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_serio_tool as base  # noqa: E402
from test_serio_tool import CANONICAL_NAN, sealed, serio_text, ToolTestCase  # noqa: E402

try:
    import numpy
except ImportError:
    numpy = None

# More than the 1 MiB buffers of SerioReader and SerioWriter.
LARGE = 200_000
RSS_LIMIT_KIB = 64 * 1024
RSS_VALUES = 10 ** 7


# Runs argv[1:] and prints its exit status and peak RSS (KiB, Linux).
MEASURE = """
import os, sys
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def need_numpy(test):
    return unittest.skipIf(numpy is None, 'NumPy is not installed')(test)


def random_doubles(seed, n, shape=None):
    """Doubles of random bit patterns, NaNs made the default NaN (what any
    NaN reads back as), with the special values first."""
    rng = numpy.random.default_rng(seed)
    values = rng.integers(0, 2 ** 64, size=n, dtype=numpy.uint64, endpoint=False).view('<f8')
    values = values.copy()
    specials = [0.0, -0.0, float('inf'), float('-inf'), 5e-324, 1.7976931348623157e308, 0.1]
    values[:len(specials)] = specials
    values[numpy.isnan(values)] = CANONICAL_NAN
    return values.reshape(shape) if shape is not None else values


def same_bits(a, b):
    a = numpy.ascontiguousarray(a, dtype='<f8')
    b = numpy.ascontiguousarray(b, dtype='<f8')
    return a.shape == b.shape and numpy.array_equal(a.view('<u8'), b.view('<u8'))


class ConvertStreamTests(ToolTestCase):

    def serio_of(self, arrays):
        """The plain serio text of (name, numpy array) pairs, C order."""
        return serio_text([(name, [float(x) for x in numpy.ravel(a)]) for name, a in arrays])

    def assert_kept(self, name, old):
        self.assertEqual(self.read(name), old)

    # --- serio -> NumPy -----------------------------------------------

    @need_numpy
    def test_serio_to_npy_large(self):
        w = random_doubles(1, LARGE, (400, 500))
        text = self.serio_of([('w[400x500]', w)])
        self.assertGreater(len(text), 2 << 20)
        for name, data in (('plain.serio', text), ('sealed.serio', sealed(text))):
            with self.subTest(name=name):
                self.write(name, data)
                self.run_tool('convert', name, 'w.npy', status=0)
                back = numpy.load(self.path('w.npy').decode())
                self.assertEqual(back.dtype, numpy.dtype('<f8'))
                self.assertTrue(same_bits(back, w))
        # from the standard input too
        self.run_tool('convert', '-', 'w2.npy', stdin=text, status=0)
        self.assertEqual(self.read('w2.npy'), self.read('w.npy'))

    @need_numpy
    def test_serio_to_npz_large(self):
        arrays = [('conv.weight[4x50000]', random_doubles(2, LARGE, (4, 50000))),
                  ('steps[]', numpy.array(7.0)),
                  ('b', random_doubles(3, 1000)),
                  ('empty[0x3]', numpy.zeros((0, 3)))]
        text = sealed(self.serio_of(arrays))
        self.write('m.serio', text)
        for options, method in (([], zipfile.ZIP_STORED), (['--compress'], zipfile.ZIP_DEFLATED)):
            with self.subTest(options=options):
                self.run_tool('convert', *options, 'm.serio', 'm.npz', status=0)
                with zipfile.ZipFile(os.fsdecode(self.path('m.npz'))) as z:
                    self.assertIsNone(z.testzip())
                    infos = z.infolist()
                    self.assertEqual([i.filename for i in infos],
                                     ['conv.weight.npy', 'steps.npy', 'b.npy', 'empty.npy'])
                    for info in infos:
                        self.assertEqual(info.compress_type, method)
                        self.assertTrue(info.flag_bits & 0x08)   # a data descriptor
                with numpy.load(self.path('m.npz').decode()) as back:
                    self.assertEqual(list(back.keys()), ['conv.weight', 'steps', 'b', 'empty'])
                    for (name, a), key in zip(arrays, back.keys()):
                        self.assertEqual(back[key].dtype, numpy.dtype('<f8'))
                        self.assertTrue(same_bits(back[key], a), name)
                # the same bytes each time
                first = self.read('m.npz')
                self.run_tool('convert', *options, 'm.serio', 'm.npz', status=0)
                self.assertEqual(self.read('m.npz'), first)
                # and back, through the archive's data descriptors
                self.run_tool('convert', 'm.npz', 'back.serio', status=0)
                self.assertEqual(self.read('back.serio'), text)

    @need_numpy
    def test_zip64_end_records_for_many_members(self):
        # More than 65535 members need the ZIP64 end of central directory.
        n = 70_000
        text = b''.join(b'v1|a%d|1|%d\n' % (i, i) for i in range(n))
        self.write('many.serio', text)
        self.run_tool('convert', 'many.serio', 'many.npz', status=0)
        with zipfile.ZipFile(os.fsdecode(self.path('many.npz'))) as z:
            names = z.namelist()
            self.assertEqual(len(names), n)
            self.assertEqual(names[-1], 'a%d.npy' % (n - 1))
        with numpy.load(self.path('many.npz').decode()) as back:
            self.assertTrue(same_bits(back['a69999'], numpy.array([69999.0])))
        self.run_tool('convert', '--plain', 'many.npz', 'many2.serio', status=0)
        self.assertEqual(self.read('many2.serio'), text)

    # --- NumPy -> serio -----------------------------------------------

    @need_numpy
    def test_npy_to_serio_large(self):
        cases = [('<f8', random_doubles(4, LARGE)),
                 ('>f4', numpy.random.default_rng(5).standard_normal((500, 400)).astype('>f4')),
                 ('<i8', numpy.random.default_rng(6).integers(-2 ** 53, 2 ** 53, LARGE))]
        for descr, a in cases:
            with self.subTest(descr=descr):
                numpy.save(self.path('a.npy').decode(), a)
                self.run_tool('convert', 'a.npy', 'a.serio', status=0)
                # float64 has no type marker, and a vector of it no shape
                marker = '' if a.dtype == numpy.float64 else '@' + a.dtype.name
                name = 'a' if not marker and a.ndim == 1 else \
                    'a%s[%s]' % (marker, 'x'.join(map(str, a.shape)))
                self.assertEqual(self.read('a.serio'),
                                 sealed(self.serio_of([(name, a.astype('<f8'))])))

    @need_numpy
    def test_fortran_order_large(self):
        # Fortran-order data beyond what is read whole: fetched by offset
        # from the .npy file (blocks over the first index, then blocks
        # over the second), or first inflated to a temporary file.
        rng = numpy.random.default_rng(7)
        cases = {
            'wide.npy': rng.standard_normal((1100, 1000)),
            'tall.npy': rng.standard_normal((3, 1_100_000)).astype('>f4'),
            'cube.npy': rng.standard_normal((40, 30, 1000)),
        }
        for name, a in cases.items():
            with self.subTest(name=name):
                numpy.save(self.path(name).decode(), numpy.asfortranarray(a))
                self.run_tool('convert', name, 'f.serio', status=0)
                self.run_tool('convert', 'f.serio', 'back.npy', status=0)
                back = numpy.load(self.path('back.npy').decode())
                self.assertTrue(back.flags.c_contiguous)
                self.assertTrue(same_bits(back, a))
        big = rng.standard_normal((7, 5, 40000))
        numpy.savez_compressed(self.path('f.npz').decode(), y=numpy.asfortranarray(big),
                               s=numpy.asfortranarray(big[:2, :2, :3]))
        self.run_tool('convert', 'f.npz', 'f.serio', status=0)
        self.run_tool('convert', 'f.serio', 'back.npz', status=0)
        with numpy.load(self.path('back.npz').decode()) as back:
            self.assertTrue(same_bits(back['y'], big))
            self.assertTrue(same_bits(back['s'], big[:2, :2, :3]))
        # an integer that no double holds is found, with its C-order index
        bad = numpy.zeros((3, 500_000), dtype='<i8')
        bad[2, 7] = 2 ** 53 + 1
        numpy.save(self.path('bad.npy').decode(), numpy.asfortranarray(bad))
        proc = self.run_tool('convert', 'bad.npy', 'bad.serio', status=1)
        self.assertIn('%d at index %d' % (2 ** 53 + 1, 2 * 500_000 + 7), proc.stderr.decode())
        self.assertFalse(os.path.exists(self.path('bad.serio')))

    @need_numpy
    def test_npz_to_serio_large(self):
        a = random_doubles(8, LARGE)
        h = numpy.random.default_rng(9).standard_normal((300, 400)).astype('<f2')
        want = sealed(self.serio_of([('a', a), ('h@float16[300x400]', h.astype('<f8'))]))
        for save in (numpy.savez, numpy.savez_compressed):
            with self.subTest(save=save.__name__):
                save(self.path('in.npz').decode(), a=a, h=h)
                self.run_tool('convert', 'in.npz', 'out.serio', status=0)
                self.assertEqual(self.read('out.serio'), want)

    @need_numpy
    def test_damaged_npz_member_leaves_the_output(self):
        a = random_doubles(10, LARGE)
        for save in (numpy.savez, numpy.savez_compressed):
            with self.subTest(save=save.__name__):
                save(self.path('good.npz').decode(), a=a, b=a[:10])
                good = self.read('good.npz')
                with zipfile.ZipFile(os.fsdecode(self.path('good.npz'))) as z:
                    info = z.getinfo('a.npy')
                start = info.header_offset + 30 + len('a.npy') + len(info.extra)
                self.write('keep.serio', b'old contents')
                for offset in (start + info.compress_size // 2, start + info.compress_size - 2):
                    damaged = bytearray(good)
                    damaged[offset] ^= 0x10
                    self.write('in.npz', bytes(damaged))
                    proc = self.run_tool('convert', 'in.npz', 'keep.serio', status=1)
                    self.assertIn('a.npy: ', proc.stderr.decode())
                    self.assert_kept('keep.serio', b'old contents')

    # --- Damage found late --------------------------------------------

    @need_numpy
    def test_damaged_serio_input_leaves_the_output(self):
        a = random_doubles(11, LARGE)
        text = self.serio_of([('w', a[:1000]), ('v', a)])
        # a bad token near the end of a large plain file
        cut = text.rindex(b',', 0, len(text) - 50)
        bad_token = text[:cut + 1] + b'x' + text[cut + 1:]
        # a sealed file with a changed digit, which stays a valid token
        good_sealed = sealed(text)
        at = good_sealed.index(b',', len(good_sealed) // 2) + 1
        digit = good_sealed[at:at + 1]
        self.assertTrue(digit.isdigit() and digit != b'0')
        changed = good_sealed[:at] + (b'1' if digit != b'1' else b'2') + good_sealed[at + 1:]
        cases = {
            'token.serio': (bad_token, r'^token\.serio:2: '),
            'digit.serio': (changed, r'^digit\.serio:4: '),
            'cut.serio': (good_sealed[:good_sealed.rindex(b'v1|serio.seal|')], r'^cut\.serio:'),
            'nolf.serio': (text[:-1], r'^nolf\.serio:'),
        }
        self.write('keep.npy', b'old npy')
        self.write('keep.npz', b'old npz')
        for name, (data, message) in cases.items():
            self.write(name, data)
            for options, out in (([], 'keep.npz'), (['--compress'], 'keep.npz'),
                                 (['--name', 'v'], 'keep.npy')):
                with self.subTest(name=name, options=options):
                    proc = self.run_tool('convert', *options, name, out, status=1)
                    lines = self.stderr_lines(proc)
                    self.assertEqual(len(lines), 1, lines)
                    self.assertRegex(lines[0], message)
                    self.assert_kept(out, b'old npy' if out == 'keep.npy' else b'old npz')
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(list(cases) + ['keep.npy', 'keep.npz']))

    @need_numpy
    def test_problems_found_after_the_first_array(self):
        a = random_doubles(12, LARGE)
        self.write('keep.npy', b'old npy')
        self.write('keep.npz', b'old npz')
        # a base name repeated at the end
        self.write('dup.serio', self.serio_of([('w[2x100000]', a), ('b', a[:3]), ('w', a[:2])]))
        proc = self.run_tool('convert', 'dup.serio', 'keep.npz', status=1)
        self.assertIn('“w”', proc.stderr.decode())
        self.assert_kept('keep.npz', b'old npz')
        # … but a bad line after it comes first, as when the whole file was
        # read before anything was written
        self.write('dup2.serio', self.read('dup.serio') + b'v1|c|1|01\n')
        proc = self.run_tool('convert', 'dup2.serio', 'keep.npz', status=1)
        self.assertRegex(proc.stderr.decode(), r'^dup2\.serio:4: ')
        # a second array, without --name, and a name that is not there
        proc = self.run_tool('convert', 'dup.serio', 'keep.npy', status=1)
        self.assertIn('holds 3 arrays', proc.stderr.decode())
        proc = self.run_tool('convert', '--name', 'nope', 'dup.serio', 'keep.npy', status=1)
        self.assertIn('“nope”', proc.stderr.decode())
        self.assert_kept('keep.npy', b'old npy')
        # --name: an exact match wins over an earlier base name match, as
        # serio_bundle_lookup() finds it; else the first base name match
        self.run_tool('convert', '--name', 'w', 'dup.serio', 'w.npy', status=0)
        self.assertTrue(same_bits(numpy.load(self.path('w.npy').decode()), a[:2]))
        self.write('base.serio', self.serio_of([('x', a[:1]), ('w[2x100000]', a),
                                                ('w[1x2]', a[:2])]))
        self.run_tool('convert', '--name', 'w', 'base.serio', 'w.npy', status=0)
        self.assertTrue(same_bits(numpy.load(self.path('w.npy').decode()), a.reshape(2, 100000)))
        self.run_tool('convert', '--name', 'w[1x2]', 'base.serio', 'w.npy', status=0)
        self.assertTrue(same_bits(numpy.load(self.path('w.npy').decode()), a[:2].reshape(1, 2)))
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ['base.serio', 'dup.serio', 'dup2.serio', 'keep.npy', 'keep.npz', 'w.npy'])

    # --- Memory -------------------------------------------------------

    def run_measured(self, *args):
        """Runs the tool; returns its peak RSS in KiB, as wait4() gives it.

        A child's ru_maxrss counts the memory of the process it was forked
        from (until the exec), so the tool is run by a small Python without
        site packages rather than from this one, which holds NumPy and
        large arrays: the figure is the larger of that Python's and the
        tool's, an upper bound of the tool's."""
        proc = subprocess.run([sys.executable, '-S', '-c', MEASURE, base.SERIO] + list(args),
                              cwd=self.dir, env=self.env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        status, rss = proc.stdout.split()
        self.assertEqual(int(status), 0, proc.stderr)
        return int(rss)

    @need_numpy
    def test_peak_memory_is_bounded(self):
        # 10^7 values: 80 MB of .npy, about 200 MB of serio text.
        a = numpy.random.default_rng(13).standard_normal(RSS_VALUES) * 1e6
        numpy.save(self.path('big.npy').decode(), a)
        steps = [('convert', 'big.npy', 'big.serio'),
                 ('convert', 'big.serio', 'back.npy'),
                 ('convert', 'big.serio', 'back.npz')]
        for args in steps:
            with self.subTest(args=args):
                rss = self.run_measured(*args)
                # see tool_is_sanitized()
                if not base.tool_is_sanitized():
                    self.assertLessEqual(rss, RSS_LIMIT_KIB, 'peak RSS %d KiB' % rss)
        self.assertGreater(os.path.getsize(self.path('big.serio')), 100 << 20)
        self.assertEqual(self.read('back.npy'), self.read('big.npy'))
        with numpy.load(self.path('back.npz').decode()) as back:
            self.assertTrue(same_bits(back['big'], a))


if __name__ == '__main__':
    # Called as test_serio_tool.py is: SERIO VERSION [unittest arguments].
    base.SERIO, base.VERSION = os.path.abspath(sys.argv[1]), sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
