# SPDX-License-Identifier: LGPL-2.1-or-later
"""Child process of test_overrides.py: uses the override with NumPy either
blocked (``block``: ``import numpy`` raises ImportError, as if it were not
installed; the NumPy methods are called too) or merely not imported yet
(``lazy``), and prints what it saw as JSON on standard output.
"""

import json
import sys

mode = sys.argv[1]
if mode == 'block':
    sys.modules['numpy'] = None

import gi  # noqa: E402

gi.require_version('Serio', '1.0')
from gi.repository import Serio  # noqa: E402

seen = {'module': Serio.Bundle.__module__}

bundle = Serio.Bundle.from_dict({'w': [1.5, -0.0]})
seen['to_dict'] = repr(bundle.to_dict())
seen['items'] = repr(bundle.items())
seen['names'] = repr(list(bundle))
seen['w'] = repr(bundle['w'])
seen['numpy_imported'] = sys.modules.get('numpy') is not None

if mode == 'block':
    seen['import_errors'] = []
    path = sys.argv[2]
    bundle.save_to_file(path)
    for call in (lambda: bundle.to_numpy('w'),
                 lambda: bundle.append_numpy('v', [1.0]),
                 lambda: Serio.Reader.open(path).read_array()):
        try:
            call()
        except ImportError as error:
            seen['import_errors'].append(str(error))
    seen['n_arrays'] = len(bundle)

json.dump(seen, sys.stdout)
