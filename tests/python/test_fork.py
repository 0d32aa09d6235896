# SPDX-License-Identifier: LGPL-2.1-or-later
"""libserio's worker threads in children of fork() from Python.

After a parallel to_bytes and from_bytes in this process, processes forked
from it (os.fork, and a multiprocessing pool with the 'fork' start method,
Python's default on Linux and the way torch's DataLoader workers start)
save and load with threads and give the same bits. Each wait is bounded:
a child that hangs in its first parallel call, as one did while libserio
took its threads from GLib's shared pool, fails the test instead of
hanging it.
"""

import multiprocessing
import os
import random
import shutil
import signal
import struct
import sys
import tempfile
import time
import unittest

import gi

gi.require_version('Serio', '1.0')
from gi.repository import Gio, Serio  # noqa: E402

# Enough values for the parallel paths of to_bytes (2 blocks of 64 Ki
# values) and from_bytes (512 KiB of a field).
N_VALUES = 300000
DEADLINE_S = 120


def make_values(seed, n=N_VALUES):
    rng = random.Random(seed)
    return [rng.uniform(-1.0, 1.0) * 2.0 ** rng.randint(-300, 300) for _ in range(n)]


def bits(values):
    return struct.pack('=%dd' % len(values), *values)


def make_bundle(seed):
    bundle = Serio.Bundle.new()
    bundle.append('a', make_values(seed))
    bundle.append('b', make_values(seed + 1, N_VALUES // 2))
    return bundle


def check_same(bundle, other):
    if bundle.get_n_arrays() != other.get_n_arrays():
        raise AssertionError('%d arrays, not %d' % (other.get_n_arrays(), bundle.get_n_arrays()))
    for i in range(bundle.get_n_arrays()):
        if bits(bundle.get_values(i)) != bits(other.get_values(i)):
            raise AssertionError('array %d differs' % i)


def save_and_load(job):
    """In a child: parallel to_bytes, from_bytes, save and load of a new
    bundle; returns the seed once every result is right."""
    directory, seed = job
    bundle = make_bundle(seed)
    check_same(bundle, Serio.Bundle.new_from_bytes(bundle.to_bytes(Serio.SaveFlags.PLAIN)))
    path = os.path.join(directory, 'child-%d-%d.serio' % (os.getpid(), seed))
    gfile = Gio.File.new_for_path(path)
    bundle.save_to_file(gfile, Serio.SaveFlags.NONE, None)
    check_same(bundle, Serio.Bundle.new_from_file(gfile, None))
    os.unlink(path)
    return seed


class ForkTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='serio-fork-')
        # Parallel work in this process first: the threads it used are
        # what a child would wait for.
        bundle = make_bundle(1)
        check_same(bundle, Serio.Bundle.new_from_bytes(bundle.to_bytes(Serio.SaveFlags.PLAIN)))

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_os_fork(self):
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                save_and_load((self.dir, 5))
                status = 0
            finally:
                os._exit(status)

        deadline = time.monotonic() + DEADLINE_S
        done, status = os.waitpid(pid, os.WNOHANG)
        while done == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
            done, status = os.waitpid(pid, os.WNOHANG)
        if done == 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            self.fail('the forked child hung: killed after %d s' % DEADLINE_S)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)

    def test_pool_with_fork(self):
        context = multiprocessing.get_context('fork')
        jobs = [(self.dir, seed) for seed in range(10, 14)]
        with context.Pool(2) as pool:
            result = pool.map_async(save_and_load, jobs)
            try:
                seeds = result.get(timeout=DEADLINE_S)
            except multiprocessing.TimeoutError:
                self.fail('the pool of forked workers hung: stopped after %d s' % DEADLINE_S)
        self.assertEqual(seeds, [seed for _, seed in jobs])
        self.assertEqual(os.listdir(self.dir), [])


if __name__ == '__main__':
    unittest.main(verbosity=2, argv=sys.argv[:1])
