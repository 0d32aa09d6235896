# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Serio.py: PyGObject overrides that give Serio.Bundle the Python protocols
#
# Copyright 2026 The libserio authors

"""Pythonic access to :class:`Serio.Bundle`.

PyGObject loads this module by itself on ``from gi.repository import Serio``
when it lies in a ``gi/overrides/`` directory on ``sys.path``.

A bundle reads like a mapping from names to lists of floats, in bundle order::

    b = Serio.Bundle.from_dict({"dense.w": [0.1, -0.0], "dense.b": []})
    len(b)               # 2: the number of arrays
    "dense.w" in b       # True
    b["dense.w"]         # [0.1, -0.0]; the first array of that name
    for name, values in b:
        ...              # every array, duplicates included, in order
    b.to_dict()          # {"dense.w": [0.1, -0.0], "dense.b": []}
    b.keys()             # ["dense.w", "dense.b"], so dict(b) == b.to_dict()

and, with NumPy, ``b.to_numpy("dense.w")`` and ``b.append_numpy(name, array)``
move the values through a GBytes rather than one Python float at a time.

Semantics worth knowing:

* Keys are names, and names are ``str``: any other key type (an ``int``
  included) raises :exc:`TypeError`. Reach arrays by position with
  ``get_name(i)`` and ``get_values(i)``.
* Duplicate names are legal: ``b[name]``, ``to_numpy()``, ``to_dict()`` and
  ``dict(b)`` see the first array of a name, ``keys()`` lists each name
  once, iteration sees every array.
* Values are lists of floats, as ``get_values()`` returns them.
* ``bool(b)`` is always ``True``, as for other GObject containers
  (``Gio.Settings``, ``Gtk.TreeModel``): ``if b:`` tests for ``None``, not
  for emptiness. Use ``len(b) == 0`` for that.
* ``==`` and ``hash()`` stay those of every GObject wrapper, identity: a
  bundle is mutable. Compare names and bits with ``a.equal(b)``.
"""

import sys

from ..overrides import override
from ..module import get_introspection_module

from gi.repository import GLib

Serio = get_introspection_module('Serio')

__all__ = []

# How many names __repr__ lists before it summarizes the rest.
_REPR_MAX_NAMES = 8


def _import_numpy(method):
    try:
        import numpy
    except ImportError as error:
        raise ImportError(
            'Serio.Bundle.%s() needs NumPy, which cannot be imported: %s'
            % (method, error)) from error
    return numpy


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


class Bundle(Serio.Bundle):
    """An ordered list of named Float64 arrays.

    On top of the C API, a bundle supports ``len()``, ``name in bundle``,
    ``bundle[name]``, iteration over ``(name, values)`` pairs, and
    conversions from and to dicts and NumPy arrays. See the module
    documentation for the exact semantics.
    """

    def _find(self, name):
        """Return the index of the first array called name, or None."""
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

    def __len__(self):
        """Return the number of arrays, duplicates included."""
        return self.get_n_arrays()

    def __bool__(self):
        """Return True: a bundle is true even when it is empty."""
        return True

    def __contains__(self, name):
        """Return whether an array is called name (a str)."""
        return self._find(name) is not None

    def __getitem__(self, name):
        """Return the values of the first array called name, as a list.

        Raises KeyError if no array has that name, and TypeError if name
        is not a str.
        """
        index = self._find(name)
        if index is None:
            raise KeyError(name)
        return self.get_values(index)

    def __iter__(self):
        """Yield a (name, values) pair per array, in bundle order.

        Values are lists of floats. Arrays appended while iterating are
        not visited.
        """
        for index in range(self.get_n_arrays()):
            yield self.get_name(index), self.get_values(index)

    def __repr__(self):
        """Return the number of arrays, and the first names and lengths."""
        n_arrays = self.get_n_arrays()
        arrays = ['%r (%s)' % (self.get_name(index),
                               _plural(self.get_bytes(index).get_size() // 8, 'value'))
                  for index in range(min(n_arrays, _REPR_MAX_NAMES))]
        if n_arrays > _REPR_MAX_NAMES:
            arrays.append('and %d more' % (n_arrays - _REPR_MAX_NAMES))
        if not arrays:
            return '<Serio.Bundle with 0 arrays>'
        return '<Serio.Bundle with %s: %s>' % (_plural(n_arrays, 'array'),
                                               ', '.join(arrays))

    def keys(self):
        """Return the names as a list, each once, in the order of their first
        array.

        With ``bundle[name]``, this makes ``dict(bundle)`` equal to
        :meth:`to_dict`.
        """
        return list(dict.fromkeys(self.get_name(index)
                                  for index in range(self.get_n_arrays())))

    def to_dict(self):
        """Return a dict that maps each name to its values, as a list.

        When names repeat, the first array of a name wins, as for
        ``bundle[name]``; the dict keeps bundle order.
        """
        result = {}
        for index in range(self.get_n_arrays()):
            name = self.get_name(index)
            if name not in result:
                result[name] = self.get_values(index)
        return result

    @classmethod
    def from_dict(cls, arrays):
        """Return a new bundle holding the arrays of a mapping, in its order.

        Each value is a sequence of numbers (a list, a tuple, ...) or a
        NumPy array; NumPy arrays go through :meth:`append_numpy`. Names are
        sanitized as by ``append`` (``|``, CR and LF become ``_``), and NaNs
        become the default quiet NaN.

        Raises TypeError if arrays is not a mapping, or for a name that is
        not a str or a value that is not a sequence of numbers (None
        included); OverflowError for an integer too large for a float; and
        ValueError for a name holding a NUL, or UnicodeEncodeError (a
        ValueError) for one holding a lone surrogate.
        """
        if not hasattr(arrays, 'items'):
            raise TypeError('from_dict() needs a mapping, not %s'
                            % type(arrays).__name__)
        # Only an already imported NumPy can have made an ndarray.
        numpy = sys.modules.get('numpy')
        bundle = cls.new()
        for name, values in arrays.items():
            if numpy is not None and isinstance(values, numpy.ndarray):
                bundle.append_numpy(name, values)
            else:
                _check_name(name)
                # None is no array here, whether or not append() takes it.
                if values is None:
                    raise TypeError('from_dict() needs a sequence of numbers '
                                    'for %r, not None' % (name,))
                bundle.append(name, values)
        return bundle

    def to_numpy(self, name):
        """Return the values of the first array called name as a NumPy array.

        The result is a one-dimensional, read-only ``float64`` array in
        native byte order, bit for bit what the bundle holds. It is a view
        of a private copy of the values (``GLib.Bytes.get_data()`` copies
        them into a ``bytes`` object, which the array keeps alive), so it
        outlives the bundle; call ``.copy()`` on it for a writable array.

        Raises ImportError without NumPy, KeyError if no array has that
        name, and TypeError if name is not a str.
        """
        numpy = _import_numpy('to_numpy')
        index = self._find(name)
        if index is None:
            raise KeyError(name)
        return numpy.frombuffer(self.get_bytes(index).get_data(),
                                dtype=numpy.float64)

    def append_numpy(self, name, array):
        """Append a one-dimensional array-like of numbers as a new array.

        array is anything ``numpy.asarray()`` takes (an ndarray, a list, ...)
        whose dtype NumPy casts to ``float64`` under the 'safe' rule: floats
        of up to 64 bits, integers (those beyond 2**53 round, as in NumPy)
        and booleans, in any byte order and memory layout. The values reach
        the library as one ``GLib.Bytes`` through ``append_bytes()``; -0.0
        stays -0.0 and NaNs become the default quiet NaN.

        Raises ImportError without NumPy; TypeError for a name that is not
        a str or a dtype that does not cast safely (complex, longdouble,
        strings, objects); ValueError for a name holding a NUL or an array
        that is not one-dimensional (flatten it first with ``ravel()``), or
        UnicodeEncodeError (a ValueError) for a name holding a lone
        surrogate.
        """
        numpy = _import_numpy('append_numpy')
        _check_name(name)
        values = numpy.asarray(array)
        if values.ndim != 1:
            raise ValueError('append_numpy() needs a 1-D array, not %d-D; '
                             'flatten it first with ravel()' % values.ndim)
        values = values.astype(numpy.float64, casting='safe', copy=False)
        self.append_bytes(name, GLib.Bytes.new(values.tobytes()))


Bundle = override(Bundle)
__all__.append('Bundle')
