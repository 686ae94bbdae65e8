"""Every optimizer with every combination of its options: the parameters after several steps equal
PyTorch's (single-tensor implementation, its CPU default): SGD bit for bit in float64; the optimizers
that take a square root within 1e-12 relative, because PyTorch's float64 ``sqrt`` (MKL's vector
math) is off by one ulp on about 1% of inputs where numpy and Numba round correctly; float32 closely."""
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
    [("SGD", o) for o in _combos(lr=[0.05], momentum=[0, 0.9], dampening=[0, 0.25], weight_decay=[0, 0.1],
                                 nesterov=[False, True], maximize=[False, True])
     if not (o["nesterov"] and (o["momentum"] == 0 or o["dampening"] != 0))]
    + [("Adam", o) for o in _combos(lr=[0.05], betas=[(0.9, 0.999), (0.3, 0.6)], weight_decay=[0, 0.1],
                                    amsgrad=[False, True], maximize=[False, True])]
    + [("AdamW", o) for o in _combos(lr=[0.05], weight_decay=[0.01, 0.3], amsgrad=[False, True],
                                     maximize=[False, True])]
    + [("RMSprop", o) for o in _combos(lr=[0.01], alpha=[0.99, 0.4], weight_decay=[0, 0.1],
                                       momentum=[0, 0.5], centered=[False, True], maximize=[False, True])]
    + [("Adagrad", o) for o in _combos(lr=[0.1], lr_decay=[0, 0.05], weight_decay=[0, 0.1],
                                       initial_accumulator_value=[0, 0.3], maximize=[False, True])]
)


def _id(case):
    name, options = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in options.items() if k != "lr")


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_float64(case):
    name, options = case
    ours, _, _ = run(derivgen, name, options, "float64")
    theirs, _, _ = run(torch, name, options, "float64")
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype == np.float64
        if name == "SGD":
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    start = run(derivgen, name, options, "float64", steps=0)[0]
    assert any(not np.array_equal(a, s) for a, s in zip(ours, start))  # the steps moved the parameters


@pytest.mark.parametrize("case", CASES[::3], ids=[_id(c) for c in CASES[::3]])
def test_float32_close(case):
    name, options = case
    ours, _, _ = run(derivgen, name, options, "float32")
    theirs, _, _ = run(torch, name, options, "float32")
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_with_gradients_from_backward(name):
    """The whole loop (forward, backward, step) against torch: within 1e-12 relative in float64 (the
    backward passes may round differently in the last bit)."""
    def train(lib):
        x = lib.tensor(np.linspace(-1, 1, 7), dtype=lib.float64)
        w = lib.tensor([0.3, -0.2, 0.1], dtype=lib.float64, requires_grad=True)
        opt = getattr(lib.optim, name)([w], lr=0.05)
        for _ in range(10):
            opt.zero_grad()
            pred = w[0] + w[1] * x + w[2] * x * x
            loss = ((pred - x.sin()) ** 2).mean()
            loss.backward()
            opt.step()
        return w.detach().numpy()
    np.testing.assert_allclose(train(derivgen), train(torch), rtol=1e-12, atol=1e-15)


def test_param_groups_with_their_own_options():
    def go(lib):
        params = [lib.tensor(a, requires_grad=True) for a in ([1.0, 2.0], [3.0, -1.0, 0.5])]
        opt = lib.optim.SGD([{"params": [params[0]]}, {"params": params[1], "lr": 0.5, "momentum": 0.9}],
                            lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            (params[0] ** 2).sum().add((params[1] ** 3).sum()).backward()
            opt.step()
        return [p.detach().numpy() for p in params], opt
    (ours, o1), (theirs, o2) = go(derivgen), go(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
    assert [g["lr"] for g in o1.param_groups] == [0.1, 0.5]
    assert [g["momentum"] for g in o1.param_groups] == [g["momentum"] for g in o2.param_groups] == [0, 0.9]


def test_sqrt_is_the_only_difference_from_torch():
    """With gradients whose accumulated squares have exact square roots (powers of two), torch's
    sqrt rounds correctly too, and Adagrad and RMSprop agree with it bit for bit."""
    def go(lib, name, **options):
        p = lib.tensor([0.5, -1.0, 2.0, 0.25, 3.0, -0.75, 1.5, 0.125, 5.0], dtype=lib.float64, requires_grad=True)
        opt = getattr(lib.optim, name)([p], **options)
        for _ in range(1):
            p.grad = lib.tensor([1.0, -2.0, 0.5, 4.0, -0.25, 8.0, 2.0, -1.0, 0.0625], dtype=lib.float64)
            opt.step()
        return p.detach().numpy()
    for name, options in (("Adagrad", {"lr": 0.1}), ("RMSprop", {"lr": 0.1, "alpha": 0.75})):
        np.testing.assert_array_equal(go(derivgen, name, **options), go(torch, name, **options))


def test_parameter_without_gradient_is_left_alone():
    a = derivgen.tensor([1.0, 2.0], requires_grad=True)
    b = derivgen.tensor([3.0], requires_grad=True)
    opt = derivgen.optim.Adam([a, b], lr=0.1)
    (a * a).sum().backward()
    opt.step()
    assert b.grad is None and b.tolist() == [3.0]
    assert b not in opt.state and a in opt.state
