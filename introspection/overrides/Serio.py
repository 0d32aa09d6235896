# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Serio.py: PyGObject overrides that give Serio.Bundle the Python protocols
#
# Copyright 2026 The libserio authors

"""Pythonic access to :class:`Serio.Bundle`, and one-call save and load for
NumPy, PyTorch and scikit-learn.

PyGObject loads this module by itself on ``from gi.repository import Serio``
when it lies in a ``gi/overrides/`` directory on ``sys.path``.

Module functions, like ``np.savez``/``np.load`` and ``torch.save``/
``torch.load``::

    Serio.save("model.serio", {"w": w, "b": b})       # a mapping of arrays
    arrays = Serio.load("model.serio")                # {"w": w, "b": b}
    Serio.save_torch("model.serio", model)            # or a state_dict
    Serio.load_torch("model.serio", model)            # into the model
    Serio.save_estimator("mlp.serio", clf)            # scikit-learn
    Serio.load_estimator("mlp.serio", MLPClassifier(...))

Every array keeps its shape (in its name, as ``w[256x128]``) and its data
type (in a small ``serio.dtypes`` array, see :func:`save`), bit for bit.

A bundle reads like a read-only mapping from names to lists of floats, in
bundle order::

    b = Serio.Bundle.from_dict({"dense.w": [0.1, -0.0], "dense.b": []})
    len(b)               # 2: the number of names
    "dense.w" in b       # True
    b["dense.w"]         # [0.1, -0.0]; the first array of that name
    list(b)              # ["dense.w", "dense.b"]: the names
    b.items()            # [("dense.w", [0.1, -0.0]), ("dense.b", [])]
    b.to_dict()          # {"dense.w": [0.1, -0.0], "dense.b": []}

and, with NumPy, ``b.to_numpy("dense.w")`` and ``b.append_numpy(name, array)``
move the values through a GBytes rather than one Python float at a time.

Semantics worth knowing:

* Keys are names, and names are ``str``: any other key type (an ``int``
  included) raises :exc:`TypeError`. Reach arrays by position with
  ``get_name(i)`` and ``get_values(i)``, for ``i`` below ``b.n_arrays``; an
  index out of range raises :exc:`IndexError`.
* A key finds an array as ``lookup()`` does: the exact stored name first,
  then the base name, so ``b["conv.weight"]`` finds ``conv.weight[2x3]``.
* Duplicate names are legal in a bundle but not in a mapping: iteration,
  ``keys()``, ``items()``, ``values()``, ``len()``, ``to_dict()`` and
  ``b[name]`` see each name once, with its first array. ``b.n_arrays``
  counts every array, and ``get_name(i)``/``get_values(i)`` reach them all.
* Values are flat lists of floats, in C order, as ``get_values()`` returns
  them; ``to_numpy()`` gives an array in its shape.
* ``bool(b)`` is always ``True``, as for other GObject containers
  (``Gio.Settings``, ``Gtk.TreeModel``): ``if b:`` tests for ``None``, not
  for emptiness. Use ``len(b) == 0`` for that.
* ``==`` and ``hash()`` stay those of every GObject wrapper, identity: a
  bundle is mutable. Compare names and bits with ``a.equal(b)``.
"""

import collections
import collections.abc
import os
import sys

from ..overrides import override
from ..module import get_introspection_module

from gi.repository import Gio, GLib

Serio = get_introspection_module('Serio')

__all__ = []

# How many names __repr__ lists before it summarizes the rest.
_REPR_MAX_NAMES = 8

# The name of the array that records the data types of the others.
DTYPES_NAME = 'serio.dtypes'

# The codes of serio.dtypes, in the order of the table in the docs. Every
# one of these types converts to float64 and back exactly (integers of 64
# bits within ±2**53 only); 'str' is a text stored as its code points.
_DTYPE_CODES = ['float64', 'float32', 'float16', 'bfloat16',
                'int64', 'int32', 'int16', 'int8',
                'uint64', 'uint32', 'uint16', 'uint8',
                'bool', 'str']
_CODE_OF_DTYPE = {name: code for code, name in enumerate(_DTYPE_CODES)}

# Integers of 64 bits beyond this lose bits as float64.
_MAX_EXACT_INT = 2 ** 53


def _import_numpy(method):
    try:
        import numpy
    except ImportError as error:
        raise ImportError(
            '%s needs NumPy, which cannot be imported: %s'
            % (method, error)) from error
    return numpy


def _import_torch(method):
    try:
        import torch
    except ImportError as error:
        raise ImportError(
            '%s needs PyTorch, which cannot be imported: %s'
            % (method, error)) from error
    return torch


def _require_str(name):
    if not isinstance(name, str):
        raise TypeError('array names are str, not %s' % type(name).__name__)


def _check_name(name):
    _require_str(name)
    # PyGObject would silently cut the name at the NUL.
    if '\0' in name:
        raise ValueError('array names cannot contain NUL: %r' % (name,))


def _plural(count, word):
    return '%d %s%s' % (count, word, '' if count == 1 else 's')


def _keyed(name, error):
    """The same kind of exception as error, with the key in front."""
    prefix = '%r: ' % (name,)
    if str(error).startswith(prefix):
        return error
    message = prefix + str(error)
    for kind in (type(error), TypeError, ValueError, OverflowError):
        if isinstance(error, kind):
            try:
                return kind(message)
            except TypeError:
                continue
    return ValueError(message)


def _as_file(path):
    """A Gio.File for a Gio.File, a str or an os.PathLike."""
    if isinstance(path, Gio.File):
        return path
    if isinstance(path, (str, os.PathLike)):
        path = os.fspath(path)
        if isinstance(path, str):
            return Gio.File.new_for_path(path)
    raise TypeError('expected a str, os.PathLike or Gio.File, not %s'
                    % type(path).__name__)


def _as_bytes(data):
    """A GLib.Bytes for GLib.Bytes, bytes, bytearray or a memoryview."""
    if isinstance(data, GLib.Bytes):
        return data
    if isinstance(data, (bytes, bytearray)):
        return GLib.Bytes.new(bytes(data))
    if isinstance(data, memoryview):
        return GLib.Bytes.new(data.tobytes())
    raise TypeError('expected bytes, bytearray, memoryview or GLib.Bytes, '
                    'not %s' % type(data).__name__)


def _float64_of(numpy, name, value):
    """(float64 ndarray in C order, dtype name) for one value to save.

    value is a NumPy array, a torch tensor, a number or a sequence of
    numbers. Raises TypeError or ValueError naming the key when the values
    cannot come back exactly.
    """
    torch = sys.modules.get('torch')
    if torch is not None and isinstance(value, torch.Tensor):
        return _float64_of_tensor(numpy, torch, name, value)
    if isinstance(value, str):
        raise TypeError('%r: a str is not an array of numbers' % (name,))
    array = numpy.asarray(value)
    kind = array.dtype.kind
    if kind not in 'fiub' or array.dtype.itemsize > 8:
        raise TypeError('%r: %s values cannot be stored exactly as float64'
                        % (name, array.dtype))
    dtype = array.dtype.name
    if kind in 'iu' and array.dtype.itemsize == 8 and array.size > 0:
        if (array > _MAX_EXACT_INT).any() or (kind == 'i' and (array < -_MAX_EXACT_INT).any()):
            raise ValueError('%r: %s values beyond 2**53 cannot be stored '
                             'exactly as float64' % (name, dtype))
    # asarray keeps a 0-d array 0-d, where ascontiguousarray would not.
    return numpy.asarray(array, dtype=numpy.float64, order='C'), dtype


def _float64_of_tensor(numpy, torch, name, tensor):
    dtype = str(tensor.dtype).replace('torch.', '')
    if dtype not in _CODE_OF_DTYPE:
        raise TypeError('%r: %s tensors cannot be stored exactly as float64'
                        % (name, tensor.dtype))
    tensor = tensor.detach().cpu()
    if dtype in ('int64', 'uint64') and tensor.numel() > 0:
        if bool((tensor > _MAX_EXACT_INT).any()) or bool((tensor < -_MAX_EXACT_INT).any()):
            raise ValueError('%r: %s values beyond 2**53 cannot be stored '
                             'exactly as float64' % (name, tensor.dtype))
    array = tensor.to(torch.float64).contiguous().numpy()
    return numpy.asarray(array, order='C'), dtype


def _append_float64(bundle, name, array, keep_name=False):
    """Appends a float64 C-order ndarray, recording its shape unless 1-D.

    With keep_name, a 1-D array whose name ends in ']' gets a suffix too, so
    that its base name is the whole name: "w[3]" is stored as "w[3][3]".
    """
    data = GLib.Bytes.new(array.tobytes())
    if array.ndim == 1 and not (keep_name and name.endswith(']')):
        bundle.append_bytes(name, data)
    else:
        bundle.append_bytes_with_shape(name, list(array.shape), data)


def _bundle_of_arrays(items):
    """A bundle of (name, value) pairs, with serio.dtypes when needed."""
    numpy = _import_numpy('Serio.save()')
    arrays = []
    for name, value in items:
        _check_name(name)
        if name == DTYPES_NAME:
            raise ValueError('%r is reserved for the data types' % (name,))
        if isinstance(value, str):
            array = numpy.array([ord(c) for c in value], dtype=numpy.float64)
            arrays.append((name, array, 'str'))
            continue
        array, dtype = _float64_of(numpy, name, value)
        arrays.append((name, array, dtype))

    bundle = Bundle.new()
    if any(dtype != 'float64' for _, _, dtype in arrays):
        bundle.append(DTYPES_NAME, [float(_CODE_OF_DTYPE[dtype])
                                    for _, _, dtype in arrays])
    for name, array, _ in arrays:
        # The keys come back from load() as base names: keep them whole.
        _append_float64(bundle, name, array, keep_name=True)
    return bundle


def _dtypes_of(bundle):
    """The dtype name of each array of bundle, and the first data index."""
    n_arrays = bundle.get_n_arrays()
    if n_arrays == 0 or bundle.get_name(0) != DTYPES_NAME:
        return ['float64'] * n_arrays, 0
    codes = bundle.get_values(0)
    if len(codes) != n_arrays - 1 or not all(
            code in range(len(_DTYPE_CODES)) for code in codes):
        raise ValueError('%r does not list one known data type code per array'
                         % (DTYPES_NAME,))
    return [None] + [_DTYPE_CODES[int(code)] for code in codes], 1


def _arrays_of(bundle, method):
    """Yield (base name, float64 ndarray in its shape, dtype name)."""
    numpy = _import_numpy(method)
    dtypes, first = _dtypes_of(bundle)
    for index in range(first, bundle.get_n_arrays()):
        values = numpy.frombuffer(bundle.get_bytes(index).get_data(),
                                  dtype=numpy.float64)
        yield (bundle.get_base_name(index),
               values.reshape(bundle.get_shape(index)), dtypes[index])


def _checked_numpy(numpy, name, array, dtype):
    """array (float64) as dtype, a new writable array; ValueError naming
    the key if a value does not fit the type exactly."""
    if dtype == 'float64':
        return array.copy()
    if dtype == 'bfloat16':
        torch = _import_torch('an array saved as bfloat16')
        return _checked_tensor(torch, name, array, dtype)
    converted = array.astype(dtype)
    if converted.astype(numpy.float64).tobytes() != array.tobytes():
        raise ValueError('%r: the values do not fit its data type, %s'
                         % (name, dtype))
    return converted


def _checked_tensor(torch, name, array, dtype):
    tensor = torch.from_numpy(array.copy())
    converted = tensor.to(getattr(torch, dtype))
    if not torch.equal(converted.to(torch.float64).view(torch.int64),
                       tensor.view(torch.int64)):
        raise ValueError('%r: the values do not fit its data type, %s'
                         % (name, dtype))
    return converted


def _string_of(name, array):
    try:
        return ''.join(chr(int(c)) for c in array.ravel())
    except (ValueError, OverflowError) as error:
        raise ValueError('%r: not a text: %s' % (name, error)) from error


def save(path, arrays):
    """Save a mapping of names to arrays to path, like ``numpy.savez``.

    path is a ``str``, an ``os.PathLike`` or a ``Gio.File``; the file is
    replaced atomically by ``Bundle.save_to_file()``. arrays maps each name
    (a ``str``) to a NumPy array of any shape (0-d included), a PyTorch
    tensor, a number or a sequence of numbers. Each is stored as float64
    with its shape in its name (``w[2x3]``; a 1-D array keeps its plain
    name, unless the name ends in ``]``: ``w[3]`` is stored as ``w[3][3]``)
    and comes back from :func:`load`, under its key, with its shape and
    data type:

    * floats of 16, 32 and 64 bits and bfloat16, integers of up to 64 bits
      and booleans are stored exactly; an integer beyond ±2**53, a complex,
      ``longdouble``, string or object array raises ValueError or TypeError
      naming its key;
    * when an array is not float64, the first array of the file,
      ``serio.dtypes``, lists one data type code per other array.
    """
    _as_file(path)
    if not isinstance(arrays, collections.abc.Mapping):
        raise TypeError('save() needs a mapping of names to arrays, not %s'
                        % type(arrays).__name__)
    for name, value in arrays.items():
        if isinstance(value, str):
            raise TypeError('%r: a str is not an array of numbers' % (name,))
    _bundle_of_arrays(arrays.items()).save_to_file(path)


def load(path):
    """Load the arrays of a file as a dict of name → ndarray, like
    ``numpy.load``.

    path is a ``str``, an ``os.PathLike`` or a ``Gio.File``. The keys are
    base names (``w`` for ``w[2x3]``) in file order; each array is a new,
    writable ndarray in its shape and, when the file has ``serio.dtypes``
    (see :func:`save`), in its data type (float64 otherwise). Of two arrays
    with the same base name, the first wins, as for ``Bundle.lookup()``.

    Raises GLib.Error for a file that cannot be read or is not valid v1
    text, and ValueError naming the key for a value that does not fit its
    recorded data type.
    """
    numpy = _import_numpy('Serio.load()')
    bundle = Bundle.from_file(path)
    result = {}
    for name, array, dtype in _arrays_of(bundle, 'Serio.load()'):
        if name in result:
            continue
        if dtype == 'str':
            result[name] = _string_of(name, array)
        else:
            result[name] = _checked_numpy(numpy, name, array, dtype)
    return result


def save_torch(path, model):
    """Save a PyTorch ``state_dict``, or a module's, to path in one call.

    model is a ``torch.nn.Module`` (its ``state_dict()`` is saved) or a
    mapping of names to tensors. Every tensor is stored as in :func:`save`:
    its shape in its name, its data type in ``serio.dtypes``, so that
    :func:`load_torch` gives back float64, float32, float16 and bfloat16
    tensors, and integer and boolean buffers, bit for bit. A tensor that
    cannot come back exactly (an int64 beyond ±2**53, a complex tensor)
    raises ValueError or TypeError naming it, before anything is written.
    """
    _import_torch('Serio.save_torch()')
    state = model.state_dict() if hasattr(model, 'state_dict') else model
    if not isinstance(state, collections.abc.Mapping):
        raise TypeError('save_torch() needs a module or a state_dict, not %s'
                        % type(model).__name__)
    _as_file(path)
    _bundle_of_arrays(state.items()).save_to_file(path)


def load_torch(path, model=None):
    """Load a file saved by :func:`save_torch` as tensors, in one call.

    Returns the ``state_dict`` (an ``OrderedDict`` of name → tensor, each in
    its shape and data type, on the CPU) or, when model is given, loads it
    into model with ``model.load_state_dict()`` (strict: every key must
    match) and returns model.
    """
    torch = _import_torch('Serio.load_torch()')
    numpy = _import_numpy('Serio.load_torch()')
    bundle = Bundle.from_file(path)
    state = collections.OrderedDict()
    for name, array, dtype in _arrays_of(bundle, 'Serio.load_torch()'):
        if name in state:
            continue
        if dtype == 'str':
            raise ValueError('%r: a text is not a tensor' % (name,))
        if dtype in ('bfloat16',):
            state[name] = _checked_tensor(torch, name, array, dtype)
        else:
            state[name] = torch.from_numpy(_checked_numpy(numpy, name, array, dtype))
    if model is None:
        return state
    model.load_state_dict(state)
    return model


def _fitted_attributes(estimator):
    """Yield (stored name, value) for the fitted attributes to save."""
    for attribute, value in vars(estimator).items():
        if not attribute.endswith('_') or attribute.startswith('_'):
            continue
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                yield '%s.%d' % (attribute, i), item
        elif value is not None:
            yield attribute, value


def save_estimator(path, estimator):
    """Save the fitted state of a scikit-learn estimator to path.

    What is saved are the public fitted attributes (``coefs_``,
    ``intercepts_``, ``classes_``, ``n_features_in_``, ...: the names that
    end in ``_``) that are numbers, arrays, texts, or lists of those (an
    item ``i`` of ``coefs_`` is stored as ``coefs_.i``); attributes that
    are ``None`` are left out. Any other value (an object) raises TypeError
    naming the attribute: such an estimator cannot be saved as numbers.
    The hyper-parameters are not saved: they are code, not data (see
    :func:`load_estimator`).
    """
    _as_file(path)
    _bundle_of_arrays(_fitted_attributes(estimator)).save_to_file(path)


def load_estimator(path, estimator):
    """Restore the fitted state saved by :func:`save_estimator` into
    estimator, and return it.

    estimator is a new estimator of the same class, made with the same
    hyper-parameters as the saved one (``MLPClassifier(hidden_layer_sizes=
    (64,))``). Arrays come back writable, in their shape and data type;
    0-d numbers as Python numbers, lists as lists. What the estimator keeps
    in private attributes is not restored: for an ``MLPClassifier``,
    ``predict_proba()`` works on the result; for ``predict()`` and
    ``partial_fit()``, pass an estimator that one ``partial_fit()`` call
    has set up (``MLPClassifier(...).partial_fit(x[:1], y[:1],
    classes=classes)``), whose private state the loaded attributes then
    complete.
    """
    numpy = _import_numpy('Serio.load_estimator()')
    bundle = Bundle.from_file(path)
    lists = {}
    for name, array, dtype in _arrays_of(bundle, 'Serio.load_estimator()'):
        if dtype == 'str':
            value = _string_of(name, array)
        else:
            value = _checked_numpy(numpy, name, array, dtype)
            if value.ndim == 0:
                value = value.item()
        attribute, dot, item = name.rpartition('.')
        if dot and item.isdigit() and attribute.endswith('_'):
            lists.setdefault(attribute, []).append((int(item), value))
        else:
            setattr(estimator, name, value)
    for attribute, items in lists.items():
        setattr(estimator, attribute, [value for _, value in sorted(items, key=lambda i: i[0])])
    return estimator


def checksum_bytes(data):
    """Return the FNV-1a checksum of data, as ``Serio.checksum_bytes()``
    does, for ``GLib.Bytes``, ``bytes``, ``bytearray`` or a ``memoryview``.
    """
    return Serio.checksum_bytes(_as_bytes(data))


class Bundle(Serio.Bundle):
    """An ordered list of named Float64 arrays.

    On top of the C API, a bundle is a read-only mapping of names to flat
    lists of floats (``len()``, ``name in bundle``, ``bundle[name]``,
    iteration over names, ``keys()``, ``items()``, ``values()``,
    ``get()``), and converts from and to dicts and NumPy arrays. See the
    module documentation for the exact semantics.
    """

    def _find(self, name):
        """Return the index of the array that name finds, or None."""
        _require_str(name)
        # A stored name holds neither a NUL nor a lone surrogate (it is
        # UTF-8); PyGObject would cut the first and refuse the second.
        if '\0' in name:
            return None
        try:
            found, index = self.lookup(name)
        except UnicodeEncodeError:
            return None
        return index if found else None

    def _index(self, index):
        """Raise IndexError for an index that is not that of an array."""
        if not isinstance(index, int):
            raise TypeError('array indexes are int, not %s' % type(index).__name__)
        n_arrays = self.get_n_arrays()
        if not 0 <= index < n_arrays:
            raise IndexError('array index %d out of range: the bundle holds %s'
                             % (index, _plural(n_arrays, 'array')))
        return index

    def _first_indexes(self):
        """The index of the first array of each name, in bundle order."""
        first = {}
        for index in range(self.get_n_arrays()):
            first.setdefault(self.get_name(index), index)
        return first

    @property
    def n_arrays(self):
        """The number of arrays, duplicate names included."""
        return self.get_n_arrays()

    def get_name(self, index):
        """Return the stored name of the array at index.

        Raises IndexError unless 0 <= index < n_arrays.
        """
        return super().get_name(self._index(index))

    def get_values(self, index):
        """Return the values of the array at index as a flat list of floats.

        Raises IndexError unless 0 <= index < n_arrays.
        """
        return super().get_values(self._index(index))

    def dup_values(self, index):
        """Return the values of the array at index as a flat list of floats.

        Raises IndexError unless 0 <= index < n_arrays.
        """
        return super().dup_values(self._index(index))

    def get_bytes(self, index):
        """Return the values of the array at index as a GLib.Bytes.

        Raises IndexError unless 0 <= index < n_arrays.
        """
        return super().get_bytes(self._index(index))

    def get_shape(self, index):
        """Return the shape of the array at index as a list of ints.

        Raises IndexError unless 0 <= index < n_arrays.
        """
        return super().get_shape(self._index(index))

    def get_base_name(self, index):
        """Return the name of the array at index without its shape suffix.

        Raises IndexError unless 0 <= index < n_arrays.
        """
        return super().get_base_name(self._index(index))

    @classmethod
    def from_bytes(cls, data):
        """Parse v1 text given as GLib.Bytes, bytes, bytearray or a
        memoryview into a new bundle."""
        return super().from_bytes(_as_bytes(data))

    @classmethod
    def from_file(cls, file, cancellable=None):
        """Read and parse a file given as a str, an os.PathLike or a
        Gio.File."""
        return super().from_file(_as_file(file), cancellable)

    @classmethod
    def from_file_async(cls, file, *args, **kwargs):
        """Read and parse a file (a str, an os.PathLike or a Gio.File) in a
        worker thread; see Serio.Bundle.from_file_finish()."""
        return super().from_file_async(_as_file(file), *args, **kwargs)

    def save_to_file(self, file, cancellable=None):
        """Save the bundle to a file given as a str, an os.PathLike or a
        Gio.File, replacing it atomically."""
        return super().save_to_file(_as_file(file), cancellable)

    def save_to_file_full(self, file, flags, cancellable=None):
        """Save the bundle to a file given as a str, an os.PathLike or a
        Gio.File, with Serio.SaveFlags."""
        return super().save_to_file_full(_as_file(file), flags, cancellable)

    def save_to_file_full_async(self, file, *args, **kwargs):
        """Save the bundle with Serio.SaveFlags to a file (a str, an
        os.PathLike or a Gio.File) in a worker thread."""
        return super().save_to_file_full_async(_as_file(file), *args, **kwargs)

    def save_to_file_async(self, file, *args, **kwargs):
        """Save the bundle to a file (a str, an os.PathLike or a Gio.File)
        in a worker thread; see save_to_file_finish()."""
        return super().save_to_file_async(_as_file(file), *args, **kwargs)

    def __len__(self):
        """Return the number of names, each counted once (n_arrays counts
        the arrays)."""
        return len(self._first_indexes())

    def __bool__(self):
        """Return True: a bundle is true even when it is empty."""
        return True

    def __contains__(self, name):
        """Return whether a name (a str) finds an array, as lookup() does."""
        return self._find(name) is not None

    def __getitem__(self, name):
        """Return the values of the array that name finds, as a flat list.

        Raises KeyError if no array has that name, and TypeError if name
        is not a str.
        """
        index = self._find(name)
        if index is None:
            raise KeyError(name)
        return super().get_values(index)

    def __iter__(self):
        """Yield each stored name once, in the order of its first array.

        Arrays appended while iterating are not visited.
        """
        return iter(list(self._first_indexes()))

    def __repr__(self):
        """Return the number of arrays, and the first names and lengths."""
        n_arrays = self.get_n_arrays()
        arrays = ['%r (%s)' % (super(Bundle, self).get_name(index),
                               _plural(super(Bundle, self).get_bytes(index).get_size() // 8,
                                       'value'))
                  for index in range(min(n_arrays, _REPR_MAX_NAMES))]
        if n_arrays > _REPR_MAX_NAMES:
            arrays.append('and %d more' % (n_arrays - _REPR_MAX_NAMES))
        if not arrays:
            return '<Serio.Bundle with 0 arrays>'
        return '<Serio.Bundle with %s: %s>' % (_plural(n_arrays, 'array'),
                                               ', '.join(arrays))

    def keys(self):
        """Return the names as a list, each once, in the order of their first
        array."""
        return list(self._first_indexes())

    def values(self):
        """Return the values of the first array of each name, as lists."""
        return [super(Bundle, self).get_values(index)
                for index in self._first_indexes().values()]

    def items(self):
        """Return a (name, values) pair per name, for its first array."""
        return [(name, super(Bundle, self).get_values(index))
                for name, index in self._first_indexes().items()]

    def get(self, name, default=None):
        """Return bundle[name], or default if no array has that name."""
        index = self._find(name)
        return default if index is None else super().get_values(index)

    def to_dict(self):
        """Return a dict that maps each name to its values, as a flat list.

        When names repeat, the first array of a name wins, as for
        ``bundle[name]``; the dict keeps bundle order.
        """
        return dict(self.items())

    @classmethod
    def from_dict(cls, arrays):
        """Return a new bundle holding the arrays of a mapping, in its order.

        Each value is a sequence of numbers (a list, a tuple, ...), a
        number (stored as a 0-d array, ``name[]``), a NumPy array of any
        shape or a PyTorch tensor; arrays and tensors go through
        :meth:`append_numpy`, which records a shape other than 1-D in the
        name. Names are sanitized as by ``append`` (``|``, CR and LF become
        ``_``), and NaNs become the default quiet NaN.

        Raises TypeError if arrays is not a mapping, or for a name that is
        not a str or a value that is not numbers (None included);
        OverflowError for an integer too large for a float; and ValueError
        for a name holding a NUL, or UnicodeEncodeError (a ValueError) for
        one holding a lone surrogate. Every error but the first names its
        key.
        """
        if not isinstance(arrays, collections.abc.Mapping):
            raise TypeError('from_dict() needs a mapping, not %s'
                            % type(arrays).__name__)
        # Only an already imported NumPy or PyTorch can have made an array.
        numpy = sys.modules.get('numpy')
        torch = sys.modules.get('torch')
        bundle = cls.new()
        for name, values in arrays.items():
            _check_name(name)
            try:
                if (numpy is not None and isinstance(values, (numpy.ndarray, numpy.generic))) or \
                        (torch is not None and isinstance(values, torch.Tensor)):
                    bundle.append_numpy(name, values)
                elif isinstance(values, (int, float)):
                    if isinstance(values, int) and abs(values) > _MAX_EXACT_INT:
                        raise ValueError('%d is beyond 2**53, where float64 '
                                         'loses bits' % values)
                    bundle.append_with_shape(name, [], [float(values)])
                elif values is None:
                    # None is no array here, whether or not append() takes it.
                    raise TypeError('needs a sequence of numbers, not None')
                else:
                    bundle.append(name, values)
            except (TypeError, ValueError, OverflowError) as error:
                raise _keyed(name, error) from error
        return bundle

    def to_numpy(self, name, writable=False):
        """Return the array that name finds as a NumPy array in its shape.

        The result is a ``float64`` array in native byte order, bit for bit
        what the bundle holds, in the shape its name records (see
        ``get_shape()``; C order). By default it is a read-only view of a
        private copy of the values (``GLib.Bytes.get_data()`` copies them
        into a ``bytes`` object, which the array keeps alive), so it
        outlives the bundle; with ``writable=True`` it is a writable array
        of its own (one more copy), as ``partial_fit()`` and in-place
        training need.

        Raises ImportError without NumPy, KeyError if no array has that
        name, and TypeError if name is not a str.
        """
        numpy = _import_numpy('Serio.Bundle.to_numpy()')
        index = self._find(name)
        if index is None:
            raise KeyError(name)
        array = numpy.frombuffer(super().get_bytes(index).get_data(),
                                 dtype=numpy.float64)
        array = array.reshape(super().get_shape(index))
        return array.copy() if writable else array

    def append_numpy(self, name, array):
        """Append an array-like of numbers, of any shape, as a new array.

        array is anything ``numpy.asarray()`` takes (an ndarray, a list,
        a number, ...) or a PyTorch tensor, whose data type converts to
        ``float64`` exactly: floats of up to 64 bits (bfloat16 included),
        integers within ±2**53 and booleans, in any byte order and memory
        layout. A shape other than 1-D is recorded in the name, with
        ``append_bytes_with_shape()``: ``w`` of shape (2, 3) is stored as
        ``w[2x3]``, a 0-d array as ``w[]``; a 1-D array keeps the plain
        name. The values reach the library as one ``GLib.Bytes``; -0.0
        stays -0.0 and NaNs become the default quiet NaN.

        Raises ImportError without NumPy; TypeError for a name that is not
        a str or a data type that does not convert exactly (complex,
        longdouble, strings, objects); ValueError for a name holding a NUL
        or an integer beyond ±2**53, or UnicodeEncodeError (a ValueError)
        for a name holding a lone surrogate. Errors name the key.
        """
        numpy = _import_numpy('Serio.Bundle.append_numpy()')
        _check_name(name)
        values, _ = _float64_of(numpy, name, array)
        if values.ndim > Serio.SHAPE_MAX_DIMS:
            raise ValueError('%r: %d dimensions, more than %d' % (
                name, values.ndim, Serio.SHAPE_MAX_DIMS))
        _append_float64(self, name, values)


Bundle = override(Bundle)
collections.abc.Mapping.register(Bundle)
__all__ += ['Bundle', 'save', 'load', 'save_torch', 'load_torch',
            'save_estimator', 'load_estimator', 'checksum_bytes', 'DTYPES_NAME']
