# SPDX-License-Identifier: LGPL-2.1-or-later
"""serio convert reads .npz archives strictly, as CPython's zipfile (and so
numpy) does or more: hostile archives built here byte by byte.

Usage: test_npz_strict.py SERIO VERSION [unittest arguments]

Each archive is one that an earlier reader converted wrongly with exit
status 0 (arrays dropped, arrays repeated, the wrong one of two, a GLib
CRITICAL); each must now fail with exit status 1 (2 for a pipe), say why,
and leave OUT as it was. The well-formed archives next to them, from
numpy and from zipfile, still convert, compared by bit patterns.
"""

import os
import struct
import subprocess
import sys
import threading
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_serio_tool as base  # noqa: E402
from test_serio_tool import f8_data, npy_bytes, sealed, serio_text, ToolTestCase  # noqa: E402

OLD = b'v1|old|1|1\n'


def member(name, data, method=0, **overrides):
    """A member of zip_bytes(): its name and .npy bytes, stored (0) or
    deflated (8), with any field of the local header or the directory
    entry overridden (local_name, local_method, local_csize, local_size,
    local_crc, csize, size, crc, offset, compressed)."""
    if isinstance(name, str):
        name = name.encode('utf-8')
    if method == 8:
        z = zlib.compressobj(9, zlib.DEFLATED, -15)
        compressed = z.compress(data) + z.flush()
    else:
        compressed = data
    m = {'name': name, 'method': method, 'crc': zlib.crc32(data), 'size': len(data),
         'compressed': compressed}
    m.update(overrides)
    m.setdefault('csize', len(m['compressed']))
    return m


def zip_bytes(members, count=None, dir_entries=None):
    """A ZIP archive (APPNOTE.TXT): the local headers and data of
    @members, then a central directory of @dir_entries (default: one
    entry per member, in order; an entry is (member index, overrides)),
    then an end record whose entry count is @count (default: the
    number of entries)."""
    out = bytearray()
    offsets = []
    for m in members:
        offsets.append(len(out))
        name = m.get('local_name', m['name'])
        out += struct.pack('<IHHHHHIIIHH', 0x04034b50, 20, 0, m.get('local_method', m['method']),
                           0, 0x21, m.get('local_crc', m['crc']), m.get('local_csize', m['csize']),
                           m.get('local_size', m['size']), len(name), 0)
        out += name + m['compressed']
    if dir_entries is None:
        dir_entries = [(i, {}) for i in range(len(members))]
    directory = bytearray()
    for i, extra in dir_entries:
        m = dict(members[i])
        m.update(extra)
        directory += struct.pack('<IHHHHHHIIIHHHHHII', 0x02014b50, 20, 20, 0, m['method'], 0,
                                 0x21, m['crc'], m['csize'], m['size'], len(m['name']), 0, 0,
                                 0, 0, 0, m.get('offset', offsets[i]))
        directory += m['name']
    n = len(dir_entries) if count is None else count
    eocd = struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, n, n, len(directory), len(out), 0)
    return bytes(out + directory + eocd)


def f8_npy(values):
    return npy_bytes('<f8', (len(values),), f8_data(values))


A, B, C = f8_npy([1.0, 2.0]), f8_npy([0.5]), f8_npy([-3.0, 4.0, 5.0])


class NpzStrictTests(ToolTestCase):

    def convert(self, archive, status, message=None, name='in.npz'):
        """Converts @archive, which must fail with @status and @message
        (or succeed, status 0), leaving OUT alone on failure."""
        self.write(name, archive)
        self.write('out.serio', OLD)
        proc = self.run_tool('convert', name, 'out.serio', status=status)
        stderr = proc.stderr.decode()
        self.assertNotIn('CRITICAL', stderr)
        self.assertNotIn('WARNING', stderr)
        if status != 0:
            self.assertEqual(self.read('out.serio'), OLD)
            self.assertIn(message, stderr)
            # The message names the archive and ends in a line feed.
            self.assertIn(name, stderr)
            self.assertTrue(stderr.endswith('\n'))
        return proc

    def test_well_formed(self):
        """The builder's own archive converts, stored and deflated: the
        checks below refuse only what they must."""
        want = sealed(serio_text([('a', [1.0, 2.0]), ('b', [0.5]), ('c', [-3.0, 4.0, 5.0])]))
        for method in (0, 8):
            with self.subTest(method=method):
                self.convert(zip_bytes([member('a.npy', A, method), member('b.npy', B, method),
                                        member('c.npy', C, method)]), 0)
                self.assertEqual(self.read('out.serio'), want)

    def test_count_lower_than_directory(self):
        """The end record says 1 (or 0) of the 3 entries the directory
        holds: zipfile reads all three, an earlier serio dropped two."""
        members = [member('a.npy', A), member('b.npy', B), member('c.npy', C)]
        for count in (0, 1, 2, 4):
            with self.subTest(count=count):
                self.convert(zip_bytes(members, count=count), 1,
                             'the end of the central directory counts %d member%s, '
                             'but the directory holds 3' % (count, '' if count == 1 else 's'))

    def test_local_header_differs(self):
        """A local header whose name, method or sizes are not its
        directory entry's."""
        cases = {
            'name': (member('a.npy', A, local_name=b'b.npy'), 'its name'),
            'method': (member('a.npy', A, local_method=8), 'its compression method'),
            'compressed size': (member('a.npy', A, local_csize=len(A) - 1), 'its sizes'),
            'size': (member('a.npy', A, 8, local_size=len(A) + 1), 'its sizes'),
            'crc': (member('a.npy', A, local_crc=zlib.crc32(A) ^ 1), 'its CRC-32'),
        }
        for what, (m, message) in cases.items():
            with self.subTest(what=what):
                self.convert(zip_bytes([m]), 1,
                             'a.npy: the local header does not match the central directory '
                             '(%s): the archive is damaged' % message)

    def test_quoted_overlap(self):
        """Ten directory entries for one deflated member of zeros (a
        "quoted overlap" zip bomb): 8 KB in, 20 MB out before."""
        data = npy_bytes('<f8', (250_000,), bytes(2_000_000))
        first = member('a0.npy', data, 8)
        entries = [(0, {'name': b'a%d.npy' % i}) for i in range(10)]
        archive = zip_bytes([first], dir_entries=entries)
        self.assertLess(len(archive), 8192)
        self.convert(archive, 1, 'the archive is damaged')
        # The same entry ten times, name and all: overlap, and duplicates.
        self.convert(zip_bytes([first], dir_entries=[(0, {})] * 10), 1, 'a0.npy')

    def test_overlapping_members(self):
        """Member a's data holds member b, local header and all: every
        name matches, yet b's bytes would be read twice."""
        inner = zip_bytes([member('b.npy', B)])
        inner = inner[:inner.index(b'PK\x01\x02')]
        b_entry = {'name': b'b.npy', 'offset': 30 + len('a.npy'), 'crc': zlib.crc32(B),
                   'csize': len(B), 'size': len(B)}
        archive = zip_bytes([member('a.npy', inner)], dir_entries=[(0, {}), (0, b_entry)])
        self.convert(archive, 1, 'overlap')

    def test_member_reaches_directory(self):
        """A stored member whose declared size runs into the central
        directory."""
        m = member('a.npy', A + b'\0' * 8)
        archive = bytearray(zip_bytes([m]))
        # Move the directory back over the member's last 8 bytes.
        start = archive.index(b'PK\x01\x02')
        directory = archive[start:-22]
        head = archive[:start - 8]
        eocd = struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, 1, 1, len(directory), len(head), 0)
        self.convert(bytes(head + directory + eocd), 1, 'overlap')

    def test_duplicate_names(self):
        """Two members called a.npy: numpy gives the last, an earlier
        serio kept both (and lookup gave the first)."""
        archive = zip_bytes([member('a.npy', A), member('b.npy', B), member('a.npy', C)])
        self.convert(archive, 1, 'more than one member is called “a.npy”: the archive is ambiguous')

    def test_empty_name(self):
        """A member whose name is empty: a GLib CRITICAL and exit 0,
        without OUT, before."""
        for method in (0, 8):
            with self.subTest(method=method):
                for members in ([member(b'', B, method)],
                                [member('a.npy', A), member(b'', B, method)]):
                    self.convert(zip_bytes(members), 1, 'a member of the archive has no name')

    def test_inflates_past_declared_size(self):
        """A deflated member whose stream holds more than its declared
        size, the size and CRC-32 being those of the declared bytes."""
        m = member('a.npy', A, 8)
        z = zlib.compressobj(9, zlib.DEFLATED, -15)
        m['compressed'] = z.compress(A + b'\0' * 64) + z.flush()
        m['csize'] = len(m['compressed'])
        self.convert(zip_bytes([m]), 1, 'a.npy: the .npz archive is damaged')

    def test_fifo(self):
        """A .npy from a FIFO streams; a .npz from one needs a file that
        can seek."""
        good = zip_bytes([member('a.npy', A)])
        for name, data, status in (('in.npy', A, 0), ('in.npz', good, 2)):
            with self.subTest(name=name):
                os.mkfifo(self.path(name))
                self.write('out.serio', OLD)

                def feed():
                    try:
                        with open(self.path(name), 'wb') as f:
                            f.write(data)
                    except BrokenPipeError:
                        pass
                writer = threading.Thread(target=feed)
                writer.start()
                try:
                    proc = self.run_tool('convert', name, 'out.serio', status=status)
                finally:
                    if status != 0:
                        # The tool may not have opened the FIFO for long.
                        try:
                            fd = os.open(self.path(name), os.O_RDONLY | os.O_NONBLOCK)
                            os.close(fd)
                        except OSError:
                            pass
                    writer.join(30)
                if status == 0:
                    self.assertEqual(self.read('out.serio'), sealed(serio_text([('in', [1.0, 2.0])])))
                else:
                    self.assertEqual(self.read('out.serio'), OLD)
                    self.assertIn('in.npz: a .npz file must be read from a file that can seek, '
                                  'not a pipe', proc.stderr.decode())
                os.unlink(self.path(name))

    def test_pipe(self):
        """A .npy through a pipe: /proc/self/fd/N of a pipe, named .npy by a
        symlink."""
        read_end, write_end = os.pipe()
        os.symlink('/proc/self/fd/%d' % read_end, self.path('piped.npy'))
        proc = subprocess.Popen([base.SERIO, 'convert', 'piped.npy', 'out.serio'],
                                cwd=self.dir, pass_fds=(read_end,), env=self.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.close(read_end)
        os.write(write_end, C)
        os.close(write_end)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(self.read('out.serio'), sealed(serio_text([('piped', [-3.0, 4.0, 5.0])])))
        os.unlink(self.path('piped.npy'))

    def test_shapes_numpy_cannot_load(self):
        """Shapes whose data is empty but that numpy refuses: a dimension
        of 2^63 or more, or sizes whose product overflows NumPy's intp;
        an earlier serio wrote `weird[0x18446744073709551615]`."""
        cases = [(0, 2 ** 64 - 1), (0, 2 ** 63), (2 ** 63, 0), (0, 2 ** 63 - 1),
                 (0, 2 ** 40, 2 ** 40), (2 ** 62, 0, 4)]
        for shape in cases:
            with self.subTest(shape=shape):
                proc = self.convert(npy_bytes('<f8', shape, b''), 1, 'NumPy', name='weird.npy')
                shape_text = '(%s)' % ', '.join(str(n) for n in shape)
                self.assertIn(shape_text, proc.stderr.decode())
                self.convert(zip_bytes([member('weird.npy', npy_bytes('<f8', shape, b''))]), 1,
                             'weird.npy: ')
        # The largest that NumPy allows still converts (a 0-length array).
        for shape, name in (((0, 2 ** 63 // 8 - 1), 'ok[0x1152921504606846975]'),
                            ((2 ** 63 - 1, 0), 'ok@uint8[9223372036854775807x0]')):
            with self.subTest(shape=shape):
                self.convert(npy_bytes('|u1' if shape[1] == 0 else '<f8', shape, b''), 0,
                             name='ok.npy')
                self.assertEqual(self.read('out.serio'), sealed(serio_text([(name, [])])))


if __name__ == '__main__':
    base.SERIO, base.VERSION = os.path.abspath(sys.argv[1]), sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
