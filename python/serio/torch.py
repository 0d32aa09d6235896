# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""PyTorch checkpoints in one call each way.

::

    import serio.torch

    serio.torch.save("ckpt.serio", model, optimizer, epoch=3, step=1200)
    ...
    extra = serio.torch.load("ckpt.serio", model, optimizer)
    extra["epoch"]                                # 3

The file is a :func:`serio.save` tree ``{"model": model.state_dict(),
"optimizer": optimizer.state_dict(), **extra}``: every tensor a record
named by its key path (``model.fc.weight@float32[10x4]``,
``optimizer.state.0.exp_avg@float32[10x4]``), readable from C and the
``serio`` tool, and the rest (``step``, ``param_groups``, the extra
counters) in its tree. Resuming from it gives the same parameters, bit for
bit, as training that was never interrupted.
"""

from __future__ import annotations

from typing import Any, Dict

import serio

__all__ = ['save', 'load']


def save(path: 'serio._io.PathLike', model: Any, optimizer: Any = None, **extra: Any) -> None:
    """Save ``model.state_dict()``, ``optimizer.state_dict()`` (when an
    optimizer is given) and the keyword arguments (counters, an RNG state,
    a name: any :func:`serio.save` leaves) to path, sealed.

    model is a ``torch.nn.Module`` or a state_dict (a mapping of names to
    tensors). Raises :class:`serio.UnstorableError` naming the key path of
    anything that cannot be stored exactly, before the file is touched.
    """
    for reserved in ('model', 'optimizer'):
        if reserved in extra:
            raise TypeError('%r is the key of the %s itself; give the extra value '
                            'another name' % (reserved, reserved))
    state_dict = model.state_dict() if hasattr(model, 'state_dict') else model
    state: Dict[str, Any] = {'model': state_dict}
    if optimizer is not None:
        state['optimizer'] = optimizer.state_dict()
    state.update(extra)
    serio.save(path, state)


def _to_device(value: Any, device: Any) -> Any:
    import torch
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return type(value)((key, _to_device(item, device)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(_to_device(item, device) for item in value)
    return value


def load(path: 'serio._io.PathLike', model: Any, optimizer: Any = None, *,
         map_location: Any = None, strict: bool = True) -> Dict[str, Any]:
    """Load a file of :func:`save` into model (and optimizer), and return
    the extra values, as a dict.

    ``model.load_state_dict(..., strict=strict)`` gets the model's state;
    ``optimizer.load_state_dict()`` the optimizer's, which the file must
    then hold (:class:`KeyError` otherwise). map_location (a
    ``torch.device``, a string such as ``"cuda:0"``, or None for the CPU)
    is where the tensors are put, the extra ones included, as for
    ``torch.load``. Nothing is loaded into model or optimizer unless the
    whole file is valid (the errors of :func:`serio.load`).
    """
    state = serio.load(path)
    if not isinstance(state, dict) or 'model' not in state:
        raise KeyError('%s: not a serio.torch checkpoint: no "model" key' % (path,))
    if optimizer is not None and 'optimizer' not in state:
        raise KeyError('%s: the file holds no optimizer state' % (path,))
    if map_location is not None:
        state = _to_device(state, map_location)
    model.load_state_dict(state.pop('model'), strict=strict)
    optimizer_state = state.pop('optimizer', None)
    if optimizer is not None:
        optimizer.load_state_dict(optimizer_state)
    return state
