# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""serio.dcp: torch.distributed.checkpoint on serio files, with gloo
process groups of 4, 2 and 1 processes on this machine (a file:// store,
sockets on the loopback interface only)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)

import torch_shard_compat  # noqa: E402

torch_shard_compat.install()

try:
    import torch  # noqa: E402
    import torch.distributed as dist  # noqa: E402
    have_torch = dist.is_available()
except ImportError:
    have_torch = False

if not have_torch:
    print('1..0 # SKIP torch.distributed is not available')
    sys.exit(77)

import torch.distributed._shard.checkpoint as checkpoint  # noqa: E402
from torch.distributed._shard.checkpoint.api import CheckpointException  # noqa: E402

import dcp_common  # noqa: E402
import serio  # noqa: E402
import serio.dcp  # noqa: E402

# Every worker of a group must be done within this many seconds.
TIMEOUT = 300


def run_group(mode, directory, world, seed, scratch):
    """Runs WORLD ranks of dcp_worker.py; returns their outputs, failing
    the calling test on a non-zero exit or a time-out."""
    rendezvous = os.path.join(scratch, 'rendezvous-%s-%d' % (mode, world))
    if os.path.exists(rendezvous):
        os.unlink(rendezvous)
    env = dict(os.environ, GLOO_SOCKET_IFNAME='lo', OMP_NUM_THREADS='1')
    workers = [subprocess.Popen(
        [sys.executable, '-B', os.path.join(here, 'dcp_worker.py'), mode, directory,
         str(rank), str(world), rendezvous, str(seed)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
        for rank in range(world)]
    outputs = []
    try:
        for worker in workers:
            out, _ = worker.communicate(timeout=TIMEOUT)
            outputs.append((worker.returncode, out))
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    return outputs


class DcpTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.mkdtemp(prefix='serio-dcp-')
        cls.saved = os.path.join(cls.scratch, 'ckpt')
        cls.other = os.path.join(cls.scratch, 'other')
        for directory, seed in ((cls.saved, 1), (cls.other, 2)):
            outputs = run_group('save', directory, 4, seed, cls.scratch)
            for rank, (status, out) in enumerate(outputs):
                if status != 0:
                    raise AssertionError('save rank %d exited %d:\n%s' % (rank, status, out))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.scratch, ignore_errors=True)

    def copy(self):
        target = tempfile.mkdtemp(dir=self.scratch)
        shutil.rmtree(target)
        shutil.copytree(self.saved, target)
        return target

    def load_alone(self, directory, seed=1):
        """load_state_dict with no_dist=True into a state with a plain
        tensor for the sharded one; the loaded state."""
        state = dcp_common.blank_state(seed)
        checkpoint.load_state_dict(state, storage_reader=serio.dcp.StorageReader(directory),
                                   no_dist=True)
        return state

    def failure_of(self, call, cls=None):
        """The exception that call() raised on its one rank (which DCP
        wraps in a CheckpointException)."""
        try:
            call()
        except CheckpointException as error:
            failures = [exc for exc, _ in error.failures.values()]
        else:
            self.fail('%r raised nothing' % call)
        self.assertEqual(len(failures), 1, failures)
        if cls is not None:
            self.assertIsInstance(failures[0], cls)
        return failures[0]

    def test_layout(self):
        """One sealed serio file per rank with data and a JSON metadata
        file with the format, its version and each file's seal; no
        pickle anywhere."""
        names = sorted(os.listdir(self.saved))
        ranks = ['rank-%05d.serio' % r for r in range(4)]
        self.assertEqual(names, sorted(ranks + [serio.dcp.METADATA_NAME]))
        with open(os.path.join(self.saved, serio.dcp.METADATA_NAME), encoding='utf-8') as f:
            metadata = json.load(f)
        self.assertEqual((metadata['format'], metadata['version']),
                         (serio.dcp.FORMAT, serio.dcp.FORMAT_VERSION))
        self.assertEqual(sorted(metadata['files']), ranks)
        for name, entry in metadata['files'].items():
            path = os.path.join(self.saved, name)
            with open(path, 'rb') as f:
                data = f.read()
            self.assertEqual(entry['size'], len(data))
            self.assertTrue(data.startswith(b'v1|serio.sealed|1|1\n'), name)
            self.assertTrue(data.endswith(('v1|serio.seal|3|%s\n' % entry['seal']).encode()))
            self.assertNotIn(b'\x80\x02', data)
        # Values are records of their own type, readable by name.
        with open(os.path.join(self.saved, 'rank-00000.serio'), encoding='utf-8') as f:
            text = f.read()
        self.assertIn('\nv1|step@int64[]|1|8\n', text)
        self.assertIn('\nv1|half@bfloat16[7]|7|', text)
        self.assertIn('\nv1|sharded/chunk-0-0@float32[2x4]|8|', text)

    def test_load_by_two(self):
        outputs = run_group('load', self.saved, 2, 1, self.scratch)
        for rank, (status, out) in enumerate(outputs):
            self.assertEqual((status, out.strip().splitlines()[-1:]), (0, ['ok']),
                             'rank %d:\n%s' % (rank, out))

    def test_load_by_four(self):
        outputs = run_group('load', self.saved, 4, 1, self.scratch)
        for rank, (status, out) in enumerate(outputs):
            self.assertEqual((status, out.strip().splitlines()[-1:]), (0, ['ok']),
                             'rank %d:\n%s' % (rank, out))

    def test_load_alone(self):
        state = self.load_alone(self.saved)
        self.assertEqual(dcp_common.compare(state, dcp_common.expected_state(1)), [])
        # The other save really is different, so the comparison can fail.
        other = self.load_alone(self.other, seed=2)
        self.assertNotEqual(dcp_common.compare(other, dcp_common.expected_state(1)), [])

    def test_changed_digit(self):
        directory = self.copy()
        path = os.path.join(directory, 'rank-00002.serio')
        with open(path, 'rb') as f:
            data = bytearray(f.read())
        # The first digit of a value token of the shard: a valid v1 text
        # whose seal no longer matches.
        start = data.index(b'|8|', data.index(b'v1|sharded/')) + 3
        while not chr(data[start]).isdigit():
            start += 1
        data[start] = ord('1') if data[start] != ord('1') else ord('2')
        with open(path, 'wb') as f:
            f.write(data)
        error = self.failure_of(lambda: self.load_alone(directory), serio.Error)
        self.assertIn(path, str(error))

    def test_rank_file_of_another_save(self):
        directory = self.copy()
        path = os.path.join(directory, 'rank-00001.serio')
        shutil.copyfile(os.path.join(self.other, 'rank-00001.serio'), path)
        message = str(self.failure_of(lambda: self.load_alone(directory), serio.Error))
        self.assertIn(path, message)
        self.assertIn('not the file the checkpoint saved', message)

    def test_missing_rank_file(self):
        directory = self.copy()
        os.unlink(os.path.join(directory, 'rank-00003.serio'))
        error = self.failure_of(lambda: self.load_alone(directory), FileNotFoundError)
        self.assertIn('rank-00003.serio', str(error))

    def test_metadata_strict(self):
        for change in ('version', 'duplicate', 'pickle', 'field'):
            directory = self.copy()
            path = os.path.join(directory, serio.dcp.METADATA_NAME)
            with open(path, encoding='utf-8') as f:
                text = f.read()
            if change == 'version':
                text = text.replace('"version": 1', '"version": 2')
            elif change == 'duplicate':
                text = text.replace('"format":', '"format": "serio-dcp",\n "format":', 1)
            elif change == 'pickle':
                text = '\x80\x04K\x01.'
            else:
                text = text.replace('"format":', '"extra": 1,\n "format":', 1)
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text)
            with self.subTest(change=change):
                error = self.failure_of(lambda: self.load_alone(directory), serio.Error)
                self.assertIn(path, str(error))

    def test_unstorable_value(self):
        """A value that would need a pickle is refused naming its key, and
        nothing is written."""
        directory = os.path.join(self.scratch, 'refused')
        error = self.failure_of(lambda: checkpoint.save_state_dict(
            {'w': torch.ones(2), 'opts': {'a': 1}},
            storage_writer=serio.dcp.StorageWriter(directory), no_dist=True),
            serio.UnstorableError)
        self.assertIn('opts', str(error))
        self.assertFalse(os.path.exists(os.path.join(directory, serio.dcp.METADATA_NAME)))
        self.assertEqual([n for n in os.listdir(directory) if n.endswith('.serio')], [])


if __name__ == '__main__':
    unittest.main()
