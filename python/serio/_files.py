# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""What the checkpoints of several files share (serio.dcp's directory,
the sharded checkpoints of serio.save): the seal of a sealed serio file,
which an index remembers to tell that file from any other, and the index
itself, strict JSON written atomically."""

from __future__ import annotations

import json
import os
from typing import Any, Tuple

from gi.repository import Serio

from . import _errors

__all__ = ['SEAL_PREFIX', 'seal_of', 'strict_json', 'write_json']

# The closing record of a sealed text (serio-v1-files.md §2).
SEAL_PREFIX = b'v1|serio.seal|3|'


def seal_of(path) -> Tuple[str, int]:
    """The tokens of the seal record that ends the sealed serio file at
    path, and the file's size: what an index remembers of it. A file that
    does not end with a seal is a DataError (TRUNCATED) naming it; one that
    cannot be opened, the FileError of open()."""
    with open(path, 'rb') as stream:
        size = os.fstat(stream.fileno()).st_size
        stream.seek(max(0, size - 256))
        tail = stream.read()
    lines = tail.split(b'\n')
    if len(lines) < 2 or lines[-1] != b'' or not lines[-2].startswith(SEAL_PREFIX):
        raise _errors.data_error(str(path), None, 'the file does not end with a seal',
                                 int(Serio.Error.TRUNCATED))
    return lines[-2][len(SEAL_PREFIX):].decode('ascii'), size


def _strict_object(pairs):
    result = {}
    for key, value in pairs:
        if key in result:
            raise ValueError('the key %r appears twice' % key)
        result[key] = value
    return result


def _no_constant(name):
    raise ValueError('%s is not JSON' % name)


def _no_float(text):
    raise ValueError('the number %s is not an integer' % text)


def strict_json(raw: bytes, floats: bool = True) -> Any:
    """The JSON document of raw: UTF-8 (bad bytes are an error), no
    member twice in an object, no NaN or Infinity; with floats=False, no
    number but integers. Raises ValueError (UnicodeDecodeError,
    json.JSONDecodeError and the others are ValueErrors) or
    RecursionError."""
    hooks = {} if floats else {'parse_float': _no_float}
    return json.loads(raw.decode('utf-8', errors='strict'), object_pairs_hook=_strict_object,
                      parse_constant=_no_constant, **hooks)


def write_json(path, document: Any, sort_keys: bool = False) -> None:
    """Write document to path as JSON (no NaN), atomically: in a
    temporary file of the same directory, flushed to disk, put in place
    with os.replace(), the directory flushed too."""
    text = json.dumps(document, indent=1, sort_keys=sort_keys, ensure_ascii=False,
                      allow_nan=False) + '\n'
    path = os.fspath(path)
    directory = os.path.dirname(path) or '.'
    temporary = os.path.join(directory, '.' + os.path.basename(path) + '.tmp')
    try:
        with open(temporary, 'w', encoding='utf-8') as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    handle = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)
