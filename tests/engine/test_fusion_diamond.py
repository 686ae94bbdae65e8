"""Fused backward regions with diamonds: an interior elementwise node whose result feeds two nodes of
the same region (``t = x.sigmoid(); (t * t + t).sum()``), inputs shared by several region nodes, and
a broadcast bias inside a diamond. Run at the default fusion threshold (131,072 elements); each
gradient must equal eager mode's and a float64 numeric directional derivative."""
import numpy as np
import pytest

import derivgen
from derivgen import config
from derivgen.engine import fusion

N = 131_072  # the default fusion threshold: the smallest size that fuses


@pytest.fixture
def regions():
    """Fusion at its default threshold, with the fused regions recorded (each a list of node names)."""
    if config.fusion_threshold() is None or config.fusion_threshold() > N:
        pytest.skip("fusion is switched off (DERIVGEN_FUSION=0) or its threshold raised")
    seen = []
    real = fusion._run_region

    def spy(region, *args):
        out = real(region, *args)
        seen.append(sorted(n.name() for n in region))
        return out
    fusion._run_region = spy
    try:
        yield seen
    finally:
        fusion._run_region = real


def _eager(fn):
    old = config.fusion_threshold()
    config.set_fusion_threshold(None)
    try:
        return fn()
    finally:
        config.set_fusion_threshold(old)


def _leaf(shape, seed, dtype=derivgen.float64):
    rng = np.random.default_rng(seed)
    return derivgen.tensor(rng.uniform(-2, 2, shape), dtype=dtype, requires_grad=True)


def _grads(loss_fn, arrays, dtype):
    leaves = [derivgen.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    loss_fn(*leaves).backward()
    return [x.grad.numpy().copy() for x in leaves]


def _value(loss_fn, arrays):
    with derivgen.no_grad():
        return float(loss_fn(*[derivgen.tensor(a, dtype=derivgen.float64) for a in arrays]).item())


def _check(loss_fn, arrays, regions, expected_nodes, dtype=derivgen.float64):
    fused = _grads(loss_fn, arrays, dtype)
    assert any(set(expected_nodes) <= set(r) for r in regions), \
        f"no fused region holds {expected_nodes}; regions run: {regions}"
    eager = _eager(lambda: _grads(loss_fn, arrays, dtype))
    for f, e in zip(fused, eager):
        assert f.dtype == e.dtype and f.shape == e.shape
        np.testing.assert_allclose(f, e, rtol=1e-12 if dtype is derivgen.float64 else 1e-5, atol=1e-12)
    if dtype is derivgen.float64:
        # numeric directional derivative along a random direction of every input at once; positive
        # components keep the derivative large against the rounding of a loss summed over 131,072 terms
        rng = np.random.default_rng(7)
        dirs = [rng.uniform(0.5, 1.5, a.shape) for a in arrays]
        h = 1e-6
        plus = _value(loss_fn, [a + h * d for a, d in zip(arrays, dirs)])
        minus = _value(loss_fn, [a - h * d for a, d in zip(arrays, dirs)])
        numeric = (plus - minus) / (2 * h)
        analytic = sum(float(np.sum(g * d)) for g, d in zip(fused, dirs))
        assert abs(numeric - analytic) <= 1e-6 * max(1.0, abs(analytic)), (numeric, analytic)
    return fused


def _sigmoid_diamond(x):
    t = x.sigmoid()
    return (t * t + t).sum()


@pytest.mark.parametrize("dtype", [derivgen.float64, derivgen.float32])
def test_sigmoid_feeding_two_nodes_of_one_region(regions, dtype):
    x = np.random.default_rng(0).uniform(-3, 3, N)
    (g,) = _check(_sigmoid_diamond, [x], regions, ["SigmoidBackward0", "MulBackward0", "AddBackward0"], dtype)
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(g, (2 * s + 1) * s * (1 - s), rtol=1e-12 if dtype is derivgen.float64 else 1e-5,
                               atol=1e-7)


def test_leaf_shared_by_several_region_nodes(regions):
    x = np.random.default_rng(1).uniform(-2, 2, N)
    _check(lambda x: (x * x.sin() + x.exp() * x).sum(), [x], regions, ["SinBackward0", "ExpBackward0", "AddBackward0"])


def test_nested_diamonds(regions):
    def loss(x):
        a = x.tanh()
        b = a * a
        c = b.exp()
        return (c * a - b).sum()
    x = np.random.default_rng(2).uniform(-2, 2, N)
    _check(loss, [x], regions, ["TanhBackward0", "ExpBackward0", "SubBackward0"])


def test_diamond_with_broadcast_bias(regions):
    def loss(x, b):
        t = (x + b).sigmoid()
        return (t * t - t).sum()
    rng = np.random.default_rng(3)
    x, b = rng.uniform(-2, 2, (512, 256)), rng.uniform(-1, 1, 256)
    _check(loss, [x, b], regions, ["SigmoidBackward0", "AddBackward0", "SubBackward0"])


def test_interior_node_also_used_outside_the_region(regions):
    """t's gradient comes partly from a sum outside the elementwise region: t must not be fused into
    the region before all its gradient has arrived, and the result is still eager mode's."""
    def loss(x):
        t = x.sigmoid()
        return (t * t + t).sum() + t.sum() * 0.5
    x = np.random.default_rng(4).uniform(-3, 3, N)
    _check(loss, [x], regions, ["MulBackward0", "AddBackward0"])
