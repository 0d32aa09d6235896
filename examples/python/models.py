# SPDX-License-Identifier: LGPL-2.1-or-later
"""Save a trained scikit-learn MLPClassifier and a PyTorch CNN with its
optimizer with the serio package, restore them in fresh objects, and check
that their outputs are the same bit for bit. Each part runs when its
library is installed (Debian: python3-sklearn, python3-torch) and its
serio module with it (serio.sklearn, serio.torch); with neither, the
program exits 77 ("skipped")."""

import os
import sys
import tempfile
import warnings

import serio

try:
    import serio.sklearn
    import sklearn
except ImportError:
    sklearn = None
try:
    import torch
    import serio.torch
except ImportError:
    torch = None


def scikit_learn(directory):
    from sklearn.datasets import load_digits
    from sklearn.neural_network import MLPClassifier

    x, y = load_digits(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a short training does not converge
        clf = MLPClassifier(hidden_layer_sizes=(32,), max_iter=30,
                            random_state=0).fit(x[:1000], y[:1000])
    path = os.path.join(directory, "mlp.serio")

    serio.sklearn.save(path, clf)
    restored = serio.sklearn.load(path, MLPClassifier(hidden_layer_sizes=(32,), max_iter=30,
                                                      random_state=0))

    same = restored.predict_proba(x[1000:]).tobytes() == clf.predict_proba(x[1000:]).tobytes()
    print(f"scikit-learn: predict_proba on {len(x) - 1000} digits after the round trip: "
          f"{'bit-identical' if same else 'DIFFERENT'}")
    return same


def pytorch(directory):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(1, 8, 3)
            self.bn1 = torch.nn.BatchNorm2d(8)
            self.fc = torch.nn.Linear(8 * 6 * 6, 10)

        def forward(self, x):
            return self.fc(torch.relu(self.bn1(self.conv1(x))).flatten(1))

    torch.manual_seed(0)
    model = Net()
    model(torch.randn(16, 1, 8, 8))  # batch norm statistics and counter
    model = model.eval().to(torch.bfloat16)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    path = os.path.join(directory, "cnn.serio")

    # The model, its optimizer and a counter in one call each way.
    serio.torch.save(path, model, optimizer, epoch=1)
    restored = Net().to(torch.bfloat16).eval()
    extra = serio.torch.load(path, restored, torch.optim.Adam(restored.parameters()))
    assert extra == {"epoch": 1}

    x = torch.randn(4, 1, 8, 8).to(torch.bfloat16)
    with torch.no_grad():
        same = torch.equal(restored(x).view(torch.int16), model(x).view(torch.int16))
    print(f"PyTorch: bfloat16 CNN outputs after the round trip: "
          f"{'bit-identical' if same else 'DIFFERENT'}")
    return same


if __name__ == "__main__":
    if sklearn is None and torch is None:
        print("Needs scikit-learn or PyTorch", file=sys.stderr)
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="serio-models-") as tmp:
        results = [part(tmp) for part, module in ((scikit_learn, sklearn), (pytorch, torch))
                   if module is not None]
    sys.exit(0 if all(results) else 1)
