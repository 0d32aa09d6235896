# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_files.py: crash-safe saves, cancellation and file errors from Python
#
# Copyright 2026 The libserio authors
#
# The saves that must be interrupted run in child processes: this script
# run again with a helper mode as its first argument (see the end).

import os
import random
import resource
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import gi
gi.require_version('Serio', '1.0')
from gi.repository import Gio, GLib, Serio  # noqa: E402

FILE_NAME = 'model.serio'
N_KILLS = 50
# More than the old bundle, less than the new one.
FSIZE_LIMIT = 64 * 1024
SCALE = 10 if 'SERIO_TEST_SLOW_TOOL' in os.environ else 1
# serio-save-preload.so (--preload PATH), which logs the calls that put a
# saved file in place: None where it was not built.
PRELOAD = None


def make_bundle(which, scale):
    """Bundle 0 or 1: two distinct bundles of random bit patterns, a few MB
    of text each at scale 1, the same in every process."""
    rng = random.Random(0x5e51 if which == 0 else 0xb0b)
    n_arrays, n_values = (2, 100000 // scale) if which == 0 else (3, 70000 // scale)
    bundle = Serio.Bundle.new()
    for a in range(n_arrays):
        bits = [rng.getrandbits(64) for _ in range(n_values)]
        data = struct.pack('=%dQ' % n_values, *bits)
        bundle.append_bytes('layer%d.weight' % a, GLib.Bytes.new(data))
    return bundle


def tmpfile_supported(directory):
    """Whether the file system of `directory` takes O_TMPFILE files, so
    that the library saves through unnamed temporary files there."""
    if not hasattr(os, 'O_TMPFILE') or not os.path.isdir('/proc/self/fd'):
        return False
    try:
        os.close(os.open(directory, os.O_TMPFILE | os.O_WRONLY, 0o600))
    except OSError:
        return False
    return True


def text_of(bundle):
    return bundle.to_bytes(Serio.SaveFlags.NONE).get_data()


def helper(*args):
    return [sys.executable, '-B', os.path.abspath(__file__)] + [str(a) for a in args]


def temp_file_killed_in_place(log_path):
    """The temporary file that a process killed after the calls that the
    preload logged to log_path may have left: when the last of them is the
    link of a save's file under a temporary name ("link INODE NAME") or the
    rename of it over the target ("rename INODE NAME TARGET"), NAME (the
    call may or may not have been made); None after any other call, since a
    save leaves a temporary file only between those two (as in
    test-files.c)."""
    with open(log_path) as log:
        lines = [line for line in log.read().split('\n') if line]
    fields = lines[-1].split(' ') if lines else []
    if len(fields) >= 3 and fields[0] in ('link', 'rename') \
            and fields[2].startswith('.serio-save-'):
        return fields[2]
    return None


def save_loop(path, first, scale):
    """Saves bundle `first`, then the other one, and so on until killed,
    saying on stdout which save starts and ends."""
    bundles = [make_bundle(0, scale), make_bundle(1, scale)]
    target = Gio.File.new_for_path(path)
    print('ready', flush=True)
    i = 0
    while True:
        which = (first + i) % 2
        print('save', which, flush=True)
        bundles[which].save_to_file(target, Serio.SaveFlags.NONE, None)
        print('done', which, flush=True)
        i += 1


def save_limited(path, which, scale, limit, mode):
    """Saves a bundle with the file size limited to `limit` bytes and SIGXFSZ
    ignored (writes fail with EFBIG) or left to kill the process."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN if mode == 'ignore' else signal.SIG_DFL)
    try:
        make_bundle(which, scale).save_to_file(Gio.File.new_for_path(path), Serio.SaveFlags.NONE, None)
        print('saved')
    except GLib.Error as error:
        print(error.domain, error.code, error.message)


class TempDirTestCase(unittest.TestCase):

    def setUp(self):
        self.dir = GLib.dir_make_tmp('serio-files-XXXXXX')
        self.path = os.path.join(self.dir, FILE_NAME)
        self.file = Gio.File.new_for_path(self.path)

    def tearDown(self):
        for name in os.listdir(self.dir):
            path = os.path.join(self.dir, name)
            if os.path.isdir(path):
                os.rmdir(path)
            else:
                os.unlink(path)
        os.rmdir(self.dir)

    def read(self):
        with open(self.path, 'rb') as f:
            return f.read()

    def temp_files(self):
        return [n for n in os.listdir(self.dir)
                if n.startswith(('.goutputstream-', '.serio-save-'))]

    def has_temp_file_open(self):
        """Whether this process has a file open in the directory other than
        the directory itself and the target: the save's temporary file,
        named or not (an O_TMPFILE file shows as "DIR/#INODE (deleted)")."""
        for fd in os.listdir('/proc/self/fd'):
            try:
                points_to = os.readlink('/proc/self/fd/' + fd)
            except OSError:
                continue
            if points_to.startswith(self.dir + '/') and points_to != self.path:
                return True
        return False

    def assertFileIs(self, expected):
        self.assertEqual(self.read(), expected)
        self.assertEqual(sorted(os.listdir(self.dir)), [FILE_NAME])

    def assertGError(self, error, domain, code):
        self.assertTrue(error.matches(domain, code),
                        '%s %d %s' % (error.domain, error.code, error.message))


class KillTest(TempDirTestCase):

    def test_repeated_saves(self):
        """A process killed with SIGKILL at random moments while it saves two
        large bundles in turn leaves the file holding exactly the old or the
        new bundle, every time."""
        bundles = [make_bundle(0, SCALE), make_bundle(1, SCALE)]
        texts = [text_of(b) for b in bundles]
        bundles[0].save_to_file(self.file, Serio.SaveFlags.NONE, None)
        start = time.monotonic()
        bundles[0].save_to_file(self.file, Serio.SaveFlags.NONE, None)
        save_seconds = max(time.monotonic() - start, 0.001)

        current = 0
        outcomes = {'old': 0, 'new': 0, 'between': 0, 'before': 0}
        env = None
        allowed = set()
        if PRELOAD is not None:
            # The child's calls that put a save in place, logged (outside
            # the directory of the saves).
            fd, log_path = tempfile.mkstemp(prefix='serio-kill-log-')
            os.close(fd)
            self.addCleanup(os.unlink, log_path)
            preloaded = os.environ.get('LD_PRELOAD')
            env = dict(os.environ, SERIO_PRELOAD_LOG=log_path,
                       LD_PRELOAD=preloaded + ':' + PRELOAD if preloaded else PRELOAD)
        for kill in range(N_KILLS):
            if env is not None:
                open(log_path, 'w').close()
            with subprocess.Popen(helper('--save-loop', self.path, 1 - current, SCALE),
                                  stdout=subprocess.PIPE, env=env) as child:
                self.assertEqual(child.stdout.readline(), b'ready\n')
                time.sleep(random.uniform(0, 3 * save_seconds))
                child.kill()
                self.assertEqual(child.wait(), -signal.SIGKILL)
                said = child.stdout.read().decode()
            if env is not None:
                name = temp_file_killed_in_place(log_path)
                if name is not None:
                    allowed.add(name)
            # A line the kill cut short says nothing yet; every whole line
            # must be a "save N" or "done N" report.
            lines = said.splitlines()
            if said and not said.endswith('\n'):
                lines.pop()
            for line in lines:
                self.assertRegex(line, r'^(save|done) [01]$', 'kill %d: the child said %r' % (kill, said))

            contents = self.read()
            self.assertIn(contents, texts,
                          'kill %d (after %r): the file holds neither bundle' % (kill, lines[-1:]))
            which = texts.index(contents)
            self.assertTrue(Serio.Bundle.new_from_file(self.file, None).equal(bundles[which]))

            if not lines:
                self.assertEqual(which, current)
                outcomes['before'] += 1
            else:
                state, saving = lines[-1].split()
                if state == 'save':
                    outcomes['new' if which == int(saving) else 'old'] += 1
                else:
                    self.assertEqual((state, which), ('done', int(saving)))
                    outcomes['between'] += 1
            current = which

        print('%d kills during saves of %d and %d bytes (one save took %.1f ms): '
              '%d in a save ended old, %d new; %d between saves, %d before the '
              'first; %d between a link and the end of its rename (%s); '
              '%d temporary files left behind'
              % (N_KILLS, len(texts[0]), len(texts[1]), save_seconds * 1000,
                 outcomes['old'], outcomes['new'], outcomes['between'],
                 outcomes['before'], len(allowed),
                 'logged' if env is not None else 'not logged', len(self.temp_files())))
        self.assertGreaterEqual(outcomes['old'] + outcomes['new'], 1)
        # With unnamed temporary files, only a kill between the link under a
        # temporary name and the rename over the target (two system calls,
        # a few microseconds of a save of many milliseconds) leaves one, and
        # it is then complete. Where the child's calls are logged, each
        # leftover must be the file of a save whose last call logged was its
        # link or its rename (a loaded machine stretches that window, which
        # the log sees; a step added between the two calls would leave
        # files it does not account for); without the log, the count is
        # bounded loosely. The contents are checked exactly either way, as
        # in test-files.c.
        if tmpfile_supported(self.dir):
            left = self.temp_files()
            if env is None:
                self.assertLessEqual(len(left), N_KILLS // 10)
            for name in left:
                if env is not None:
                    self.assertIn(name, allowed, '%s was left behind by a kill that the log '
                                  'does not place between its link and its rename' % name)
                with open(os.path.join(self.dir, name), 'rb') as f:
                    self.assertIn(f.read(), texts, '%s is not a whole text' % name)


class NoSpaceTest(TempDirTestCase):

    def run_limited(self):
        out = subprocess.run(helper('--save-limited', self.path, 1, SCALE, FSIZE_LIMIT, 'ignore'),
                             stdout=subprocess.PIPE, check=True).stdout.decode()
        self.assertTrue(out.startswith('g-io-error-quark '), out)

    def test_replace(self):
        """A save that runs out of file size part-way fails with a GError and
        leaves the old file byte for byte, and no temporary file."""
        make_bundle(0, 100 * SCALE).save_to_file(self.file, Serio.SaveFlags.NONE, None)
        old = self.read()
        self.assertLess(len(old), FSIZE_LIMIT)
        self.run_limited()
        self.assertFileIs(old)

    def test_new_path(self):
        """A failed save to a new path leaves no file behind."""
        self.run_limited()
        self.assertEqual(os.listdir(self.dir), [])


class CancelTest(TempDirTestCase):

    def test_before(self):
        """A save or a load with a cancelled GCancellable fails with
        G_IO_ERROR_CANCELLED and changes nothing."""
        make_bundle(0, 10 * SCALE).save_to_file(self.file, Serio.SaveFlags.NONE, None)
        old = self.read()
        cancellable = Gio.Cancellable()
        cancellable.cancel()

        with self.assertRaises(GLib.Error) as caught:
            make_bundle(1, 10 * SCALE).save_to_file(self.file, Serio.SaveFlags.NONE, cancellable)
        self.assertGError(caught.exception, Gio.io_error_quark(), Gio.IOErrorEnum.CANCELLED)
        self.assertFileIs(old)

        with self.assertRaises(GLib.Error) as caught:
            Serio.Bundle.new_from_file(self.file, cancellable)
        self.assertGError(caught.exception, Gio.io_error_quark(), Gio.IOErrorEnum.CANCELLED)

    def test_mid_save(self):
        """A save cancelled from another thread while its temporary file is
        being written fails with G_IO_ERROR_CANCELLED and leaves the old file
        byte for byte, and no temporary file."""
        old_bundle = make_bundle(0, 10 * SCALE)
        new_bundle = make_bundle(1, SCALE)
        old_bundle.save_to_file(self.file, Serio.SaveFlags.NONE, None)
        old = self.read()
        cancelled = completed = 0

        # At least 5 saves, and more (up to 50) until one is cancelled: on a
        # loaded machine the canceller may miss the few milliseconds of the
        # write and the sync.
        for attempt in range(50):
            if attempt >= 5 and cancelled >= 1:
                break
            cancellable = Gio.Cancellable()
            returned = threading.Event()

            def cancel_on_temp_file():
                while not returned.is_set():
                    if self.has_temp_file_open():
                        cancellable.cancel()
                        return
                    time.sleep(0.0001)

            canceller = threading.Thread(target=cancel_on_temp_file)
            canceller.start()
            try:
                new_bundle.save_to_file(self.file, Serio.SaveFlags.NONE, cancellable)
            except GLib.Error as error:
                self.assertGError(error, Gio.io_error_quark(), Gio.IOErrorEnum.CANCELLED)
                self.assertFileIs(old)
                cancelled += 1
            else:
                # The cancellation came after the rename.
                self.assertFileIs(text_of(new_bundle))
                old_bundle.save_to_file(self.file, Serio.SaveFlags.NONE, None)
                completed += 1
            finally:
                returned.set()
                canceller.join()

        print('saves cancelled mid-way: %d cancelled, %d completed first' % (cancelled, completed))
        self.assertGreaterEqual(cancelled, 1)


class AsyncTest(TempDirTestCase):

    def test_save_then_load(self):
        """save_to_file_async() then from_file_async() from a main loop give
        back an equal bundle."""
        bundle = make_bundle(1, SCALE)
        loop = GLib.MainLoop()
        result = {}

        def loaded(source, res):
            try:
                result['loaded'] = Serio.Bundle.new_from_file_finish(res)
            except GLib.Error as error:
                result['error'] = error
            loop.quit()

        def saved(source, res):
            try:
                source.save_to_file_finish(res)
            except GLib.Error as error:
                result['error'] = error
                loop.quit()
                return
            Serio.Bundle.new_from_file_async(self.file, GLib.PRIORITY_DEFAULT, None, None, None, loaded)

        bundle.save_to_file_async(self.file, Serio.SaveFlags.NONE, GLib.PRIORITY_DEFAULT, None, None, None, saved)
        loop.run()

        self.assertNotIn('error', result)
        self.assertTrue(bundle.equal(result['loaded']))

    def test_save_takes_snapshot(self):
        """Issue 12: save_to_file_async() saves the bundle as it is at the
        call; an array appended at once is not in the file."""
        bundle = make_bundle(1, SCALE)
        expected = text_of(bundle)
        loop = GLib.MainLoop()
        result = {}

        def saved(source, res):
            try:
                result['saved'] = source.save_to_file_finish(res)
            except GLib.Error as error:
                result['error'] = error
            loop.quit()

        bundle.save_to_file_async(self.file, Serio.SaveFlags.NONE, GLib.PRIORITY_DEFAULT, None, None, None, saved)
        bundle.append('late', [1.0, 2.0, 3.0])
        loop.run()

        self.assertNotIn('error', result)
        self.assertTrue(result['saved'])
        self.assertFileIs(expected)
        self.assertEqual(bundle.get_n_arrays(), 4)

    def test_load_missing(self):
        """The asynchronous load reports a missing file."""
        loop = GLib.MainLoop()
        result = {}

        def loaded(source, res):
            try:
                Serio.Bundle.new_from_file_finish(res)
            except GLib.Error as error:
                result['error'] = error
            loop.quit()

        missing = Gio.File.new_for_path(os.path.join(self.dir, 'missing.serio'))
        Serio.Bundle.new_from_file_async(missing, GLib.PRIORITY_DEFAULT, None, None, None, loaded)
        loop.run()
        self.assertGError(result['error'], Gio.io_error_quark(), Gio.IOErrorEnum.NOT_FOUND)


class PermissionTest(TempDirTestCase):

    def test_mode_kept(self):
        """Saving over a file keeps its mode: 0600 stays 0600."""
        bundle = make_bundle(0, 1000)
        bundle.save_to_file(self.file, Serio.SaveFlags.NONE, None)
        for mode in (0o600, 0o640, 0o755):
            os.chmod(self.path, mode)
            bundle.save_to_file(self.file, Serio.SaveFlags.NONE, None)
            self.assertEqual(os.stat(self.path).st_mode & 0o7777, mode)
        self.assertFileIs(text_of(bundle))

    def test_error_names_target(self):
        """A save into a missing directory names the target, not a
        temporary file."""
        target = os.path.join(self.dir, 'missing', FILE_NAME)
        with self.assertRaises(GLib.Error) as caught:
            make_bundle(0, 1000).save_to_file(Gio.File.new_for_path(target), Serio.SaveFlags.NONE, None)
        self.assertGError(caught.exception, Gio.io_error_quark(), Gio.IOErrorEnum.NOT_FOUND)
        self.assertIn('“%s”' % target, caught.exception.message)
        self.assertNotIn('.serio-save-', caught.exception.message)


class ErrorTest(TempDirTestCase):

    def test_missing(self):
        missing = Gio.File.new_for_path(os.path.join(self.dir, 'missing.serio'))
        with self.assertRaises(GLib.Error) as caught:
            Serio.Bundle.new_from_file(missing, None)
        self.assertGError(caught.exception, Gio.io_error_quark(), Gio.IOErrorEnum.NOT_FOUND)

    def test_directory(self):
        with self.assertRaises(GLib.Error) as caught:
            Serio.Bundle.new_from_file(Gio.File.new_for_path(self.dir), None)
        self.assertGError(caught.exception, Gio.io_error_quark(), Gio.IOErrorEnum.IS_DIRECTORY)

    def test_parse_errors(self):
        """Bad contents give the SERIO_ERROR of the text."""
        cases = [
            (b'v2|x|0|\n', Serio.Error.VERSION),
            (b'v1|x|1|01\n', Serio.Error.SYNTAX),
            (b'v1|x|2|1\n', Serio.Error.LENGTH),
            (b'v1|x|1|1p1024\n', Serio.Error.DOMAIN),
            (b'v1|x|1|1', Serio.Error.TRUNCATED),
        ]
        for contents, code in cases:
            with self.subTest(contents=contents):
                with open(self.path, 'wb') as f:
                    f.write(contents)
                with self.assertRaises(GLib.Error) as caught:
                    Serio.Bundle.new_from_file(self.file, None)
                self.assertEqual((caught.exception.domain, caught.exception.code),
                                 ('serio-error-quark', int(code)))


if __name__ == '__main__':
    if sys.argv[1:2] == ['--save-loop']:
        save_loop(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1:2] == ['--save-limited']:
        save_limited(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
    else:
        if sys.argv[1:2] == ['--preload']:
            PRELOAD = sys.argv[2]
            del sys.argv[1:3]
        unittest.main(verbosity=2)
