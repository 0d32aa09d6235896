# SPDX-License-Identifier: LGPL-2.1-or-later
"""Saving and restoring a NumPy float64 array: libserio against Python's ways.

Every codec starts from the same numpy.ndarray and ends with a new float64
ndarray, so conversions such as ``arr.tolist()`` and ``numpy.array(list)``
count where a codec needs them. Run it with Debian's interpreter and the
typelib of a build tree:

    meson compile -C build bench-py

or by hand, from the source root:

    GI_TYPELIB_PATH=build/introspection LD_LIBRARY_PATH=build/libserio \\
        /usr/bin/python3 -B bench/bench.py
"""

import argparse
import ctypes
import dataclasses
import gc
import io
import json
import math
import os
import pickle
import platform
import statistics
import sys
import time

import gi

gi.require_version("Serio", "1.0")
from gi.repository import GLib, Serio  # noqa: E402

try:
    import numpy
except ImportError:
    sys.exit("bench.py needs NumPy (Debian: apt-get install python3-numpy)")

MASK64 = (1 << 64) - 1


class Rng:
    """xoshiro256** seeded through splitmix64: the generator of serio-bench.c,
    so that both programs measure the same values."""

    def __init__(self, seed):
        self.s = []
        for _ in range(4):
            seed = (seed + 0x9E3779B97F4A7C15) & MASK64
            z = seed
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
            self.s.append(z ^ (z >> 31))

    def next(self):
        s0, s1, s2, s3 = self.s
        x = (s1 * 5) & MASK64
        result = ((((x << 7) | (x >> 57)) & MASK64) * 9) & MASK64
        t = (s1 << 17) & MASK64
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = ((s3 << 45) | (s3 >> 19)) & MASK64
        self.s = [s0, s1, s2, s3]
        return result


def make_weights(n):
    """normal(0, 0.05) by Marsaglia's polar method."""
    rng = Rng(20260101)
    values = numpy.empty(n, numpy.float64)
    for i in range(0, n, 2):
        while True:
            u = (rng.next() >> 11) * 2.0**-52 - 1.0
            v = (rng.next() >> 11) * 2.0**-52 - 1.0
            s = u * u + v * v
            if 0.0 < s < 1.0:
                break
        f = 0.05 * math.sqrt(-2.0 * math.log(s) / s)
        values[i] = u * f
        if i + 1 < n:
            values[i + 1] = v * f
    return values


def make_domain(n):
    """Uniformly random 64-bit patterns, NaNs drawn again."""
    rng = Rng(0xD0A1)
    exp_mask = 0x7FF0000000000000
    frac_mask = (1 << 52) - 1
    bits = numpy.empty(n, numpy.uint64)
    for i in range(n):
        b = rng.next()
        while b & exp_mask == exp_mask and b & frac_mask:
            b = rng.next()
        bits[i] = b
    return bits.view(numpy.float64)


DATA_SETS = {
    "weights": ("normal(0, 0.05) doubles", make_weights),
    "domain": ("uniformly random 64-bit patterns, no NaN", make_domain),
}


@dataclasses.dataclass
class Codec:
    name: str
    description: str
    write: object   # ndarray -> encoded form
    read: object    # encoded form -> ndarray
    limit: int = 0  # measured on at most this many values (0: all)


def serio_bundle(arr):
    bundle = Serio.Bundle.new()
    bundle.append_bytes("w", GLib.Bytes.new(arr.tobytes()))
    return bundle


def serio_values(bundle):
    return numpy.frombuffer(bundle.get_bytes(0).get_data(), numpy.float64)


def hex_write(arr):
    return ",".join(map(float.hex, arr.tolist()))


def hex_read(text):
    return numpy.array(list(map(float.fromhex, text.split(","))), numpy.float64)


def npy_write(arr):
    buf = io.BytesIO()
    numpy.save(buf, arr)
    return buf.getvalue()


def savetxt_write(arr):
    buf = io.BytesIO()
    numpy.savetxt(buf, arr, fmt="%.17g")
    return buf.getvalue()


CODECS = [
    Codec("libserio", "append_bytes + to_string / from_string + get_bytes + frombuffer",
          lambda arr: serio_bundle(arr).to_string(Serio.SaveFlags.PLAIN),
          lambda text: serio_values(Serio.Bundle.new_from_string(text))),
    Codec("libserio-bytes", "append_bytes + to_bytes / from_bytes + get_bytes + frombuffer",
          lambda arr: serio_bundle(arr).to_bytes(Serio.SaveFlags.PLAIN),
          lambda data: serio_values(Serio.Bundle.new_from_bytes(data))),
    Codec("json", "json.dumps(arr.tolist()) / numpy.array(json.loads())",
          lambda arr: json.dumps(arr.tolist()),
          lambda text: numpy.array(json.loads(text), numpy.float64)),
    Codec("float.hex", "','.join(map(float.hex)) / split + float.fromhex",
          hex_write, hex_read),
    # A Python loop per value: about 1.5 us/value to write, so it would
    # take longer than all the others together at 10^6.
    Codec("savetxt", "numpy.savetxt %.17g / numpy.loadtxt, in memory",
          savetxt_write,
          lambda data: numpy.loadtxt(io.BytesIO(data), numpy.float64, ndmin=1),
          limit=100000),
    Codec("pickle-list", "pickle.dumps(arr.tolist()) / numpy.array(pickle.loads()) (binary)",
          lambda arr: pickle.dumps(arr.tolist(), pickle.HIGHEST_PROTOCOL),
          lambda data: numpy.array(pickle.loads(data), numpy.float64)),
    Codec("pickle-array", "pickle.dumps(arr) / pickle.loads (binary)",
          lambda arr: pickle.dumps(arr, pickle.HIGHEST_PROTOCOL),
          pickle.loads),
    Codec("npy", "numpy.save / numpy.load, in memory (binary)",
          npy_write,
          lambda data: numpy.load(io.BytesIO(data))),
]


def encoded_size(encoded):
    if isinstance(encoded, GLib.Bytes):
        return encoded.get_size()
    if isinstance(encoded, str):
        return len(encoded.encode())
    return len(encoded)


# The thread's CPU time by default: on a shared machine, time spent waiting
# for the CPU is not the codec's. --wall switches to wall time.
clock_ns = time.thread_time_ns


def keep_freed_memory():
    """Has glibc's malloc keep the memory it is given back (up to 32 MiB a
    block), as serio-bench does, so that repetitions reuse warm pages
    whatever order the codecs allocate in."""
    libc = ctypes.CDLL(None)
    if hasattr(libc, "mallopt"):
        m_trim_threshold, m_mmap_threshold = -1, -3
        libc.mallopt(m_mmap_threshold, 32 * 1024 * 1024)
        libc.mallopt(m_trim_threshold, 2**31 - 1)


def timed(func, arg):
    """One call, timed with the cyclic garbage collector off, as timeit does."""
    gc.disable()
    try:
        start = clock_ns()
        result = func(arg)
        elapsed = clock_ns() - start
    finally:
        gc.enable()
    return elapsed, result


def measure(codecs, arr, reps):
    """Times every codec, taking turns one repetition each so that a burst of
    load from elsewhere spreads over all codecs."""
    inputs = {c.name: arr[:c.limit] if c.limit else arr for c in codecs}
    rows = {c.name: {"n": len(inputs[c.name]), "write": [], "read": [], "error": None}
            for c in codecs}
    encoded = {}

    for _ in range(reps):
        for c in codecs:
            encoded.pop(c.name, None)
            elapsed, encoded[c.name] = timed(c.write, inputs[c.name])
            rows[c.name]["write"].append(elapsed / rows[c.name]["n"])

    decoded = {}
    for _ in range(reps):
        for c in codecs:
            row = rows[c.name]
            if row["error"] is not None:
                continue
            decoded.pop(c.name, None)
            try:
                elapsed, decoded[c.name] = timed(c.read, encoded[c.name])
            except (GLib.Error, ValueError) as e:
                row["error"] = str(e)
                continue
            row["read"].append(elapsed / row["n"])

    for c in codecs:
        row = rows[c.name]
        expected = inputs[c.name].view(numpy.uint64)
        row["bytes"] = encoded_size(encoded[c.name]) / row["n"]
        if row["error"] is None:
            got = numpy.asarray(decoded[c.name], numpy.float64)
            if got.shape == expected.shape:
                row["mismatches"] = int(numpy.count_nonzero(got.view(numpy.uint64) != expected))
            else:
                row["error"] = f"read back {got.size} values instead of {row['n']}"
    return rows


def print_machine(reps):
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    typelib = os.path.abspath(gi.Repository.get_default().get_typelib_path("Serio"))
    print(f"bench.py: Python {platform.python_version()}, NumPy {numpy.__version__}, "
          f"PyGObject {gi.__version__}")
    print(f"Serio:    {typelib}")
    print(f"CPU:      {model}, {os.cpu_count()} logical cores")
    print(f"Kernel:   {platform.system()} {platform.release()} {platform.machine()}")
    clock = "wall time" if clock_ns is time.perf_counter_ns else "thread CPU time"
    print(f"Method:   single thread, {clock}, gc off; median and minimum of {reps} repetitions,\n"
          f"          codecs taking turns, in ns per value, warm heap (freed memory kept by malloc);\n"
          f"          \"x lib\" = this codec's median / libserio's;\n"
          f"          mismatches = values whose 64-bit pattern did not survive the round trip.")
    print("Codecs (each from a float64 ndarray to a new float64 ndarray):")
    for c in CODECS:
        print(f"  {c.name:<14} {c.description}")


def cell(value):
    return f"{value:9.1f}" if value is not None else f"{'-':>9}"


def ratio(value, reference):
    if value is None or reference is None:
        return "-"
    return f"{value / reference:.2f}x"


def print_table(title, n, rows):
    def stats(times):
        return (statistics.median(times), min(times)) if times else (None, None)

    lib = rows.get("libserio")
    lib_write = stats(lib["write"])[0] if lib else None
    lib_read = stats(lib["read"])[0] if lib else None
    print(f"\n{title}, N = {n}")
    print(f"{'codec':<14} {'write':>9} {'min':>9} {'x lib':>9}   {'read':>9} {'min':>9} {'x lib':>9}"
          f"   {'bytes/val':>9} {'mismatches':>10}")
    for name, row in rows.items():
        write, write_min = stats(row["write"])
        read, read_min = stats(row["read"])
        mismatches = "read failed" if row["error"] else str(row["mismatches"])
        label = name if row["n"] == n else f"{name}*"
        print(f"{label:<14} {cell(write)} {cell(write_min)} {ratio(write, lib_write):>9}   "
              f"{cell(read)} {cell(read_min)} {ratio(read, lib_read):>9}   "
              f"{row['bytes']:9.2f} {mismatches:>10}")
    for name, row in rows.items():
        if row["n"] != n:
            print(f"  * {name}: measured on the first {row['n']} values")
        if row["error"]:
            print(f"  {name}: {row['error']}")


def main():
    names = [c.name for c in CODECS]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=11,
                        help="repetitions per measurement (default 11)")
    parser.add_argument("--size", type=int, default=10**6,
                        help="number of values (default 1000000)")
    parser.add_argument("--only", action="append", choices=names, metavar="NAME",
                        help="measure only this codec (repeatable): " + ", ".join(names))
    parser.add_argument("--data", action="append", choices=list(DATA_SETS),
                        help="use only this data set (repeatable)")
    parser.add_argument("--wall", action="store_true",
                        help="measure wall time instead of the thread's CPU time")
    args = parser.parse_args()
    if args.reps < 1 or args.size < 1:
        parser.error("--reps and --size must be at least 1")

    global clock_ns
    if args.wall:
        clock_ns = time.perf_counter_ns
    keep_freed_memory()

    codecs = [c for c in CODECS if args.only is None or c.name in args.only]
    print_machine(args.reps)
    for data_name, (description, make) in DATA_SETS.items():
        if args.data is not None and data_name not in args.data:
            continue
        arr = make(args.size)
        rows = measure(codecs, arr, args.reps)
        print_table(f"{data_name} ({description})", args.size, rows)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
