# SPDX-License-Identifier: LGPL-2.1-or-later
"""serio.sklearn: fitted scikit-learn estimators saved and restored.

Results are compared by their bytes (ndarray.tobytes()), never with ==
on doubles. Hostile files are made by editing the tree of a valid file
with serio.load()/serio.save(), so that they are what a file can hold.

Exits with 77 (a skip for meson) without NumPy or scikit-learn.
"""

import os
import sys
import tempfile
import unittest
import warnings

try:
    import numpy
    import sklearn
    from sklearn.cluster import KMeans
    from sklearn.compose import ColumnTransformer
    from sklearn.decomposition import PCA
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.exceptions import ConvergenceWarning, NotFittedError
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.neural_network import MLPClassifier, MLPRegressor
    from sklearn.pipeline import Pipeline, make_pipeline, make_union
    from sklearn.preprocessing import FunctionTransformer, StandardScaler
except ImportError as error:
    print('%s (Debian: python3-sklearn)' % error, file=sys.stderr)
    sys.exit(77)

import serio
import serio.sklearn

SEED = 20261201


def data(n=60, features=4, classes=3):
    rng = numpy.random.RandomState(SEED)
    x = rng.randn(n, features)
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5).astype(int)
    assert len(numpy.unique(y)) == classes
    return x, y


def mlp(**params):
    params.setdefault('hidden_layer_sizes', (8,))
    params.setdefault('max_iter', 20)
    params.setdefault('random_state', 0)
    return MLPClassifier(**params)


def fitted(estimator, x, y=None):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ConvergenceWarning)
        return estimator.fit(x, y)


class Case(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.path = os.path.join(self.dir.name, 'model.serio')

    def assertSameBytes(self, a, b):
        a, b = numpy.asarray(a), numpy.asarray(b)
        self.assertEqual((a.dtype, a.shape), (b.dtype, b.shape))
        self.assertEqual(a.tobytes(), b.tobytes())

    def round_trip(self, estimator, empty):
        serio.sklearn.save(self.path, estimator)
        loaded = serio.sklearn.load(self.path, empty)
        self.assertIs(loaded, empty)
        return loaded

    def edited(self, edit):
        """Rewrite the file at self.path with edit(tree) applied."""
        tree = serio.load(self.path)
        edit(tree)
        os.unlink(self.path)
        serio.save(self.path, tree)


class TestRoundTrip(Case):
    def test_pipeline_predict_proba_bit_for_bit(self):
        x, y = data()
        saved = fitted(make_pipeline(StandardScaler(), mlp()), x, y)
        loaded = self.round_trip(saved, make_pipeline(StandardScaler(), mlp()))
        self.assertSameBytes(loaded.predict_proba(x), saved.predict_proba(x))
        self.assertSameBytes(loaded.predict(x), saved.predict(x))
        self.assertSameBytes(loaded[0].transform(x), saved[0].transform(x))
        self.assertSameBytes(loaded[-1].classes_, saved[-1].classes_)

    def test_mlp_partial_fit_bit_identical(self):
        x64, y = data()
        for solver, extra, dtype in (('adam', {}, 'float64'), ('adam', {}, 'float32'),
                                     ('sgd', {'momentum': 0.9}, 'float64'),
                                     ('sgd', {'learning_rate': 'invscaling'}, 'float64')):
            with self.subTest(solver=solver, dtype=dtype, **extra):
                x = x64.astype(dtype)
                saved = fitted(mlp(solver=solver, **extra), x, y)
                loaded = self.round_trip(saved, mlp(solver=solver, **extra))
                self.assertSameBytes(loaded.predict_proba(x), saved.predict_proba(x))
                for estimator in (saved, loaded):
                    estimator.partial_fit(x[:40], y[:40])
                    estimator.partial_fit(x[40:], y[40:])
                for a, b in zip(saved.coefs_ + saved.intercepts_,
                                loaded.coefs_ + loaded.intercepts_):
                    self.assertSameBytes(b, a)
                self.assertEqual(loaded.t_, saved.t_)
                self.assertSameBytes(loaded.loss_curve_, saved.loss_curve_)
                self.assertEqual(loaded.coefs_[0].dtype, numpy.dtype(dtype))

    def test_mlp_regressor_partial_fit(self):
        x, _ = data()
        target = x @ numpy.array([1.0, -0.5, 0.25, 2.0])

        def make():
            return MLPRegressor(hidden_layer_sizes=(8,), max_iter=20, random_state=0)

        saved = fitted(make(), x, target)
        loaded = self.round_trip(saved, make())
        self.assertSameBytes(loaded.predict(x), saved.predict(x))
        saved.partial_fit(x, target)
        loaded.partial_fit(x, target)
        for a, b in zip(saved.coefs_ + saved.intercepts_, loaded.coefs_ + loaded.intercepts_):
            self.assertSameBytes(b, a)

    def test_readme_one_liner(self):
        x, y = data()
        clf = fitted(MLPClassifier(hidden_layer_sizes=(32,)), x, y)
        expected = clf.predict(x), clf.predict_proba(x)
        cwd = os.getcwd()
        os.chdir(self.dir.name)
        self.addCleanup(os.chdir, cwd)
        serio.sklearn.save("mlp.serio", clf)
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            clf = serio.sklearn.load("mlp.serio", MLPClassifier(hidden_layer_sizes=(32,)))
            self.assertSameBytes(clf.predict(x), expected[0])
            self.assertSameBytes(clf.predict_proba(x), expected[1])

    def test_class_or_other_object_refused(self):
        x, y = data()
        serio.sklearn.save(self.path, fitted(mlp(), x, y))
        with self.assertRaisesRegex(TypeError, r'not the class MLPClassifier'):
            serio.sklearn.load(self.path, MLPClassifier)
        with self.assertRaisesRegex(TypeError, 'not a dict'):
            serio.sklearn.save(self.path, {'coefs_': numpy.zeros(3)})

    def test_estimators(self):
        x, y = data()
        target = x @ numpy.array([1.5, -2.0, 0.25, 3.0]) + 0.5
        cases = [
            (LinearRegression, {}, target, ('predict',)),
            (LogisticRegression, {}, y, ('predict_proba', 'decision_function')),
            (LogisticRegression, {}, numpy.array(['no', 'yes', 'maybe'])[y],
             ('predict', 'predict_proba')),
            (StandardScaler, {}, None, ('transform', 'inverse_transform')),
            (PCA, {'n_components': 2, 'random_state': 0}, None, ('transform',)),
            (KMeans, {'n_clusters': 3, 'n_init': 1, 'random_state': 0}, None,
             ('predict', 'transform')),
        ]
        for cls, params, labels, methods in cases:
            with self.subTest(cls=cls.__name__, labels=getattr(labels, 'dtype', None)):
                saved = fitted(cls(**params), x, labels)
                loaded = self.round_trip(saved, cls(**params))
                for method in methods:
                    self.assertSameBytes(getattr(loaded, method)(x),
                                         getattr(saved, method)(x))

    def test_standard_scaler_partial_fit(self):
        x, _ = data()
        saved = StandardScaler().fit(x[:30])
        loaded = self.round_trip(saved, StandardScaler())
        self.assertIs(type(loaded.n_samples_seen_), type(saved.n_samples_seen_))
        saved.partial_fit(x[30:])
        loaded.partial_fit(x[30:])
        for name in ('mean_', 'var_', 'scale_', 'n_samples_seen_'):
            self.assertSameBytes(getattr(loaded, name), getattr(saved, name))

    def test_feature_union(self):
        x, _ = data()
        saved = fitted(make_union(StandardScaler(), PCA(2, random_state=0)), x)
        loaded = self.round_trip(saved, make_union(StandardScaler(), PCA(2, random_state=0)))
        self.assertSameBytes(loaded.transform(x), saved.transform(x))

    def test_column_transformer(self):
        x, y = data(features=6)

        def make(remainder):
            return ColumnTransformer(
                [('num', StandardScaler(), [0, 1]), ('pca', PCA(1), [2, 3]),
                 ('empty', StandardScaler(), []), ('dropped', 'drop', [5]),
                 ('kept', 'passthrough', slice(5, 6))], remainder=remainder)

        for remainder in ('passthrough', 'drop', StandardScaler):
            with self.subTest(remainder=remainder):
                given = remainder() if callable(remainder) else remainder
                saved = make(given).fit(x)
                loaded = self.round_trip(saved, make(
                    remainder() if callable(remainder) else remainder))
                self.assertSameBytes(loaded.transform(x), saved.transform(x))
                self.assertEqual(list(loaded.get_feature_names_out()),
                                 list(saved.get_feature_names_out()))
        saved = fitted(make_pipeline(make('passthrough'), mlp()), x, y)
        loaded = self.round_trip(saved, make_pipeline(make('passthrough'), mlp()))
        self.assertSameBytes(loaded.predict_proba(x), saved.predict_proba(x))
        target = make('drop')
        with warnings.catch_warnings():
            warnings.simplefilter('error')  # no warning for a load that fails
            with self.assertRaisesRegex(serio.DataError, "holds 'passthrough'.* has 'drop'"):
                serio.sklearn.load(self.path, make_pipeline(target, mlp()))
        self.assertFalse(hasattr(target, 'transformers_'))

    def test_stale_state_replaced(self):
        x, y = data()
        saved = fitted(mlp(), x, y)
        target = fitted(mlp(early_stopping=True), x, y)
        self.assertTrue(hasattr(target, '_best_coefs'))
        serio.sklearn.save(self.path, saved)
        with self.assertWarnsRegex(UserWarning, 'early_stopping'):
            serio.sklearn.load(self.path, target)
        self.assertFalse(hasattr(target, '_best_coefs'))
        self.assertSameBytes(target.predict_proba(x), saved.predict_proba(x))


class TestDocs(Case):
    def test_docs_example_runs(self):
        page = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            os.pardir, os.pardir, 'docs', 'sklearn.md')
        with open(page, encoding='utf-8') as f:
            text = f.read()
        marker = '<!-- example: sklearn -->\n```python\n'
        self.assertIn(marker, text)
        code = text.split(marker, 1)[1].split('\n```\n', 1)[0]
        cwd = os.getcwd()
        os.chdir(self.dir.name)
        self.addCleanup(os.chdir, cwd)
        exec(compile(code, page, 'exec'), {})
        self.assertEqual(os.listdir(self.dir.name), ['pipeline.serio'])


class TestRefused(Case):
    def assertNoFile(self):
        self.assertFalse(os.path.exists(self.path))
        self.assertEqual(os.listdir(self.dir.name), [])

    def test_unfitted(self):
        x, y = data()
        for estimator in (MLPClassifier(), make_pipeline(StandardScaler(), mlp()),
                          make_pipeline(fitted(StandardScaler(), x), mlp())):
            with self.subTest(estimator=estimator):
                with self.assertRaisesRegex(NotFittedError, 'not fitted'):
                    serio.sklearn.save(self.path, estimator)
                self.assertNoFile()

    def test_no_arrays(self):
        x, _ = data()
        for estimator in (FunctionTransformer().fit(x),
                          Pipeline([('nothing', 'passthrough')])):
            with self.subTest(estimator=estimator):
                with self.assertRaisesRegex(ValueError, 'no array'):
                    serio.sklearn.save(self.path, estimator)
                self.assertNoFile()

    def test_random_forest(self):
        x, y = data()
        forest = RandomForestClassifier(n_estimators=2, max_depth=2,
                                        random_state=0).fit(x, y)
        with self.assertRaisesRegex(serio.UnstorableError, r'\bestimators_\b'):
            serio.sklearn.save(self.path, forest)
        self.assertNoFile()

    def test_existing_file_kept(self):
        with open(self.path, 'wb') as f:
            f.write(b'v1|x|1|1\n')
        with self.assertRaises(NotFittedError):
            serio.sklearn.save(self.path, MLPClassifier())
        with open(self.path, 'rb') as f:
            self.assertEqual(f.read(), b'v1|x|1|1\n')


class TestHostile(Case):
    def setUp(self):
        super().setUp()
        self.x, self.y = data()
        serio.sklearn.save(self.path, fitted(mlp(), self.x, self.y))

    def assertUntouched(self, estimator):
        self.assertFalse(hasattr(estimator, 'coefs_'))
        self.assertEqual(estimator.activation, 'relu')
        self.assertEqual(estimator.hidden_layer_sizes, (8,))
        self.assertEqual(estimator.predict_proba.__func__,
                         MLPClassifier.predict_proba)

    def test_other_class(self):
        serio.sklearn.save(self.path, LogisticRegression().fit(self.x, self.y))
        target = mlp()
        with self.assertRaises(serio.DataError) as caught:
            serio.sklearn.load(self.path, target)
        self.assertEqual(caught.exception.path, self.path)
        self.assertIn('sklearn.linear_model._logistic.LogisticRegression', str(caught.exception))
        self.assertIn('sklearn.neural_network._multilayer_perceptron.MLPClassifier',
                      str(caught.exception))
        self.assertUntouched(target)

    def test_not_fitted_state_names(self):
        # A hyper-parameter, a method, a private method, an attribute
        # __init__ sets, a configuration attribute, a dunder, a name that
        # no fit sets: each refused, nothing set.
        for name, value in (('activation', 'identity'),
                            ('hidden_layer_sizes', (2,)),
                            ('predict_proba', numpy.zeros(3)),
                            ('_validate_params', 'x'),
                            ('foo', 1),
                            ('loss', 'squared_error'),
                            ('_sklearn_output_config', {'dict': {'transform': 'pandas'}}),
                            ('__class__', 'x')):
            with self.subTest(name=name):
                self.edited(lambda tree: tree['estimator']['state'].update({name: value}))
                target = mlp()
                with self.assertRaisesRegex(ValueError, repr(name)):
                    serio.sklearn.load(self.path, target)
                self.assertUntouched(target)
                self.assertFalse(hasattr(target, '_sklearn_output_config'))
                self.edited(lambda tree: tree['estimator']['state'].pop(name))

    def test_saved_hyperparameters_never_applied(self):
        serio.sklearn.save(self.path, fitted(mlp(activation='tanh'), self.x, self.y))
        target = mlp()
        with self.assertWarnsRegex(UserWarning, "activation \\(saved 'tanh', here 'relu'\\)"):
            serio.sklearn.load(self.path, target)
        self.assertEqual(target.activation, 'relu')

    def test_objects_only_where_known(self):
        def binarizer_as_coefs(tree):
            state = tree['estimator']['state']
            state['coefs_'] = state['_label_binarizer']
        self.edited(binarizer_as_coefs)
        target = mlp()
        with self.assertRaisesRegex(ValueError, r'coefs_.*not allowed'):
            serio.sklearn.load(self.path, target)
        self.assertUntouched(target)

    def test_step_of_other_class(self):
        pipeline = fitted(make_pipeline(StandardScaler(), mlp()), self.x, self.y)
        serio.sklearn.save(self.path, pipeline)
        target = Pipeline([('standardscaler', StandardScaler()),
                           ('mlpclassifier', LogisticRegression())])
        with self.assertRaisesRegex(ValueError, 'MLPClassifier.*LogisticRegression'):
            serio.sklearn.load(self.path, target)
        self.assertFalse(hasattr(target[0], 'mean_'))
        target = Pipeline([('scaler', StandardScaler()), ('mlpclassifier', mlp())])
        with self.assertRaisesRegex(ValueError, "'standardscaler'.*'scaler'"):
            serio.sklearn.load(self.path, target)
        self.assertFalse(hasattr(target[0], 'mean_'))

    def test_other_sklearn_version(self):
        self.edited(lambda tree: tree.update(sklearn='0.20.0'))
        target = mlp()
        with self.assertRaises(ValueError) as caught:
            serio.sklearn.load(self.path, target)
        self.assertIn('0.20.0', str(caught.exception))
        self.assertIn(sklearn.__version__, str(caught.exception))
        self.assertUntouched(target)
        with self.assertWarnsRegex(serio.sklearn.SklearnVersionWarning, '0.20.0'):
            serio.sklearn.load(self.path, target, allow_other_version=True)
        saved = fitted(mlp(), self.x, self.y)
        self.assertSameBytes(target.predict_proba(self.x), saved.predict_proba(self.x))

    def test_thread_count_is_this_machines(self):
        from sklearn.utils._openmp_helpers import _openmp_effective_n_threads
        saved = KMeans(n_clusters=3, n_init=1, random_state=0).fit(self.x)
        serio.sklearn.save(self.path, saved)
        self.edited(lambda tree: tree['estimator']['state'].update(_n_threads=10**6))
        loaded = serio.sklearn.load(self.path, KMeans(n_clusters=3, n_init=1, random_state=0))
        self.assertEqual(loaded._n_threads, _openmp_effective_n_threads())
        self.assertSameBytes(loaded.predict(self.x), saved.predict(self.x))

    def test_arrays_where_texts_belong(self):
        # Each must be refused as what it is, not by an elementwise
        # comparison of the array (NumPy warns of those: an error here).
        cases = (
            (lambda tree: tree['estimator'].update({'class': numpy.zeros(3)}),
             'cannot be loaded into a sklearn.neural_network'),
            (lambda tree: tree.update(format=numpy.zeros(2)), 'not a serio.sklearn file'),
            (lambda tree: tree.update(sklearn=numpy.zeros(2)), 'saved by scikit-learn'),
            (lambda tree: tree['estimator']['state']['_optimizer']['optimizer'].update(
                {'class': numpy.zeros(2)}), 'trains with'),
        )
        for edit, message in cases:
            with self.subTest(message=message):
                serio.sklearn.save(self.path, fitted(mlp(), self.x, self.y))
                self.edited(edit)
                target = mlp()
                with warnings.catch_warnings():
                    warnings.simplefilter('error')
                    with self.assertRaisesRegex(serio.DataError, message):
                        serio.sklearn.load(self.path, target)
                self.assertUntouched(target)

    def test_not_an_estimator_file(self):
        serio.save(self.path, {'w': numpy.zeros(3)})
        with self.assertRaisesRegex(ValueError, 'missing format'):
            serio.sklearn.load(self.path, mlp())


if __name__ == '__main__':
    unittest.main()
