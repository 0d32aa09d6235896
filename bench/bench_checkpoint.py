#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Copyright 2026 The libserio authors

"""Checkpoint speed from Python: serio.save/serio.load against the C
library (Serio.Bundle new_from_file/save_to_file) on the same file,
torch.save/torch.load and np.savez/np.load on the same data, and a model
of many small tensors against one array of the same total size (saved in
batches, as serio.save does, and a record at a time).

Each figure is the best of --reps runs, each in a fresh process (so that
no run finds the previous one's pages or imports warm), files on tmpfs
(/dev/shm) unless --dir says otherwise, all threads, most of the free
memory touched once before the first run (warm_memory). The operations
compared take turns, a process each, one after the other, --reps times,
so that a change in the machine's load meets all of them: besides the
ratios of their best times, the median of the ratios of each turn is
printed.

    build/bench/bench_checkpoint.py [--values 30000000] [--arrays 4]
        [--small 10000] [--reps 3] [--dir /dev/shm]
    meson compile -C build bench-checkpoint
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SEED = 21


def data(values, arrays):
    import numpy as np
    rng = np.random.default_rng(SEED)
    per = values // arrays
    return {'layer%d.weight' % i: (rng.standard_normal(per) * 0.05).astype(np.float32)
            for i in range(arrays)}


def one(op, path, values, arrays):
    """Run one operation in this process and return its seconds."""
    import gi
    gi.require_version('Serio', '1.0')
    import numpy as np
    state = data(values, arrays) if op.endswith('save') else None
    if op.startswith('torch'):
        import torch
        if state is not None:
            state = {k: torch.from_numpy(v) for k, v in state.items()}
    if op == 'c-save':
        from gi.repository import Gio, GLib, Serio
        bundle = Serio.Bundle.new()
        for key, value in state.items():
            bundle.append_typed(key, Serio.Dtype.FLOAT32, [value.shape[0]],
                                GLib.Bytes.new(memoryview(value).cast('B')))
    if op in ('serio-load', 'c-load', 'c-save'):
        from gi.repository import Gio, Serio  # noqa: F401
    import serio
    start = time.perf_counter()
    if op == 'serio-save':
        serio.save(path, state)
    elif op == 'serio-single-save':
        # As serio.save did before it wrote short records in batches.
        from unittest import mock
        with mock.patch.object(serio._io._native, 'write_records', None):
            start = time.perf_counter()
            serio.save(path, state)
    elif op == 'serio-load':
        loaded = serio.load(path)
        assert sum(v.size for v in loaded.values()) == values // arrays * arrays
    elif op == 'c-save':
        bundle.save_to_file(Gio.File.new_for_path(path), Serio.SaveFlags.NONE, None, None)
    elif op == 'c-load':
        bundle = Serio.Bundle.new_from_file(Gio.File.new_for_path(path), None, None)
        assert bundle.get_n_arrays() == arrays + 1  # + serio.tree
    elif op == 'torch-save':
        torch.save(state, path)
    elif op == 'torch-load':
        loaded = torch.load(path)
        assert sum(v.numel() for v in loaded.values()) == values // arrays * arrays
    elif op == 'numpy-save':
        np.savez(path, **state)
    elif op == 'numpy-load':
        with np.load(path) as npz:
            loaded = {k: npz[k] for k in npz.files}
        assert sum(v.size for v in loaded.values()) == values // arrays * arrays
    else:
        raise SystemExit('unknown operation %s' % op)
    return time.perf_counter() - start


def warm_memory():
    """Touch most of the free memory once, in a child, and give it back; the
    GiB touched. On a virtual machine the first touch of a page since boot
    can cost microseconds (the host backs it then), and a save to tmpfs
    takes fresh pages: without this, the same save takes anywhere from one
    to eight times its time (as serio-bench-stream warms its runs too)."""
    try:
        with open('/proc/meminfo') as meminfo:
            available = next(int(line.split()[1]) for line in meminfo
                             if line.startswith('MemAvailable:'))
    except (OSError, StopIteration, ValueError):
        return 0
    gib = min(available // (1 << 20) - 3, 20)
    if gib < 1:
        return 0
    pid = os.fork()
    if pid == 0:
        try:
            # bytearray(n) writes its n zero bytes: every page is touched.
            held = [bytearray(256 << 20) for _ in range(gib * 4)]
            del held
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    return gib


def run_fresh(op, path, values, arrays):
    """The seconds of one operation, in a fresh process."""
    out = subprocess.run([sys.executable, '-B', __file__, '--one', op, path,
                          str(values), str(arrays)],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    return float(out.split()[-1])


def fresh(op, path, values, arrays, reps):
    return min(run_fresh(op, path, values, arrays) for _ in range(reps))


def turns(runs, reps):
    """Run each operation of runs, an (op, path, values, arrays) tuple, in
    a fresh process, one after the other, reps times: the seconds of
    each, a list for each operation."""
    times = [[] for _ in runs]
    for _ in range(reps):
        for run, seconds in zip(runs, times):
            seconds.append(run_fresh(*run))
    return times


def median_ratio(times, other):
    """The median of the ratios of two operations' seconds in each turn."""
    return statistics.median(a / b for a, b in zip(times, other))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--values', type=int, default=30_000_000)
    parser.add_argument('--arrays', type=int, default=4)
    parser.add_argument('--small', type=int, default=10_000,
                        help='the count of small tensors of the many-arrays case')
    parser.add_argument('--reps', type=int, default=3)
    parser.add_argument('--dir', default='/dev/shm' if os.path.isdir('/dev/shm') else None)
    parser.add_argument('--one', nargs=4, metavar=('OP', 'PATH', 'VALUES', 'ARRAYS'),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        op, path, values, arrays = args.one
        print('%.6f' % one(op, path, int(values), int(arrays)))
        return

    import torch  # noqa: F401  (fails early if it is missing)
    warmed = warm_memory()
    print('Python checkpoints: %d float32 values in %d arrays, %s, threads %s, '
          'best of %d fresh processes taking turns, %d GiB of memory warmed first'
          % (args.values, args.arrays, args.dir, os.environ.get('SERIO_THREADS', 'all'),
             args.reps, warmed))
    try:
        cpu = [l for l in open('/proc/cpuinfo') if l.startswith('model name')][0]
        print('CPU:%s, %d cores' % (cpu.split(':', 1)[1].rstrip(), os.cpu_count()))
    except (OSError, IndexError):
        pass
    work = tempfile.mkdtemp(prefix='serio-bench-', dir=args.dir)
    try:
        files = {kind: os.path.join(work, 'ckpt.' + kind)
                 for kind in ('serio', 'c', 'torch', 'numpy')}
        files['numpy'] += '.npz'
        kinds = ('serio', 'c', 'torch', 'numpy')
        # The C library reads the file serio.save wrote.
        sources = {kind: files['serio'] if kind == 'c' else files[kind] for kind in kinds}
        saves = dict(zip(kinds, turns([(kind + '-save', files[kind], args.values, args.arrays)
                                       for kind in kinds], args.reps)))
        loads = dict(zip(kinds, turns([(kind + '-load', sources[kind], args.values, args.arrays)
                                       for kind in kinds], args.reps)))
        rows = [(kind, min(saves[kind]), min(loads[kind]), os.path.getsize(files[kind]))
                for kind in kinds]
        ref = {kind: (save, load) for kind, save, load, _ in rows}
        print('%-8s %10s %10s %8s %8s %8s %8s %12s' % ('', 'save s', 'load s', 'save/C',
                                                    'load/C', 'save/tch', 'load/tch', 'bytes'))
        for kind, save, load, size in rows:
            print('%-8s %10.3f %10.3f %8.2f %8.2f %8.2f %8.2f %12d' % (
                kind, save, load, save / ref['c'][0], load / ref['c'][1],
                save / ref['torch'][0], load / ref['torch'][1], size))
        print('the median of the %d turns\' ratios: serio.save %.2f× C, %.2f× torch; '
              'serio.load %.2f× C, %.2f× torch' % (
                  args.reps, median_ratio(saves['serio'], saves['c']),
                  median_ratio(saves['serio'], saves['torch']),
                  median_ratio(loads['serio'], loads['c']),
                  median_ratio(loads['serio'], loads['torch'])))

        # Many small arrays against one of the same total size.
        small = files['serio'] + '.small'
        big = files['serio'] + '.big'
        total = args.values // args.arrays
        per = max(1, total // args.small)
        n = per * args.small
        small_saves, big_saves = turns([('serio-save', small, n, args.small),
                                        ('serio-save', big, n, 1)], args.reps)
        small_loads, big_loads = turns([('serio-load', small, n, args.small),
                                        ('serio-load', big, n, 1)], args.reps)
        t_single = fresh('serio-single-save', small, n, args.small, args.reps)
        print('%d arrays of %d float32 values against 1 of %d, taking turns:' % (
            args.small, per, n))
        for what, t_small, t_big in (('save', small_saves, big_saves),
                                     ('load', small_loads, big_loads)):
            print('  %s %.3f s / %.3f s = %.2f× (best against best), %.2f× (median of the '
                  '%d turns\' ratios)' % (what, min(t_small), min(t_big),
                                          min(t_small) / min(t_big),
                                          median_ratio(t_small, t_big), args.reps))
        print('the same %d arrays saved a record at a time (no batches): %.3f s = %.2f× '
              'one array, %.2f× in batches' % (args.small, t_single, t_single / min(big_saves),
                                               t_single / min(small_saves)))
    finally:
        shutil.rmtree(work)


if __name__ == '__main__':
    main()
