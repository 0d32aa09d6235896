# SPDX-License-Identifier: LGPL-2.1-or-later
"""The location of reading errors, from Python.

PyGObject raises a GLib.Error made from the error's domain, code and
message: the location that SERIO_ERROR errors carry as data does not reach
Python, and Serio.error_get_line() gives 0 there. Serio.error_locate()
gives it as plain values instead. If PyGObject starts to keep the data,
test_caught_error_has_no_data fails, and docs/errors.md must say so.
"""

import locale
import os
import tempfile
import unittest

import gi

gi.require_version('Serio', '1.0')
from gi.repository import GLib, Gio, Serio  # noqa: E402

BAD = b'v1|a|1|1\n\r\nv1|b|3|1,2,01\n'


class ErrorLocationTests(unittest.TestCase):

    def test_caught_error_has_no_data(self):
        with self.assertRaises(GLib.Error) as cm:
            Serio.Bundle.from_bytes(GLib.Bytes.new(BAD))
        error = cm.exception
        self.assertTrue(error.matches(Serio.error_quark(), Serio.Error.SYNTAX))
        self.assertEqual(Serio.error_get_line(error), 0)
        self.assertEqual(Serio.error_get_value_index(error), 0)
        self.assertIsNone(Serio.error_get_detail(error))

    def test_locate(self):
        failed, code, line, value_index = Serio.error_locate(GLib.Bytes.new(BAD))
        self.assertTrue(failed)
        self.assertEqual(code, Serio.Error.SYNTAX)
        self.assertEqual((line, value_index), (3, 3))

        failed, code, line, value_index = Serio.error_locate(
            GLib.Bytes.new(b'v1|a|0|\nv1|b|2|1\n'))
        self.assertTrue(failed)
        self.assertEqual(code, Serio.Error.LENGTH)
        self.assertEqual((line, value_index), (2, 0))

        failed, code, line, value_index = Serio.error_locate(
            GLib.Bytes.new(b'v1|a|1|1\nv1|b|1|1'))
        self.assertTrue(failed)
        self.assertEqual(code, Serio.Error.TRUNCATED)
        self.assertEqual((line, value_index), (2, 0))

    def test_locate_valid(self):
        self.assertEqual(Serio.error_locate(GLib.Bytes.new(b'v1|a|1|1\n'))[0], False)
        self.assertEqual(Serio.error_locate(GLib.Bytes.new(b''))[0], False)

    def test_from_file_names_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'model.serio')
            with open(path, 'wb') as f:
                f.write(BAD)
            file = Gio.File.new_for_path(path)
            with self.assertRaises(GLib.Error) as cm:
                Serio.Bundle.from_file(file)
            error = cm.exception
            self.assertTrue(error.matches(Serio.error_quark(), Serio.Error.SYNTAX))
            self.assertTrue(error.message.startswith(file.get_parse_name() + ': Line 3, '),
                            error.message)
            # The contents that failed locate the error.
            _, contents, _ = file.load_contents(None)
            self.assertEqual(Serio.error_locate(GLib.Bytes.new(contents))[2:], (3, 3))


if __name__ == '__main__':
    locale.setlocale(locale.LC_ALL, 'C')
    unittest.main(verbosity=2)
