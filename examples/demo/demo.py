# SPDX-License-Identifier: LGPL-2.1-or-later
"""The libserio demo: train a tiny model for real, save its weights with
libserio, restore them in a fresh process, and show that every bit of every
array and every prediction on the test set is the same.

    meson compile -C BUILDDIR demo      train, save, restore and compare
    demo.py --keep DIR                  the same, keeping model.serio in DIR

(run from a build tree, the script needs LD_LIBRARY_PATH and GI_TYPELIB_PATH
to point at libserio and its typelib, and PYTHONPATH at the serio package in
BUILDDIR/python and the override in BUILDDIR/introspection/overrides;
`meson devenv -C BUILDDIR` and the `demo` target set them).

The fresh process is this script again, run as
`demo.py --restore MODEL --reference REFERENCE`: it knows the architecture
(the code) and takes the weights (the data) from MODEL alone. REFERENCE is
the trainer's own copy of the weights and of its test-set predictions, in
NumPy's binary .npz format, so that the check does not go through libserio.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

# One BLAS thread in both processes: the arithmetic is then done in the same
# order in each, and the demo stays light on a shared machine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

try:
    import numpy as np
except ImportError:
    print("The demo needs NumPy (Debian: apt-get install python3-numpy)",
          file=sys.stderr)
    sys.exit(77)  # "skipped", for meson test

import serio  # noqa: E402
from gi.repository import Gio, Serio  # noqa: E402

SEED = 20260101
N_TRAIN = 400
N_TEST = 200
NOISE = 0.15
HIDDEN = 16
STEPS = 600
LEARNING_RATE = 0.5

# The architecture: a 2-16-1 perceptron, tanh then sigmoid.
SHAPES = {
    "hidden.weight": (2, HIDDEN),
    "hidden.bias": (HIDDEN,),
    "output.weight": (HIDDEN, 1),
    "output.bias": (1,),
}

def two_moons(rng, n):
    """Two interleaved half circles with Gaussian noise, labelled 0 and 1."""
    angle = rng.uniform(0.0, np.pi, n)
    lower = rng.random(n) < 0.5
    x = np.where(lower, 1.0 - np.cos(angle), np.cos(angle))
    y = np.where(lower, 0.5 - np.sin(angle), np.sin(angle))
    points = np.column_stack([x, y]) + rng.normal(0.0, NOISE, (n, 2))
    return points, lower.astype(np.float64)


def forward(params, inputs):
    """The hidden activations and the probability of class 1 per input."""
    hidden = np.tanh(inputs @ params["hidden.weight"] + params["hidden.bias"])
    logits = hidden @ params["output.weight"] + params["output.bias"]
    return hidden, 1.0 / (1.0 + np.exp(-logits[:, 0]))


def accuracy(probabilities, labels):
    return np.mean((probabilities > 0.5) == (labels > 0.5))


def train(rng, inputs, labels):
    params = {
        "hidden.weight": rng.normal(0.0, 1.0, SHAPES["hidden.weight"]),
        "hidden.bias": np.zeros(SHAPES["hidden.bias"]),
        "output.weight": rng.normal(0.0, HIDDEN ** -0.5, SHAPES["output.weight"]),
        "output.bias": np.zeros(SHAPES["output.bias"]),
    }
    for step in range(STEPS + 1):
        hidden, p = forward(params, inputs)
        if step % 100 == 0:
            loss = -np.mean(labels * np.log(p) + (1 - labels) * np.log(1 - p))
            print(f"[train]   step {step:3d}  loss {loss:.4f}  "
                  f"accuracy {accuracy(p, labels):6.1%}")
        # Backpropagation of the mean cross-entropy.
        d_logits = (p - labels)[:, None] / len(labels)
        d_hidden = (d_logits @ params["output.weight"].T) * (1.0 - hidden ** 2)
        grads = {
            "output.weight": hidden.T @ d_logits,
            "output.bias": d_logits.sum(axis=0),
            "hidden.weight": inputs.T @ d_hidden,
            "hidden.bias": d_hidden.sum(axis=0),
        }
        for name, grad in grads.items():
            params[name] -= LEARNING_RATE * grad
    return params


def stored_name(name, array):
    """The name an array is stored under: its shape travels in the name
    (and its element type, but for float64, which has no marker)."""
    return f"{name}[{'x'.join(str(d) for d in array.shape)}]"


def n_different(a, b):
    """How many elements differ in their bits (so -0.0 differs from 0.0)."""
    if a.shape != b.shape:
        return max(a.size, b.size)
    return int(np.count_nonzero(a.view(np.uint64) != b.view(np.uint64)))


def verdict(ok, text):
    print(f"\nVERDICT: {'PASS' if ok else 'FAIL'} -- {text}")
    return 0 if ok else 1


def restore(model_path, reference_path):
    """The fresh process: rebuild the model from the file alone, compare."""
    file_name = os.path.basename(model_path)
    print(f"[restore] process {os.getpid()} reads {file_name}")
    try:
        # The dict that was saved: every array in its shape and type.
        params = serio.load(model_path)
    except serio.Error as error:
        return verdict(False, f"{file_name} was rejected: {error}")
    contents, _etag = Gio.File.new_for_path(model_path).load_bytes(None)
    print(f"[restore] {file_name}: {contents.get_size()} bytes, sealed, "
          f"checksum {Serio.compute_checksum_for_bytes(contents):08x}")

    reference = np.load(reference_path)
    problems = [f"unexpected array {name}" for name in params
                if name not in SHAPES]
    print(f"\n  {'array':<22} {'length':>6}  bits")
    for name in SHAPES:
        restored = params.get(name)
        if restored is None:
            problems.append(f"{name} is missing")
            continue
        if restored.shape != SHAPES[name]:
            problems.append(f"{name} has the shape {restored.shape}")
            continue
        differ = n_different(restored, reference[name])
        status = "identical" if differ == 0 else f"{differ} DIFFERENT"
        print(f"  {stored_name(name, restored):<22} {restored.size:>6}  {status}")
        if differ:
            problems.append(f"{name} differs in {differ} values")
    if problems:
        return verdict(False, "; ".join(problems))

    _, probabilities = forward(params, reference["inputs"])
    expected = reference["probabilities"]
    n_same = len(expected) - n_different(probabilities, expected)
    n_labels = np.count_nonzero((probabilities > 0.5) == (expected > 0.5))
    print(f"\n[restore] {len(expected)} test predictions: {n_same} probabilities "
          f"bit-identical, {n_labels} labels identical")
    print(f"[restore] test accuracy {accuracy(probabilities, reference['labels']):.1%}")
    if n_same != len(expected):
        return verdict(False, f"{len(expected) - n_same} of {len(expected)} "
                       "predictions differ")

    n_values = sum(a.size for a in params.values())
    return verdict(True, f"all {len(params)} arrays ({n_values} values) and all "
                   f"{len(expected)} test predictions are bit-for-bit identical "
                   f"after the round trip through {file_name}")


def train_save_restore(directory):
    model_path = os.path.join(directory, "model.serio")
    reference_path = os.path.join(directory, "reference.npz")

    rng = np.random.default_rng(SEED)
    inputs, labels = two_moons(rng, N_TRAIN + N_TEST)
    train_x, train_y = inputs[:N_TRAIN], labels[:N_TRAIN]
    test_x, test_y = inputs[N_TRAIN:], labels[N_TRAIN:]
    print(f"[train]   process {os.getpid()}")
    print(f"[data]    two moons: {N_TRAIN} training and {N_TEST} test points "
          f"(seed {SEED})")
    print(f"[train]   MLP 2-{HIDDEN}-1 (tanh, sigmoid), {STEPS} steps of "
          f"full-batch gradient descent")

    start = time.perf_counter()
    params = train(rng, train_x, train_y)
    _, probabilities = forward(params, test_x)
    print(f"[train]   test accuracy {accuracy(probabilities, test_y):.1%} "
          f"({time.perf_counter() - start:.2f} s)")

    # One call; each array is a record named by its key, its shape (and
    # type) in the name, as "hidden.weight[2x16]".
    serio.save(model_path, params)
    bundle = Serio.Bundle.new_from_file(Gio.File.new_for_path(model_path), None)
    contents, _etag = Gio.File.new_for_path(model_path).load_bytes(None)
    first_line = next(line for line in bundle.to_string(Serio.SaveFlags.PLAIN).split("\n")
                      if line.startswith("v1|hidden."))
    print(f"\n[save]    {model_path}")
    print(f"[save]    {len(params)} arrays and the serio.tree record, "
          f"{contents.get_size()} bytes, checksum {Serio.compute_checksum_for_bytes(contents):08x}, "
          "sealed and written atomically")
    print(f"[save]    the first array: {first_line[:64]}...")
    np.savez(reference_path, inputs=test_x, labels=test_y,
             probabilities=probabilities, **params)

    print(f"\n[restore] starting a fresh process: {os.path.basename(__file__)} "
          "--restore model.serio --reference reference.npz", flush=True)
    command = [sys.executable, __file__,
               "--restore", model_path, "--reference", reference_path]
    return subprocess.run(command, check=False).returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", metavar="DIR",
                        help="write model.serio and reference.npz to DIR "
                             "and keep them")
    parser.add_argument("--restore", metavar="MODEL", help=argparse.SUPPRESS)
    parser.add_argument("--reference", metavar="NPZ", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.restore and not args.reference:
        parser.error("--restore needs --reference")

    if args.restore:
        return restore(args.restore, args.reference)

    print("libserio demo: train a tiny model, save it, restore it elsewhere\n")
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        return train_save_restore(args.keep)
    with tempfile.TemporaryDirectory(prefix="serio-demo-") as directory:
        return train_save_restore(directory)


if __name__ == "__main__":
    sys.exit(main())
