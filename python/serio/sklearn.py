# SPDX-License-Identifier: LGPL-2.1-or-later
"""Save and restore the fitted state of scikit-learn estimators.

One line each way::

    serio.sklearn.save("mlp.serio", clf)
    clf = serio.sklearn.load("mlp.serio", MLPClassifier(hidden_layer_sizes=(32,)))

:func:`save` writes, through :func:`serio.save`, the fitted state of an
estimator: the attributes that fitting set (``coefs_``, ``classes_``, and
the private ones a class needs to predict and to go on training, such as
an ``MLPClassifier``'s label binarizer and optimizer), with the class and
the scikit-learn version. A ``Pipeline``, a ``FeatureUnion`` or a
``ColumnTransformer`` is saved step by step. :func:`load` restores that
state into an estimator that you make, with your hyper-parameters: nothing
in the file is ever applied as a hyper-parameter, a method or any other
attribute of the class, and no class named in the file is ever imported or
made.

What cannot be stored as numbers, arrays or text (the trees of a random
forest, a loss object, a callable) is refused, naming the attribute, and
nothing is written. See docs/sklearn.md.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

import numpy
import sklearn
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import FunctionTransformer, LabelBinarizer
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.validation import check_is_fitted

import serio as _serio
from serio._errors import SERIO_DOMAIN, DataError, UnstorableError
from serio._io import PathLike, as_file
from gi.repository import Serio

try:  # private scikit-learn modules: the optimizers an MLP trains with
    from sklearn.neural_network import MLPClassifier
    from sklearn.neural_network._multilayer_perceptron import (
        BaseMultilayerPerceptron)
    from sklearn.neural_network._stochastic_optimizers import (
        AdamOptimizer, SGDOptimizer)
except ImportError:  # pragma: no cover - another scikit-learn layout
    MLPClassifier = BaseMultilayerPerceptron = None  # type: ignore
    AdamOptimizer = SGDOptimizer = None  # type: ignore

try:
    from sklearn.utils._openmp_helpers import _openmp_effective_n_threads
except ImportError:  # pragma: no cover - another scikit-learn layout
    _openmp_effective_n_threads = None  # type: ignore

__all__ = ['save', 'load', 'FORMAT', 'FORMAT_VERSION', 'SklearnVersionWarning']

#: The value of the file's ``format`` key.
FORMAT = 'serio.sklearn'
#: The version of the layout of the tree this module writes.
FORMAT_VERSION = 1

E = TypeVar('E')

# Numeric element types a serio file holds (bfloat16 is not a numpy type).
_DTYPES = frozenset(numpy.dtype(t) for t in (
    'float64', 'float32', 'float16', 'int8', 'int16', 'int32', 'int64',
    'uint8', 'uint16', 'uint32', 'uint64', 'bool'))
_PLAIN = (type(None), bool, int, float, str)
_NUMBERS = (int, float, numpy.integer, numpy.floating)
# Attributes that configure an estimator without being fitted state, even
# where a clone would not carry them.
_NOT_STATE = frozenset(('_sklearn_output_config', '_metadata_request', '_estimator_type'))
# The tags of the one-key dicts that stand for values other than plain
# leaves (a dict of the estimator's own is stored under 'dict').
_TAGS = ('dict', 'scalars', 'slice', 'strings', 'random_state', 'estimator',
         'optimizer')


class SklearnVersionWarning(UserWarning):
    """A file saved by another scikit-learn version was loaded anyway
    (``load(..., allow_other_version=True)``)."""


class _Refused(Exception):
    """A value that cannot be stored, with where it is."""


def _class_name(cls: type) -> str:
    return '%s.%s' % (cls.__module__, cls.__qualname__)


def _construction_names(estimator: Any) -> set:
    """The instance attributes an estimator has before any fit: its
    hyper-parameters and its configuration. None of them is fitted state."""
    return set(vars(clone(estimator))) | _NOT_STATE


def _same(a: Any, b: Any) -> bool:
    """a == b for a plain value read from a file: never an elementwise
    comparison of an array that stands where a text is expected."""
    return type(a) is type(b) and a == b


def _fitted_name(name: str) -> bool:
    return name.isidentifier() and not name.startswith('__') and (
        name.endswith('_') or name.startswith('_'))


# ---------------------------------------------------------------- values

def _encode_array(value: numpy.ndarray, where: str) -> Any:
    dtype = value.dtype
    if dtype.kind in 'biuf':
        native = dtype.newbyteorder('=')
        if native not in _DTYPES:
            raise _Refused('%s: a %s array cannot be stored' % (where, dtype))
        return value.astype(native, copy=False)
    if dtype.kind == 'U' or (dtype.kind == 'O' and all(
            type(item) is str for item in value.flat)):
        return {'strings': {
            'dtype': 'object' if dtype.kind == 'O' else 'U%d' % (dtype.itemsize // 4),
            'shape': [int(n) for n in value.shape],
            'items': [str(item) for item in value.flat]}}
    raise _Refused('%s: a %s array is not numbers or text' % (where, dtype))


def _encode_random_state(value: numpy.random.RandomState, where: str) -> Any:
    state = value.get_state(legacy=True)
    if not isinstance(state, tuple) or state[0] != 'MT19937':
        raise _Refused('%s: a RandomState with another bit generator than'
                       ' MT19937 is not saved' % where)
    return {'random_state': {
        'keys': numpy.asarray(state[1], dtype=numpy.uint32),
        'pos': int(state[2]), 'has_gauss': int(state[3]),
        'cached_gaussian': float(state[4])}}


def _encode_value(value: Any, where: str) -> Any:
    """The tree that stands for value, or _Refused naming where."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, numpy.ndarray):
        return _encode_array(value, where)
    if isinstance(value, numpy.generic):
        if numpy.dtype(value.dtype).newbyteorder('=') not in _DTYPES:
            raise _Refused('%s: a numpy %s is not a number that can be stored'
                           % (where, value.dtype))
        return value  # serio keeps a NumPy scalar's type
    if (type(value) is list and value and isinstance(value[0], numpy.generic)
            and all(type(item) is type(value[0]) for item in value)
            and value[0].dtype in _DTYPES):
        # A loss curve: a list of NumPy scalars is one array.
        return {'scalars': numpy.array(value)}
    if type(value) in (list, tuple):
        items = [_encode_value(item, '%s[%d]' % (where, i))
                 for i, item in enumerate(value)]
        return items if type(value) is list else tuple(items)
    if type(value) is dict:
        for key in value:
            if type(key) not in (str, int):
                raise _Refused('%s: a key %r is not a str or an int' % (where, key))
        return {'dict': {key: _encode_value(item, '%s[%r]' % (where, key))
                         for key, item in value.items()}}
    if type(value) is numpy.random.RandomState:
        return _encode_random_state(value, where)
    if type(value) is slice:
        return {'slice': [_encode_value(part, where + '.' + field) for part, field
                          in ((value.start, 'start'), (value.stop, 'stop'),
                              (value.step, 'step'))]}
    if hasattr(value, 'get_params'):
        raise _Refused('%s: a %s, an estimator held as fitted state, which this'
                       ' module does not rebuild' % (where, _class_name(type(value))))
    raise _Refused('%s: a %s is not numbers, arrays or text'
                   % (where, _class_name(type(value))))


def _tag(value: Any, where: str) -> Tuple[str, Any]:
    if len(value) != 1 or next(iter(value)) not in _TAGS:
        raise ValueError('%s: %r is not one of the values this module writes'
                         % (where, sorted(value, key=str)))
    return next(iter(value.items()))


def _decode_strings(body: Any, where: str) -> numpy.ndarray:
    _check_keys(body, ('dtype', 'shape', 'items'), where)
    dtype, shape, items = body['dtype'], body['shape'], body['items']
    if (type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape)
            or type(items) is not list or not all(type(s) is str for s in items)
            or int(numpy.prod(shape, dtype=numpy.int64)) != len(items)):
        raise ValueError('%s: a text array needs a shape and as many texts' % where)
    if _same(dtype, 'object'):
        array = numpy.empty(len(items), dtype=object)
        array[:] = items
    elif (type(dtype) is str and dtype[:1] == 'U' and dtype[1:].isdigit()
          and dtype[1:] == str(int(dtype[1:])) and all(len(s) <= int(dtype[1:]) for s in items)):
        array = numpy.array(items, dtype=dtype)
    else:
        raise ValueError('%s: %r is not a text array type' % (where, dtype))
    return array.reshape(shape)


def _decode_random_state(body: Any, where: str) -> numpy.random.RandomState:
    _check_keys(body, ('keys', 'pos', 'has_gauss', 'cached_gaussian'), where)
    keys = body['keys']
    if (not isinstance(keys, numpy.ndarray) or keys.dtype != numpy.uint32
            or keys.shape != (624,) or type(body['pos']) is not int
            or type(body['has_gauss']) is not int
            or type(body['cached_gaussian']) is not float):
        raise ValueError('%s: not the state of a RandomState' % where)
    generator = numpy.random.RandomState()
    try:
        generator.set_state(('MT19937', keys, body['pos'], body['has_gauss'],
                             body['cached_gaussian']))
    except (ValueError, TypeError) as error:
        raise ValueError('%s: not the state of a RandomState (%s)' % (where, error)) from None
    return generator


def _decode_value(value: Any, where: str) -> Any:
    """The value a tree read from a file stands for; estimators and
    optimizers are refused here (only _SPECIAL attributes take them)."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, (numpy.ndarray, numpy.generic)):
        if value.dtype not in _DTYPES:
            raise ValueError('%s: a %s value is not one this module writes'
                             % (where, value.dtype))
        return value
    if type(value) in (list, tuple):
        items = [_decode_value(item, '%s[%d]' % (where, i))
                 for i, item in enumerate(value)]
        return items if type(value) is list else tuple(items)
    if type(value) is not dict:
        raise ValueError('%s: a %s is not a value this module writes'
                         % (where, type(value).__name__))
    tag, body = _tag(value, where)
    if tag == 'dict' and type(body) is dict:
        return {key: _decode_value(item, '%s[%r]' % (where, key))
                for key, item in body.items()}
    if tag == 'scalars' and isinstance(body, numpy.ndarray) and body.ndim == 1:
        return list(_decode_value(body, where))
    if tag == 'strings':
        return _decode_strings(body, where)
    if tag == 'random_state':
        return _decode_random_state(body, where)
    if tag == 'slice' and type(body) is list and len(body) == 3 and all(
            part is None or type(part) is int for part in body):
        return slice(*body)
    raise ValueError('%s: a %r value is not allowed here' % (where, tag))


def _check_keys(node: Any, keys: Tuple[str, ...], where: str,
                optional: Tuple[str, ...] = ()) -> None:
    if type(node) is not dict:
        raise ValueError('%s: a %s where a dict of %s is needed'
                         % (where, type(node).__name__, ', '.join(keys)))
    missing = [k for k in keys if k not in node]
    extra = [k for k in node if k not in keys and k not in optional]
    if missing or extra:
        raise ValueError('%s: %s' % (where, '; '.join(
            (['missing %s' % ', '.join(missing)] if missing else [])
            + (['unknown %s' % ', '.join(map(repr, extra))] if extra else []))))


# ------------------------------------------------ attributes that are objects

class _Special:
    """A private fitted attribute that holds an object, saved and rebuilt
    the way this module knows for its owner's class."""

    def __init__(self, owner: Optional[type], encode: Callable[[Any, Any, str], Any],
                 decode: Callable[[Any, Any, Dict[str, Any], str, list], Any]) -> None:
        self.owner = owner
        self.encode = encode
        self.decode = decode


def _encode_label_binarizer(owner: Any, value: Any, where: str) -> Any:
    if type(value) is not LabelBinarizer:
        raise _Refused('%s: a %s is not a LabelBinarizer' % (where, _class_name(type(value))))
    return {'estimator': _encode_estimator(value, where)}


def _decode_label_binarizer(owner: Any, value: Any, state: Dict[str, Any],
                            where: str, actions: list) -> Any:
    if type(value) is not dict or _tag(value, where)[0] != 'estimator':
        raise ValueError('%s: a LabelBinarizer is needed here' % where)
    # As MLPClassifier makes it: LabelBinarizer() with its defaults.
    binarizer = LabelBinarizer()
    _plan(binarizer, value['estimator'], where, actions, fresh=True)
    return binarizer


_OPTIMIZER_STATE = {'AdamOptimizer': ('learning_rate', 't', 'ms', 'vs'),
                    'SGDOptimizer': ('learning_rate', 'velocities')}


def _encode_optimizer(owner: Any, value: Any, where: str) -> Any:
    if type(value) not in (AdamOptimizer, SGDOptimizer):
        raise _Refused('%s: a %s is not an optimizer this module knows'
                       % (where, _class_name(type(value))))
    names = _OPTIMIZER_STATE[type(value).__name__]
    return {'optimizer': {
        'class': _class_name(type(value)),
        'state': {name: _encode_value(getattr(value, name), '%s.%s' % (where, name))
                  for name in names}}}


def _decode_optimizer(owner: Any, value: Any, state: Dict[str, Any],
                      where: str, actions: list) -> Any:
    if type(value) is not dict or _tag(value, where)[0] != 'optimizer':
        raise ValueError('%s: an optimizer is needed here' % where)
    body = value['optimizer']
    _check_keys(body, ('class', 'state'), where)
    cls = {'adam': AdamOptimizer, 'sgd': SGDOptimizer}.get(owner.solver)
    if cls is None or not _same(body['class'], _class_name(cls)):
        raise ValueError('%s: the file holds a %r, but an estimator with solver=%r'
                         ' trains with %s' % (where, body['class'], owner.solver,
                                              _class_name(cls) if cls else 'none'))
    params = [state.get('coefs_'), state.get('intercepts_')]
    if not all(type(p) is list for p in params):
        raise ValueError('%s: an optimizer needs the coefs_ and intercepts_ arrays'
                         % where)
    params = params[0] + params[1]
    if not params or not all(isinstance(p, numpy.ndarray) for p in params):
        raise ValueError('%s: an optimizer needs the coefs_ and intercepts_ arrays'
                         % where)
    # Made as BaseMultilayerPerceptron._fit_stochastic makes it, from the
    # estimator's own hyper-parameters; then its state from the file.
    if cls is SGDOptimizer:
        optimizer = cls(params, owner.learning_rate_init, owner.learning_rate,
                        owner.momentum, owner.nesterovs_momentum, owner.power_t)
    else:
        optimizer = cls(params, owner.learning_rate_init, owner.beta_1,
                        owner.beta_2, owner.epsilon)
    names = _OPTIMIZER_STATE[cls.__name__]
    _check_keys(body['state'], names, where + '.state')
    for name in names:
        item = _decode_value(body['state'][name], '%s.%s' % (where, name))
        like = getattr(optimizer, name)
        if type(like) is list:
            if (type(item) is not list or len(item) != len(like) or not all(
                    isinstance(a, numpy.ndarray) and a.shape == b.shape
                    and a.dtype == b.dtype for a, b in zip(item, like))):
                raise ValueError('%s.%s: not %d arrays of the shapes of coefs_ and'
                                 ' intercepts_' % (where, name, len(like)))
        elif (type(item) is bool or not isinstance(item, _NUMBERS)
              or isinstance(like, int) != isinstance(item, (int, numpy.integer))):
            raise ValueError('%s.%s: a %s where a %s is needed'
                             % (where, name, type(item).__name__, type(like).__name__))
        actions.append((optimizer, name, item))
    return optimizer


def _decode_n_threads(owner: Any, value: Any, state: Dict[str, Any],
                      where: str, actions: list) -> Any:
    # A thread count is this machine's, not the saved one's.
    if type(value) is not int:
        raise ValueError('%s: a %s where an int is needed' % (where, type(value).__name__))
    return _openmp_effective_n_threads()


def _encode_placed(owner: Any, step: Any, where: str) -> Any:
    """A ColumnTransformer's transformer: 'drop', 'passthrough', None for
    the unfitted estimator of its parameters (its columns are empty), or
    the fitted clone's node."""
    if isinstance(step, str):
        return step
    if any(step is given for given in _column_parameters(owner).values()):
        return None
    return _encode_estimator(step, where)


def _column_parameters(owner: Any) -> Dict[str, Any]:
    """name -> the transformer a ColumnTransformer was given for it."""
    given = {name: step for name, step, _ in owner.transformers}
    given['remainder'] = owner.remainder
    return given


def _decode_placed(owner: Any, name: Any, saved: Any, where: str, actions: list) -> Any:
    given = _column_parameters(owner)
    if type(name) is not str or name not in given:
        raise ValueError('%s: the file has a transformer %r, this ColumnTransformer'
                         ' has none of that name' % (where, name))
    step = given[name]
    if isinstance(saved, str) or isinstance(step, str):
        if not _same(saved, step):
            raise ValueError('%s: the file holds %s, this ColumnTransformer has %r'
                             % (where, repr(saved) if isinstance(saved, str)
                                else 'an estimator', step))
        return step
    if saved is None:
        return step
    fitted_step = clone(step)
    _plan(fitted_step, saved, where, actions, fresh=True)
    return fitted_step


def _encode_transformers(owner: Any, value: Any, where: str) -> Any:
    if type(value) is not list or not all(type(t) is tuple and len(t) == 3 for t in value):
        raise _Refused('%s: not a list of (name, transformer, columns)' % where)
    return [{'name': name,
             'transformer': _encode_placed(owner, step, '%s[%r]' % (where, name)),
             'columns': _encode_value(columns, '%s[%r].columns' % (where, name))}
            for name, step, columns in value]


def _decode_transformers(owner: Any, value: Any, state: Dict[str, Any],
                         where: str, actions: list) -> Any:
    names = [name for name, _, _ in owner.transformers]
    if type(value) is not list or [entry.get('name') if type(entry) is dict else None
                                   for entry in value] not in (names, names + ['remainder']):
        raise ValueError('%s: the file does not hold the transformers %s (and the'
                         ' remainder) of this ColumnTransformer' % (where, names))
    result = []
    for entry in value:
        at = '%s[%r]' % (where, entry['name'])
        _check_keys(entry, ('name', 'transformer', 'columns'), at)
        result.append((entry['name'],
                       _decode_placed(owner, entry['name'], entry['transformer'], at, actions),
                       _decode_value(entry['columns'], at + '.columns')))
    return result


def _encode_remainder(owner: Any, value: Any, where: str) -> Any:
    if type(value) is not tuple or len(value) != 3 or value[0] != 'remainder':
        raise _Refused('%s: not a (\'remainder\', transformer, columns)' % where)
    return {'transformer': _encode_placed(owner, value[1], where),
            'columns': _encode_value(value[2], where + '.columns')}


def _decode_remainder(owner: Any, value: Any, state: Dict[str, Any],
                      where: str, actions: list) -> Any:
    _check_keys(value, ('transformer', 'columns'), where)
    if not (value['transformer'] is None or isinstance(value['transformer'], str)):
        raise ValueError('%s: the remainder is kept unfitted here' % where)
    return ('remainder', _decode_placed(owner, 'remainder', value['transformer'],
                                        where, actions),
            _decode_value(value['columns'], where + '.columns'))


def _passthrough(owner: Any) -> Any:
    # As ColumnTransformer._iter(replace_strings=True) makes it.
    return FunctionTransformer(accept_sparse=True, check_inverse=False,
                               feature_names_out='one-to-one').set_output(
        transform=_get_output_config('transform', owner)['dense'])


def _encode_passthroughs(owner: Any, value: Any, where: str) -> Any:
    if type(value) is not dict or not all(
            type(step) is FunctionTransformer for step in value.values()):
        raise _Refused('%s: not a dict of FunctionTransformers' % where)
    return {'dict': {name: _encode_estimator(step, '%s[%r]' % (where, name))
                     for name, step in value.items()}}


def _decode_passthroughs(owner: Any, value: Any, state: Dict[str, Any],
                         where: str, actions: list) -> Any:
    if type(value) is not dict or _tag(value, where)[0] != 'dict':
        raise ValueError('%s: a dict is needed here' % where)
    given = _column_parameters(owner)
    result = {}
    for name, node in value['dict'].items():
        if given.get(name) != 'passthrough':
            raise ValueError('%s: %r is not a passthrough of this ColumnTransformer'
                             % (where, name))
        result[name] = _passthrough(owner)
        _plan(result[name], node, '%s[%r]' % (where, name), actions, fresh=True)
    return result


_SPECIAL: Dict[str, _Special] = {
    'transformers_': _Special(ColumnTransformer, _encode_transformers,
                              _decode_transformers),
    '_remainder': _Special(ColumnTransformer, _encode_remainder, _decode_remainder),
    '_name_to_fitted_passthrough': _Special(ColumnTransformer, _encode_passthroughs,
                                            _decode_passthroughs),
}
if MLPClassifier is not None:
    _SPECIAL['_label_binarizer'] = _Special(
        MLPClassifier, _encode_label_binarizer, _decode_label_binarizer)
    _SPECIAL['_optimizer'] = _Special(
        BaseMultilayerPerceptron, _encode_optimizer, _decode_optimizer)
if _openmp_effective_n_threads is not None:
    _SPECIAL['_n_threads'] = _Special(
        None, lambda owner, value, where: _encode_value(value, where),
        _decode_n_threads)


def _special(owner: Any, name: str) -> Optional[_Special]:
    special = _SPECIAL.get(name)
    if special is not None and (special.owner is None or isinstance(owner, special.owner)):
        return special
    return None


# ------------------------------------------------------------ estimators

def _children(estimator: Any) -> Optional[Tuple[str, List[Tuple[str, Any]]]]:
    """(parameter, [(name, step)]) of a Pipeline or FeatureUnion, whose
    steps are fitted in place, or None."""
    if isinstance(estimator, Pipeline):
        return 'steps', list(estimator.steps)
    if isinstance(estimator, FeatureUnion):
        return 'transformer_list', list(estimator.transformer_list)
    return None


def _is_estimator(step: Any) -> bool:
    return not (step is None or isinstance(step, str))


def _simple(value: Any) -> bool:
    if type(value) in (list, tuple):
        return all(_simple(item) for item in value)
    return type(value) in _PLAIN


def _encode_estimator(estimator: Any, where: str) -> Dict[str, Any]:
    node: Dict[str, Any] = {
        'class': _class_name(type(estimator)),
        'params': {name: value for name, value
                   in estimator.get_params(deep=False).items() if _simple(value)},
    }
    children = _children(estimator)
    if children is not None:
        parameter, steps = children
        node[parameter] = [
            {'name': name, 'estimator': _encode_estimator(
                step, '%s.%s[%r]' % (where, parameter, name))
             if _is_estimator(step) else step}
            for name, step in steps]
    else:
        try:
            check_is_fitted(estimator)
        except NotFittedError:
            raise NotFittedError('%s: this %s is not fitted: nothing was saved'
                                 % (where, type(estimator).__name__)) from None
    before = _construction_names(estimator)
    state, refused = {}, []
    for name, value in vars(estimator).items():
        if name in before or name.startswith('__'):
            continue
        attribute = '%s.%s' % (where, name)
        try:
            if not _fitted_name(name) or hasattr(type(estimator), name):
                raise _Refused('%s: not a name of fitted state' % attribute)
            special = _special(estimator, name)
            if special is not None:
                state[name] = special.encode(estimator, value, attribute)
            else:
                state[name] = _encode_value(value, attribute)
        except _Refused as error:
            refused.append(str(error))
    if refused:
        raise UnstorableError('%s: fitted state that cannot be saved as arrays, so'
                              ' nothing was saved: %s' % (where, '; '.join(refused)))
    node['state'] = state
    return node


def _count_arrays(tree: Any) -> int:
    if isinstance(tree, numpy.ndarray):
        return 1
    if type(tree) is dict:
        return sum(_count_arrays(item) for item in tree.values())
    if type(tree) in (list, tuple):
        return sum(_count_arrays(item) for item in tree)
    return 0


def _plan(target: Any, node: Any, where: str, actions: list,
          fresh: bool = False) -> None:
    """Check node against target and add to actions the (object, name,
    value) to set (value _DELETE to remove a stale attribute; (None,
    message, _WARN) for a warning); raises
    ValueError, and changes nothing, where the file does not fit."""
    _check_keys(node, ('class', 'params', 'state'), where,
                optional=('steps', 'transformer_list'))
    expected = _class_name(type(target))
    if not _same(node['class'], expected):
        raise ValueError('%s: the file holds a %s, which cannot be loaded into a %s'
                         % (where, node['class'], expected))
    params = node['params']
    if type(params) is not dict or not all(
            type(k) is str and _simple(v) for k, v in params.items()):
        raise ValueError('%s.params: not a dict of plain values' % where)
    own = target.get_params(deep=False)
    differ = ['%s (saved %r, here %r)' % (k, v, own[k]) for k, v in params.items()
              if k in own and _simple(own[k]) and own[k] != v]
    if differ:
        # Warned by load() once the whole file is found to fit.
        actions.append((None, '%s: the %s has other hyper-parameters than the saved'
                        ' one; its own are kept: %s' % (where, type(target).__name__,
                                                        ', '.join(differ)), _WARN))
    children = _children(target)
    for parameter in ('steps', 'transformer_list'):
        if (children is None or children[0] != parameter) and parameter in node:
            raise ValueError('%s: unknown %r' % (where, parameter))
    if children is not None:
        parameter, steps = children
        saved = node.get(parameter)
        if type(saved) is not list or len(saved) != len(steps):
            raise ValueError('%s.%s: the file holds %s steps, the %s has %d'
                             % (where, parameter, len(saved) if type(saved) is list
                                else 'no', type(target).__name__, len(steps)))
        for i, ((name, step), entry) in enumerate(zip(steps, saved)):
            at = '%s.%s[%d]' % (where, parameter, i)
            _check_keys(entry, ('name', 'estimator'), at)
            if not _same(entry['name'], name):
                raise ValueError('%s: the file names this step %r, the %s names it %r'
                                 % (at, entry['name'], type(target).__name__, name))
            at = '%s.%s[%r]' % (where, parameter, name)
            if _is_estimator(step):
                _plan(step, entry['estimator'], at, actions)
            elif not _same(entry['estimator'], step):
                raise ValueError('%s: the file holds %r here, the %s has %r'
                                 % (at, entry['estimator'], type(target).__name__, step))
    state = node['state']
    if type(state) is not dict:
        raise ValueError('%s.state: a %s, not a dict' % (where, type(state).__name__))
    before = _construction_names(target)
    refused = [name for name in state
               if type(name) is not str or not _fitted_name(name)
               or name in before or hasattr(type(target), name)]
    if refused:
        raise ValueError('%s: %s cannot be restored into this %s: not fitted state (a'
                         ' hyper-parameter, a method or not a fitted name); nothing'
                         ' was loaded' % (where, ', '.join(map(repr, refused)),
                                          type(target).__name__))
    values: Dict[str, Any] = {}
    for name, value in state.items():
        if _special(target, name) is None:
            values[name] = _decode_value(value, '%s.%s' % (where, name))
    for name, value in state.items():
        special = _special(target, name)
        if special is not None:
            values[name] = special.decode(target, value, values,
                                          '%s.%s' % (where, name), actions)
    if not fresh:
        actions.extend((target, name, _DELETE) for name in vars(target)
                       if _fitted_name(name) and name not in before
                       and name not in values)
    actions.extend((target, name, value) for name, value in values.items())


_DELETE = object()
_WARN = object()


# ------------------------------------------------------------ public API

def _check_estimator(estimator: Any, function: str) -> None:
    if isinstance(estimator, type):
        raise TypeError('serio.sklearn.%s() needs an estimator, not the class %s:'
                        ' %s(...)' % (function, estimator.__name__, estimator.__name__))
    if not hasattr(estimator, 'get_params'):
        raise TypeError('serio.sklearn.%s() needs a scikit-learn estimator, not a %s'
                        % (function, type(estimator).__name__))


def save(path: PathLike, estimator: Any) -> None:
    """Save the fitted state of a scikit-learn estimator to path (a
    ``str``, an ``os.PathLike`` or a ``Gio.File``, as for :func:`serio.save`).

    estimator is a fitted estimator, a ``Pipeline``, a ``FeatureUnion`` or
    a ``ColumnTransformer`` (saved step by step: each step's fitted state,
    with the step's name).
    The file records each estimator's class (module and qualified name),
    the hyper-parameters that are plain values (only to warn, on load,
    when they differ), and the scikit-learn version. It is written by
    :func:`serio.save`: plain v1, every array readable by name.

    The fitted state is every attribute that fitting set (all those a
    clone of the estimator lacks): arrays, numbers, texts, lists and
    dicts of those, NumPy scalars and ``RandomState`` generators, and the
    objects this module knows how to rebuild (an ``MLPClassifier``'s
    ``_label_binarizer``, an MLP's ``_optimizer``, a ``ColumnTransformer``'s
    fitted transformers).

    Raises :class:`sklearn.exceptions.NotFittedError` (a ValueError) for an
    estimator or step that is not fitted, :class:`serio.UnstorableError` (a
    TypeError and a ValueError) naming every attribute that is not arrays
    or numbers (a random forest's ``estimators_``), ValueError when the
    state holds no array at all, and the errors of :func:`serio.save`. In each case nothing
    is written (a file already at path is left as it was).
    """
    _check_estimator(estimator, 'save')
    where = type(estimator).__name__
    tree = {'format': FORMAT, 'version': FORMAT_VERSION,
            'sklearn': sklearn.__version__,
            'estimator': _encode_estimator(estimator, where)}
    if _count_arrays(tree['estimator']) == 0:
        raise ValueError('%s: the fitted state holds no array: nothing was saved'
                         % where)
    _serio.save(path, tree)


def load(path: PathLike, estimator: E, *, allow_other_version: bool = False) -> E:
    """Restore into estimator the fitted state that :func:`save` wrote to
    path, and return estimator.

    estimator is made by you, of the class that was saved, with its
    hyper-parameters (``MLPClassifier(hidden_layer_sizes=(32,))``): a
    ``Pipeline``, ``FeatureUnion`` or ``ColumnTransformer`` with the same
    step names and step classes. Only fitted state is restored; the file never sets a
    hyper-parameter, a method, a property or any attribute an unfitted
    estimator has, and a file that tries is refused. Fitted state the
    estimator held before is replaced. When the saved hyper-parameters
    differ from the estimator's, a UserWarning names them (the estimator's
    are kept). The loaded estimator predicts, transforms and
    ``partial_fit``\\ s as the saved one did, bit for bit.

    A file saved by another scikit-learn version is refused (naming both
    versions), since the fitted state a class keeps can change
    between versions; with ``allow_other_version=True`` it is loaded with a
    :class:`SklearnVersionWarning`.

    Raises :class:`serio.DataError` (a ValueError), naming the file and
    the place in it, for a file that is not an estimator's, of another
    class (naming both), of another version, or that does not fit the
    estimator; nothing is set on estimator then. Errors of reading the
    file are those of :func:`serio.load`; TypeError for an estimator that
    is not one (a class, not an instance).
    """
    _check_estimator(estimator, 'load')
    name = as_file(path)[1]
    tree = _serio.load(path)
    try:
        actions = _load_actions(name, tree, estimator, allow_other_version)
    except ValueError as error:
        raise DataError(str(error), SERIO_DOMAIN, int(Serio.Error.SYNTAX),
                        path=name) from None
    for target, attribute, value in actions:
        if value is _WARN:
            warnings.warn(attribute, UserWarning, stacklevel=2)
        elif value is _DELETE:
            delattr(target, attribute)
        else:
            setattr(target, attribute, value)
    return estimator


def _load_actions(name: str, tree: Any, estimator: Any,
                  allow_other_version: bool) -> list:
    """What load() does to estimator, checked all through: ValueError
    where the file does not fit."""
    _check_keys(tree, ('format', 'version', 'sklearn', 'estimator'), name)
    if not (_same(tree['format'], FORMAT) and _same(tree['version'], FORMAT_VERSION)):
        raise ValueError('%s: not a %s file of version %d (format %r, version %r)'
                         % (name, FORMAT, FORMAT_VERSION, tree['format'], tree['version']))
    if not _same(tree['sklearn'], sklearn.__version__):
        message = ('%s was saved by scikit-learn %s, this is scikit-learn %s: the'
                   ' fitted state of a class can change between versions'
                   % (name, tree['sklearn'], sklearn.__version__))
        if not allow_other_version:
            raise ValueError(message + ' (allow_other_version=True loads it anyway)')
        warnings.warn(message, SklearnVersionWarning, stacklevel=3)
    actions: list = []
    _plan(estimator, tree['estimator'], '%s: %s' % (name, type(estimator).__name__),
          actions)
    return actions
