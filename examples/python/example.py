# SPDX-License-Identifier: LGPL-2.1-or-later
"""Save two arrays with libserio, load them back, compare bits."""

import locale
import os
import struct
import sys
import tempfile

import gi

gi.require_version("Serio", "1.0")
from gi.repository import Gio, GLib, Serio  # noqa: E402

WEIGHTS = [0.1, -0.0, 1e-300, sys.float_info.max, 1 / 3]
BIAS = [-2.5]


def bits(values):
    """The IEEE-754 bytes of a list of floats: compare these, not floats."""
    return struct.pack(f"<{len(values)}d", *values)


def same_bits(bundle, name, expected):
    found, index = bundle.lookup(name)
    return found and bits(bundle.get_values(index)) == bits(expected)


def save_and_load():
    bundle = Serio.Bundle.new()
    # The shape travels in the name: this array is stored as "dense.w[1x5]".
    bundle.append_with_shape("dense.w", [1, 5], WEIGHTS)
    bundle.append("dense.b", BIAS)

    with tempfile.TemporaryDirectory(prefix="serio-example-") as tmp:
        file = Gio.File.new_for_path(os.path.join(tmp, "model.serio"))
        # Atomic: a crash leaves either the old file or the new one.
        bundle.save_to_file(file)
        loaded = Serio.Bundle.from_file(file)

    if not (same_bits(loaded, "dense.w", WEIGHTS)
            and same_bits(loaded, "dense.b", BIAS)):
        print("The arrays did not come back bit for bit", file=sys.stderr)
        return False

    found, index = loaded.lookup("dense.w")
    print(f"{loaded.get_name(index)}: base name {loaded.get_base_name(index)}, "
          f"shape {loaded.get_shape(index)}")
    checksum = Serio.checksum_bytes(loaded.to_bytes())
    print(f"Restored {loaded.get_n_arrays()} arrays bit for bit, "
          f"checksum {checksum:08x}")
    return True


def reject_bad_count():
    try:
        Serio.Bundle.from_string("v1|x|2|1\n")
    except GLib.Error as error:
        if error.matches(Serio.error_quark(), Serio.Error.LENGTH):
            print(f"Rejected as expected: {error.message}")
            return True
        raise
    print("A record with a wrong count was not rejected", file=sys.stderr)
    return False


if __name__ == "__main__":
    # libserio's messages follow the user's language once this is done.
    locale.setlocale(locale.LC_ALL, "")
    sys.exit(0 if save_and_load() and reject_bad_count() else 1)
