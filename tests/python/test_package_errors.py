# SPDX-License-Identifier: LGPL-2.1-or-later
"""The exceptions of the serio package: a file error is both a GLib.Error
and the OSError subclass Python code catches; a bad file is a DataError
(a ValueError) whose str() is its message, with its line and value index
as attributes; every error of a load names the file and the key.

Exits 77 (skip) without NumPy.
"""

import errno
import os
import pickle
import sys
import tempfile
import unittest

try:
    import numpy  # noqa: F401
except ImportError:
    print('NumPy is not installed (Debian: python3-numpy)', file=sys.stderr)
    sys.exit(77)

import gi

gi.require_version('Serio', '1.0')
from gi.repository import Gio, GLib, Serio  # noqa: E402

import serio  # noqa: E402
from serio import _errors  # noqa: E402


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, text, name='bad.serio'):
        path = os.path.join(self.tmp.name, name)
        with open(path, 'w', encoding='utf-8', newline='') as f:
            f.write(text)
        return path


class TestFileErrors(Base):
    def assert_file_error(self, call, path, builtin, cls, code, number):
        with self.assertRaises(builtin) as caught:
            call()
        error = caught.exception
        self.assertIsInstance(error, cls)
        self.assertIsInstance(error, OSError)
        self.assertIsInstance(error, GLib.Error)
        self.assertIsInstance(error, serio.Error)
        self.assertTrue(error.matches(Gio.io_error_quark(), code))
        self.assertEqual(error.errno, number)
        self.assertEqual(error.filename, path)
        self.assertEqual(error.path, path)
        self.assertIn(path, str(error))
        self.assertEqual(str(error), error.message)
        self.assertNotIn('g-io-error-quark', str(error))

    def test_a_missing_file(self):
        path = os.path.join(self.tmp.name, 'missing.serio')
        self.assert_file_error(lambda: serio.load(path), path, FileNotFoundError,
                               serio.NotFoundError, Gio.IOErrorEnum.NOT_FOUND, errno.ENOENT)
        inside = os.path.join(self.tmp.name, 'no-such-dir', 'x.serio')
        self.assert_file_error(lambda: serio.save(inside, {'a': 1}), inside,
                               FileNotFoundError, serio.NotFoundError,
                               Gio.IOErrorEnum.NOT_FOUND, errno.ENOENT)

    def test_a_directory(self):
        self.assert_file_error(lambda: serio.load(self.tmp.name), self.tmp.name,
                               IsADirectoryError, serio.IsDirectoryError,
                               Gio.IOErrorEnum.IS_DIRECTORY, errno.EISDIR)

    def test_permission_and_not_a_directory_map_to_their_oserror(self):
        # As root, chmod cannot deny a read: the mapping is tested on the
        # GLib.Error that Gio raises for EACCES.
        for code, builtin, number in (
                (Gio.IOErrorEnum.PERMISSION_DENIED, PermissionError, errno.EACCES),
                (Gio.IOErrorEnum.NOT_DIRECTORY, NotADirectoryError, errno.ENOTDIR),
                (Gio.IOErrorEnum.NO_SPACE, OSError, errno.ENOSPC)):
            raw = GLib.Error.new_literal(Gio.io_error_quark(), 'Error opening file f: x',
                                         int(code))
            error = _errors.from_glib(raw, path='f')
            self.assertIsInstance(error, builtin)
            self.assertIsInstance(error, serio.FileError)
            self.assertEqual(error.errno, number)
            self.assertEqual(str(error), 'Error opening file f: x')
        if os.geteuid() != 0:
            path = self.write('v1|a|0|\n')
            os.chmod(path, 0)
            self.assert_file_error(lambda: serio.load(path), path, PermissionError,
                                   serio.PermissionDeniedError,
                                   Gio.IOErrorEnum.PERMISSION_DENIED, errno.EACCES)

    def test_errors_pickle(self):
        path = os.path.join(self.tmp.name, 'missing.serio')
        with self.assertRaises(serio.NotFoundError) as caught:
            serio.load(path)
        error = caught.exception
        copy = pickle.loads(pickle.dumps(error))
        self.assertIsInstance(copy, FileNotFoundError)
        self.assertEqual((copy.message, copy.code, copy.errno, copy.filename),
                         (error.message, error.code, error.errno, error.filename))


class TestDataErrors(Base):
    def assert_data_error(self, text, code, key, line, value_index, *words):
        path = self.write(text)
        with self.assertRaises(ValueError) as caught:
            serio.load(path)
        error = caught.exception
        self.assertIsInstance(error, serio.DataError)
        self.assertIsInstance(error, GLib.Error)
        self.assertTrue(error.matches(Serio.error_quark(), int(code)), error)
        self.assertEqual(str(error), error.message)
        self.assertNotIn('serio-error-quark', str(error))
        self.assertTrue(str(error).startswith(path + ': '), str(error))
        self.assertEqual(error.key, key)
        if key is not None:
            self.assertTrue(str(error).startswith('%s: %s: ' % (path, key)), str(error))
        self.assertEqual(error.line, line)
        self.assertEqual(error.value_index, value_index)
        self.assertTrue(str(error).endswith(error.detail), (str(error), error.detail))
        for word in words:
            self.assertIn(word, str(error))
        return error

    def test_the_location_is_data(self):
        self.assert_data_error('v1|x|2|1,01\n', Serio.Error.SYNTAX, 'x', 1, 2, '01')
        self.assert_data_error('v1|a|1|1\nv1|b[2]|2|1,1p1024\n', Serio.Error.DOMAIN,
                               'b', 2, 2, '1p1024')
        self.assert_data_error('v1|a|1|1\nv1|b|1|', Serio.Error.TRUNCATED, 'b', 2, 0)
        self.assert_data_error('v1|a|1|1\nv2|b|0|\n', Serio.Error.VERSION, None, 2, 0)

    def test_a_bad_record_header_in_a_tree_names_the_key_it_should_be(self):
        path = os.path.join(self.tmp.name, 'tree.serio')
        serio.save(path, {'model': {'w': numpy.ones(2)}, 'epoch': 3}, sealed=False)
        with open(path, encoding='utf-8') as f:
            text = f.read()
        self.assert_data_error(text.replace('v1|epoch@int64[]|1|3', 'v2|epoch@int64[]|1|3'),
                               Serio.Error.VERSION, 'epoch', 3, 0)

    def test_a_shape_numpy_cannot_hold_names_the_key(self):
        for name in ('weird[0x18446744073709551615]', 'w[18446744073709551615x0]'):
            error = self.assert_data_error('v1|%s|0|\n' % name, Serio.Error.SYNTAX,
                                           name.partition('[')[0], None, None, name)
            self.assertIn('NumPy', str(error))

    def test_a_seal_that_does_not_match(self):
        path = os.path.join(self.tmp.name, 'sealed.serio')
        serio.save(path, {'w': numpy.arange(3.0)})
        with open(path, encoding='ascii') as f:
            text = f.read()
        # The seal, the fourth record, is where the text and its seal part.
        self.assert_data_error(text.replace('|0,1,2', '|0,1,3'), Serio.Error.INTEGRITY,
                               None, 4, 0)


if __name__ == '__main__':
    unittest.main()
