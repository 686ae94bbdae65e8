"""ASGD, Rprop and SparseAdam against PyTorch: parameters bit-equal to torch's single-tensor results
after several steps in float64 and float32 with every combination of their options, equal
state_dicts (keys, dtypes, values: ASGD's 0-dim ``eta`` and ``mu`` in the step dtype), resuming from
a state_dict, printed forms, the argument errors, and SparseAdam's error for dense gradients."""
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
    [("ASGD", o) for o in _combos(lr=[0.01, 0.05], lambd=[1e-4, 0.1], t0=[1e6, 3], weight_decay=[0, 0.1],
                                  maximize=[False, True])]
    + [("Rprop", o) for o in _combos(lr=[0.01, 0.2], etas=[(0.5, 1.2), (0.3, 2.0)],
                                     step_sizes=[(1e-6, 50), (1e-3, 0.1)], maximize=[False, True])]
)


def _id(case):
    name, options = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in options.items())


def _state_equal(s1, s2):
    assert s1["param_groups"] == s2["param_groups"]
    assert list(s1["state"]) == list(s2["state"])
    for k in s1["state"]:
        a, b = s1["state"][k], s2["state"][k]
        assert list(a) == list(b)
        for key in a:
            assert str(a[key].dtype).split(".")[-1] == str(b[key].dtype).split(".")[-1], key
            np.testing.assert_array_equal(a[key].numpy(), b[key].numpy())


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_bit_equal(case, dtype):
    name, options = case
    ours, o1, _ = run(derivgen, name, options, dtype, steps=8)
    theirs, o2, _ = run(torch, name, options, dtype, steps=8)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    start = run(derivgen, name, options, dtype, steps=0)[0]
    assert any(not np.array_equal(a, s) for a, s in zip(ours, start))
    _state_equal(o1.state_dict(), o2.state_dict())


@pytest.mark.parametrize("name", ["ASGD", "Rprop"])
def test_resume_from_state_dict(name):
    def resumed(lib):
        _, opt, params = run(lib, name, {"lr": 0.05}, steps=4)
        params2 = [lib.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
        opt2 = getattr(lib.optim, name)(params2, lr=0.05)
        opt2.load_state_dict(opt.state_dict())
        return run(lib, name, {"lr": 0.05}, steps=6, params=params2, opt=opt2)[0]

    ours = resumed(derivgen)
    for a, b, c in zip(ours, resumed(torch), run(derivgen, name, {"lr": 0.05}, steps=10)[0]):
        np.testing.assert_array_equal(a, b)
        if name == "Rprop":  # loading casts ASGD's eta and mu to the parameter's dtype (torch does too)
            np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("name", ["ASGD", "Rprop", "SparseAdam"])
def test_repr(name):
    def make(lib):
        return getattr(lib.optim, name)([lib.ones(1, requires_grad=True)])
    assert repr(make(derivgen)) == repr(make(torch))


@pytest.mark.parametrize("name,options,message", [
    ("ASGD", {"lr": -1}, "Invalid learning rate: -1"),
    ("ASGD", {"weight_decay": -0.5}, "Invalid weight_decay value: -0.5"),
    ("Rprop", {"lr": -0.1}, "Invalid learning rate: -0.1"),
    ("Rprop", {"etas": (1.5, 2.0)}, "Invalid eta values: 1.5, 2.0"),
    ("Rprop", {"etas": (0.5, 0.9)}, "Invalid eta values: 0.5, 0.9"),
    ("SparseAdam", {"lr": 0.0}, "Invalid learning rate: 0.0"),
    ("SparseAdam", {"eps": 0.0}, "Invalid epsilon value: 0.0"),
    ("SparseAdam", {"betas": (0.9, 1.0)}, "Invalid beta parameter at index 1: 1.0"),
])
def test_argument_errors(name, options, message):
    for lib in (derivgen, torch):
        with pytest.raises(ValueError) as info:
            getattr(lib.optim, name)([lib.ones(1, requires_grad=True)], **options)
        assert str(info.value) == message


def test_sparse_adam_refuses_dense_gradients():
    for lib in (derivgen, torch):
        p = lib.ones(3, requires_grad=True)
        opt = lib.optim.SparseAdam([p], lr=0.1)
        assert opt.step() is None  # no gradient: nothing to refuse
        assert opt.step(lambda: 2.5) == 2.5
        (p * p).sum().backward()
        with pytest.raises(RuntimeError) as info:
            opt.step()
        assert str(info.value) == "SparseAdam does not support dense gradients, please consider Adam instead"
        assert opt.state_dict() == {"state": {}, "param_groups": [
            {"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-08, "maximize": False, "params": [0]}]}
        np.testing.assert_array_equal(p.detach().numpy(), np.ones(3, np.float32))
