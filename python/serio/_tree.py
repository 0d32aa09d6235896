# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""The tree of a state: its record names, its leaves, and ``serio.tree``.

A state is a tree of containers (``dict``, ``collections.OrderedDict``,
``list``, ``tuple``) whose leaves are arrays (NumPy ndarrays and scalars,
PyTorch tensors, ``bytes``), Python ``int``, ``float`` and ``bool``, ``None``
and ``str``. Every leaf but ``None`` and ``str`` becomes one record of the
file, named by its key path; the structure goes into the ``serio.tree``
record (see the Python guide, "The file of a tree").

Record names. A key path is the keys from the root, joined by ``.``: a str
key as it is, an int key in decimal, a list or tuple index in decimal
(``optimizer.state.0.exp_avg``). In a str key the characters that would
change what a reader makes of the name are escaped as ``%XX`` (their UTF-8
bytes in upper-case hex): ``%``, ``@`` (a type marker), ``[`` and ``]`` (the
shape suffix), ``|``, CR, LF and NUL. ``.`` is not escaped, so that a
model's ``fc.weight`` is ``model.fc.weight`` for C and the command line; the
tree records the real keys, and two key paths that would give the same name
(``{"a.b": x, "a": {"b": y}}``) are refused. A name that would begin with
``serio.``, which is reserved, has its first character escaped (``%73``).
"""

from __future__ import annotations

import collections
import itertools
import json
import operator
import re
import sys
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

from ._errors import DataError, SERIO_DOMAIN, UnstorableError

from gi.repository import Serio

__all__ = ['TREE_NAME', 'Leaf', 'Template', 'array_leaf', 'flatten', 'parse', 'name_of']

TREE_NAME = 'serio.tree'
TREE_FORMAT = 'serio.tree'
TREE_VERSION = 1

# Containers nested deeper than this are refused (a cycle is caught here).
MAX_DEPTH = 64

# The characters of a str key that are escaped in a record name.
_ESCAPED = '%@[]|\r\n\0'
_ESCAPED_SET = frozenset(_ESCAPED)
# What leaf_pairs() looks for, each with a substring search.
_ESCAPED_BUT_LF = tuple(c for c in _ESCAPED if c != '\n')
# The library's bound of a shape, once: an attribute of the typelib costs
# more to look up than a leaf's other checks.
_MAX_DIMS = Serio.SHAPE_MAX_DIMS

# The numbers of the element types, as NumPy names them (bfloat16 has no
# NumPy type of its own).
DTYPES = ('float64', 'float32', 'float16', 'bfloat16', 'int8', 'int16',
          'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'bool')

# What a leaf that is a record was, and so what it comes back as.
KINDS = ('int', 'float', 'bool', 'bytes', 'ndarray', 'numpy', 'tensor')
_KIND_SET = frozenset(KINDS)

# The element type and rank (None: any) each kind must have in its record.
_KIND_RECORD = {
    'int': ('int64', 0),
    'float': ('float64', 0),
    'bool': ('bool', 0),
    'bytes': ('uint8', 1),
    'ndarray': (None, None),
    'numpy': (None, 0),
    'tensor': (None, None),
}

Key = Union[str, int]


def escape(key: Key) -> str:
    """The part of a record name that one key gives."""
    if isinstance(key, int):
        return str(key)
    if _ESCAPED_SET.isdisjoint(key):
        return key
    return ''.join(''.join('%%%02X' % b for b in c.encode('utf-8'))
                   if c in _ESCAPED else c for c in key)


def is_metadata(name: str) -> bool:
    """Whether a record name is reserved for metadata, by the library's one
    list of reserved names (``Serio.name_is_metadata``)."""
    if name[:1] != 's':
        # Every reserved name begins with "serio." (the library's
        # contract): no need to ask it about any other.
        return False
    try:
        return Serio.name_is_metadata(name)
    except UnicodeEncodeError:
        # Not text (a lone surrogate): no record has that name, and it is
        # refused where it would be stored.
        return False


def name_of(keys: Tuple[Key, ...]) -> str:
    """The record name of a key path (a tuple of keys from the root)."""
    name = '.'.join(escape(key) for key in keys)
    if is_metadata(name):
        name = '%73' + name[1:]
    return name


def describe(keys: Tuple[Key, ...]) -> str:
    """The key path as messages show it: its record name, or ``(root)``."""
    return name_of(keys) if keys else '(root)'


@dataclass
class Leaf:
    """A leaf that is a record: its key path, record name, kind, value (an
    ndarray, tensor or bytes converted to an ndarray), element type and
    shape."""

    keys: Tuple[Key, ...]
    name: str
    kind: str
    value: Any
    dtype: str
    shape: Tuple[int, ...]


def _numpy():
    try:
        import numpy
    except ImportError as error:  # pragma: no cover - NumPy is a dependency
        raise ImportError('serio needs NumPy, which cannot be imported: %s'
                          % (error,)) from error
    return numpy


def _refuse(keys: Tuple[Key, ...], what: str, code: Optional[int] = None) -> UnstorableError:
    message = '%s: %s' % (describe(keys), what)
    if code is None:
        return UnstorableError(message, key=describe(keys))
    return UnstorableError(message, key=describe(keys), domain=SERIO_DOMAIN, code=code)


_MAX_EXACT = 2.0 ** 63


def check_int64_exact(numpy, keys, array, unsigned):
    """Refuse a piece of a 64-bit integer array holding a value that a
    float64 does not hold exactly (v1 tokens are doubles: CONTRACT.md)."""
    if array.size == 0:
        return
    as_float = array.astype(numpy.float64)
    limit = 2 * _MAX_EXACT if unsigned else _MAX_EXACT
    back = numpy.where(as_float < limit, as_float, 0).astype(array.dtype)
    bad = (as_float >= limit) | (back != array)
    if bad.any():
        value = int(array.reshape(-1)[int(numpy.argmax(bad.reshape(-1)))])
        raise _refuse(keys, 'the %s value %d cannot be stored exactly: int64 and '
                      'uint64 records hold the integers a float64 holds (all of '
                      '|x| <= 2**53)' % (array.dtype.name, value),
                      int(Serio.Error.DOMAIN))


# The element type of the NumPy dtypes of native byte order, which are
# the ones met most: dtype.name takes far longer than a lookup.
_NATIVE_DTYPES = {}


def _dtype_name(numpy, dtype):
    if not _NATIVE_DTYPES:
        _NATIVE_DTYPES.update((numpy.dtype(name), name) for name in DTYPES
                              if name != 'bfloat16')
    name = _NATIVE_DTYPES.get(dtype)
    if name is not None:
        return name
    if dtype.kind not in 'fiub' or dtype.name not in DTYPES or dtype.itemsize > 8:
        return None
    return dtype.name


def array_leaf(numpy, keys, array, kind, name=None):
    """The leaf of an ndarray at keys (whose record name is name, when the
    caller knows it)."""
    record = name_of(keys) if name is None else name
    dtype = array.dtype
    name = _dtype_name(numpy, dtype)
    if name is None:
        raise _refuse(keys, 'a %s array cannot be stored exactly: the element types '
                      'are %s' % (dtype, ', '.join(DTYPES)))
    if array.ndim > _MAX_DIMS:
        raise _refuse(keys, '%d dimensions, more than %d' % (array.ndim, _MAX_DIMS))
    if name in ('int64', 'uint64'):
        check_int64_exact(numpy, keys, array, dtype.kind == 'u')
    return Leaf(keys, record, kind, array, name, array.shape)


def _tensor_leaf(torch, numpy, keys, name, tensor):
    dtype = str(tensor.dtype).replace('torch.', '')
    if dtype not in DTYPES:
        raise _refuse(keys, 'a %s tensor cannot be stored exactly: the element types '
                      'are %s' % (tensor.dtype, ', '.join(DTYPES)))
    if tensor.layout != torch.strided:
        raise _refuse(keys, 'a %s tensor cannot be stored: only dense (strided) '
                      'tensors are arrays' % (tensor.layout,))
    tensor = tensor.detach()
    if tensor.dim() > _MAX_DIMS:
        raise _refuse(keys, '%d dimensions, more than %d' % (tensor.dim(), _MAX_DIMS))
    if dtype == 'int64' and tensor.numel() > 0:
        # A min and a max, without a copy of the tensor.
        check_int64_exact(numpy, keys, numpy.array([int(tensor.min()), int(tensor.max())],
                                                   dtype=numpy.int64), False)
    return Leaf(keys, name, 'tensor', tensor, dtype, tuple(tensor.shape))


def _scalar_leaf(numpy, keys, name, value):
    if isinstance(value, bool):
        return Leaf(keys, name, 'bool', numpy.array(value, dtype=numpy.bool_),
                    'bool', ())
    if isinstance(value, int):
        if not -(2 ** 63) <= value < 2 ** 63 or int(float(value)) != value:
            raise _refuse(keys, 'the int %d cannot be stored exactly: int64 records hold '
                          'the integers a float64 holds (all of |x| <= 2**53)' % value,
                          int(Serio.Error.DOMAIN))
        return Leaf(keys, name, 'int', numpy.array(value, dtype=numpy.int64),
                    'int64', ())
    return Leaf(keys, name, 'float', numpy.array(value, dtype=numpy.float64),
                'float64', ())


def _check_text(keys, text, what):
    try:
        text.encode('utf-8')
    except UnicodeEncodeError as error:
        raise _refuse(keys, '%s is not valid Unicode (a lone surrogate at %d): it cannot be '
                      'stored as UTF-8' % (what, error.start)) from None


class _Flattener:
    """Walks a state once: the JSON of its tree, and its leaves in order."""

    def __init__(self) -> None:
        self.numpy = _numpy()
        self.torch = sys.modules.get('torch')
        self.leaves: List[Leaf] = []
        self.names: Dict[str, Tuple[Key, ...]] = {}

    def _claim(self, keys, path):
        """Claims the record name of keys, whose escaped keys joined by
        dots are path (name_of(), built a key at a time); returns it."""
        if not keys:
            return ''
        name = '%73' + path[1:] if is_metadata(path) else path
        other = self.names.setdefault(name, keys)
        if other is not keys:
            raise _refuse(keys, 'the key paths %r and %r give the same record name %r; '
                          'rename a key' % (list(other), list(keys), name))
        return name

    def node(self, value, keys, depth, path=''):
        name = self._claim(keys, path)
        prefix = path + '.' if keys else ''
        numpy = self.numpy
        kind = type(value)
        if kind is dict or kind is collections.OrderedDict:
            if depth >= MAX_DEPTH:
                raise _refuse(keys, 'containers nested deeper than %d levels (a cycle?)'
                              % MAX_DEPTH)
            items = self.array_items(value, keys, prefix)
            if items is not None:
                return {'dict' if kind is dict else 'odict': items}
            items = []
            for key, item in value.items():
                if type(key) is not str and type(key) is not int:
                    raise _refuse(keys, 'a %s key (%r): keys are str or int'
                                  % (type(key).__name__, key))
                if type(key) is str:
                    _check_text(keys + (key,), key, 'the key')
                items.append([key, self.node(item, keys + (key,), depth + 1,
                                             prefix + escape(key))])
            return {'dict' if kind is dict else 'odict': items}
        if kind is list or kind is tuple:
            if depth >= MAX_DEPTH:
                raise _refuse(keys, 'containers nested deeper than %d levels (a cycle?)'
                              % MAX_DEPTH)
            return {kind.__name__: [self.node(item, keys + (index,), depth + 1,
                                              prefix + str(index))
                                    for index, item in enumerate(value)]}
        if not keys:
            raise _refuse(keys, 'a state is a dict, list or tuple, not %s' % kind.__name__)
        if value is None:
            return None
        if kind is str:
            _check_text(keys, value, 'the str')
            return value
        if kind is bool or kind is int or kind is float:
            self.leaves.append(_scalar_leaf(numpy, keys, name, value))
        elif kind is bytes:
            self.leaves.append(Leaf(keys, name, 'bytes',
                                    numpy.frombuffer(value, dtype=numpy.uint8),
                                    'uint8', (len(value),)))
        elif kind is numpy.ndarray:
            self.leaves.append(array_leaf(numpy, keys, value, 'ndarray', name))
        elif isinstance(value, numpy.generic):
            self.leaves.append(array_leaf(numpy, keys, numpy.asarray(value), 'numpy', name))
        elif self.torch is not None and isinstance(value, self.torch.Tensor):
            self.leaves.append(_tensor_leaf(self.torch, numpy, keys, name, value))
        else:
            raise _refuse(keys, 'a %s.%s cannot be stored: the leaves of a state are '
                          'arrays, tensors, int, float, bool, bytes, str and None'
                          % (kind.__module__, kind.__qualname__))
        return {'leaf': self.leaves[-1].kind}

    def array_items(self, value, keys, prefix: str) -> Optional[list]:
        """The items that node() makes of the dict value at keys, made with
        one pass of checks over all of them, when value is the common case:
        all ndarrays, or all tensors, of the element types but int64 and
        uint64 (whose values are checked one array at a time), under str
        keys that need no escape and give names none reserved and none
        claimed before (a model's state_dict). None for any other dict,
        which node() then takes an item at a time, as it finds errors."""
        numpy = self.numpy
        torch = self.torch
        arrays = list(value.values())
        if not arrays:
            return None
        types = set(map(type, arrays))
        if types == {numpy.ndarray}:
            kind = 'ndarray'
        elif torch is not None and types == {torch.Tensor}:
            kind = 'tensor'
        else:
            return None
        keys_of = list(value)
        if set(map(type, keys_of)) != {str}:
            return None
        # as leaf_pairs() checks the keys, and _check_text() each one
        joined = '\n'.join(keys_of)
        if any(c in joined for c in _ESCAPED_BUT_LF) or joined.count('\n') != len(keys_of) - 1:
            return None
        try:
            joined.encode('utf-8')
        except UnicodeEncodeError:
            return None
        names = [prefix + key for key in keys_of] if prefix else keys_of
        claimed = self.names
        # (a dict's keys, and so its names, are not repeated)
        if ('\n' + '\n'.join(names)).find('\nserio.') >= 0 or not claimed.keys().isdisjoint(names):
            return None
        element_types = list(map(operator.attrgetter('dtype'), arrays))
        if kind == 'ndarray':
            _dtype_name(numpy, element_types[0])        # _NATIVE_DTYPES, filled once
            dtypes = list(map(_NATIVE_DTYPES.get, element_types))
            found = set(dtypes)
            ndim = max(map(operator.attrgetter('ndim'), arrays))
            shapes = map(operator.attrgetter('shape'), arrays)
        else:
            # as _tensor_leaf() takes each
            of_type = {dtype: str(dtype).replace('torch.', '') for dtype in set(element_types)}
            found = set(of_type.values())
            if not found.issubset(DTYPES) or \
                    set(map(operator.attrgetter('layout'), arrays)) != {torch.strided}:
                return None
            dtypes = list(map(of_type.__getitem__, element_types))
            ndim = max(map(operator.methodcaller('dim'), arrays))
            arrays = list(map(operator.methodcaller('detach'), arrays))
            shapes = map(tuple, map(operator.attrgetter('shape'), arrays))
        if None in found or 'int64' in found or 'uint64' in found or ndim > _MAX_DIMS:
            return None
        paths = [keys + (key,) for key in keys_of]
        claimed.update(zip(names, paths))
        self.leaves.extend(map(Leaf, paths, names, itertools.repeat(kind), arrays, dtypes, shapes))
        # one node for all: json.dumps writes it for each
        leaf = {'leaf': kind}
        return [[key, leaf] for key in keys_of]


def flatten(state: Any) -> Tuple[bytes, List[Leaf]]:
    """The ``serio.tree`` JSON of state (UTF-8) and its leaves that are
    records, in file order. Raises :class:`UnstorableError` naming the key
    path of the first thing that cannot be stored exactly."""
    walker = _Flattener()
    root = walker.node(state, (), 0)
    document = {'format': TREE_FORMAT, 'version': TREE_VERSION, 'root': root}
    # No cycle to look for: the document is made of new nodes (a cycle of
    # the state stopped the walk at MAX_DEPTH), which share nothing but
    # array_items()' leaf nodes.
    text = json.dumps(document, ensure_ascii=False, separators=(',', ':'),
                      allow_nan=False, check_circular=False)
    return text.encode('utf-8'), walker.leaves


# ---------------------------------------------------------------- loading

@dataclass
class Slot:
    """A record leaf of a loaded tree, as :meth:`Template.slot` describes
    it: its key path, record name, kind and index among the records."""

    __slots__ = ('keys', 'name', 'kind', 'index')

    keys: Tuple[Key, ...]
    name: str
    kind: str
    index: int


class Template:
    """A validated ``serio.tree``: its root node, the record leaves it
    expects, in order, and its nodes by record name.

    A node is ``None`` or a ``str`` (a leaf that is no record), an ``int``
    (the record leaf of that index) or a :class:`_Container`. The record
    leaves are kept as lists, one entry a leaf (names, kinds, and each
    one's container's key path and own key), rather than an object each:
    a model's tree has thousands, and a load looks at them a list at a
    time; :meth:`slot` describes one."""

    __slots__ = ('root', 'names', 'kinds', 'parents', 'keys', 'nodes')

    def __init__(self) -> None:
        self.root: Any = None
        self.names: List[str] = []
        self.kinds: List[str] = []
        self.parents: List[Tuple[Key, ...]] = []
        self.keys: List[Key] = []
        self.nodes: Dict[str, Any] = {}

    def __len__(self) -> int:
        """The count of record leaves."""
        return len(self.names)

    def add(self, parent: Tuple[Key, ...], key: Key, name: str, kind: str) -> int:
        """Add the record leaf of key in the container at parent, named
        name, of kind kind; its index."""
        index = len(self.names)
        self.names.append(name)
        self.kinds.append(kind)
        self.parents.append(parent)
        self.keys.append(key)
        self.nodes[name] = index
        return index

    def key_path(self, index: int) -> Tuple[Key, ...]:
        return self.parents[index] + (self.keys[index],)

    def slot(self, index: int) -> Slot:
        return Slot(self.key_path(index), self.names[index], self.kinds[index], index)

    @property
    def slots(self) -> List[Slot]:
        """Every record leaf, in order, a Slot each."""
        return [self.slot(index) for index in range(len(self.names))]

    def names_of_kind(self, kind: str) -> List[Optional[str]]:
        """The record name of each leaf of kind kind, None for the others:
        the names themselves when every leaf is of that kind."""
        if self.kinds.count(kind) == len(self.kinds):
            return self.names
        return [name if each == kind else None for name, each in zip(self.names, self.kinds)]

    def check_record(self, index: int, dtype: str, shape: Tuple[int, ...], path: str):
        """Refuse a record whose element type or rank its leaf cannot have."""
        kind = self.kinds[index]
        want_dtype, want_rank = _KIND_RECORD[kind]
        wrong = None
        if want_dtype is not None and dtype != want_dtype:
            wrong = 'a %s record' % dtype
        elif want_rank is not None and len(shape) != want_rank:
            wrong = 'a record of %d dimensions' % len(shape)
        elif kind in ('ndarray', 'numpy') and dtype == 'bfloat16':
            wrong = 'a bfloat16 record, which NumPy has no type for'
        if wrong is not None:
            raise tree_error(path, self.key_path(index), '%s cannot be the %s leaf the tree says'
                             % (wrong, kind))

    def build(self, node: Any, values: List[Any]) -> Any:
        """The value of a template node, record leaves taken from values."""
        if type(node) is int:
            return values[node]
        if isinstance(node, _Container):
            if node.run is not None:
                # Record leaves only, as a state_dict is: their values are
                # values[start:stop], in order.
                keys, start, stop = node.run
                made = zip(keys, values[start:stop])
                return dict(made) if node.kind == 'dict' else collections.OrderedDict(made)
            # A leaf item, as most are, is taken here, without the call.
            build = self.build
            if node.kind in ('dict', 'odict'):
                made = {} if node.kind == 'dict' else collections.OrderedDict()
                for key, item in node.items:
                    made[key] = values[item] if type(item) is int else build(item, values)
                return made
            items = [values[item] if type(item) is int else build(item, values)
                     for item in node.items]
            return items if node.kind == 'list' else tuple(items)
        return node

    def slots_under(self, node: Any) -> Iterator[int]:
        """The index of each record leaf of the subtree of node."""
        if type(node) is int:
            yield node
        elif isinstance(node, _Container):
            for item in node.items:
                yield from self.slots_under(item[1] if node.kind in ('dict', 'odict') else item)


class _Container:
    """A dict, odict, list or tuple node of a loaded tree: its items, the
    (key, node) pairs of a dict or odict or the nodes of a list or tuple,
    and its run."""

    __slots__ = ('kind', '_items', 'run')

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: Optional[list] = []
        # (keys, start, stop) of a dict or odict whose items are all record
        # leaves, with the indexes start to stop - 1 (an empty one has
        # none).
        self.run: Optional[Tuple[List[Key], int, int]] = None

    @property
    def items(self) -> list:
        if self._items is None:
            # made from the run when they are first asked for: a load
            # that builds the container from its run never does
            keys, start, stop = self.run
            self._items = list(zip(keys, range(start, stop)))
        return self._items

    @items.setter
    def items(self, items: list) -> None:
        self._items = items

    def set_run(self, keys: List[Key], start: int, stop: int) -> None:
        """Make the container the dict or odict of the record leaves of
        keys, of the indexes start to stop - 1."""
        self.run = (keys, start, stop)
        self._items = None


def tree_error(path: Optional[str], keys: Optional[Tuple[Key, ...]], what: str) -> DataError:
    """A DataError (SYNTAX) about the serio.tree record of the file."""
    parts = [] if path is None else [path]
    key = None
    if keys is not None:
        parts.append(describe(keys))
        # The root has no key path.
        key = describe(keys) if keys else None
    message = ': '.join(parts + ['%s: %s' % (TREE_NAME, what)])
    return DataError(message, SERIO_DOMAIN, int(Serio.Error.SYNTAX), path=path, key=key)


# A JSON escape of a UTF-16 surrogate (\uD800 to \uDFFF), or what looks
# like one (after an escaped backslash: then the strings are checked for
# nothing).
_SURROGATE_ESCAPE = re.compile(r'\\u[dD][89a-fA-F]')


def _no_float(text):
    raise ValueError('a number that is not an integer (%s)' % text)


def _no_constant(text):
    raise ValueError('%s is not JSON' % text)


def _pairs(pairs):
    if len(pairs) == 1:
        # a leaf's {"leaf": kind}, as most objects are
        (key, value), = pairs
        return {key: value}
    made = dict(pairs)
    if len(made) != len(pairs):
        raise ValueError('a JSON object repeats a member')
    return made


class _Parser:
    def __init__(self, path: Optional[str]) -> None:
        self.path = path
        self.template = Template()
        # Whether the document may hold a lone surrogate, which only a
        # \u escape of one can give (UTF-8 text cannot hold one):
        # strings are checked only then.
        self.surrogates = True

    def fail(self, keys, what):
        return tree_error(self.path, keys, what)

    def text(self, keys, text, what):
        if not self.surrogates:
            return
        try:
            text.encode('utf-8')
        except UnicodeEncodeError:
            raise self.fail(keys, '%s holds a lone surrogate, which is not text'
                            % what) from None

    @staticmethod
    def child(joined: Optional[str], key: Key) -> str:
        return escape(key) if joined is None else joined + '.' + escape(key)

    def name(self, keys, joined: str) -> str:
        """The record name of the node at keys (not the root), whose
        joined name is joined: refused if another key path gives it."""
        name = '%73' + joined[1:] if is_metadata(joined) else joined
        if name in self.template.nodes:
            raise self.fail(keys, 'two key paths give the record name %r' % name)
        return name

    def leaf(self, keys, name: str, body) -> int:
        """The index of the record leaf {"leaf": body} at keys (not the
        root), named name."""
        if body not in KINDS:
            raise self.fail(keys, 'unknown leaf kind %r' % (body,))
        return self.template.add(keys[:-1], keys[-1], name, body)

    def node(self, value, keys, depth, joined=None):
        """The template node of value at the key path keys; joined is the
        record name of keys before a reserved one is escaped (name_of()
        without its last step; None at the root), which each child
        extends."""
        if keys:
            name = self.name(keys, joined)
        if value is None or isinstance(value, str):
            if not keys:
                raise self.fail(keys, 'the root is not a container')
            if isinstance(value, str):
                self.text(keys, value, 'a str')
            made = value
        elif not isinstance(value, dict) or len(value) != 1:
            raise self.fail(keys, 'a node is not null, a string or an object of one member')
        else:
            (kind, body), = value.items()
            if kind == 'leaf':
                if not keys:
                    raise self.fail(keys, 'the root is not a container')
                return self.leaf(keys, name, body)
            elif kind in ('dict', 'odict', 'list', 'tuple'):
                if depth >= MAX_DEPTH:
                    raise self.fail(keys, 'containers nested deeper than %d levels' % MAX_DEPTH)
                if not isinstance(body, list):
                    raise self.fail(keys, 'a %s is not a JSON array' % kind)
                made = _Container(kind)
                if keys:
                    self.template.nodes[name] = made
                if kind in ('dict', 'odict'):
                    self.pairs(made, body, keys, depth, joined)
                else:
                    made.items = [self.node(item, keys + (index,), depth + 1,
                                            self.child(joined, index))
                                  for index, item in enumerate(body)]
                return made
            else:
                raise self.fail(keys, 'unknown node %r' % (kind,))
        if keys:
            self.template.nodes[name] = made
        return made

    def pairs(self, made: '_Container', body: list, keys, depth: int,
              joined: Optional[str]) -> None:
        """Sets the (key, node) items of made, the dict at keys whose JSON
        array is body, and its run when they are all record leaves. A
        leaf item, as most are, is made here, as node(), name() and
        leaf() would make it, without their calls: a model's state has
        thousands."""
        template = self.template
        nodes = template.nodes
        surrogates = self.surrogates
        prefix = '' if joined is None else joined + '.'
        if not surrogates and self.leaf_pairs(made, body, keys, prefix):
            return
        items = made.items = []
        for pair in body:
            if type(pair) is not list or len(pair) != 2:
                raise self.fail(keys, 'a dict item is not a [key, node] pair')
            key, value = pair
            if type(key) is str:
                if surrogates:
                    self.text(keys, key, 'a key')
                child = prefix + (key if _ESCAPED_SET.isdisjoint(key) else escape(key))
            elif type(key) is int:
                child = prefix + str(key)
            else:
                raise self.fail(keys, 'a key is neither a str nor an int')
            name = '%73' + child[1:] if child[:1] == 's' and is_metadata(child) else child
            if name in nodes:
                # Each item's name is taken: a key met before gives its
                # name again.
                if any(key == seen for seen, _ in items):
                    raise self.fail(keys, 'the key %r is repeated' % (key,))
                raise self.fail(keys + (key,), 'two key paths give the record name %r' % name)
            if type(value) is dict and len(value) == 1 and 'leaf' in value:
                kind = value['leaf']
                if type(kind) is not str or kind not in _KIND_SET:
                    raise self.fail(keys + (key,), 'unknown leaf kind %r' % (kind,))
                items.append((key, template.add(keys, key, name, kind)))
            else:
                items.append((key, self.node(value, keys + (key,), depth + 1, child)))
        if items and all(type(node) is int for _, node in items):
            # Leaves only: their indexes follow one another, as no
            # container among them took any.
            made.run = ([key for key, _ in items], items[0][1], items[-1][1] + 1)

    def leaf_pairs(self, made: '_Container', body: list, keys, prefix: str) -> bool:
        """Sets the items and run of made that pairs() would set, made
        with one pass of the interpreter's own loops for each check, when
        body is the common case: [str key, {"leaf": kind}] pairs of one
        kind, whose keys need no escape, whose names are none reserved,
        none repeated and none met before (a model's state_dict); whether
        it did. Any other body pairs() takes a pair at a time, as it finds
        errors."""
        if not body or set(map(type, body)) != {list} or set(map(len, body)) != {2}:
            return False
        keys_of = list(map(operator.itemgetter(0), body))
        values = list(map(operator.itemgetter(1), body))
        first = values[0]
        if set(map(type, keys_of)) != {str} or type(first) is not dict \
                or len(first) != 1 or 'leaf' not in first \
                or type(first['leaf']) is not str or first['leaf'] not in _KIND_SET \
                or values.count(first) != len(values):
            return False
        return self.leaf_run(made, keys_of, first['leaf'], keys, prefix)

    def leaf_run(self, made: '_Container', keys_of: List[str], kind: str, keys,
                 prefix: str) -> bool:
        """What leaf_pairs() does, once it found the str keys of the items
        and their kind (one of KINDS), from the checks of the keys on."""
        # No key holds a character that is escaped (a line feed is one, so
        # that the line feeds of the joined keys are theirs alone), so the
        # record names are the keys after the prefix; no name begins with
        # "serio.", as every reserved one does.
        joined = '\n'.join(keys_of)
        if any(c in joined for c in _ESCAPED_BUT_LF) or joined.count('\n') != len(keys_of) - 1:
            return False
        names = [prefix + key for key in keys_of] if prefix else keys_of
        listed = '\n'.join(names) if prefix else joined
        if listed.startswith('serio.') or listed.find('\nserio.') >= 0:
            return False
        template = self.template
        nodes = template.nodes
        if not nodes.keys().isdisjoint(names):
            return False
        start = len(template.names)
        before = len(nodes)
        nodes.update(zip(names, range(start, start + len(names))))
        if len(nodes) != before + len(names):
            # A name repeated (each node before is a leaf's or a
            # container's, none of these names): as they were.
            for name in names:
                nodes.pop(name, None)
            return False
        template.names.extend(names)
        template.kinds.extend(itertools.repeat(kind, len(names)))
        template.parents.extend(itertools.repeat(keys, len(names)))
        template.keys.extend(keys_of)
        made.set_run(keys_of, start, start + len(names))
        return True


# The text of the tree that flatten() writes of a dict of leaves, up to
# its first key.
_LEAVES_HEAD = '{"format":"%s","version":%d,"root":{"dict":[["' % (TREE_FORMAT, TREE_VERSION)
_LEAF_KIND = '",{"leaf":"'


def _canonical_leaves(data: bytes, text: str) -> Optional[Tuple[List[str], str]]:
    """(keys, kind) when text, decoded from data, is the tree that
    flatten() writes of a dict
    of leaves of one kind (a model's state_dict) whose keys hold no
    character that JSON escapes or cannot hold as it is (no ``"``, no
    ``\\``, no control character): the document is then that dict's, with
    keys as they are in the text. None for any other text, which the JSON
    parser then takes. The keys are split at the text between them, which
    holds quotation marks: that every quotation mark in the text is one of
    theirs shows that no key holds one."""
    if not text.startswith(_LEAVES_HEAD):
        return None
    at = text.find(_LEAF_KIND, len(_LEAVES_HEAD))
    if at < 0:
        return None
    at += len(_LEAF_KIND)
    kind = text[at:text.find('"', at)]
    if kind not in _KIND_SET:
        return None
    tail = '",{"leaf":"%s"}]' % kind
    if len(text) < len(_LEAVES_HEAD) + len(tail) + 3 or not text.endswith(tail + ']}}'):
        return None
    inner = text[len(_LEAVES_HEAD):len(text) - len(tail) - 3]
    between = tail + ',["'
    keys = inner.split(between)
    if inner.count('"') != (len(keys) - 1) * between.count('"') or '\\' in inner:
        return None
    # A control character is a byte below 0x20 of the UTF-8 text, which
    # only the keys could hold (NumPy finds the least byte in a fiftieth of
    # the time of str.isprintable()).
    numpy = _numpy()
    if numpy.frombuffer(data, dtype=numpy.uint8).min() < 0x20:
        return None
    return keys, kind


def parse(data: bytes, path: Optional[str] = None) -> Template:
    """Validate the bytes of a ``serio.tree`` record and return its
    template. Raises :class:`DataError` (SYNTAX) naming the key path for
    anything it does not accept: not UTF-8, not JSON, a member repeated,
    a number that is not an integer key, a str holding a lone surrogate,
    an unknown node, two key paths of the same record name."""
    parser = _Parser(path)
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as error:
        raise parser.fail(None, 'not UTF-8 (byte %d)' % error.start) from None
    parser.surrogates = _SURROGATE_ESCAPE.search(text) is not None
    leaves = None if parser.surrogates else _canonical_leaves(data, text)
    if leaves is not None:
        root = _Container('dict')
        if parser.leaf_run(root, leaves[0], leaves[1], (), ''):
            parser.template.root = root
            return parser.template
    try:
        document = json.loads(text, object_pairs_hook=_pairs, parse_float=_no_float,
                              parse_constant=_no_constant)
    except RecursionError:
        raise parser.fail(None, 'nested too deeply') from None
    except ValueError as error:
        raise parser.fail(None, 'not valid JSON: %s' % (error,)) from None
    if not isinstance(document, dict) or set(document) != {'format', 'version', 'root'} \
            or document['format'] != TREE_FORMAT:
        raise parser.fail(None, 'not a serio.tree document')
    if type(document['version']) is not int or document['version'] != TREE_VERSION:
        raise parser.fail(None, 'version %r, where this serio reads version %d'
                          % (document['version'], TREE_VERSION))
    parser.template.root = parser.node(document['root'], (), 0)
    return parser.template
