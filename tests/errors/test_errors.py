# SPDX-License-Identifier: LGPL-2.1-or-later
"""The location of reading errors, from Python.

PyGObject raises a GLib.Error made from the error's domain, code and
message: the location that SERIO_ERROR errors carry as data does not reach
Python, and Serio.error_get_line() gives 0 there. The reader that failed
keeps it as plain values instead (Serio.Reader.get_error_line() and
get_error_value_index()). If PyGObject starts to keep the data,
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
            Serio.Bundle.new_from_bytes(GLib.Bytes.new(BAD))
        error = cm.exception
        self.assertTrue(error.matches(Serio.error_quark(), Serio.Error.SYNTAX))
        self.assertEqual(Serio.error_get_line(error), 0)
        self.assertEqual(Serio.error_get_value_index(error), 0)
        self.assertIsNone(Serio.error_get_detail(error))

    def locate(self, text):
        """The code of the error that reading text through a reader
        raises, and the line and value index the reader keeps."""
        reader = Serio.Reader.new(Gio.MemoryInputStream.new_from_bytes(GLib.Bytes.new(text)))
        self.assertEqual((reader.get_error_line(), reader.get_error_value_index()), (0, 0))
        with self.assertRaises(GLib.Error) as cm:
            Serio.Bundle.new_from_reader(reader, None)
        # PyGObject dropped the location from the error; the reader has it.
        self.assertEqual(Serio.error_get_line(cm.exception), 0)
        return cm.exception.code, reader.get_error_line(), reader.get_error_value_index()

    def test_locate(self):
        self.assertEqual(self.locate(BAD), (Serio.Error.SYNTAX, 3, 3))
        self.assertEqual(self.locate(b'v1|a|0|\nv1|b|2|1\n'), (Serio.Error.LENGTH, 2, 0))
        self.assertEqual(self.locate(b'v1|a|1|1\nv1|b|1|1'), (Serio.Error.TRUNCATED, 2, 0))
        # The reader keeps its failure: later calls give the same place.
        reader = Serio.Reader.new(Gio.MemoryInputStream.new_from_bytes(GLib.Bytes.new(BAD)))
        self.assertTrue(reader.next(None))
        with self.assertRaises(GLib.Error):
            while reader.next(None):
                reader.read_bytes(100, None)
        with self.assertRaises(GLib.Error):
            reader.next(None)
        self.assertEqual((reader.get_error_line(), reader.get_error_value_index()), (3, 3))

    def test_locate_valid(self):
        for text in (b'v1|a|1|1\n', b''):
            reader = Serio.Reader.new(Gio.MemoryInputStream.new_from_bytes(GLib.Bytes.new(text)))
            Serio.Bundle.new_from_reader(reader, None)
            self.assertTrue(reader.get_finished())
            self.assertEqual((reader.get_error_line(), reader.get_error_value_index()), (0, 0))

    def test_io_error_has_no_location(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'model.serio')
            with open(path, 'wb') as f:
                f.write(BAD)
            reader = Serio.Reader.new_for_file(Gio.File.new_for_path(path), None)
            reader.get_stream().close(None)
            with self.assertRaises(GLib.Error) as cm:
                reader.next(None)
            self.assertEqual(cm.exception.domain, GLib.quark_to_string(Gio.io_error_quark()))
            self.assertEqual((reader.get_error_line(), reader.get_error_value_index()), (0, 0))

    def test_from_file_names_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'model.serio')
            with open(path, 'wb') as f:
                f.write(BAD)
            file = Gio.File.new_for_path(path)
            with self.assertRaises(GLib.Error) as cm:
                Serio.Bundle.new_from_file(file)
            error = cm.exception
            self.assertTrue(error.matches(Serio.error_quark(), Serio.Error.SYNTAX))
            self.assertTrue(error.message.startswith(file.get_parse_name() + ': Line 3, '),
                            error.message)
            # A reader of the file locates the error.
            reader = Serio.Reader.new_for_file(file, None)
            with self.assertRaises(GLib.Error):
                Serio.Bundle.new_from_reader(reader, None)
            self.assertEqual((reader.get_error_line(), reader.get_error_value_index()), (3, 3))


if __name__ == '__main__':
    locale.setlocale(locale.LC_ALL, 'C')
    unittest.main(verbosity=2)
