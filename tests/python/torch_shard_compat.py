# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""Lets torch 1.13 import torch.distributed._shard under Python 3.11, in
this process only, without touching the installed torch.

torch 1.13's sharded_tensor/metadata.py gives a dataclass field a mutable
default (``field(default=TensorProperties())``), which Python 3.11 refuses
with "mutable default ... use default_factory"; torch 2.0 fixed that one
line (pytorch PR #91795). install() puts a finder in front of the import
system that compiles that module from its source with the fix applied.
It does nothing when the module already imports (torch ≥ 2.0, Python
3.10).
"""

import importlib.abc
import importlib.machinery
import sys

_MODULE = 'torch.distributed._shard.sharded_tensor.metadata'
_BROKEN = 'field(default=TensorProperties())'
_FIXED = 'field(default_factory=TensorProperties)'


class _FixedLoader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname):
        source = self.get_source(fullname)
        if _BROKEN not in source:
            raise ImportError('%s: the line to fix is not there' % self.path)
        return compile(source.replace(_BROKEN, _FIXED), self.path, 'exec')


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != _MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            return None
        spec.loader = _FixedLoader(fullname, spec.origin)
        return spec


def _needed():
    if sys.version_info < (3, 11):
        return False
    import torch
    return torch.__version__.split('.')[0] == '1'


def install():
    """Install the fix if this torch needs it; idempotent."""
    if _needed() and not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
