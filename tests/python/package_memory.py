# SPDX-License-Identifier: LGPL-2.1-or-later
"""Child process of test_package_streams.py: saves or loads one array of N
values (float64 or float32) with serio.save() or serio.load() and prints, as JSON,
the array's size in bytes and how much the peak resident set size (see
peak_bytes()) grew from the baseline taken after the imports (for save, the array is made
after the baseline, so that it counts in the growth).

Usage: package_memory.py save|load PATH N DTYPE
"""

import json
import resource
import sys

import numpy

import serio


def peak_bytes():
    """The peak resident set size of this process, in bytes.

    ru_maxrss is kept across execve(): in a child of a large process (the
    test, with PyTorch loaded) it starts at the parent's size, and would
    hide the growth. VmHWM, the high-water mark of this process's own
    memory map, starts afresh with the program, so it comes first.
    """
    try:
        with open('/proc/self/status', encoding='ascii') as status:
            for line in status:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    # Linux gives ru_maxrss in KiB.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


mode, path, n_values, dtype = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
baseline = peak_bytes()
if mode == 'save':
    array = numpy.random.default_rng(1).random(n_values, dtype=dtype)
    serio.save(path, {'w': array})
else:
    array = serio.load(path)['w']
json.dump({'array_bytes': array.nbytes, 'n_values': int(array.size),
           'dtype': array.dtype.name, 'growth': peak_bytes() - baseline},
          sys.stdout)
