"""examples/training_loop.py (DataLoader workers, checkpoint, AdamW + OneCycleLR, clip_grad_norm_,
module and optimizer hooks) prints the same learning rates, hook counts and losses (to float32
rounding) on derivgen and, with ``--torch``, on PyTorch."""
import os
import re
import subprocess
import sys

import pytest

from tests.support.paths import REPO

pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle run of the example)")

SCRIPT = os.path.join(REPO, "examples", "training_loop.py")


def _run(*args):
    out = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_training_loop_prints_what_torch_prints():
    ours, theirs = _run(), _run("--torch")
    pattern = r"^epoch (\d)  lr ([0-9.]+)  loss ([0-9.]+)$"
    a, b = re.findall(pattern, ours, re.M), re.findall(pattern, theirs, re.M)
    assert len(a) == len(b) == 4
    for (ea, lra, la), (eb, lrb, lb) in zip(a, b):
        assert ea == eb and lra == lrb
        assert abs(float(la) - float(lb)) <= 2e-5 * max(1.0, float(lb))
    assert float(a[-1][2]) < 0.5 * float(a[0][2])  # it learns
    counts = "forward hook calls 40  optimizer steps 40  backward hook calls 40"
    assert counts in ours and counts in theirs
