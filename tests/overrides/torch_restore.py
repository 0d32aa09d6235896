# SPDX-License-Identifier: LGPL-2.1-or-later
"""The fresh process of the PyTorch round-trip test: for each FILE=DTYPE
argument, loads FILE into a new model with Serio.load_torch() and prints
the hex of its outputs, one line per file."""

import sys

import torch

import gi

gi.require_version('Serio', '1.0')
from gi.repository import Serio  # noqa: E402

from torch_model import Net, output_bytes  # noqa: E402

torch.set_num_threads(1)
for argument in sys.argv[1:]:
    path, dtype = argument.rsplit('=', 1)
    dtype = getattr(torch, dtype)
    model = Serio.load_torch(path, Net().to(dtype))
    print(output_bytes(model, dtype).hex())
