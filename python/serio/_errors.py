# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""The exceptions of the serio package.

Every exception the package raises about a file or its contents is a
:class:`serio.Error`, which is a ``GLib.Error`` (so ``except GLib.Error``
and ``error.matches(domain, code)`` keep working) whose ``str()`` is its
message, and which carries what the message says as attributes:

========================  ==================================================
``message``               the message, as ``str(error)`` gives it
``domain``, ``code``      the ``GLib.Error`` domain and code
                          (``serio-error-quark`` and a ``Serio.Error`` code
                          for bad data, ``g-io-error-quark`` and a
                          ``Gio.IOErrorEnum`` code for a file problem)
``path``                  the file concerned, or ``None``
``key``                   the key path concerned (``optimizer.state.0.step``)
                          or ``None``
``line``, ``value_index`` where in the file, from 1 (``None`` when not known;
                          ``value_index`` 0 for an error about a whole line)
``detail``                the library's own message, without the file name
                          and key the package put in front
========================  ==================================================

and, by multiple inheritance, the standard exception a Python user expects:

* :class:`FileError` (an ``OSError``, with ``errno`` and ``filename``) for a
  file that cannot be read or written, and its subclasses
  :class:`NotFoundError` (``FileNotFoundError``),
  :class:`IsDirectoryError` (``IsADirectoryError``),
  :class:`NotDirectoryError` (``NotADirectoryError``) and
  :class:`PermissionDeniedError` (``PermissionError``);
* :class:`DataError` (a ``ValueError``) for a file whose contents are not
  valid: not v1 text, a value its type cannot hold, a ``serio.tree`` that
  does not match the arrays;
* :class:`UnstorableError` (both a ``TypeError`` and a ``ValueError``) for a
  value that :func:`serio.save` cannot store exactly; nothing is written.
"""

from __future__ import annotations

import errno as _errno
from typing import Optional

import gi

gi.require_version('Serio', '1.0')
from gi.repository import Gio, GLib, Serio  # noqa: E402

__all__ = ['Error', 'FileError', 'NotFoundError', 'IsDirectoryError',
           'NotDirectoryError', 'PermissionDeniedError', 'DataError',
           'UnstorableError']

SERIO_DOMAIN = GLib.quark_to_string(Serio.error_quark())
IO_DOMAIN = GLib.quark_to_string(Gio.io_error_quark())


class Error(GLib.Error):
    """The base of the serio package's exceptions: a ``GLib.Error`` whose
    ``str()`` is its message, with its location as attributes (see the
    module documentation)."""

    def __init__(self, message: str, domain: str = SERIO_DOMAIN, code: int = 0, *,
                 path: Optional[str] = None, key: Optional[str] = None,
                 line: Optional[int] = None, value_index: Optional[int] = None,
                 detail: Optional[str] = None) -> None:
        GLib.Error.__init__(self, message, domain, code)
        self.path = path
        self.key = key
        self.line = line
        self.value_index = value_index
        self.detail = message if detail is None else detail

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return '%s(%r, domain=%r, code=%d)' % (type(self).__name__, self.message,
                                               self.domain, self.code)

    def __reduce__(self):
        # GLib.Error's own __reduce__ would rebuild a plain GLib.Error.
        state = dict(self.__dict__)
        if isinstance(self, OSError):
            # Slots of OSError, not in __dict__.
            state.update(errno=self.errno, strerror=self.strerror,
                         filename=self.filename)
        return (_rebuild, (type(self), self.message, self.domain, self.code, state))


def _rebuild(cls, message, domain, code, state):
    # The C layout of OSError must make the instance of an OSError subclass.
    error = (OSError if issubclass(cls, OSError) else Exception).__new__(cls)
    Error.__init__(error, message, domain, code)
    for name, value in state.items():
        setattr(error, name, value)
    return error


class FileError(Error, OSError):
    """A file that cannot be read or written: an ``OSError`` (``errno`` and
    ``filename`` set where known) and a ``GLib.Error`` of
    ``g-io-error-quark``."""

    def __init__(self, message: str, domain: str = IO_DOMAIN, code: int = 0, *,
                 path: Optional[str] = None, **location) -> None:
        Error.__init__(self, message, domain, code, path=path, **location)
        # OSError's own attributes, which its __init__ would set from args.
        self.errno = _ERRNO_OF_CODE.get(code)
        self.strerror = message
        self.filename = path

    def __str__(self) -> str:
        return self.message


class NotFoundError(FileError, FileNotFoundError):
    """The file (or a directory on its path) does not exist."""


class IsDirectoryError(FileError, IsADirectoryError):
    """The path is a directory, not a file."""


class NotDirectoryError(FileError, NotADirectoryError):
    """A component of the path is not a directory."""


class PermissionDeniedError(FileError, PermissionError):
    """The file cannot be read or written with the caller's permissions."""


class DataError(Error, ValueError):
    """A file whose contents are not valid: a ``Serio.Error`` code (or, for
    a ``serio.tree`` that does not describe the arrays, ``SYNTAX``).

    ``from_library`` is True when libserio found it, False when the
    package did (a tree, a shape NumPy cannot hold, a legacy table)."""

    from_library = False


class UnstorableError(Error, TypeError, ValueError):
    """A value :func:`serio.save` cannot store exactly (an object, a
    complex array, an int beyond what an int64 record holds, ...); the
    message and ``key`` name its key path. Nothing was written."""

    def __init__(self, message: str, *, key: Optional[str] = None,
                 domain: str = IO_DOMAIN,
                 code: int = int(Gio.IOErrorEnum.INVALID_ARGUMENT)) -> None:
        Error.__init__(self, message, domain, code, key=key)


_CLASS_OF_CODE = {
    int(Gio.IOErrorEnum.NOT_FOUND): NotFoundError,
    int(Gio.IOErrorEnum.IS_DIRECTORY): IsDirectoryError,
    int(Gio.IOErrorEnum.NOT_DIRECTORY): NotDirectoryError,
    int(Gio.IOErrorEnum.PERMISSION_DENIED): PermissionDeniedError,
}

_ERRNO_OF_CODE = {
    int(Gio.IOErrorEnum.NOT_FOUND): _errno.ENOENT,
    int(Gio.IOErrorEnum.IS_DIRECTORY): _errno.EISDIR,
    int(Gio.IOErrorEnum.NOT_DIRECTORY): _errno.ENOTDIR,
    int(Gio.IOErrorEnum.PERMISSION_DENIED): _errno.EACCES,
    int(Gio.IOErrorEnum.NO_SPACE): _errno.ENOSPC,
    int(Gio.IOErrorEnum.EXISTS): _errno.EEXIST,
    int(Gio.IOErrorEnum.READ_ONLY): _errno.EROFS,
    int(Gio.IOErrorEnum.TOO_MANY_OPEN_FILES): _errno.EMFILE,
    int(Gio.IOErrorEnum.FILENAME_TOO_LONG): _errno.ENAMETOOLONG,
    int(Gio.IOErrorEnum.INVALID_FILENAME): _errno.EINVAL,
}


def _locate(reader):
    """(line, value index) of the error that made reader (a Serio.Reader)
    fail, kept on the reader since PyGObject drops the location the
    library attached to the GLib.Error; None when not known."""
    if reader is None:
        return None
    line = int(reader.get_error_line())
    if line == 0:
        return None
    return line, int(reader.get_error_value_index())


def from_glib(error: GLib.Error, *, path: Optional[str] = None,
              key: Optional[str] = None, reader=None) -> Error:
    """The serio exception for a GLib.Error a call of the library raised
    while reading or writing path (a file name, or None for a stream or
    memory) and, where known, the array of key path key; reader is the
    Serio.Reader that raised it, if any.

    A Serio.Error becomes a :class:`DataError` whose message starts with
    the file name (unless the library put it there already) and the key;
    its line and value index come from the reader
    (Serio.Reader.get_error_line()), since PyGObject drops the location
    the library attached to the error. A Gio error becomes a
    :class:`FileError` of the matching subclass.
    """
    if isinstance(error, Error):
        return error
    detail = error.message
    parts = []
    # Gio's messages, and Bundle.new_from_file()'s, name the file already.
    if path is not None and path not in detail:
        parts.append(path)
    if key is not None:
        parts.append(key)
    message = ': '.join(parts + [detail])
    if error.domain == SERIO_DOMAIN:
        where = _locate(reader)
        line, value_index = where if where is not None else (None, None)
        made = DataError(message, error.domain, error.code, path=path, key=key,
                         line=line, value_index=value_index, detail=detail)
        made.from_library = True
        return made
    if error.domain == IO_DOMAIN:
        cls = _CLASS_OF_CODE.get(error.code, FileError)
        return cls(message, error.domain, error.code, path=path, key=key,
                   detail=detail)
    return Error(message, error.domain, error.code, path=path, key=key,
                 detail=detail)


def data_error(path: Optional[str], key: Optional[str], detail: str, code: int, *,
               value_index: Optional[int] = None) -> DataError:
    """A :class:`DataError` found by the package itself (a Serio.Error code:
    SYNTAX, DOMAIN, ...), its message the file, the key and the detail."""
    message = ': '.join([part for part in (path, key) if part is not None] + [detail])
    return DataError(message, SERIO_DOMAIN, int(code), path=path, key=key,
                     value_index=value_index, detail=detail)
