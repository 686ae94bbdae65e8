"""Adamax, Adadelta, NAdam and RAdam against PyTorch with every combination of their options: the
parameters after several steps equal torch's single-tensor results within 1e-12 relative in float64
(torch's float64 ``sqrt`` is one ulp off on some inputs), closely in float32; Adamax (no square root)
bit for bit; equal state_dicts (keys, steps, NAdam's mu_product), resuming from a state_dict, printed
forms and the argument errors."""
import itertools

import numpy as np
import pytest

from tests.optim._run import run, torch

import derivgen

pytestmark = pytest.mark.skipif(torch is None, reason="SKIPPED LOUDLY: torch is not installed (the oracle)")


def _combos(**choices):
    keys = list(choices)
    return [dict(zip(keys, values)) for values in itertools.product(*(choices[k] for k in keys))]


CASES = (
    [("Adamax", o) for o in _combos(lr=[0.05], betas=[(0.9, 0.999), (0.3, 0.6)], weight_decay=[0, 0.1],
                                    maximize=[False, True])]
    + [("Adadelta", o) for o in _combos(lr=[1.0, 0.3], rho=[0.9, 0.5], weight_decay=[0, 0.1],
                                        maximize=[False, True])]
    + [("NAdam", o) for o in _combos(lr=[0.05], betas=[(0.9, 0.999), (0.5, 0.7)], weight_decay=[0, 0.1],
                                     momentum_decay=[4e-3, 0.1], decoupled_weight_decay=[False, True],
                                     maximize=[False, True])]
    + [("RAdam", o) for o in _combos(lr=[0.05], betas=[(0.9, 0.999), (0.5, 0.7)], weight_decay=[0, 0.1],
                                     decoupled_weight_decay=[False, True], maximize=[False, True])]
)


def _id(case):
    name, options = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in options.items())


def _plain(value):
    if isinstance(value, (derivgen.Tensor, torch.Tensor)):
        return ("tensor", str(value.dtype).split(".")[-1], value.detach().numpy().tolist())
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_float64(case):
    name, options = case
    ours, o1, _ = run(derivgen, name, options, "float64", steps=8)
    theirs, o2, _ = run(torch, name, options, "float64", steps=8)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype == np.float64
        if name == "Adamax":
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    start = run(derivgen, name, options, "float64", steps=0)[0]
    assert any(not np.array_equal(a, s) for a, s in zip(ours, start))
    s1, s2 = o1.state_dict(), o2.state_dict()
    assert s1["param_groups"] == s2["param_groups"]
    assert list(s1["state"]) == list(s2["state"])
    for k in s1["state"]:
        assert list(s1["state"][k]) == list(s2["state"][k])
        assert s1["state"][k]["step"].item() == s2["state"][k]["step"].item() == 8
        if name == "NAdam":
            assert _plain(s1["state"][k]["mu_product"]) == _plain(s2["state"][k]["mu_product"])


@pytest.mark.parametrize("case", CASES[::3], ids=[_id(c) for c in CASES[::3]])
def test_float32_close(case):
    name, options = case
    ours, _, _ = run(derivgen, name, options, "float32")
    theirs, _, _ = run(torch, name, options, "float32")
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["Adamax", "Adadelta", "NAdam", "RAdam"])
def test_resume_from_state_dict(name):
    def resumed(lib):
        _, opt, params = run(lib, name, {}, steps=4)
        params2 = [lib.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
        opt2 = getattr(lib.optim, name)(params2)
        opt2.load_state_dict(opt.state_dict())
        return run(lib, name, {}, steps=6, params=params2, opt=opt2)[0]

    ours = resumed(derivgen)
    for a, b in zip(ours, resumed(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    if name != "NAdam":  # loading casts NAdam's mu_product to the parameter's dtype (torch does too)
        for a, b in zip(ours, run(derivgen, name, {}, steps=10)[0]):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["Adamax", "Adadelta", "NAdam", "RAdam"])
def test_repr(name):
    def make(lib):
        return getattr(lib.optim, name)([lib.ones(1, requires_grad=True)])
    assert repr(make(derivgen)) == repr(make(torch))


@pytest.mark.parametrize("name,options,message", [
    ("Adamax", {"lr": -1}, "Invalid learning rate: -1"),
    ("Adamax", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
    ("Adadelta", {"rho": 1.5}, "Invalid rho value: 1.5"),
    ("Adadelta", {"eps": -1e-3}, "Invalid epsilon value: -0.001"),
    ("NAdam", {"momentum_decay": -1}, "Invalid momentum_decay value: -1"),
    ("NAdam", {"weight_decay": -0.5}, "Invalid weight_decay value: -0.5"),
    ("RAdam", {"betas": (0.9, 1.0)}, "Invalid beta parameter at index 1: 1.0"),
])
def test_argument_errors(name, options, message):
    for lib in (derivgen, torch):
        with pytest.raises(ValueError) as info:
            getattr(lib.optim, name)([lib.ones(1, requires_grad=True)], **options)
        assert str(info.value) == message
