"""LBFGS against PyTorch on the same objective from the same start: parameters, losses, ``func_evals``
and ``n_iter`` after several steps with and without the strong-Wolfe line search, small histories,
``max_eval`` and the tolerances; the state_dict's keys and value types; resuming from a state_dict;
the errors. Dot products and sums are NumPy's (OpenBLAS) where torch's are MKL's, whose summation
orders differ in the last bit, so values agree to a few ulps rather than bit for bit."""
import numpy as np
import pytest

from tests.optim._run import torch

import derivgen

pytestmark = pytest.mark.skipif(torch is None, reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

_rng = np.random.default_rng(3)
_M = _rng.standard_normal((8, 8))
A = _M @ _M.T / 8 + np.eye(8)
B = _rng.standard_normal(8)


def objective(x):
    """A convex quartic and its gradient, in float64 NumPy: both libraries see the same numbers."""
    return float(0.5 * x @ A @ x - B @ x + 0.1 * (x ** 4).sum()), A @ x - B + 0.4 * x ** 3


def run(lib, dtype, steps, opt_state=None, start=None, **options):
    start = np.random.default_rng(0).standard_normal(8) * 2 if start is None else start
    x = lib.tensor(start.astype(dtype), requires_grad=True)
    opt = lib.optim.LBFGS([x], **options)
    if opt_state is not None:
        opt.load_state_dict(opt_state)

    def closure():
        f, g = objective(x.detach().numpy().astype(np.float64))
        x.grad = lib.tensor(g.astype(dtype))
        return lib.tensor(f)
    losses = [float(opt.step(closure)) for _ in range(steps)]
    return x.detach().numpy().copy(), losses, opt


OPTIONS = [{"max_iter": 4}, {"max_iter": 4, "line_search_fn": "strong_wolfe"},
           {"history_size": 3, "max_iter": 7, "lr": 0.5}, {"history_size": 2, "line_search_fn": "strong_wolfe",
                                                          "max_eval": 9},
           {"tolerance_grad": 1e-3, "tolerance_change": 1e-4}, {"max_iter": 30, "line_search_fn": "strong_wolfe"}]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) for o in OPTIONS])
def test_matches_torch(options, dtype):
    ours, losses1, o1 = run(derivgen, dtype, 3, **options)
    theirs, losses2, o2 = run(torch, dtype, 3, **options)
    assert ours.dtype == theirs.dtype
    rtol = 1e-12 if dtype == "float64" else 2e-6
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(losses1, losses2, rtol=rtol)
    assert losses1[-1] < losses1[0]
    s1, s2 = o1.state_dict(), o2.state_dict()
    assert s1["param_groups"] == s2["param_groups"]
    a, b = s1["state"][0], s2["state"][0]
    assert list(a) == list(b)
    assert (a["func_evals"], a["n_iter"]) == (b["func_evals"], b["n_iter"])
    for key in b:
        assert type(a[key]).__name__ == type(b[key]).__name__, key
        if isinstance(b[key], list):
            assert len(a[key]) == len(b[key])
            assert [type(v).__name__ for v in a[key]] == [type(v).__name__ for v in b[key]]
        if hasattr(b[key], "dtype"):
            assert str(a[key].dtype).split(".")[-1] == str(b[key].dtype).split(".")[-1]
            np.testing.assert_allclose(a[key].numpy(), b[key].numpy(), rtol=100 * rtol, atol=100 * rtol)


@pytest.mark.parametrize("options", [{"history_size": 3}, {"line_search_fn": "strong_wolfe", "max_iter": 3}])
def test_resume_from_state_dict(options):
    straight = run(derivgen, "float64", 4, **options)[0]
    x, _, first = run(derivgen, "float64", 2, **options)
    resumed = run(derivgen, "float64", 2, opt_state=first.state_dict(), start=x, **options)[0]
    np.testing.assert_array_equal(resumed, straight)


def test_with_a_real_backward_closure():
    def fit(lib):
        lib.manual_seed(0)
        rng = np.random.default_rng(1)
        inputs = lib.tensor(rng.standard_normal((20, 3)))
        targets = lib.tensor(rng.standard_normal((20, 1)))
        w = lib.tensor(rng.standard_normal((3, 1)), requires_grad=True)
        b = lib.zeros(1, dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([w, b], line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = ((inputs @ w + b - targets) ** 2).mean()
            loss.backward()
            return loss
        first = opt.step(closure)
        assert isinstance(first, lib.Tensor)
        opt.step(closure)
        return w.detach().numpy(), b.detach().numpy(), opt.state_dict()["state"][0]["n_iter"]

    w1, b1, n1 = fit(derivgen)
    w2, b2, n2 = fit(torch)
    np.testing.assert_allclose(w1, w2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b1, b2, rtol=1e-10, atol=1e-12)
    assert n1 == n2


def test_already_optimal_returns_at_once():
    for lib in (derivgen, torch):
        x = lib.zeros(3, requires_grad=True)
        opt = lib.optim.LBFGS([x])

        def closure():
            x.grad = lib.zeros(3)
            return lib.tensor(1.5)
        assert float(opt.step(closure)) == 1.5
        assert dict(opt.state_dict()["state"][0]) == {"func_evals": 1, "n_iter": 0}


def test_errors():
    for lib in (derivgen, torch):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="^Invalid learning rate: -1$"):
            lib.optim.LBFGS([x], lr=-1)
        with pytest.raises(ValueError, match=r"^LBFGS doesn't support per-parameter options \(parameter groups\)$"):
            lib.optim.LBFGS([{"params": [x]}, {"params": [lib.ones(1, requires_grad=True)]}])
        opt = lib.optim.LBFGS([x], line_search_fn="armijo")

        def closure():
            x.grad = lib.ones(2)
            return lib.tensor(1.0)
        with pytest.raises(RuntimeError, match="^only 'strong_wolfe' is supported$"):
            opt.step(closure)
        assert "line_search_fn: armijo" in repr(opt)
        with pytest.raises(TypeError):
            opt.step()


def test_loading_casts_the_histories_to_the_parameters_dtype():
    def loaded(lib):
        p = lib.ones(3, dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([p], max_iter=3)

        def closure():
            opt.zero_grad()
            loss = ((p - 2) ** 4).sum()
            loss.backward()
            return loss
        opt.step(closure)
        q = lib.ones(3, dtype=lib.float32, requires_grad=True)
        opt2 = lib.optim.LBFGS([q])
        opt2.load_state_dict(opt.state_dict())

        def kind(v):
            if isinstance(v, list):
                return [kind(x) for x in v]
            return str(v.dtype).split(".")[-1] if hasattr(v, "dtype") else type(v).__name__
        return {k: kind(v) for k, v in opt2.state[q].items()}

    ours = loaded(derivgen)
    assert ours == loaded(torch)
    assert ours["old_dirs"] == ["float32"] and ours["d"] == "float32"
