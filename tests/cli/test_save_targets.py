# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the serio tool's saves replace, and what it says of other formats.

Usage: test_save_targets.py SERIO VERSION [unittest arguments]

SaveTargetTests: `serio convert` and `serio seal` through a symbolic link
to /dev/null (made in the test's directory: /dev is not touched) or to a
FIFO, and to a FIFO itself, exit with status 2 naming the target, and
leave the link and what it points to as they were; over a regular file
with a user.* extended attribute, they keep it.

SniffTests: `serio check` of files in other formats (a NumPy .npz and
.npy, a PyTorch .pt, another zip, safetensors, GGUF, HDF5, gzip, a
pickle, an ELF program) exits 1 saying what the file looks like, not that
it is damaged; of an unknown one, that it is not a serio file.
"""

import errno
import os
import stat
import struct
import sys
import unittest
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_serio_tool as base  # noqa: E402
from test_serio_tool import ToolTestCase, npy_bytes  # noqa: E402

VALUES = [0.5, -0.0, 1e300]


def npy_of_values():
    return npy_bytes('<f8', (len(VALUES),), struct.pack('<%dd' % len(VALUES), *VALUES))


class SaveTargetTests(ToolTestCase):

    def setUp(self):
        super().setUp()
        self.write('in.npy', npy_of_values())
        self.write('in.serio', b'v1|w|2|1,2\n')

    def assert_refused(self, args, target, what):
        proc = self.run_tool(*args, status=2)
        message = proc.stderr.decode()
        self.assertIn('Cannot save to “%s”: It is %s' % (os.path.join(self.dir, target), what),
                      message)
        self.assertEqual(proc.stdout, b'')

    def assert_link_to(self, name, points_to):
        path = self.path(name)
        self.assertTrue(stat.S_ISLNK(os.lstat(path).st_mode))
        self.assertEqual(os.readlink(path), os.fsencode(points_to))

    def assert_dir_holds(self, *names):
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(names))

    def test_link_to_dev_null(self):
        os.symlink('/dev/null', self.path('out.serio'))
        os.symlink('/dev/null', self.path('out.npy'))
        link_to_device = 'a symbolic link to a character device, which a save does not replace'
        self.assert_refused(['convert', 'in.npy', 'out.serio'], 'out.serio', link_to_device)
        self.assert_refused(['convert', 'in.serio', 'out.npy'], 'out.npy', link_to_device)
        self.assert_refused(['seal', 'out.serio'], 'out.serio', link_to_device)
        self.assert_link_to('out.serio', '/dev/null')
        self.assert_link_to('out.npy', '/dev/null')
        self.assertTrue(stat.S_ISCHR(os.stat('/dev/null').st_mode))
        self.assert_dir_holds('in.npy', 'in.serio', 'out.serio', 'out.npy')

    def test_fifo(self):
        os.mkfifo(self.path('fifo'), 0o600)
        os.symlink('fifo', self.path('out.serio'))
        self.assert_refused(['convert', 'in.npy', 'fifo'], 'fifo', 'a FIFO, not a regular file')
        self.assert_refused(['convert', 'in.npy', 'out.serio'], 'out.serio',
                            'a symbolic link to a FIFO, which a save does not replace')
        self.assertTrue(stat.S_ISFIFO(os.lstat(self.path('fifo')).st_mode))
        self.assert_link_to('out.serio', 'fifo')
        self.assert_dir_holds('in.npy', 'in.serio', 'fifo', 'out.serio')

    def test_xattrs_kept(self):
        for out, args in [('out.serio', ['convert', 'in.npy', 'out.serio']),
                          ('out.npy', ['convert', 'in.serio', 'out.npy']),
                          ('out.serio', ['seal', 'out.serio'])]:
            if out == 'out.serio' and args[0] == 'seal':
                self.write(out, b'v1|w|2|1,2\n')
            else:
                self.write(out, b'old contents\n')
            try:
                os.setxattr(self.path(out), 'user.tag', b'kept')
            except OSError as e:
                if e.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
                    self.skipTest('no user extended attributes in %s' % self.dir)
                raise
            old = self.read(out)
            self.run_tool(*args, status=0)
            self.assertNotEqual(self.read(out), old)
            self.assertEqual(os.getxattr(self.path(out), 'user.tag'), b'kept', args)


def zip_bytes(members):
    path = os.path.join(os.environ.get('TMPDIR', '/tmp'), 'serio-sniff-%d.zip' % os.getpid())
    try:
        with zipfile.ZipFile(path, 'w') as z:
            for name, data in members:
                z.writestr(name, data)
        with open(path, 'rb') as f:
            return f.read()
    finally:
        os.unlink(path)


class SniffTests(ToolTestCase):

    def check_says(self, name, data, what):
        self.write(name, data)
        proc = self.run_tool('check', name, status=1)
        message = proc.stderr.decode()
        self.assertIn('%s:1: not a serio file' % name, message)
        self.assertIn(what, message)
        self.assertNotIn('cut short', message)

    def test_formats(self):
        cases = [
            ('x.npz', zip_bytes([('a.npy', npy_of_values())]),
             'it looks like a NumPy .npz archive; `serio convert` reads it'),
            ('other.zip', zip_bytes([('notes.txt', b'hello\n')]),
             'it looks like a zip archive (NumPy .npz or PyTorch .pt); `serio convert` reads a NumPy .npz'),
            ('net.pt', zip_bytes([('archive/data.pkl', b'\x80\x02}q\x00.'),
                                  ('archive/data/0', b'\0' * 16)]),
             'it looks like a PyTorch .pt file (a zip archive)'),
            ('x.npy', npy_of_values(),
             'it looks like a NumPy .npy file; `serio convert` reads it'),
            ('m.safetensors', struct.pack('<Q', 2) + b'{}',
             'it looks like a safetensors file'),
            ('m.gguf', b'GGUF\x03\x00\x00\x00' + b'\0' * 16, 'it looks like a GGUF file'),
            ('m.h5', b'\x89HDF\r\n\x1a\n' + b'\0' * 16, 'it looks like an HDF5 file'),
            ('m.serio.gz', b'\x1f\x8b\x08\x00' + b'\0' * 16, 'it looks like gzip-compressed data'),
            ('m.pkl', b'\x80\x04\x95' + b'\0' * 16, 'it looks like a Python pickle'),
            ('ls', b'\x7fELF\x02\x01\x01' + b'\0' * 16, 'it looks like an ELF program or library'),
        ]
        for name, data, what in cases:
            with self.subTest(name=name):
                self.check_says(name, data, what)

    def test_unknown(self):
        self.write('notes.txt', b'hello, world\n')
        proc = self.run_tool('check', 'notes.txt', status=1)
        self.assertIn('notes.txt:1: not a serio file', proc.stderr.decode())
        self.assertNotIn('looks like', proc.stderr.decode())


if __name__ == '__main__':
    base.SERIO, base.VERSION = os.path.abspath(sys.argv[1]), sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
