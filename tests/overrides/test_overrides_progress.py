# SPDX-License-Identifier: LGPL-2.1-or-later
"""Progress of long loads and saves from Python: serio.load(path,
progress=...) and serio.save(..., progress=...) in the package, and
Serio.Bundle.new_from_file / save_to_file and their async variants on a
main loop in the override. Each callback must see a sequence that never
goes down, against one total, ending at it; async reports come before the
result.

Exits with 77 (a skip for meson) without NumPy.
"""

import os
import tempfile
import unittest

import sys

try:
    import numpy
except ImportError:
    print('NumPy is not installed: skipped')
    sys.exit(77)

import gi

gi.require_version('Serio', '1.0')
from gi.repository import Gio, GLib, Serio  # noqa: E402

import serio  # noqa: E402


def bits(array):
    return array.tobytes()

LONG = 3 * (1 << 20) + 5


def check_sequence(test, reports, total, at_least):
    test.assertGreaterEqual(len(reports), at_least, reports[:5])
    for i, (done, seen_total) in enumerate(reports):
        test.assertIsInstance(done, int)
        test.assertEqual(seen_total, total)
        if i > 0:
            test.assertGreater(done, reports[i - 1][0])
    test.assertEqual(reports[-1][0], total)


class PackageProgressTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, 'model.serio')
        rng = numpy.random.default_rng(5)
        self.state = {
            'w': rng.standard_normal(LONG),
            'b': rng.standard_normal(100).astype(numpy.float32),
            'step': 7,
        }

    def tearDown(self):
        self.dir.cleanup()

    def test_save_and_load(self):
        saving, loading = [], []
        serio.save(self.path, self.state, progress=lambda d, t: saving.append((d, t)))
        # The total is the bytes of the values in their own types: the
        # arrays, the int64 of step, and the uint8 of the tree record.
        reader = Serio.Reader.new_for_file(Gio.File.new_for_path(self.path), None)
        self.assertTrue(reader.next(None))
        self.assertEqual(reader.get_base_name(), 'serio.tree')
        tree_bytes = reader.get_n_values()
        reader.get_stream().close(None)
        total = self.state['w'].nbytes + self.state['b'].nbytes + 8 + tree_bytes
        check_sequence(self, saving, total, 3)

        back = serio.load(self.path, progress=lambda d, t: loading.append((d, t)))
        self.assertEqual(bits(back['w']), bits(self.state['w']))
        self.assertEqual(back['step'], 7)
        size = os.path.getsize(self.path)
        check_sequence(self, loading, size, size // (1 << 20))

    def test_without_progress(self):
        serio.save(self.path, self.state)
        self.assertEqual(serio.load(self.path)['step'], 7)

    def test_callback_error_propagates(self):
        serio.save(self.path, self.state)

        calls = []

        def fail(done, total):
            calls.append(done)
            raise RuntimeError('stop')
        # The load stops with the callback's exception, after the library
        # call that called it (PyGObject alone would print it and go on),
        # and the callback is not called again.
        with self.assertRaises(RuntimeError):
            serio.load(self.path, progress=fail)
        self.assertEqual(len(calls), 1)


class OverrideProgressTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, 'bundle.serio')
        self.values = numpy.random.default_rng(9).standard_normal(LONG)
        self.bundle = Serio.Bundle.new()
        self.bundle.append_numpy('w', self.values)

    def tearDown(self):
        self.dir.cleanup()

    def test_sync(self):
        saving, loading = [], []
        self.assertTrue(self.bundle.save_to_file(
            self.path, Serio.SaveFlags.NONE, None, lambda d, t: saving.append((d, t))))
        check_sequence(self, saving, self.values.nbytes, 3)
        loaded = Serio.Bundle.new_from_file(
            self.path, progress=lambda d, t: loading.append((int(d), int(t))))
        self.assertTrue(loaded.equal(self.bundle))
        check_sequence(self, loading, os.path.getsize(self.path), 2)

    def test_async_on_a_main_loop(self):
        loop = GLib.MainLoop()
        saving, loading = [], []
        result = {}

        def loaded(source, res, tag):
            result['loaded'] = Serio.Bundle.new_from_file_finish(res)
            result['tag'] = tag
            result['loading_at_result'] = len(loading)
            loop.quit()

        def saved(source, res):
            result['saved'] = source.save_to_file_finish(res)
            result['saving_at_result'] = len(saving)
            Serio.Bundle.new_from_file_async(
                self.path, GLib.PRIORITY_DEFAULT, None, loaded, 'tag',
                progress=lambda d, t: loading.append((int(d), int(t))))

        self.bundle.save_to_file_async(
            self.path, Serio.SaveFlags.PLAIN, GLib.PRIORITY_DEFAULT, None, saved,
            progress=lambda d, t: saving.append((int(d), int(t))))
        GLib.timeout_add_seconds(120, loop.quit)
        loop.run()
        context = GLib.MainContext.default()
        while context.iteration(False):
            pass

        self.assertTrue(result['saved'])
        self.assertTrue(result['loaded'].equal(self.bundle))
        self.assertEqual(result['tag'], 'tag')
        self.assertEqual(len(saving), result['saving_at_result'])
        self.assertEqual(len(loading), result['loading_at_result'])
        check_sequence(self, saving, self.values.nbytes, 3)
        check_sequence(self, loading, os.path.getsize(self.path), 2)
        with open(self.path, 'rb') as f:
            self.assertFalse(f.read(20).startswith(b'v1|serio.sealed'))


if __name__ == '__main__':
    unittest.main(verbosity=2)
