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
from unittest import mock

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

    def errors_in_batches_and_alone(self, path):
        """The DataError (message and key) of serio.load(path), reading the
        records in batches and a record at a time, checked to be the
        same."""
        errors = []
        for read_records in (serio._io._native.read_records, None):
            with mock.patch.object(serio._io._native, 'read_records', read_records), \
                    self.assertRaises(serio.DataError) as caught:
                serio.load(path)
            errors.append((str(caught.exception), caught.exception.key))
        self.assertEqual(errors[0], errors[1], path)
        return errors

    def test_errors_in_a_batch_of_records_are_those_of_one_at_a_time(self):
        # serio.load reads the records of a tree in batches: each error is
        # still the first a record at a time meets, naming its key.
        path = os.path.join(self.tmp.name, 'tree.serio')
        serio.save(path, {'a': numpy.arange(3, dtype=numpy.int8), 'b': numpy.ones(2),
                          'c': numpy.zeros(2, dtype=numpy.float32)}, sealed=False)
        with open(path, encoding='utf-8') as f:
            text = f.read()
        self.assertIn('v1|b[2]|2|1,1\n', text)
        # a bad token in the second record's values
        self.assert_data_error(text.replace('v1|b[2]|2|1,1', 'v1|b[2]|2|1,x'),
                               Serio.Error.SYNTAX, 'b', 3, 2, 'x')
        # a value its type cannot hold
        self.assert_data_error(text.replace('v1|a@int8[3]|3|0,1,2', 'v1|a@int8[3]|3|0,1,200'),
                               Serio.Error.DOMAIN, 'a', 2, 3, '200')
        # a record the tree does not describe there, or cannot be there;
        # with bad values too (the library's errors come first): the same
        # error as a record at a time
        for bad in ('v1|z[2]|2|1,1', 'v1|b@bfloat16[2]|2|1,1', 'v1|z[2]|2|1,x',
                    'v1|b@bfloat16[2]|2|1,x'):
            path = self.write(text.replace('v1|b[2]|2|1,1', bad))
            errors = self.errors_in_batches_and_alone(path)
            tree_error = bad.endswith('1,1')
            self.assertEqual('serio.tree' in errors[0][0], tree_error, errors[0])
            if tree_error:
                self.assertEqual(errors[0][1], 'b')

    def test_a_shape_numpy_cannot_hold_in_a_batch_is_that_of_one_at_a_time(self):
        # A record of a batch whose shape NumPy cannot hold: the first,
        # one in the middle, with bad values of its own, or before a
        # record of bad values. A batch gave an IndexError here.
        path = os.path.join(self.tmp.name, 'tree.serio')
        serio.save(path, {'a': numpy.zeros(3, dtype=numpy.float32),
                          'b': numpy.zeros((0, 5), dtype=numpy.float32),
                          'c': numpy.ones(2, dtype=numpy.float32)}, sealed=False)
        with open(path, encoding='utf-8') as f:
            text = f.read()
        huge = text.replace('b@float32[0x5]|0|', 'b@float32[0x9223372036854775808]|0|')
        self.assertNotEqual(huge, text)
        # what: the text, words of the error, and its key (the library's
        # error in a record after the shape comes first, found by reading
        # the rest of the text, which names no key)
        cases = {
            'a': (text.replace('a@float32[3]|3|0,0,0', 'a@float32[0x9223372036854775808]|0|'),
                  'NumPy', 'a'),
            'b': (huge, 'NumPy', 'b'),
            'b-values': (huge.replace('[0x9223372036854775808]|0|',
                                      '[0x9223372036854775808]|0|x'), '“x”', 'b'),
            'c-values': (huge.replace('|2|1,1', '|2|1,x'), '“x”', None),
        }
        for what, (bad, words, key) in cases.items():
            path = self.write(bad)
            errors = self.errors_in_batches_and_alone(path)
            self.assertIn(words, errors[0][0], what)
            self.assertEqual(errors[0][1], key, what)

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
