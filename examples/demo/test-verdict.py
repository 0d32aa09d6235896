# SPDX-License-Identifier: LGPL-2.1-or-later
"""The demo's verdict can fail: a model file edited or cut after saving must
give a FAIL line and a nonzero exit status in the restoring process."""

import os
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
except ImportError:
    sys.exit(77)  # "skipped", for meson test: the demo needs NumPy

DEMO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo.py")


def run_demo(*args):
    return subprocess.run([sys.executable, "-B", DEMO, *args],
                          capture_output=True, text=True, check=False)


class DemoVerdictTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="serio-demo-test-")
        cls.model = os.path.join(cls.tmp.name, "model.serio")
        cls.reference = os.path.join(cls.tmp.name, "reference.npz")
        result = run_demo("--keep", cls.tmp.name)
        if result.returncode != 0:
            raise AssertionError(result.stdout + result.stderr)
        with open(cls.model, "rb") as f:
            cls.text = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def restore(self, text, reference=None):
        with open(self.model, "wb") as f:
            f.write(text)
        return run_demo("--restore", self.model,
                        "--reference", reference or self.reference)

    def assert_fails(self, text, reason, reference=None):
        result = self.restore(text, reference)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        verdict = result.stdout.rstrip().splitlines()[-1]
        self.assertTrue(verdict.startswith("VERDICT: FAIL"), verdict)
        self.assertIn(reason, verdict)

    def test_untouched_file_passes(self):
        result = self.restore(self.text)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("VERDICT: PASS", result.stdout)

    def plain(self):
        # The saved file is sealed: its first and last lines are the seal's.
        lines = self.text.split(b"\n")
        self.assertTrue(lines[0].startswith(b"v1|serio.sealed|"), lines[0])
        self.assertTrue(lines[-2].startswith(b"v1|serio.seal|"), lines[-2])
        return b"\n".join(lines[1:-2]) + b"\n"

    @staticmethod
    def swap_two_values(text):
        # Two canonical tokens of the first array swapped (past the
        # metadata records: the seal's and serio.tree): the text still
        # parses as v1.
        first = next(line for line in text.split(b"\n")
                     if not line.startswith(b"v1|serio."))
        values = first.rsplit(b"|", 1)[1]
        tokens = values.split(b",")
        assert tokens[0] != tokens[1]
        tokens[0], tokens[1] = tokens[1], tokens[0]
        return text.replace(values, b",".join(tokens), 1)

    @staticmethod
    def drop_last_array(text):
        lines = text.rstrip(b"\n").split(b"\n")
        last = -2 if lines[-1].startswith(b"v1|serio.seal|") else -1
        del lines[last]
        return b"\n".join(lines) + b"\n"

    def test_swapped_values_fail(self):
        # The seal catches the swap before the demo compares anything.
        self.assert_fails(self.swap_two_values(self.text), "seal does not match")
        # Without a seal the file loads, and the comparison catches it.
        self.assert_fails(self.swap_two_values(self.plain()),
                          "hidden.weight differs in 2 values")

    def test_cut_file_fails(self):
        self.assert_fails(self.text[:-1], "model.serio was rejected")

    def test_missing_array_fails(self):
        self.assert_fails(self.drop_last_array(self.text), "seal does not match")
        # Without a seal, serio.tree tells that a record is missing.
        self.assert_fails(self.drop_last_array(self.plain()), "model.serio was rejected")
        self.assert_fails(self.drop_last_array(self.plain()), "'output.bias'")

    def test_other_predictions_fail(self):
        # The trainer's record of one prediction, one ulp away.
        reference = dict(np.load(self.reference))
        p = reference["probabilities"]
        p[7] = np.nextafter(p[7], 2.0)
        other = os.path.join(self.tmp.name, "other.npz")
        np.savez(other, **reference)
        self.assert_fails(self.text, "1 of 200 predictions differ", other)


if __name__ == "__main__":
    unittest.main()
