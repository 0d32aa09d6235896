# SPDX-License-Identifier: LGPL-2.1-or-later
"""Large files through serio.save()/serio.load(), which stream through
Serio.Writer.new_for_file() and Serio.Reader: arrays of every type and
layout over several pieces, bit for bit; names= skipping without parsing;
errors as the library finds them; the old file kept when a save fails
midway; a value its type cannot hold refused, not rounded; and memory
bounded by the arrays (in a child process).

Exits with 77 (a skip for meson) without NumPy; the PyTorch tests skip
without PyTorch.
"""

import gc
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from package_common import Gio, GLib, Serio, numpy, serio, torch, bits

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1 << 20
# More than one piece of the package (2**20 values), and not a multiple.
LONG = (1 << 20) + 12345


def random_float64(rng, shape):
    values = rng.integers(0, 2**64, size=shape, dtype=numpy.uint64).view(numpy.float64)
    # A NaN comes back as the canonical one: keep them out here.
    values[numpy.isnan(values)] = 0.5
    return values


def from_file(path):
    return Serio.Bundle.new_from_file(Gio.File.new_for_path(str(path)), None)


class TempDirTestCase(unittest.TestCase):

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix='serio-streams-')
        self.addCleanup(tmp.cleanup)
        self.dir = pathlib.Path(tmp.name)

    def write(self, name, data):
        path = self.dir / name
        path.write_bytes(data)
        return path

    def assert_code(self, caught, code):
        error = caught.exception
        self.assertIsInstance(error, serio.DataError)
        self.assertTrue(error.matches(Serio.error_quark(), int(code)),
                        '%s, not %s' % (error, code))


class TestFlatFiles(TempDirTestCase):

    def test_names_and_first_of_duplicates(self):
        path = self.write('dup.serio', b'v1|a[2]|2|1,2\nv1|b|1|3\nv1|a|1|4\nv1|c|1|5\n')
        loaded = serio.load(path)
        self.assertEqual([(n, a.tolist()) for n, a in loaded.items()],
                         [('a', [1.0, 2.0]), ('b', [3.0]), ('c', [5.0])])
        loaded = serio.load(path, names=('c', 'a'))
        self.assertEqual(list(loaded), ['c', 'a'])
        self.assertEqual(loaded['a'].view('<u8').tolist(), [0x3ff0000000000000, 0x4000000000000000])
        with self.assertRaises(KeyError) as caught:
            serio.load(path, names=['b', 'zz'])
        self.assertIn("'zz'", str(caught.exception))
        with self.assertRaises(TypeError):
            serio.load(path, names=[1])

    def test_plain_skipped_arrays_are_not_parsed(self):
        path = self.write('plain.serio', b'v1|keep[2]|2|1,2\nv1|bad|3|1,x,3\nv1|other|1|5\n')
        loaded = serio.load(path, names=['keep', 'other'])
        self.assertEqual(loaded['keep'].tolist(), [1.0, 2.0])
        self.assertEqual(loaded['other'].tolist(), [5.0])
        with self.assertRaises(ValueError) as caught:
            serio.load(path)
        self.assert_code(caught, Serio.Error.SYNTAX)
        self.assertEqual(caught.exception.key, 'bad')
        with self.assertRaises(ValueError) as caught:
            serio.load(path, names=['bad'])
        self.assert_code(caught, Serio.Error.SYNTAX)

    def test_sealed_skipped_arrays_are_still_verified(self):
        path = self.dir / 'sealed.serio'
        serio.save(path, {'keep': 1.0, 'skipped': numpy.array([1.0, 2.0, 3.0])})
        text = path.read_bytes()
        # 2 becomes 7: still a valid token, only the seal tells.
        damaged = text.replace(b'|1,2,3\n', b'|1,7,3\n')
        self.assertNotEqual(damaged, text)
        self.write('sealed.serio', damaged)
        with self.assertRaises(ValueError) as caught:
            serio.load(path, names=['keep'])
        self.assert_code(caught, Serio.Error.INTEGRITY)

    def test_duplicates_are_parsed_without_names(self):
        path = self.write('dup.serio', b'v1|a|1|1\nv1|a|2|1,x\n')
        with self.assertRaises(ValueError) as caught:
            serio.load(path)
        self.assert_code(caught, Serio.Error.SYNTAX)

    def test_hostile_count_is_not_allocated(self):
        # 2**60 values declared, two given: the reader must fail on the
        # record, not on an allocation of 8 EiB.
        path = self.write('hostile.serio', b'v1|w|1152921504606846976|1,2\n')
        with self.assertRaises(ValueError) as caught:
            serio.load(path)
        self.assert_code(caught, Serio.Error.LENGTH)
        self.assertEqual(caught.exception.key, 'w')


class TestErrors(TempDirTestCase):

    def test_truncated_and_damaged_files(self):
        path = self.dir / 'm.serio'
        serio.save(path, {'w': numpy.arange(100.0).reshape(10, 10), 'b': numpy.ones(3)})
        good = path.read_bytes()
        cases = [(good[:-1], Serio.Error.TRUNCATED),
                 (good[:len(good) // 2], Serio.Error.TRUNCATED),
                 (good.replace(b',5,', b',5x,', 1), Serio.Error.SYNTAX),
                 (good.replace(b',5,', b',6,', 1), Serio.Error.INTEGRITY),
                 (good.replace(b'|100|', b'|101|', 1), Serio.Error.LENGTH)]
        for text, code in cases:
            damaged = self.write('damaged.serio', text)
            with self.assertRaises(GLib.Error) as whole:
                from_file(damaged)
            with self.assertRaises(serio.DataError, msg=code) as caught:
                serio.load(damaged)
            self.assert_code(caught, code)
            # The library's own message, after the file (and the key).
            self.assertTrue(whole.exception.message.endswith(caught.exception.detail),
                            (whole.exception.message, caught.exception.detail))
            self.assertTrue(str(caught.exception).startswith(str(damaged) + ': '))


class TestTypes(TempDirTestCase):

    def check(self, arrays, loaded):
        self.assertEqual(list(loaded), list(arrays))
        for name, array in arrays.items():
            want = numpy.asarray(array)
            got = numpy.asarray(loaded[name])
            self.assertEqual(got.shape, want.shape, name)
            self.assertEqual(got.dtype, want.dtype.newbyteorder('='), name)
            self.assertEqual(bits(got), bits(want.astype(got.dtype)), name)
            if isinstance(loaded[name], numpy.ndarray):
                self.assertTrue(got.flags.writeable, name)

    def test_numpy_types_and_layouts_over_several_pieces(self):
        rng = numpy.random.default_rng(11)
        arrays = {
            'f64': random_float64(rng, LONG),
            'f32': rng.normal(size=(LONG // 1000, 1000)).astype(numpy.float32),
            'f16': numpy.asfortranarray(rng.normal(size=(1000, 1100)).astype(numpy.float16)),
            'strided': random_float64(rng, (2000, 1500))[::2, 1::3],
            'row': random_float64(rng, (2, LONG)),
            'i64': rng.integers(-2**53, 2**53, size=LONG, endpoint=True),
            'u8': rng.integers(0, 256, size=(3, 4, 5), dtype=numpy.uint8),
            'i16': numpy.array([-32768, 32767], dtype=numpy.int16),
            'mask': rng.integers(0, 2, size=LONG).astype(bool),
            'scalar': numpy.float32(-0.0),
            '0d': numpy.array(7, dtype=numpy.uint32),
            'empty': numpy.zeros((4, 0, 2), dtype=numpy.float32),
            'big-endian': numpy.arange(5, dtype='>f8'),
        }
        path = self.dir / 'many.serio'
        serio.save(path, arrays)
        self.check(arrays, serio.load(path))
        # Every record holds the exact values as v1 tokens: a reader that
        # knows nothing of types gets them as float64.
        bundle = from_file(path)
        for index, (name, array) in enumerate(arrays.items(), start=1):
            self.assertEqual(bundle.get_bytes(index).get_data(),
                             numpy.ascontiguousarray(array, dtype=numpy.float64).tobytes(), name)

    @unittest.skipIf(torch is None, 'PyTorch is not installed (Debian: python3-torch)')
    def test_torch_types_over_several_pieces(self):
        generator = torch.Generator().manual_seed(3)
        state = {
            'bf16': torch.randn(LONG, generator=generator).to(torch.bfloat16),
            'f16': torch.randn(1200, 1000, generator=generator).half(),
            'f32t': torch.randn(1000, 1100, generator=generator).t(),
            'f64': torch.randn(5, generator=generator, dtype=torch.float64),
            'steps': torch.tensor(2**53),
            'mask': torch.tensor([[True], [False]]),
        }
        path = self.dir / 'torch.serio'
        serio.save(path, state)
        loaded = serio.load(path)
        self.assertEqual(list(loaded), list(state))
        for name, tensor in state.items():
            got = loaded[name]
            self.assertIsInstance(got, torch.Tensor)
            self.assertEqual((got.dtype, got.shape), (tensor.dtype, tensor.shape), name)
            self.assertTrue(torch.equal(got.contiguous().view(-1).view(torch.uint8),
                                        tensor.contiguous().view(-1).view(torch.uint8)), name)

    def test_a_bfloat16_value_that_is_not_one_is_refused_not_rounded(self):
        # 1 + 2**-7 is a bfloat16 (7 bits of fraction); 1 + 2**-10 is not:
        # rounded, it would load as 1.0.
        path = self.write('bf.serio', b'v1|h@bfloat16[2]|2|1,129p-7\n')
        if torch is not None:
            got = serio.load(path)['h']
            self.assertEqual(got.view(torch.int16).numpy().tobytes(),
                             numpy.array([0x3f80, 0x3f81], dtype=numpy.uint16).tobytes())
        for tokens in (b'1,1025p-10', b'1,16777217p-24'):
            path = self.write('bf.serio', b'v1|h@bfloat16[2]|2|' + tokens + b'\n')
            with self.assertRaises(ValueError) as caught:
                serio.load(path)
            self.assert_code(caught, Serio.Error.DOMAIN)
            self.assertEqual(caught.exception.key, 'h')
            self.assertEqual(caught.exception.value_index, 2)
            self.assertIn('bfloat16', str(caught.exception))

    def test_values_that_do_not_fit_their_type(self):
        for record, index in ((b'v1|x@float32[2]|2|1,1p-1074\n', 2),
                              (b'v1|x@uint8[1]|1|256\n', 1),
                              (b'v1|x@int32[2]|2|0,1p-1\n', 2),
                              (b'v1|x@int64[1]|1|-0\n', 1),
                              (b'v1|x@int16[1]|1|inf\n', 1),
                              (b'v1|x@bool[3]|3|0,1,2\n', 3),
                              (b'v1|x@uint64[1]|1|1p64\n', 1),
                              (b'v1|x@int64[1]|1|-1p64\n', 1)):
            path = self.write('t.serio', record)
            with self.assertRaises(ValueError, msg=record) as caught:
                serio.load(path)
            self.assert_code(caught, Serio.Error.DOMAIN)
            self.assertEqual((caught.exception.key, caught.exception.value_index),
                             ('x', index), record)
        path = self.write('t.serio', b'v1|x@float16[3]|3|-0,inf,65504\nv1|y@int64[1]|1|-1p63\n')
        got = serio.load(path)
        self.assertEqual(got['x'].tobytes(), numpy.array([-0.0, numpy.inf, 65504],
                                                         dtype=numpy.float16).tobytes())
        self.assertEqual(got['y'].tolist(), [-2 ** 63])


class TestFailedSaveKeepsTheOldFile(TempDirTestCase):

    def setUp(self):
        super().setUp()
        self.path = self.dir / 'model.serio'
        serio.save(self.path, {'old': numpy.ones(3)})
        self.old = self.path.read_bytes()

    def assert_kept(self):
        gc.collect()
        self.assertEqual(self.path.read_bytes(), self.old)
        self.assertEqual(os.listdir(self.dir), ['model.serio'])

    def test_interrupted_while_writing(self):
        # The package adds the pieces through ctypes where it can
        # (_io._native.add_from, an ndarray a piece), else through
        # Serio.Writer.add_typed_bytes (a GLib.Bytes a piece).
        native = serio._io._native
        owner, method = ((native, 'add_from') if native.add_typed is not None
                         else (Serio.Writer, 'add_typed_bytes'))
        add = getattr(owner, method)
        calls = []

        def interrupted(writer, data, *cancellable):
            calls.append(data.nbytes if native.add_typed is not None else data.get_size())
            if len(calls) == 3:
                raise KeyboardInterrupt
            return add(writer, data, *cancellable)

        state = {'w': numpy.zeros(3 * LONG)}
        with mock.patch.object(owner, method, interrupted):
            with self.assertRaises(KeyboardInterrupt):
                serio.save(self.path, state)
        # The tree, then two pieces of the array.
        self.assertEqual(calls[1:], [8 * MiB, 8 * MiB])
        self.assert_kept()
        # Unpatched, the same save goes through.
        serio.save(self.path, state)
        self.assertEqual(serio.load(self.path)['w'].shape, (3 * LONG,))

    @unittest.skipIf(torch is None, 'PyTorch is not installed (Debian: python3-torch)')
    def test_a_tensor_that_cannot_be_copied(self):
        # A meta tensor has a type and a shape but no values: the error
        # comes while writing, after the first array.
        state = {'w': torch.ones(1000), 'meta': torch.empty(10, device='meta')}
        with self.assertRaises(NotImplementedError):
            serio.save(self.path, state)
        self.assert_kept()

    def test_checks_come_before_the_file_is_touched(self):
        cases = [{'ok': numpy.zeros(LONG), 'i': numpy.array([2**53 + 1])},
                 {'ok': numpy.zeros(2), 'u': numpy.array([2**64 - 1], dtype=numpy.uint64)},
                 {'ok': numpy.zeros(2), 'c': numpy.zeros(2, dtype=numpy.complex64)},
                 {'ok': numpy.zeros(2), 'o': object()},
                 {'ok': numpy.zeros(2), '\udc80': numpy.zeros(2)}]
        for state in cases:
            with mock.patch.object(Serio.Writer, 'new_for_file') as new_for_file:
                with self.assertRaises(serio.UnstorableError, msg=list(state)):
                    serio.save(self.path, state)
            new_for_file.assert_not_called()
            self.assert_kept()


class TestCycleCollector(TempDirTestCase):
    """save and load hold off Python's cycle collector while they run (the
    objects of a model's tree are not garbage) and leave it as they found
    it, on success and on failure."""

    def test_held_while_running_and_restored(self):
        path = self.dir / 'gc.serio'
        bad = self.write('bad.serio', b'v1|w|2|1,x\n')
        seen = []

        def progress(done, total):
            seen.append(gc.isenabled())

        self.addCleanup(gc.enable)
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            seen.clear()
            serio.save(path, {'w': numpy.arange(3.0)}, progress=progress)
            serio.load(path, progress=progress)
            self.assertTrue(seen)
            self.assertEqual(set(seen), {False})
            self.assertEqual(gc.isenabled(), enabled)
            with self.assertRaises(serio.DataError):
                serio.load(bad)
            with self.assertRaises(serio.UnstorableError):
                serio.save(path, {'w': object()})
            with self.assertRaises(serio.DataError):
                serio.numpy.load(bad)
            self.assertEqual(gc.isenabled(), enabled)


class TestMemory(TempDirTestCase):
    """Peak memory of a save and a load of 10**7 values (80 MB of float64,
    40 MB of float32), in a child process: the array once, plus pieces."""

    N_VALUES = 10 ** 7

    def run_child(self, mode, path, dtype):
        child = subprocess.run([sys.executable, '-B', os.path.join(HERE, 'package_memory.py'),
                                mode, str(path), str(self.N_VALUES), dtype],
                               capture_output=True, text=True, check=False)
        self.assertEqual(child.returncode, 0, child.stderr)
        return json.loads(child.stdout)

    def test_save_and_load_hold_the_array_once(self):
        for dtype, size in (('float64', 8), ('float32', 4)):
            path = self.dir / ('big-%s.serio' % dtype)
            saved = self.run_child('save', path, dtype)
            self.assertEqual(saved['array_bytes'], size * self.N_VALUES)
            self.assertLessEqual(saved['growth'], saved['array_bytes'] + 64 * MiB, saved)
            loaded = self.run_child('load', path, dtype)
            self.assertEqual((loaded['n_values'], loaded['dtype']), (self.N_VALUES, dtype))
            self.assertLessEqual(loaded['growth'], 1.25 * loaded['array_bytes'] + 64 * MiB,
                                 loaded)


class TestDirectPaths(TempDirTestCase):
    """The values go between the library and the arrays' memory through
    ctypes (_io._native) where it can; without it, through GLib.Bytes.
    Both give the same file and the same arrays, bit for bit."""

    def state(self):
        rng = numpy.random.default_rng(21)
        wide = rng.standard_normal((6, 5))
        state = {
            'f32': (rng.standard_normal(3000) * 0.05).astype(numpy.float32),
            'f64': wide,
            'view': wide[:, ::2],                      # not contiguous: converted
            'big': numpy.arange(7, dtype='>i4'),       # not native: converted
            'f16': numpy.arange(-4, 4, dtype=numpy.float16).reshape(2, 4),
            'u64': numpy.array([0, 2 ** 53, 2 ** 63], dtype=numpy.uint64),
            'mask': numpy.array([True, False, True]),
            'empty': numpy.zeros((0, 3), dtype=numpy.float32),
            'step': 7,
        }
        if torch is not None:
            state['bf16'] = torch.arange(-3, 3, dtype=torch.float32).to(torch.bfloat16)
            state['t32'] = torch.linspace(-1, 1, 10).reshape(2, 5)
        return state

    def round_trip(self, name, direct):
        path = self.dir / name
        native = serio._io._native
        if direct:
            serio.save(path, self.state())
            return path.read_bytes(), serio.load(path)
        with mock.patch.object(native, 'add_typed', None), \
                mock.patch.object(native, 'write_records', None), \
                mock.patch.object(native, 'read_typed', None), \
                mock.patch.object(native, 'read_records', None):
            serio.save(path, self.state())
            return path.read_bytes(), serio.load(path)

    def test_direct_and_through_bytes_agree(self):
        # Batches of every record after the tree, and batches too small
        # for the longest record ('f32', 12 kB), or for any (8 bytes):
        # those go on their own, between batches; on saving, batches of
        # every short record after the tree, or of 3 or 2 records of fewer
        # than 8 values.
        io = serio._io
        default = io.BATCH_BYTES
        for batch_bytes, short, records in ((default, io.SHORT_VALUES, io.BATCH_RECORDS),
                                            (4096, 8, 3), (8, 8, 2)):
            with self.subTest(batch_bytes=batch_bytes), \
                    mock.patch.object(io, 'BATCH_BYTES', batch_bytes), \
                    mock.patch.object(io, 'SHORT_VALUES', short), \
                    mock.patch.object(io, 'BATCH_RECORDS', records):
                self.direct_and_through_bytes_agree(batch_bytes != default)

    def direct_and_through_bytes_agree(self, small_batches):
        native = serio._io._native
        if native.read_typed is None:
            self.skipTest('the library\'s symbols are not reachable through ctypes')
        reads = []
        batches = []
        writes = []
        written_batches = []
        read_into, records_into = native.read_into, native.records_into
        add_from, records_from = native.add_from, native.records_from

        def counted(*args):
            reads.append(args[2])
            return read_into(*args)

        def counted_batch(*args):
            batches.append(records_into(*args))
            return batches[-1]

        def counted_write(*args):
            writes.append(args[1].size)
            return add_from(*args)

        def counted_written_batch(*args):
            written_batches.append(args[3])
            return records_from(*args)

        with mock.patch.object(native, 'read_into', counted), \
                mock.patch.object(native, 'records_into', counted_batch), \
                mock.patch.object(native, 'add_from', counted_write), \
                mock.patch.object(native, 'records_from', counted_written_batch):
            text, direct = self.round_trip('direct.serio', True)
        # Every record, the tree and the empty one too, came in through
        # ctypes: the tree and those too long for a batch on their own;
        # and went out through it, the tree and the long ones (the empty
        # one in no piece) on their own.
        self.assertEqual(len(reads) + sum(batches), len(self.state()) + 1)
        self.assertLessEqual(len(writes) + sum(written_batches), len(self.state()) + 1)
        self.assertGreaterEqual(len(writes) + sum(written_batches), len(self.state()))
        if not small_batches:
            self.assertEqual(len(reads), 1, reads)
            self.assertEqual((len(writes), written_batches), (1, [len(self.state())]))
        else:
            self.assertGreater(len(reads), 1, reads)
            self.assertGreater(sum(batches), 0)
            self.assertGreater(len(writes), 1, writes)
            self.assertGreater(len(written_batches), 1, written_batches)
            self.assertLessEqual(max(written_batches), serio._io.BATCH_RECORDS)
        other_text, other = self.round_trip('bytes.serio', False)
        self.assertEqual(text, other_text)
        self.assertEqual(list(direct), list(other))
        for key, value in direct.items():
            self.assertIs(type(value), type(other[key]), key)
            if torch is not None and isinstance(value, torch.Tensor):
                self.assertEqual(value.dtype, other[key].dtype, key)
                value, other_value = value.view(-1).view(torch.uint8), other[key].view(-1).view(torch.uint8)
                self.assertEqual(value.numpy().tobytes(), other_value.numpy().tobytes(), key)
            elif isinstance(value, numpy.ndarray):
                self.assertEqual((value.dtype, value.shape), (other[key].dtype, other[key].shape))
                self.assertEqual(bits(value), bits(other[key]), key)
                self.assertTrue(value.flags.writeable, key)
            else:
                self.assertEqual(value, other[key], key)
        self.assertEqual(bits(direct['big']), bits(numpy.arange(7, dtype=numpy.int32)))

    def test_a_batch_longer_than_a_huge_page_starts_on_one(self):
        # 800 records of 1000 float32 values: about 3.2 MB of elements, in
        # batches that start at a multiple of a huge page, whose arrays
        # come back bit for bit.
        if serio._io._native.read_records is None:
            self.skipTest('the library\'s symbols are not reachable through ctypes')
        rng = numpy.random.default_rng(4)
        state = {'w%d' % i: (rng.standard_normal(1000) * 0.05).astype(numpy.float32)
                 for i in range(800)}
        path = self.dir / 'layers.serio'
        serio.save(path, state)
        buffers = []
        read_batch = serio._io.RecordReader.read_batch

        def kept(reader, *args):
            batch, pending, failure = read_batch(reader, *args)
            buffers.extend(batch[3][:1])
            return batch, pending, failure

        with mock.patch.object(serio._io.RecordReader, 'read_batch', kept):
            loaded = serio.load(path)
        self.assertEqual(list(loaded), list(state))
        for key, value in state.items():
            self.assertEqual(bits(loaded[key]), bits(value), key)
        self.assertGreater(serio._io.BATCH_BYTES, serio._io.HUGE_PAGE)
        self.assertTrue(buffers)
        for first in buffers:
            self.assertEqual(first.__array_interface__['data'][0] % serio._io.HUGE_PAGE, 0)
        small = serio._io._aligned_buffer(numpy, 4096)
        self.assertEqual((small.nbytes, small.base), (4096, None))
        big = serio._io._aligned_buffer(numpy, serio._io.HUGE_PAGE + 1)
        self.assertEqual(big.nbytes, serio._io.HUGE_PAGE + 1)
        self.assertEqual(big.__array_interface__['data'][0] % serio._io.HUGE_PAGE, 0)

    def test_a_record_refused_in_a_batch_is_named_as_one_at_a_time(self):
        # The library refuses a bool byte that is neither 0 nor 1 before it
        # writes any of the batch; the error is the one a record at a time
        # gives, naming its key, and no file is made.
        native = serio._io._native
        if native.write_records is None:
            self.skipTest('the library\'s symbols are not reachable through ctypes')
        state = {'a': numpy.arange(3),
                 'b': numpy.array([0, 2, 1], dtype=numpy.uint8).view(numpy.bool_),
                 'c': numpy.ones(2)}
        path = self.dir / 'refused.serio'
        refused = []
        records_from = native.records_from

        def counted(*args):
            try:
                return records_from(*args)
            except GLib.Error as error:
                refused.append(error.message)
                raise

        errors = []
        for write_records in (native.write_records, None):
            with mock.patch.object(native, 'write_records', write_records), \
                    mock.patch.object(native, 'records_from', counted), \
                    self.assertRaises(serio.DataError) as caught:
                serio.save(path, state)
            error = caught.exception
            errors.append((str(error), error.key, error.code))
            self.assertFalse(path.exists())
        self.assertEqual(len(refused), 1, refused)
        self.assertIn('b@bool[3]', refused[0])
        self.assertEqual(errors[0], errors[1])
        self.assertEqual(errors[0][1:], ('b', int(Serio.Error.DOMAIN)))

    def test_a_count_beyond_the_file_is_not_allocated_at_once(self):
        # 10^12 values declared in a file of a few bytes: the growing path,
        # and the library's error that the record is cut short.
        path = self.write('short.serio', b'v1|w@float32[1000000000000]|1000000000000|1,2\n')
        reads = []
        with mock.patch.object(serio._io._native, 'read_into',
                               lambda *args: reads.append(args)):
            with self.assertRaises(serio.DataError):
                serio.load(path)
        self.assertEqual(reads, [])

    def test_errors_of_the_direct_path(self):
        # A value a float32 cannot hold, found by the library while the
        # values go straight into the array: a DOMAIN DataError.
        path = self.write('bad.serio', b'v1|w@float32[3]|3|1,1p-200,2\n')
        with self.assertRaises(serio.DataError) as caught:
            serio.load(path)
        self.assert_code(caught, Serio.Error.DOMAIN)


if __name__ == '__main__':
    unittest.main(verbosity=2)
