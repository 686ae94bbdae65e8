"""``optim.swap_in_optimizer_params_and_state`` against PyTorch: a step inside the block acts on the
swapped-in parameters and state (in-place state updates reach the supplied tensors) with the swapped-in
hyper-parameters, and the live optimizer is unchanged afterwards; the errors."""
import numpy as np
import pytest

from tests.optim._run import torch

import derivgen


pytestmark = pytest.mark.skipif(torch is None, reason="SKIPPED LOUDLY: torch is not installed (the oracle)")


def scenario(lib):
    live = [lib.tensor(np.arange(4.0) / 3, requires_grad=True), lib.tensor(np.ones((2, 2)), requires_grad=True)]
    opt = lib.optim.Adam(live, lr=0.1)
    for p in live:
        p.grad = lib.ones_like(p) * 0.5
    opt.step()
    before = [p.detach().numpy().copy() for p in live]
    live_state = opt.state_dict()
    swap_params = {"a": lib.tensor(np.full(4, 2.0)), "b": lib.tensor(np.zeros((2, 2)))}
    for p in swap_params.values():
        p.grad = lib.ones_like(p) * -1.0
    swap_state = {"state": {i: {k: v.clone() for k, v in s.items()} for i, s in live_state["state"].items()},
                  "param_groups": [dict(live_state["param_groups"][0], lr=0.01)]}
    params_list = opt.param_groups[0]["params"]
    with lib.optim.swap_in_optimizer_params_and_state(opt, swap_params, swap_state):
        assert opt.param_groups[0]["lr"] == 0.01
        opt.step()
    assert opt.param_groups[0]["params"] is params_list and opt.param_groups[0]["lr"] == 0.1
    after_live = [p.detach().numpy().copy() for p in live]
    after_state = opt.state_dict()["state"][0]["step"].item()
    return ([p.numpy().copy() for p in swap_params.values()], swap_state["state"][0]["step"].item(),
            swap_state["state"][1]["exp_avg"].numpy().copy(), before, after_live, after_state)


def test_swap_in_matches_torch():
    ours, theirs = scenario(derivgen), scenario(torch)
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert ours[1] == theirs[1] == 2.0
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    for a, b in zip(ours[3], ours[4]):
        np.testing.assert_array_equal(a, b)  # the live parameters were not touched
    assert ours[5] == theirs[5] == 1.0


def test_errors():
    for lib in (derivgen, torch):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        swap = lib.optim.swap_in_optimizer_params_and_state
        with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
            with swap(opt, {"p": lib.ones(2)}, opt.state_dict()):
                pass
        p.grad = lib.ones(2)
        opt.step()
        sd = opt.state_dict()
        with pytest.raises(RuntimeError, match="different number of parameter groups"):
            with swap(opt, {"p": lib.ones(2)}, {"state": sd["state"], "param_groups": []}):
                pass
        bad_group = dict(sd["param_groups"][0], extra=1)
        with pytest.raises(RuntimeError, match=r"Keys only in swap-in: \['extra'\]. Keys only in live: \[\]."):
            with swap(opt, {"p": lib.ones(2)}, {"state": sd["state"], "param_groups": [bad_group]}):
                pass
        with pytest.raises(RuntimeError, match="got extra keys"):
            with swap(opt, {"p": lib.ones(2)}, {"state": {**sd["state"], 5: {}}, "param_groups": sd["param_groups"]}):
                pass
        with pytest.raises(RuntimeError, match="match optimizer.param_groups ordering"):
            with swap(opt, {}, sd):
                pass
