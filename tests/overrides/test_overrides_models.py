# SPDX-License-Identifier: LGPL-2.1-or-later
"""Whole models through the override's module functions: Serio.save and
Serio.load (NumPy), Serio.save_torch and Serio.load_torch (PyTorch, with a
fresh process), Serio.save_estimator and Serio.load_estimator
(scikit-learn). Everything is compared by its bytes.

Exits with 77 (a skip for meson) without NumPy; the PyTorch and
scikit-learn tests skip when their module is missing.
"""

import os
import pathlib
import subprocess
import sys
import tempfile
import unittest
import warnings

try:
    import numpy
except ImportError:
    print('NumPy is not installed (Debian: python3-numpy)', file=sys.stderr)
    sys.exit(77)

try:
    import torch
except ImportError:
    torch = None

try:
    import sklearn
except ImportError:
    sklearn = None

from overrides_common import Serio, SPECIAL_BITS, canonical  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def from_bits(patterns):
    return numpy.array(patterns, dtype=numpy.uint64).view(numpy.float64)


class TempDirTestCase(unittest.TestCase):

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix='serio-models-')
        self.addCleanup(tmp.cleanup)
        self.dir = pathlib.Path(tmp.name)

    def text(self, path):
        """The records of the file, without its seal."""
        return Serio.Bundle.from_file(path).to_string()

    def assert_sealed(self, path):
        lines = path.read_text(encoding='utf-8').splitlines()
        self.assertEqual(lines[0], 'v1|serio.sealed|1|1')
        self.assertTrue(lines[-1].startswith('v1|serio.seal|3|'))


class TestSaveLoad(TempDirTestCase):

    def test_round_trip_shapes_and_dtypes(self):
        arrays = {
            'w': from_bits(canonical(SPECIAL_BITS))[:12].reshape(3, 4),
            'b': numpy.array([0.1, -0.0, 65504.0], dtype=numpy.float32),
            'h': numpy.array([[0.1, -0.0]], dtype=numpy.float16),
            'steps': numpy.array(5, dtype=numpy.int64),
            'i': numpy.array([-2**53, 2**53], dtype=numpy.int64),
            'u': numpy.arange(4, dtype=numpy.uint8).reshape(2, 2),
            'mask': numpy.array([True, False]),
            'e': numpy.zeros((2, 0, 3)),
            'f': numpy.asfortranarray(numpy.arange(6.0).reshape(2, 3)),
            'big': numpy.array([1.5], dtype='>f8'),
        }
        path = self.dir / 'arrays.serio'
        self.assertIsNone(Serio.save(path, arrays))
        self.assert_sealed(path)
        loaded = Serio.load(path)
        self.assertEqual(list(loaded), list(arrays))
        for name, array in arrays.items():
            got = loaded[name]
            self.assertIsInstance(got, numpy.ndarray, name)
            self.assertEqual(got.shape, array.shape, name)
            self.assertEqual(got.dtype, array.dtype.newbyteorder('='), name)
            self.assertEqual(got.tobytes(), array.astype(got.dtype).tobytes(), name)
            self.assertTrue(got.flags.writeable, name)
        lines = self.text(path).splitlines()
        self.assertIn('v1|serio.dtypes|10|0,1,2,4,4,11,12,0,0,0', lines)
        self.assertTrue(lines[1].startswith('v1|w[3x4]|12|0,-0,inf,-inf,'))
        self.assertIn('v1|steps[]|1|5', lines)
        self.assertIn('v1|b|3|', [line[:len('v1|b|3|')] for line in lines])
        self.assertIn('v1|f[2x3]|6|0,1,2,3,4,5', lines)

    def test_float64_only_has_no_dtypes_array(self):
        path = self.dir / 'plain.serio'
        Serio.save(str(path), {'w': numpy.eye(2), 'b': [0.5, 1.5], 'n': 2.5})
        self.assertEqual(self.text(path), 'v1|w[2x2]|4|1,0,0,1\nv1|b|2|1p-1,3p-1\nv1|n[]|1|5p-1\n')
        loaded = Serio.load(path)
        self.assertEqual(loaded['b'].dtype, numpy.float64)
        self.assertEqual(loaded['n'].shape, ())

    def test_keys_that_look_like_shapes_come_back_whole(self):
        path = self.dir / 'keys.serio'
        arrays = {'w[3]': numpy.zeros(3), 'm[2x1]': numpy.ones((2, 1)), 'x]': numpy.ones(1),
                  'plain': numpy.ones(2)}
        Serio.save(path, arrays)
        self.assertEqual(self.text(path), 'v1|w[3][3]|3|0,0,0\nv1|m[2x1][2x1]|2|1,1\n'
                         'v1|x][1]|1|1\nv1|plain|2|1,1\n')
        loaded = Serio.load(path)
        self.assertEqual(list(loaded), list(arrays))
        self.assertEqual([a.shape for a in loaded.values()], [(3,), (2, 1), (1,), (2,)])

    def test_plain_files_load_as_float64(self):
        path = self.dir / 'hand.serio'
        path.write_text('v1|w[2x2]|4|1,2,3,4\nv1|w[4]|4|5,6,7,8\nv1|x[3]|2|1,2\n')
        loaded = Serio.load(path)
        self.assertEqual(list(loaded), ['w', 'x[3]'])
        self.assertEqual(loaded['w'].tobytes(), numpy.array([[1.0, 2.0], [3.0, 4.0]]).tobytes())
        self.assertEqual(loaded['x[3]'].shape, (2,))

    def test_errors_name_the_key_and_write_nothing(self):
        path = self.dir / 'bad.serio'
        cases = [
            ({'ok': numpy.zeros(2), 'counter': numpy.array([2**53 + 1])}, ValueError, 'counter'),
            ({'ok': numpy.zeros(2), 'z': numpy.array([1j])}, TypeError, 'z'),
            ({'s': numpy.array(['a'])}, TypeError, 's'),
            ({'o': numpy.array([None])}, TypeError, 'o'),
            ({'t': 'text'}, TypeError, 't'),
            ({'serio.dtypes': [1.0]}, ValueError, 'serio.dtypes'),
        ]
        for arrays, error, key in cases:
            with self.assertRaises(error, msg=key) as caught:
                Serio.save(path, arrays)
            self.assertIn(repr(key), str(caught.exception))
            self.assertFalse(path.exists())
        with self.assertRaises(TypeError):
            Serio.save(path, [('a', [1.0])])
        with self.assertRaises(TypeError):
            Serio.save(3, {'a': [1.0]})

    def test_values_that_do_not_fit_their_dtype(self):
        path = self.dir / 'edited.serio'
        for text, key in [
                ('v1|serio.dtypes|1|4\nv1|n|1|1p-1\n', 'n'),          # int64 0.5
                ('v1|serio.dtypes|1|11\nv1|u|1|256\n', 'u'),           # uint8 256
                ('v1|serio.dtypes|1|1\nv1|f|1|1p-151\n', 'f'),         # below float32
                ('v1|serio.dtypes|1|12\nv1|m|1|2\n', 'm'),             # bool 2
                ('v1|serio.dtypes|2|1,1\nv1|a|1|1\n', 'serio.dtypes'),  # one code too many
                ('v1|serio.dtypes|1|99\nv1|a|1|1\n', 'serio.dtypes'),  # unknown code
        ]:
            path.write_text(text)
            with self.assertRaises(ValueError, msg=text) as caught:
                Serio.load(path)
            self.assertIn(repr(key), str(caught.exception))


@unittest.skipIf(torch is None, 'PyTorch is not installed (Debian: python3-torch)')
class TestTorch(TempDirTestCase):

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, HERE)
        import torch_model
        cls.torch_model = torch_model
        torch.set_num_threads(1)
        torch.manual_seed(torch_model.SEED)
        model = torch_model.Net()
        # Train a few steps so that the batch norm has statistics and a
        # counter, and the weights are not their initial values.
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            optimizer.zero_grad()
            model(torch.randn(8, 3, 8, 8)).square().mean().backward()
            optimizer.step()
        cls.model = model

    @staticmethod
    def tensor_bytes(tensor):
        return tensor.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()

    def model_as(self, dtype):
        model = self.torch_model.Net().to(dtype)
        model.load_state_dict(self.model.state_dict())
        return model

    def test_state_dict_round_trip_bit_exact(self):
        for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
            model = self.model_as(dtype)
            path = self.dir / ('model-%s.serio' % str(dtype).split('.')[1])
            Serio.save_torch(path, model)
            self.assert_sealed(path)
            state = Serio.load_torch(path)
            expected = model.state_dict()
            self.assertEqual(list(state), list(expected))
            for name, tensor in expected.items():
                got = state[name]
                self.assertEqual(got.dtype, tensor.dtype, name)
                self.assertEqual(got.shape, tensor.shape, name)
                self.assertEqual(self.tensor_bytes(got), self.tensor_bytes(tensor), name)
            self.assertEqual(state['bn1.num_batches_tracked'].dtype, torch.int64)
            self.assertEqual(int(state['bn1.num_batches_tracked']), 3)
            lines = self.text(path).splitlines()
            self.assertTrue(lines[1].startswith('v1|conv1.weight[16x3x3x3]|432|'))
            self.assertIn('v1|bn1.num_batches_tracked[]|1|3', lines)

    def test_outputs_bit_identical_in_a_fresh_process(self):
        arguments, expected = [], []
        for dtype in ('float32', 'float64', 'bfloat16'):
            model = self.model_as(getattr(torch, dtype))
            path = self.dir / ('model-%s.serio' % dtype)
            Serio.save_torch(path, model)
            arguments.append('%s=%s' % (path, dtype))
            expected.append(self.torch_model.output_bytes(model, getattr(torch, dtype)).hex())
        # An untrained model gives other outputs: the comparison can fail.
        other = self.torch_model.output_bytes(self.torch_model.Net(), torch.float32).hex()
        self.assertNotEqual(other, expected[0])

        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [HERE, os.environ.get('PYTHONPATH', '')]))
        child = subprocess.run([sys.executable, '-B', os.path.join(HERE, 'torch_restore.py')]
                               + arguments, env=env, capture_output=True, text=True,
                               check=False)
        self.assertEqual(child.returncode, 0, child.stderr)
        self.assertEqual(child.stdout.split(), expected)

    def test_load_into_a_model_returns_it(self):
        path = self.dir / 'm.serio'
        Serio.save_torch(str(path), self.model.state_dict())
        fresh = self.torch_model.Net()
        self.assertIs(Serio.load_torch(path, fresh), fresh)
        self.assertEqual(self.torch_model.output_bytes(fresh, torch.float32),
                         self.torch_model.output_bytes(self.model, torch.float32))

    def test_inexact_tensors_are_named(self):
        path = self.dir / 'bad.serio'
        cases = [
            ({'ok': torch.zeros(2), 'step': torch.tensor(2**53 + 1)}, ValueError, 'step'),
            ({'neg': torch.tensor([-2**60])}, ValueError, 'neg'),
            ({'ok': torch.zeros(2), 'z': torch.zeros(2, dtype=torch.complex64)}, TypeError, 'z'),
        ]
        for state, error, key in cases:
            with self.assertRaises(error, msg=key) as caught:
                Serio.save_torch(path, state)
            self.assertIn(repr(key), str(caught.exception))
            self.assertFalse(path.exists())
        # 2**53 itself is exact.
        Serio.save_torch(path, {'step': torch.tensor(2**53)})
        self.assertEqual(int(Serio.load_torch(path)['step']), 2**53)

    def test_strict_load_names_missing_keys(self):
        path = self.dir / 'partial.serio'
        state = self.model.state_dict()
        del state['fc.bias']
        Serio.save_torch(path, state)
        with self.assertRaises(RuntimeError) as caught:
            Serio.load_torch(path, self.torch_model.Net())
        self.assertIn('fc.bias', str(caught.exception))

    def test_from_dict_and_append_numpy_take_tensors(self):
        bundle = Serio.Bundle.from_dict({'w': torch.arange(6.0).reshape(2, 3),
                                         'n': torch.tensor(4)})
        self.assertEqual(list(bundle), ['w[2x3]', 'n[]'])
        self.assertEqual(bundle.to_numpy('w').shape, (2, 3))


@unittest.skipIf(sklearn is None, 'scikit-learn is not installed (Debian: python3-sklearn)')
class TestScikitLearn(TempDirTestCase):

    def test_mlp_classifier_round_trip(self):
        from sklearn.datasets import load_digits
        from sklearn.neural_network import MLPClassifier
        digits_x, digits_y = load_digits(return_X_y=True)
        params = dict(hidden_layer_sizes=(32,), max_iter=20, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # not converged: that is fine here
            clf = MLPClassifier(**params).fit(digits_x[:1000], digits_y[:1000])
        path = self.dir / 'mlp.serio'

        Serio.save_estimator(path, clf)
        self.assert_sealed(path)
        restored = Serio.load_estimator(path, MLPClassifier(**params))

        expected = clf.predict_proba(digits_x[1000:])
        got = restored.predict_proba(digits_x[1000:])
        self.assertEqual(got.tobytes(), expected.tobytes())
        for i, (a, b) in enumerate(zip(restored.coefs_, clf.coefs_)):
            self.assertEqual(a.dtype, b.dtype)
            self.assertEqual(a.tobytes(), b.tobytes(), i)
            self.assertTrue(a.flags.writeable)
        self.assertEqual(restored.classes_.dtype, clf.classes_.dtype)
        self.assertEqual(restored.out_activation_, 'softmax')
        self.assertEqual(restored.n_layers_, clf.n_layers_)
        self.assertIsInstance(restored.loss_curve_, list)
        self.assertEqual(numpy.array(restored.loss_curve_).tobytes(),
                         numpy.array(clf.loss_curve_).tobytes())
        # Loaded into an estimator that partial_fit() has set up, predict()
        # and further training work too, on writable arrays.
        primed = MLPClassifier(**params).partial_fit(digits_x[:1], digits_y[:1],
                                                     classes=numpy.arange(10))
        primed = Serio.load_estimator(path, primed)
        self.assertEqual(primed.predict_proba(digits_x[1000:]).tobytes(), expected.tobytes())
        self.assertEqual(primed.predict(digits_x[1000:]).tobytes(),
                         clf.predict(digits_x[1000:]).tobytes())
        primed.partial_fit(digits_x[:100], digits_y[:100])
        self.assertNotEqual(primed.predict_proba(digits_x[1000:]).tobytes(), expected.tobytes())
        # An estimator fitted otherwise gives other probabilities.
        other = MLPClassifier(hidden_layer_sizes=(32,), max_iter=1, random_state=1)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            other.fit(digits_x[:100], digits_y[:100])
        self.assertNotEqual(other.predict_proba(digits_x[1000:]).tobytes(), expected.tobytes())

    def test_objects_are_refused_by_name(self):
        class Estimator:
            pass
        estimator = Estimator()
        estimator.coef_ = numpy.ones(2)
        estimator.helper_ = object()
        with self.assertRaises(TypeError) as caught:
            Serio.save_estimator(self.dir / 'e.serio', estimator)
        self.assertIn("'helper_'", str(caught.exception))


if __name__ == '__main__':
    unittest.main(verbosity=2)
