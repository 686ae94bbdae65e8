"""Muon against PyTorch: the parameters after several steps (Nesterov or not, both ``adjust_lr_fn``s,
weight decay, float32 and float64 parameters), the state_dict, the argument errors. torch's
Newton-Schulz iteration runs in bfloat16; derivgen rounds each of those operations to bfloat16 from
float32, so small matrices (whose products sum a few terms) come out bit-equal, and larger ones agree
to within a bfloat16 step of the update."""
import numpy as np
import pytest

from tests.optim._run import torch

import derivgen

pytestmark = pytest.mark.skipif(torch is None, reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

SMALL = [(6, 4), (3, 5), (4, 4)]
LARGE = [(64, 32), (20, 100)]


def run(lib, dtype, shapes, steps, **options):
    rng = np.random.default_rng(0)
    params = [lib.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in shapes]
    opt = lib.optim.Muon(params, **options)
    for _ in range(steps):
        for p in params:
            x = p.detach().numpy()
            p.grad = lib.tensor(np.sin(x) * x + x ** 3 - 0.5)
        opt.step()
    return [p.detach().numpy().copy() for p in params], opt


OPTIONS = [{}, {"lr": 0.02, "nesterov": False}, {"lr": 0.02, "adjust_lr_fn": "match_rms_adamw", "weight_decay": 0.0},
           {"lr": 0.01, "momentum": 0.5, "ns_steps": 3, "adjust_lr_fn": "original"}]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) for o in OPTIONS])
def test_small_matrices_bit_equal(options, dtype):
    ours, o1 = run(derivgen, dtype, SMALL, 5, **options)
    theirs, o2 = run(torch, dtype, SMALL, 5, **options)
    start = run(derivgen, dtype, SMALL, 0)[0]
    for a, b, s in zip(ours, theirs, start):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, s)
    s1, s2 = o1.state_dict(), o2.state_dict()
    assert s1["param_groups"] == s2["param_groups"]
    for k in s2["state"]:
        assert list(s1["state"][k]) == list(s2["state"][k]) == ["momentum_buffer"]
        np.testing.assert_array_equal(s1["state"][k]["momentum_buffer"].numpy(),
                                      s2["state"][k]["momentum_buffer"].numpy())


@pytest.mark.parametrize("options", OPTIONS[:3], ids=[str(o) for o in OPTIONS[:3]])
def test_large_matrices_within_a_bfloat16_step(options):
    ours = run(derivgen, "float32", LARGE, 5, **options)[0]
    theirs = run(torch, "float32", LARGE, 5, **options)[0]
    start = run(torch, "float32", LARGE, 0)[0]
    for a, b, s in zip(ours, theirs, start):
        moved = np.abs(b - s).max()
        assert np.abs(a - b).max() <= 0.01 * moved


@pytest.mark.parametrize("options,message", [
    ({"lr": -1.0}, "Learning rate should be >= 0 but is: -1.0"),
    ({"momentum": -0.5}, "momentum should be >= 0 but is: -0.5"),
    ({"weight_decay": -0.1}, "weight decay should be >= 0 but is: -0.1"),
    ({"adjust_lr_fn": "other"}, "Adjust learning rate function other is not supported"),
])
def test_argument_errors(options, message):
    for lib in (derivgen, torch):
        with pytest.raises(ValueError) as info:
            lib.optim.Muon([lib.ones(2, 2, requires_grad=True)], **options)
        assert str(info.value) == message
    for lib in (derivgen, torch):
        with pytest.raises(ValueError, match="^Muon only supports 2D parameters whereas we found a parameter "
                                             "with size: "):
            lib.optim.Muon([lib.ones(3, requires_grad=True)])
