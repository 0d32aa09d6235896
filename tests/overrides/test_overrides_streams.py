# SPDX-License-Identifier: LGPL-2.1-or-later
"""Large files through the override: Serio.Reader.open() and its
iteration, Serio.iter_arrays(), and Serio.save()/Serio.load() built on
Serio.Writer.new_for_file() and Serio.Reader: bit for bit, provisional
until the end, skipping without parsing, the old file kept when a save
fails midway, and memory bounded by the arrays (in a child process).

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

try:
    import numpy
except ImportError:
    print('NumPy is not installed (Debian: python3-numpy)', file=sys.stderr)
    sys.exit(77)

try:
    import torch
except ImportError:
    torch = None

from overrides_common import Serio, SPECIAL_BITS, canonical  # noqa: E402
from gi.repository import GLib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1 << 20
# More than one piece of the override (2**20 values), and not a multiple.
LONG = (1 << 20) + 12345


def bits(array):
    """The bytes of an array's values, in C order: compare these, not
    floats."""
    return numpy.ascontiguousarray(array).view(numpy.uint8).tobytes()


def random_float64(rng, shape):
    values = rng.integers(0, 2**64, size=shape, dtype=numpy.uint64).view(numpy.float64)
    # A NaN comes back as the canonical one: keep them out here.
    values[numpy.isnan(values)] = 0.5
    return values


def serio_error(test, caught, code):
    error = caught.exception
    test.assertTrue(error.matches(Serio.error_quark(), code),
                    '%s, not %s' % (error, code))


class TempDirTestCase(unittest.TestCase):

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix='serio-streams-')
        self.addCleanup(tmp.cleanup)
        self.dir = pathlib.Path(tmp.name)

    def write(self, name, data):
        path = self.dir / name
        path.write_bytes(data)
        return path


class TestReader(TempDirTestCase):

    def setUp(self):
        super().setUp()
        rng = numpy.random.default_rng(7)
        self.w = random_float64(rng, (3, 5))
        self.b = numpy.array(SPECIAL_BITS[:9], dtype=numpy.uint64).view(numpy.float64)
        bundle = Serio.Bundle.new()
        bundle.append_numpy('dense.w', self.w)
        bundle.append_numpy('dense.b', self.b)
        bundle.append_with_shape('steps', [], [4.0])
        bundle.append('dense.w', [1.0])
        self.sealed = self.write('sealed.serio', bundle.to_sealed_bytes().get_data())
        self.plain = self.write('plain.serio', bundle.to_bytes().get_data())

    def test_pairs_from_sealed_and_plain_files(self):
        for path, sealed in ((self.sealed, True), (str(self.plain), False)):
            with Serio.Reader.open(path) as reader:
                self.assertIsInstance(reader, Serio.Reader)
                names, arrays = [], []
                for name, array in reader:
                    names.append((name, reader.get_name()))
                    arrays.append(array)
                self.assertTrue(reader.get_finished())
                self.assertEqual(reader.get_sealed(), sealed)
            self.assertEqual(names, [('dense.w', 'dense.w[3x5]'), ('dense.b', 'dense.b'),
                                     ('steps', 'steps[]'), ('dense.w', 'dense.w')])
            self.assertEqual([a.shape for a in arrays], [(3, 5), (9,), (), (1,)])
            for array in arrays:
                self.assertEqual(array.dtype, numpy.float64)
                self.assertTrue(array.flags.writeable and array.flags.c_contiguous)
            self.assertEqual(bits(arrays[0]), bits(self.w))
            self.assertEqual(arrays[1].view('<u8').tolist(), SPECIAL_BITS[:9])
            self.assertEqual(arrays[2].reshape(1).view('<u8').tolist(), [0x4010000000000000])

    def test_with_closes_the_stream(self):
        with Serio.Reader.open(self.sealed) as reader:
            stream = reader.get_stream()
            self.assertEqual(next(reader)[0], 'dense.w')
            self.assertFalse(stream.is_closed())
        self.assertTrue(stream.is_closed())
        self.assertFalse(reader.get_finished())

    def test_read_array_and_the_c_calls_mix(self):
        with Serio.Reader.open(self.plain) as reader:
            with self.assertRaises(ValueError):
                reader.read_array()
            self.assertTrue(reader.next())
            reader.skip_array()
            with self.assertRaises(ValueError):
                reader.read_array()
            self.assertTrue(reader.next())
            self.assertEqual(reader.read_bytes(2).get_size(), 16)
            with self.assertRaises(ValueError):
                reader.read_array()
            self.assertTrue(reader.next())
            self.assertEqual(reader.read_array().shape, ())
            self.assertEqual([name for name, _ in reader], ['dense.w'])

    def test_open_takes_paths_and_files(self):
        with self.assertRaises(TypeError):
            Serio.Reader.open(3)
        with self.assertRaises(GLib.Error) as caught:
            Serio.Reader.open(self.dir / 'missing.serio')
        self.assertEqual(caught.exception.domain, 'g-io-error-quark')

    def test_hostile_count_is_not_allocated(self):
        # 2**60 values declared, two given: the reader must fail on the
        # record, not on an allocation of 8 EiB.
        path = self.write('hostile.serio', b'v1|w|1152921504606846976|1,2\n')
        with Serio.Reader.open(path) as reader, self.assertRaises(GLib.Error) as caught:
            list(reader)
        serio_error(self, caught, Serio.Error.LENGTH)
        with self.assertRaises(GLib.Error) as caught:
            Serio.load(path)
        serio_error(self, caught, Serio.Error.LENGTH)

    def test_documented(self):
        for attr in ('open', 'read_array', '__iter__', '__next__', 'close',
                     '__enter__', '__exit__'):
            self.assertTrue(getattr(Serio.Reader, attr).__doc__, attr)
        self.assertTrue(Serio.Reader.__doc__)
        self.assertTrue(Serio.iter_arrays.__doc__)


class TestIterArrays(TempDirTestCase):

    def setUp(self):
        super().setUp()
        self.path = self.dir / 'arrays.serio'
        self.arrays = {'w': numpy.arange(6, dtype=numpy.float32).reshape(2, 3),
                       'n': numpy.int64(3), 'x': numpy.array([0.25, -0.0])}
        Serio.save(self.path, self.arrays)

    def test_pairs_in_their_types(self):
        with Serio.iter_arrays(self.path) as pairs:
            got = list(pairs)
        self.assertEqual([name for name, _ in got], ['w', 'n', 'x'])
        for name, array in got:
            want = numpy.asarray(self.arrays[name])
            self.assertEqual((array.dtype, array.shape), (want.dtype, want.shape), name)
            self.assertEqual(bits(array), bits(want), name)

    def test_names_and_first_of_duplicates(self):
        path = self.write('dup.serio', b'v1|a[2]|2|1,2\nv1|b|1|3\nv1|a|1|4\nv1|c|1|5\n')
        self.assertEqual([(n, a.tolist()) for n, a in Serio.iter_arrays(path)],
                         [('a', [1.0, 2.0]), ('b', [3.0]), ('c', [5.0])])
        loaded = Serio.load(path, names=('c', 'a'))
        self.assertEqual(list(loaded), ['a', 'c'])
        self.assertEqual(loaded['a'].view('<u8').tolist(), [0x3ff0000000000000, 0x4000000000000000])
        with self.assertRaises(KeyError) as caught:
            Serio.load(path, names=['b', 'zz'])
        self.assertIn("'zz'", str(caught.exception))
        with self.assertRaises(TypeError):
            Serio.load(path, names='a')
        with self.assertRaises(TypeError):
            Serio.load(path, names=[1])

    def test_close_before_the_end(self):
        pairs = Serio.iter_arrays(self.path)
        self.assertEqual(next(pairs)[0], 'w')
        pairs.close()
        with self.assertRaises(StopIteration):
            next(pairs)
        # Never started: close() still closes the file.
        Serio.iter_arrays(self.path).close()

    def test_pairs_are_provisional(self):
        good = self.path.read_bytes()
        lines = good.splitlines(keepends=True)
        # Cut after the second array, at a line boundary: only the end
        # of the text tells.
        cut = self.write('cut.serio', b''.join(lines[:3]))
        seen = []
        with self.assertRaises(GLib.Error) as caught:
            for name, _ in Serio.iter_arrays(cut):
                seen.append(name)
        serio_error(self, caught, Serio.Error.TRUNCATED)
        self.assertEqual(seen, ['w'])
        with self.assertRaises(GLib.Error) as whole:
            Serio.Bundle.from_file(cut)
        self.assertEqual(caught.exception.message, whole.exception.message)
        self.assertTrue(caught.exception.message.startswith(str(cut) + ': '))


class TestSkipping(TempDirTestCase):

    def test_plain_skipped_arrays_are_not_parsed(self):
        path = self.write('plain.serio', b'v1|keep[2]|2|1,2\nv1|bad|3|1,x,3\nv1|other|1|5\n')
        loaded = Serio.load(path, names=['keep', 'other'])
        self.assertEqual(loaded['keep'].tolist(), [1.0, 2.0])
        self.assertEqual(loaded['other'].tolist(), [5.0])
        with self.assertRaises(GLib.Error) as caught:
            Serio.load(path)
        serio_error(self, caught, Serio.Error.SYNTAX)
        with self.assertRaises(GLib.Error) as caught:
            Serio.load(path, names=['bad'])
        serio_error(self, caught, Serio.Error.SYNTAX)

    def test_sealed_skipped_arrays_are_still_verified(self):
        bundle = Serio.Bundle.from_dict({'keep': [1.0], 'skipped': [1.0, 2.0, 3.0]})
        text = bundle.to_sealed_bytes().get_data()
        # 2 becomes 7: still a valid token, only the seal tells.
        damaged = text.replace(b'|1,2,3\n', b'|1,7,3\n')
        self.assertNotEqual(damaged, text)
        path = self.write('sealed.serio', damaged)
        with self.assertRaises(GLib.Error) as caught:
            Serio.load(path, names=['keep'])
        serio_error(self, caught, Serio.Error.INTEGRITY)

    def test_duplicates_are_parsed_without_names(self):
        # Without names, load() is as strict as Bundle.from_file().
        path = self.write('dup.serio', b'v1|a|1|1\nv1|a|2|1,x\n')
        with self.assertRaises(GLib.Error) as caught:
            Serio.load(path)
        serio_error(self, caught, Serio.Error.SYNTAX)


class TestErrors(TempDirTestCase):

    def test_truncated_and_damaged_files(self):
        path = self.dir / 'm.serio'
        Serio.save(path, {'w': numpy.arange(100.0).reshape(10, 10), 'b': numpy.ones(3)})
        good = path.read_bytes()
        cases = [(good[:-1], Serio.Error.TRUNCATED),
                 (good[:len(good) // 2], Serio.Error.TRUNCATED),
                 (good.replace(b',5,', b',5x,', 1), Serio.Error.SYNTAX),
                 (good.replace(b',5,', b',6,', 1), Serio.Error.INTEGRITY),
                 (good.replace(b'|100|', b'|101|', 1), Serio.Error.LENGTH)]
        for text, code in cases:
            damaged = self.write('damaged.serio', text)
            with self.assertRaises(GLib.Error) as whole:
                Serio.Bundle.from_file(damaged)
            for load in (Serio.load, lambda p: list(Serio.iter_arrays(p))):
                with self.assertRaises(GLib.Error, msg=code) as caught:
                    load(damaged)
                serio_error(self, caught, code)
                self.assertEqual(caught.exception.message, whole.exception.message)

    def test_a_bad_text_outranks_a_value_that_does_not_fit(self):
        # The int64 0.5 comes first, but the text is not valid further on:
        # as when the whole bundle was loaded first, GLib.Error wins.
        path = self.write('edited.serio', b'v1|serio.dtypes|2|4,0\nv1|n|1|1p-1\nv1|x|1|1,\n')
        with self.assertRaises(GLib.Error) as caught:
            Serio.load(path)
        serio_error(self, caught, Serio.Error.SYNTAX)
        # And a serio.dtypes of the wrong length outranks the value.
        path = self.write('edited.serio', b'v1|serio.dtypes|1|4\nv1|n|1|1p-1\nv1|x|1|1\n')
        with self.assertRaises(ValueError) as caught:
            Serio.load(path)
        self.assertIn("'serio.dtypes'", str(caught.exception))


class TestRoundTrip(TempDirTestCase):

    def check(self, arrays, loaded):
        self.assertEqual(list(loaded), list(arrays))
        for name, array in arrays.items():
            want = numpy.asarray(array)
            got = loaded[name]
            self.assertEqual(got.shape, want.shape, name)
            self.assertEqual(got.dtype, want.dtype.newbyteorder('='), name)
            self.assertEqual(bits(got), bits(want.astype(got.dtype)), name)
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
            'special': numpy.array(canonical(SPECIAL_BITS), dtype=numpy.uint64).view(numpy.float64),
        }
        path = self.dir / 'many.serio'
        Serio.save(path, arrays)
        self.check(arrays, Serio.load(path))
        # Byte for byte the sealed text of a bundle of the same arrays.
        bundle = Serio.Bundle.new()
        codes = [[0, 1, 2, 0, 0, 4, 11, 6, 12, 1, 9, 1, 0, 0]]
        bundle.append('serio.dtypes', [float(c) for c in codes[0]])
        for name, array in arrays.items():
            array = numpy.asarray(array)
            if array.ndim == 1:
                bundle.append_numpy(name, array)
            else:
                bundle.append_bytes_with_shape(name, list(array.shape), GLib.Bytes.new(
                    numpy.ascontiguousarray(array, dtype=numpy.float64).tobytes()))
        self.assertEqual(path.read_bytes(), bundle.to_sealed_bytes().get_data())

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
        Serio.save_torch(path, state)
        loaded = Serio.load_torch(path)
        self.assertEqual(list(loaded), list(state))
        for name, tensor in state.items():
            got = loaded[name]
            self.assertEqual((got.dtype, got.shape), (tensor.dtype, tensor.shape), name)
            self.assertTrue(torch.equal(got.contiguous().view(-1).view(torch.uint8),
                                        tensor.contiguous().view(-1).view(torch.uint8)), name)
        arrays = Serio.load(path)
        self.assertIsInstance(arrays['bf16'], torch.Tensor)
        self.assertEqual(arrays['bf16'].dtype, torch.bfloat16)

    @unittest.skipIf(torch is None, 'PyTorch is not installed (Debian: python3-torch)')
    def test_bfloat16_values_that_do_not_fit(self):
        for text in (b'v1|serio.dtypes|1|3\nv1|h|1|1p-8\n',          # fits: 2**-8
                     b'v1|serio.dtypes|1|3\nv1|h|2|1,16777217p-24\n'):  # 1 + 2**-24 does not
            path = self.write('bf.serio', text)
            if text.endswith(b'1p-8\n'):
                self.assertEqual(float(Serio.load(path)['h']), 2.0 ** -8)
                continue
            with self.assertRaises(ValueError) as caught:
                Serio.load(path)
            self.assertIn("'h'", str(caught.exception))


class TestFailedSaveKeepsTheOldFile(TempDirTestCase):

    def setUp(self):
        super().setUp()
        self.path = self.dir / 'model.serio'
        Serio.save(self.path, {'old': numpy.ones(3)})
        self.old = self.path.read_bytes()

    def assert_kept(self):
        gc.collect()
        self.assertEqual(self.path.read_bytes(), self.old)
        self.assertEqual(os.listdir(self.dir), ['model.serio'])

    def test_interrupted_while_writing(self):
        add_bytes = Serio.Writer.add_bytes
        calls = []

        def interrupted(writer, data, cancellable):
            calls.append(data.get_size())
            if len(calls) == 2:
                raise KeyboardInterrupt
            return add_bytes(writer, data, cancellable)

        arrays = {'w': numpy.zeros(3 * LONG)}
        with mock.patch.object(Serio.Writer, 'add_bytes', interrupted):
            with self.assertRaises(KeyboardInterrupt):
                Serio.save(self.path, arrays)
        self.assertEqual(calls, [8 * MiB, 8 * MiB])
        self.assert_kept()
        # Unpatched, the same save goes through.
        Serio.save(self.path, arrays)
        self.assertEqual(Serio.load(self.path)['w'].shape, (3 * LONG,))

    @unittest.skipIf(torch is None, 'PyTorch is not installed (Debian: python3-torch)')
    def test_a_tensor_that_cannot_be_copied(self):
        # A meta tensor has a type and a shape but no values: the error
        # comes while writing, after the first array.
        state = {'w': torch.ones(1000), 'meta': torch.empty(10, device='meta')}
        with self.assertRaises(NotImplementedError):
            Serio.save_torch(self.path, state)
        self.assert_kept()

    def test_checks_come_before_the_file_is_touched(self):
        cases = [({'ok': numpy.zeros(LONG), 'i': numpy.array([2**53 + 1])}, ValueError),
                 ({'ok': numpy.zeros(2), 'u': numpy.array([2**63], dtype=numpy.uint64)}, ValueError),
                 ({'ok': numpy.zeros(2), 'c': numpy.zeros(2, dtype=numpy.complex64)}, TypeError),
                 ({'ok': numpy.zeros(2), 'serio.seal': numpy.zeros(2)}, ValueError),
                 ({'ok': numpy.zeros(2), 'serio.dtypes': numpy.zeros(2)}, ValueError),
                 ({'ok': numpy.zeros(2), 'a\0b': numpy.zeros(2)}, ValueError),
                 ({'ok': numpy.zeros(2), '\udc80': numpy.zeros(2)}, UnicodeEncodeError)]
        for arrays, error in cases:
            with mock.patch.object(Serio.Writer, 'new_for_file') as new_for_file:
                with self.assertRaises(error, msg=list(arrays)):
                    Serio.save(self.path, arrays)
            new_for_file.assert_not_called()
            self.assert_kept()


class TestMemory(TempDirTestCase):
    """Peak memory of a save and a load of 10**7 float64 values (80 MB), in
    a child process: the old code held the values three times."""

    N_VALUES = 10 ** 7

    def run_child(self, mode, path):
        child = subprocess.run([sys.executable, '-B', os.path.join(HERE, 'stream_memory.py'),
                                mode, str(path), str(self.N_VALUES)],
                               capture_output=True, text=True, check=False)
        self.assertEqual(child.returncode, 0, child.stderr)
        return json.loads(child.stdout)

    def test_save_and_load_hold_the_array_once(self):
        path = self.dir / 'big.serio'
        saved = self.run_child('save', path)
        self.assertEqual(saved['array_bytes'], 8 * self.N_VALUES)
        self.assertLessEqual(saved['growth'], saved['array_bytes'] + 64 * MiB, saved)
        loaded = self.run_child('load', path)
        self.assertEqual((loaded['n_values'], loaded['dtype']), (self.N_VALUES, 'float64'))
        self.assertLessEqual(loaded['growth'], 1.25 * loaded['array_bytes'] + 64 * MiB, loaded)


if __name__ == '__main__':
    unittest.main(verbosity=2)
