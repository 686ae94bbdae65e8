"""The examples run and say what they claim: the README's demo, extending with a new op, and LeNet-5
training that prints what PyTorch prints."""
import os
import subprocess
import sys

from tests.support.paths import REPO  # noqa: E402


def _run(script, timeout):
    out = subprocess.run([sys.executable, os.path.join(REPO, "examples", script)], capture_output=True, text=True,
                         timeout=timeout, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_tour_walks_the_seed_graph():
    text = _run("tour.py", 300)
    assert "y.grad_fn.name()        -> SumBackward0" in text
    assert "one accumulator, twice  -> True ; its .variable is x: True" in text
    assert "edges of MulBackward0    -> [('SplitBackward0', 1), (None, 0)]" in text
    assert "backward ran, highest sequence number first: SumBackward0 -> AddBackward0 -> MulBackward0 -> MulBackward0" in text
    assert "x.grad equals w: True ; w.grad equals x: True" in text
    assert "which is output 0 of Add" in text
    assert "d2y/dx2 = tensor([ 1.5155,  0.2391, -2.6509])" in text  # 2 cos x - x sin x at 0.5, 1, 2
    assert "y is deferred: True ; graph as eager: AddBackward0 ['MulBackward0', 'ExpBackward0']" in text
    assert "fused x.grad matches the float64 formula: True" in text


def test_extend_example_generates_and_uses_a_new_op():
    text = _run("extend_new_op.py", 600)
    assert "y.grad_fn        = SoftsignBackward0" in text
    lines = dict(line.split("=", 1) for line in text.splitlines() if line.startswith(("x.grad", "hand formula")))
    assert lines["x.grad           "].strip() == lines["hand formula     "].strip()
    assert "derived by sympy = SoftsignDerivedBackward0" in text


def _run_args(script, args, timeout):
    out = subprocess.run([sys.executable, os.path.join(REPO, "examples", script), *args], capture_output=True,
                         text=True, timeout=timeout, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_lenet_trains_and_prints_what_torch_prints():
    import pytest
    pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed, so the LeNet example has no "
                                        "oracle to compare with")
    ours = _run_args("lenet.py", [], 900).splitlines()
    theirs = _run_args("lenet.py", ["--torch"], 300).splitlines()
    assert len(ours) == len(theirs) == 7
    for a, b in zip(ours, theirs):
        # same data and weights: float32 BLAS summation order differs, so losses agree to 1e-3
        la, lb = a.split()[-1], b.split()[-1]
        assert a.split()[:-1] == b.split()[:-1]
        assert abs(float(la) - float(lb)) <= 1e-3 * max(1.0, abs(float(lb))), (a, b)
    assert float(ours[-1].split()[-1]) > 0.9   # it learns the ten patterns
