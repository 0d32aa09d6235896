# SPDX-License-Identifier: LGPL-2.1-or-later
"""The model of the PyTorch round-trip tests, shared by the test and the
fresh process that restores it: convolution, batch norm, linear."""

import torch

SEED = 20260501


class Net(torch.nn.Module):

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 16, 3)
        self.bn1 = torch.nn.BatchNorm2d(16)
        self.fc = torch.nn.Linear(16 * 6 * 6, 10)

    def forward(self, x):
        return self.fc(torch.relu(self.bn1(self.conv1(x))).flatten(1))


def inputs(dtype):
    generator = torch.Generator().manual_seed(SEED + 1)
    return torch.randn(4, 3, 8, 8, generator=generator).to(dtype)


def output_bytes(model, dtype):
    """The bytes of the model's outputs on the fixed inputs."""
    with torch.no_grad():
        out = model.eval()(inputs(dtype)).contiguous()
    return out.view(torch.uint8).numpy().tobytes()
