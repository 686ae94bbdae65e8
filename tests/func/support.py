"""Run one test body on derivgen and on PyTorch (the oracle) and compare what they return."""
import warnings

import numpy as np
import torch as real_torch

import derivgen


def arr(module, *shape, seed=0, low=None):
    a = np.random.default_rng(seed).standard_normal(shape)
    if low is not None:
        a = np.abs(a) + low
    return module.tensor(a, dtype=module.float64)


def to_numpy(v):
    if isinstance(v, (tuple, list)):
        return [to_numpy(x) for x in v]
    if isinstance(v, dict):
        return {k: to_numpy(x) for k, x in v.items()}
    if isinstance(v, (derivgen.Tensor, real_torch.Tensor)):
        return np.asarray(v.detach().tolist(), dtype=np.float64) if v.dim() else np.float64(v.item())
    return v


def assert_same(got, want, rtol=1e-9, atol=1e-11):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol, atol)
        return
    if isinstance(want, dict):
        assert set(got) == set(want)
        for k in want:
            assert_same(got[k], want[k], rtol, atol)
        return
    assert np.shape(got) == np.shape(want), (np.shape(got), np.shape(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def check(body, no_fallback=True, **tol):
    """``body(module)`` on derivgen (with torch's slow-path warning an error when ``no_fallback``) and on
    torch: the same structure, shapes and values."""
    with warnings.catch_warnings():
        if no_fallback:
            warnings.filterwarnings("error", message="There is a performance drop")
        got = to_numpy(body(derivgen))
    want = to_numpy(body(real_torch))
    assert_same(got, want, **tol)
