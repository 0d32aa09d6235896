# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""The state the serio.dcp tests save and check, made from a seed, so that
every process builds the same one."""

import torch


def expected_state(seed):
    generator = torch.Generator().manual_seed(seed)
    return {
        'w': torch.randn(6, 5, generator=generator),
        'half': torch.randn(7, generator=generator).to(torch.bfloat16),
        'ids': torch.randint(-2 ** 40, 2 ** 40, (4,), generator=generator),
        'mask': torch.rand(5, generator=generator) > 0.5,
        'sharded': torch.randn(8, 4, generator=generator),
        'step': 7 + seed,
        'lr': 0.1 * seed,
        'name': 'run-%d ✓' % seed,
    }


def blank_state(seed):
    """A state of the same shapes to load into, every value different."""
    state = expected_state(seed)
    blank = {}
    for key, value in state.items():
        if isinstance(value, torch.Tensor):
            blank[key] = torch.zeros_like(value)
        else:
            blank[key] = type(value)()
    return blank


def same_bits(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    a, b = a.contiguous(), b.contiguous()
    if a.dtype == torch.bfloat16:
        a, b = a.view(torch.int16), b.view(torch.int16)
    return a.numpy().tobytes() == b.numpy().tobytes()


def compare(state, expected, skip=()):
    """What differs between two states, as sentences (none: equal)."""
    problems = []
    for key, want in expected.items():
        if key in skip:
            continue
        got = state.get(key)
        if isinstance(want, torch.Tensor):
            if not isinstance(got, torch.Tensor) or not same_bits(got, want):
                problems.append('%s: %r differs from %r' % (key, got, want))
        elif type(got) is not type(want) or got != want:
            problems.append('%s: %r differs from %r' % (key, got, want))
    return problems
