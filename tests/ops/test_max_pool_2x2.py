"""The 2x2, stride-2 max pool (the usual CNN pool) runs an unrolled loop of its own
(``_pool_kernels.max_pool2d_planes_2x2``): its values, indices and gradients are torch's, with ties,
NaNs and infinities in the windows, odd sizes (the last row and column dropped) and both dtypes; other
geometries keep the general loop."""
import numpy as np
import pytest

import derivgen
from derivgen.ops.forwards import _pool_kernels

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")


def _hostile(shape, seed):
    """Small integers (many ties in a window), with NaNs (one or two in a window), -inf and inf."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, size=shape).astype(np.float64)
    flat = a.reshape(-1)
    n = flat.size
    flat[rng.choice(n, size=max(1, n // 7), replace=False)] = np.nan
    flat[rng.choice(n, size=max(1, n // 11), replace=False)] = -np.inf
    flat[rng.choice(n, size=max(1, n // 13), replace=False)] = np.inf
    return a


@pytest.fixture
def fast_calls(monkeypatch):
    calls = []
    original = _pool_kernels.max_pool2d_planes_2x2

    def spy(*args):
        calls.append(args[0].shape)
        return original(*args)
    monkeypatch.setattr(_pool_kernels, "max_pool2d_planes_2x2", spy)
    return calls


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, kwargs, fast", [
    ((2, 3, 6, 8), {}, True),
    ((2, 3, 7, 9), {}, True),              # floor mode: the last row and column are in no window
    ((1, 1, 2, 2), {}, True),
    ((3, 6, 6), {}, True),                 # unbatched
    ((2, 3, 7, 9), {"ceil_mode": True}, False),   # partial windows at the edges: the general loop
    ((2, 3, 6, 8), {"padding": 1}, False),
    ((2, 3, 6, 8), {"stride": 1}, False),
])
def test_matches_torch_with_ties_nans_and_infinities(dtype, shape, kwargs, fast, fast_calls):
    a = _hostile(shape, seed=len(fast_calls) + sum(shape)).astype(dtype)
    x = derivgen.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    out, idx = derivgen.nn.functional.max_pool2d(x, 2, return_indices=True, **kwargs)
    tout, tidx = torch.nn.functional.max_pool2d(tx, 2, return_indices=True, **kwargs)
    assert bool(fast_calls) == fast
    np.testing.assert_array_equal(out.detach().numpy(), tout.detach().numpy())  # NaN where torch has NaN
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
    g = np.arange(1, out.numel() + 1, dtype=dtype).reshape(tuple(out.shape))
    out.backward(derivgen.tensor(g))
    tout.backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_the_two_loops_pick_alike_on_random_planes():
    rng = np.random.default_rng(5)
    x = np.round(rng.standard_normal((40, 12, 10)), 1).astype(np.float32)  # rounded: ties
    x[rng.random(x.shape) < 0.05] = np.nan
    general = (np.empty((40, 6, 5), np.float32), np.empty((40, 6, 5), np.int64))
    fast = (np.empty_like(general[0]), np.empty_like(general[1]))
    _pool_kernels.max_pool2d_planes(x, 2, 2, 2, 2, 0, 0, 1, 1, *general)
    _pool_kernels.max_pool2d_planes_2x2(x, *fast)
    np.testing.assert_array_equal(fast[0], general[0])
    np.testing.assert_array_equal(fast[1], general[1])
