"""The Optimizer base against PyTorch: state_dict structure, load_state_dict resuming a run exactly,
zero_grad, closures, add_param_group, the printed form and the errors for bad arguments."""
import numpy as np
import pytest

from tests.optim._run import make_params, run, torch

import derivgen

pytestmark = pytest.mark.skipif(torch is None, reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

CASES = [("SGD", {"lr": 0.1, "momentum": 0.9}), ("SGD", {"lr": 0.1}), ("Adam", {"amsgrad": True}),
         ("AdamW", {}), ("RMSprop", {"momentum": 0.5, "centered": True}), ("Adagrad", {"lr_decay": 0.01})]


def _plain(value):
    if isinstance(value, (derivgen.Tensor, torch.Tensor)):
        return ("tensor", str(value.dtype).split(".")[-1], value.detach().numpy().tolist())
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


@pytest.mark.parametrize("name,options", CASES)
def test_state_dict_matches_torch(name, options):
    _, o1, _ = run(derivgen, name, options, steps=2)
    _, o2, _ = run(torch, name, options, steps=2)
    s1, s2 = o1.state_dict(), o2.state_dict()
    assert list(s1) == ["state", "param_groups"]
    assert s1["param_groups"] == s2["param_groups"]
    assert [list(g) for g in s1["param_groups"]] == [list(g) for g in s2["param_groups"]]
    assert list(s1["state"]) == list(s2["state"]) == ([] if options == {"lr": 0.1} else [0, 1, 2])
    for k in s1["state"]:
        assert list(s1["state"][k]) == list(s2["state"][k])
        a, b = _plain(s1["state"][k]), _plain(s2["state"][k])
        for key in a:
            assert a[key][:2] == b[key][:2]  # tensor, dtype
            np.testing.assert_allclose(np.array(a[key][2]), np.array(b[key][2]), rtol=1e-12)


@pytest.mark.parametrize("name,options", CASES)
def test_load_state_dict_resumes_exactly(name, options):
    straight, _, _ = run(derivgen, name, options, steps=6)
    _, first, _ = run(derivgen, name, options, steps=3)
    saved = first.state_dict()
    params = [derivgen.tensor(p.detach().numpy().copy(), requires_grad=True) for p in first.param_groups[0]["params"]]
    second = getattr(derivgen.optim, name)(params, **options)
    second.load_state_dict(saved)
    resumed, _, _ = run(derivgen, name, options, steps=3, params=params, opt=second)
    for a, b in zip(straight, resumed):
        np.testing.assert_array_equal(a, b)


def test_load_state_dict_validates_groups(torch):
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    opt = torch.optim.SGD([a, b], lr=0.1)
    other = torch.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1)
    with pytest.raises(ValueError, match="^loaded state dict has a different number of parameter groups$"):
        opt.load_state_dict(other.state_dict())
    one = torch.optim.SGD([a], lr=0.1)
    with pytest.raises(ValueError, match="^loaded state dict contains a parameter group that doesn't match the size "
                                         "of optimizer's group$"):
        opt.load_state_dict(one.state_dict())


def test_zero_grad(torch):
    p = torch.ones(3, requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_step_with_closure(torch):
    p = torch.tensor([1.0, -2.0], requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    with torch.no_grad():
        loss = opt.step(closure)  # the closure runs with gradients enabled
    assert loss.item() == 5.0
    assert p.tolist() == [0.5, -1.0]
    assert opt.step() is None


def test_add_param_group_and_repr(torch):
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    opt = torch.optim.SGD([a], lr=0.1, momentum=0.5)
    opt.add_param_group({"params": b, "lr": 0.01})
    assert len(opt.param_groups) == 2
    assert opt.param_groups[1]["momentum"] == 0.5 and opt.param_groups[1]["params"][0] is b
    assert repr(opt).splitlines() == [
        "SGD (", "Parameter Group 0", "    dampening: 0", "    differentiable: False", "    foreach: None",
        "    fused: None", "    lr: 0.1", "    maximize: False", "    momentum: 0.5", "    nesterov: False",
        "    weight_decay: 0", "", "Parameter Group 1", "    dampening: 0", "    differentiable: False",
        "    foreach: None", "    fused: None", "    lr: 0.01", "    maximize: False", "    momentum: 0.5",
        "    nesterov: False", "    weight_decay: 0", ")"]


BAD = [
    ("SGD", {"lr": -1}, "Invalid learning rate: -1"),
    ("SGD", {"lr": 0.1, "momentum": -0.5}, "Invalid momentum value: -0.5"),
    ("SGD", {"lr": 0.1, "weight_decay": -1e-3}, "Invalid weight_decay value: -0.001"),
    ("SGD", {"lr": 0.1, "nesterov": True}, "Nesterov momentum requires a momentum and zero dampening"),
    ("Adam", {"lr": -0.5}, "Invalid learning rate: -0.5"),
    ("Adam", {"betas": (1.0, 0.999)}, "Invalid beta parameter at index 0: 1.0"),
    ("Adam", {"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1: -0.1"),
    ("Adam", {"eps": -1.0}, "Invalid epsilon value: -1.0"),
    ("AdamW", {"weight_decay": -0.1}, "Invalid weight_decay value: -0.1"),
    ("RMSprop", {"alpha": -0.1}, "Invalid alpha value: -0.1"),
    ("RMSprop", {"momentum": -1}, "Invalid momentum value: -1"),
    ("Adagrad", {"lr_decay": -1}, "Invalid lr_decay value: -1"),
    ("Adagrad", {"initial_accumulator_value": -1}, "Invalid initial_accumulator_value value: -1"),
]


@pytest.mark.parametrize("name,options,message", BAD)
def test_bad_arguments(torch, name, options, message):
    p = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError) as info:
        getattr(torch.optim, name)([p], **options)
    assert str(info.value) == message


def test_bad_parameter_lists(torch):
    a = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError) as info:
        torch.optim.SGD([], lr=0.1)
    assert str(info.value) == "optimizer got an empty parameter list"
    with pytest.raises(ValueError) as info:
        torch.optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1)
    assert str(info.value) == "some parameters appear in more than one parameter group"
    with pytest.raises(ValueError) as info:
        torch.optim.SGD([a * 2], lr=0.1)
    assert str(info.value) == "can't optimize a non-leaf Tensor"
    with pytest.raises(TypeError) as info:
        torch.optim.SGD(a, lr=0.1)
    assert str(info.value) == ("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                               f"but got {torch.__name__}.FloatTensor")
    with pytest.raises(TypeError) as info:
        torch.optim.SGD([a, 3], lr=0.1)
    assert str(info.value) == "optimizer can only optimize Tensors, but one of the params is int"
    with pytest.raises(TypeError, match="^optimizer parameters need to be organized in ordered collections"):
        torch.optim.SGD([{"params": {a}}], lr=0.1)


def test_step_bumps_the_version_so_saved_tensors_notice(torch):
    p = torch.ones(2, requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1)
    y = (p * p).sum()
    (p * 3).sum().backward()
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
