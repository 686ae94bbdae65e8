"""Adafactor against PyTorch: parameters after several steps (matrices with factored second moments,
vectors with full ones, a non-contiguous parameter) with its options, in float64 and float32; the
state_dict (keys, shapes of ``row_var``/``col_var``/``variance``); resuming; the argument errors. The
norms are NumPy's, so values agree with torch's to rounding rather than bit for bit."""
import itertools

import numpy as np
import pytest

from tests.optim._run import run, torch

import derivgen

pytestmark = pytest.mark.skipif(torch is None, reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

OPTIONS = [dict(zip(("lr", "weight_decay", "maximize", "eps", "d", "beta2_decay"), values)) for values in
           itertools.product([1e-2, 0.05], [0.0, 0.1], [False, True], [(None, 1e-3), (1e-20, 1e-2)], [1.0, 2.0],
                             [-0.8, -0.5])][::5]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) for o in OPTIONS])
def test_matches_torch(options, dtype):
    ours, o1, _ = run(derivgen, "Adafactor", options, dtype, steps=8)
    theirs, o2, _ = run(torch, "Adafactor", options, dtype, steps=8)
    rtol = 1e-13 if dtype == "float64" else 2e-6
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)
    start = run(derivgen, "Adafactor", options, dtype, steps=0)[0]
    assert all(not np.array_equal(a, s) for a, s in zip(ours, start))
    s1, s2 = o1.state_dict(), o2.state_dict()
    assert s1["param_groups"] == s2["param_groups"]
    assert list(s1["state"]) == list(s2["state"])
    for k in s2["state"]:
        assert list(s1["state"][k]) == list(s2["state"][k])
        for key, value in s2["state"][k].items():
            mine = s1["state"][k][key]
            assert tuple(mine.shape) == tuple(value.shape) and str(mine.dtype)[-7:] == str(value.dtype)[-7:]
            np.testing.assert_allclose(mine.numpy(), value.numpy(), rtol=100 * rtol)


def test_resume_from_state_dict():
    def resumed(lib):
        _, opt, params = run(lib, "Adafactor", {}, steps=4)
        params2 = [lib.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
        opt2 = lib.optim.Adafactor(params2)
        opt2.load_state_dict(opt.state_dict())
        return run(lib, "Adafactor", {}, steps=6, params=params2, opt=opt2)[0]

    ours = resumed(derivgen)
    for a, b, c in zip(ours, resumed(torch), run(derivgen, "Adafactor", {}, steps=10)[0]):
        np.testing.assert_allclose(a, b, rtol=1e-13)
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("options,message", [
    ({"lr": -1.0}, "Learning rate should be >= 0 but is: -1.0"),
    ({"beta2_decay": 0.5}, "beta2_decay should be <= 0 but is: 0.5"),
    ({"eps": (-1.0, 1e-3)}, "epsilon1 should be >= 0 but is: -1.0"),
    ({"eps": (None, -1.0)}, "epsilon2 should be >= 0 but is: -1.0"),
    ({"d": 0.5}, "Clipping threshold d should be >= 1 but is: 0.5"),
    ({"weight_decay": -0.1}, "weight_decay should be >= 0 but is: -0.1"),
])
def test_argument_errors(options, message):
    for lib in (derivgen, torch):
        with pytest.raises(ValueError) as info:
            lib.optim.Adafactor([lib.ones(1, requires_grad=True)], **options)
        assert str(info.value) == message
    assert repr(derivgen.optim.Adafactor([derivgen.ones(1, requires_grad=True)])) == \
        repr(torch.optim.Adafactor([torch.ones(1, requires_grad=True)]))
