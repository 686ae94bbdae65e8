"""examples/polynomial_fit.py prints the same losses, learning rates and coefficients under derivgen
as the same script run on PyTorch, and its loss goes down."""
import os
import subprocess
import sys

import pytest

from tests.support.paths import REPO

SCRIPT = os.path.join(REPO, "examples", "polynomial_fit.py")


def _run(*flags):
    out = subprocess.run([sys.executable, SCRIPT, "--steps", "1000", *flags], capture_output=True, text=True,
                         timeout=600, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_polynomial_fit_prints_what_torch_prints():
    pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")
    ours, theirs = _run(), _run("--torch")
    assert ours == theirs
    losses = [float(line.rsplit(" ", 1)[1]) for line in ours if line.startswith("step")]
    assert len(losses) == 5 and losses[-1] < losses[0] / 2
    assert ours[-1].startswith("y = ")
