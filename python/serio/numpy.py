# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""``numpy.savez``/``numpy.load`` for serio files: flat mappings of arrays.

::

    import serio.numpy
    serio.numpy.savez("arrays.serio", w=w, b=b)     # like numpy.savez
    arrays = serio.numpy.load("arrays.serio")       # {"w": w, "b": b}

Each array is one record ``w@float32[2x3]``, with no ``serio.tree``: the
file is what C, GJS, Vala and the ``serio`` tool write and read, and
``serio convert`` turns it into a ``.npz`` with the same dtypes and bytes.
:func:`load` reads any serio file as a flat dict of ndarrays.
"""

from __future__ import annotations

from typing import Any, Collection, Dict, Mapping, Optional

from . import _io, _tree

__all__ = ['savez', 'save', 'load']


def save(path: _io.PathLike, arrays: Mapping[str, Any], *, sealed: bool = True) -> None:
    """Save a mapping of names (``str``) to NumPy arrays (or anything
    ``numpy.asarray`` makes an array of a storable dtype) as one record
    each, named as given, in mapping order, replacing the file atomically.

    A name beginning ``serio.`` is reserved, and one with a character the
    record name cannot hold as it is (``|``, CR, LF, NUL, ``@``, ``[``,
    ``]``, ``%``) is escaped as :func:`serio.save` escapes a key. What
    cannot be stored exactly raises :class:`serio.UnstorableError` naming
    the key before the file is touched.
    """
    numpy = _io.numpy_module()
    _io.as_file(path)
    if not isinstance(arrays, Mapping):
        raise TypeError('save() needs a mapping of names to arrays, not %s'
                        % type(arrays).__name__)
    leaves = []
    for name, value in arrays.items():
        if type(name) is not str:
            raise TypeError('array names are str, not %s' % type(name).__name__)
        array = value if isinstance(value, numpy.ndarray) else numpy.asarray(value)
        leaves.append(_tree.array_leaf(numpy, (name,), array, 'ndarray'))
    writer = _io.open_writer(path, sealed)
    try:
        for leaf in leaves:
            writer.write(leaf.name, leaf.dtype, leaf.shape, leaf.value, key=leaf.name)
    except BaseException:
        writer.abandon()
        raise
    writer.close()


def savez(path: _io.PathLike, *args: Any, **arrays: Any) -> None:
    """Like ``numpy.savez``: positional arrays are named ``arr_0``,
    ``arr_1``, ...; keyword arrays by their keyword. See :func:`save`."""
    named: Dict[str, Any] = {}
    for index, array in enumerate(args):
        named['arr_%d' % index] = array
    for name, array in arrays.items():
        if name in named:
            raise TypeError('cannot use un-named variables and keyword %s' % name)
        named[name] = array
    save(path, named)


def load(path: _io.PathLike, *, names: Optional[Collection[str]] = None) -> Dict[str, Any]:
    """The arrays of any serio file as a dict of base name → ndarray, in
    file order, each of its element type and shape (a bfloat16 record as
    a torch tensor). A file of :func:`serio.save` gives the records of its
    leaves by key path (``model.fc.weight``), its tree left aside; see
    :func:`serio.load` for names and errors."""
    from . import _load
    return _load(path, names, flat=True)
