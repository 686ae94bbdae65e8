"""Optimizer hooks against torch: step pre/post hooks (own and global, their order, replacing the
arguments, the error for a bad result), state_dict / load_state_dict hooks, named parameter groups,
the duplicate-parameter warning, and a user subclass's own ``step`` running the hooks. Each body runs
on derivgen and on torch (the ``torch`` fixture)."""
import importlib

import pytest

from tests.support.torch_assert import assert_equal


def _sgd(torch, lr=0.1):
    w = torch.ones(2, requires_grad=True)
    w.grad = torch.full((2,), 0.5)
    return w, torch.optim.SGD([w], lr=lr)


def test_step_hooks_order_and_arguments(torch):
    om = importlib.import_module(torch.__name__ + ".optim.optimizer")
    w, opt = _sgd(torch)
    calls = []

    def pre(o, args, kwargs):
        calls.append(("pre", o is opt, len(args), args[0] is opt, dict(kwargs)))

    handles = [
        om.register_optimizer_step_pre_hook(lambda o, a, k: calls.append(("gpre",))),
        om.register_optimizer_step_post_hook(lambda o, a, k: calls.append(("gpost",))),
    ]
    try:
        opt.register_step_pre_hook(pre)
        opt.register_step_post_hook(lambda o, a, k: calls.append(("post", dict(k))))
        opt.step(closure=None)
    finally:
        for h in handles:
            h.remove()
    assert calls == [("gpre",), ("pre", True, 1, True, {"closure": None}), ("post", {"closure": None}), ("gpost",)]
    assert_equal(w, torch.full((2,), 0.95))
    calls.clear()
    opt.step()
    assert [c[0] for c in calls] == ["pre", "post"]


def test_step_pre_hook_replaces_arguments(torch):
    w, opt = _sgd(torch)
    seen = []

    def closure():
        seen.append("closure")
        return torch.tensor(3.0)

    opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": closure}))
    loss = opt.step()
    assert seen == ["closure"] and loss.item() == 3.0
    w2, opt2 = _sgd(torch)
    opt2.register_step_pre_hook(lambda o, args, kwargs: 1)
    with pytest.raises(RuntimeError, match=r"must return None or a tuple of \(new_args, new_kwargs\), but got 1\."):
        opt2.step()
    assert_equal(w2, torch.ones(2))


def test_hook_handles_remove(torch):
    _, opt = _sgd(torch)
    calls = []
    h1 = opt.register_step_pre_hook(lambda *a: calls.append(1))
    h2 = opt.register_step_post_hook(lambda *a: calls.append(2))
    opt.step()
    h1.remove()
    h2.remove()
    opt.step()
    assert calls == [1, 2]


def test_subclass_step_runs_hooks(torch):
    class Halve(torch.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.5})

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p.mul_(group["lr"])
            return None

    w = torch.ones(2, requires_grad=True)
    opt = Halve([w])
    calls = []
    opt.register_step_pre_hook(lambda *a: calls.append("pre"))
    opt.register_step_post_hook(lambda *a: calls.append("post"))
    opt.step()
    assert calls == ["pre", "post"]
    assert_equal(w, torch.full((2,), 0.5))
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
    opt.step()
    sched.step()  # no "before optimizer.step()" warning: the subclass's step counts
    assert sched.get_last_lr() == [0.05]


def test_state_dict_hooks(torch):
    w, opt = _sgd(torch)
    opt2 = torch.optim.SGD([torch.ones(2, requires_grad=True)], lr=0.1)
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))

    def post(o, sd):
        calls.append("post")
        sd["extra"] = 1
        return None

    opt.register_state_dict_post_hook(post)
    opt.register_state_dict_post_hook(lambda o, sd: calls.append("first"), prepend=True)
    sd = opt.state_dict()
    assert calls == ["pre", "first", "post"] and sd["extra"] == 1
    opt.register_state_dict_post_hook(lambda o, sd: {"replaced": True})
    assert opt.state_dict() == {"replaced": True}

    def load_pre(o, sd):
        calls.append("load_pre")
        sd = dict(sd)
        sd.pop("extra")
        sd["param_groups"] = [dict(sd["param_groups"][0], lr=0.25)]
        return sd

    opt2.register_load_state_dict_pre_hook(load_pre)
    opt2.register_load_state_dict_post_hook(lambda o: calls.append(("load_post", o.param_groups[0]["lr"])))
    original = dict(sd)
    opt2.load_state_dict(sd)
    assert calls[-2:] == ["load_pre", ("load_post", 0.25)]
    assert sd == original  # the hook saw a copy


def test_named_parameter_groups(torch):
    m = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(m.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
    with pytest.raises(ValueError, match="all optimizer param groups should be with/without names. cannot add param "
                                         "group without names to the optimizer"):
        opt.add_param_group({"params": [torch.ones(1, requires_grad=True)]})
    with pytest.raises(ValueError, match="all optimizer params should be with/without names. Some param names are "
                                         "missing"):
        torch.optim.SGD([("a", torch.ones(1, requires_grad=True)), torch.ones(1, requires_grad=True)], lr=0.1)


def test_duplicate_parameters_warn(torch):
    w = torch.ones(1, requires_grad=True)
    with pytest.warns(UserWarning, match="optimizer contains a parameter group with duplicate parameters"):
        torch.optim.SGD([w, w], lr=0.1)
    opt = torch.optim.SGD([w], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [w]})
    opt.add_param_group({"params": torch.zeros(1, requires_grad=True), "lr": 0.5})
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0
