# SPDX-License-Identifier: LGPL-2.1-or-later
"""Save a checkpoint with the serio package, load it back, compare bits."""

import locale
import os
import sys
import tempfile

import numpy as np

import serio

STATE = {
    "model": {"dense.w": np.array([[0.1, -0.0, 1e-300, sys.float_info.max, 1 / 3]]),
              "dense.b": np.array([-2.5], dtype=np.float32)},
    "epoch": 3,
    "betas": (0.9, 0.999),
    "name": "run-1",
    "best": None,
}


def same(a, b):
    """The same tree: the same types, keys and bits all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, float):
        return a.hex() == b.hex()
    return a == b


def save_and_load():
    with tempfile.TemporaryDirectory(prefix="serio-example-") as tmp:
        path = os.path.join(tmp, "checkpoint.serio")
        # Atomic: a crash leaves either the old file or the new one.
        serio.save(path, STATE)
        loaded = serio.load(path)
        # Each array is a record named by its key path, for any v1 reader.
        records = serio.numpy.load(path)

    if not same(STATE, loaded):
        print("The checkpoint did not come back bit for bit", file=sys.stderr)
        return False

    print(f"Restored {len(loaded)} keys bit for bit: {', '.join(loaded)}")
    print(f"Records: {', '.join(f'{name} {a.dtype}' for name, a in records.items())}")
    return True


def reject_bad_count():
    with tempfile.TemporaryDirectory(prefix="serio-example-") as tmp:
        path = os.path.join(tmp, "bad.serio")
        with open(path, "w", encoding="ascii") as f:
            f.write("v1|x|1|1\nv1|y|2|1\n")
        try:
            serio.load(path)
        except serio.DataError as error:
            print(f"Rejected as expected, at key {error.key!r}: {error.detail}")
            return True
    print("A record with a wrong count was not rejected", file=sys.stderr)
    return False


if __name__ == "__main__":
    # libserio's messages follow the user's language once this is done.
    locale.setlocale(locale.LC_ALL, "")
    sys.exit(0 if save_and_load() and reject_bad_count() else 1)
