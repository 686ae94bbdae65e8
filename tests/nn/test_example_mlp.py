"""examples/mlp_regression.py is a PyTorch program: run as written (derivgen) and with its import line
swapped to ``import torch``, from the same initial weights and data, it prints the same model and the
same losses."""
import os
import re
import subprocess
import sys

import pytest

from tests.support.paths import REPO

pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle run of the example)")

SCRIPT = os.path.join(REPO, "examples", "mlp_regression.py")
IMPORT_LINE = "import derivgen as torch\n"


def _run(source, args, tmp_path, name):
    path = tmp_path / name
    path.write_text(source)
    out = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _losses(text):
    return [float(v) for v in re.findall(r"^step +\d+  loss ([0-9.]+)$", text, re.M)]


def test_mlp_example_prints_torchs_losses(tmp_path):
    source = open(SCRIPT).read()
    assert source.count(IMPORT_LINE) == 1 and "import torch\n" not in source
    weights = str(tmp_path / "init.npz")
    ours = _run(source, ["--save-init", weights], tmp_path, "ours.py")
    theirs = _run(source.replace(IMPORT_LINE, "import torch\n"), ["--load-init", weights], tmp_path, "theirs.py")
    assert ours.split("step")[0] == theirs.split("step")[0]  # the printed model
    ours_l, theirs_l = _losses(ours), _losses(theirs)
    assert len(ours_l) == len(theirs_l) == 11
    assert ours_l[-1] < 0.5 * ours_l[0]  # it trains
    assert ours_l == pytest.approx(theirs_l, rel=1e-4)
