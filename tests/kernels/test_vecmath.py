"""The vectorizable float32 exp / log / tanh (``derivgen.kernels.numba_vecmath``) against PyTorch.

Accuracy is measured in ulps of the float64 result rounded to float32, over a dense sample of all float32
bit patterns (every 97th, so every binade and both signs) and over hypothesis-drawn inputs; at the edges
(zeros of both signs, inf, nan, overflow, underflow, subnormal inputs and results) the results must be
torch's. The kernels that use them must be vectorized with the widest vectors the CPU has.
"""
import re

import llvmlite.binding as llvm_binding
import numba
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from derivgen.kernels import numba_backend  # noqa: F401 - gives the helpers their compiled meaning
from derivgen.kernels.loop_helpers import _exp, _log, _tanh
from derivgen.kernels.numba_vecmath import _expf, _logf, _tanhf

FUNCS = {"exp": (_expf, torch.exp), "log": (_logf, torch.log), "tanh": (_tanhf, torch.tanh)}
MAX_ULP = {"exp": 1.3, "log": 1.0, "tanh": 1.4}
TINY = np.finfo(np.float32).tiny
SMALLEST_SUBNORMAL = np.float32(1.4e-45)


def _loop(f):
    @numba.njit(error_model="numpy")
    def apply(out, x):
        for i in range(out.shape[0]):
            out[i] = f(x[i])
    return apply


_LOOPS = {name: _loop(f) for name, (f, _) in FUNCS.items()}


def ours(name, x):
    out = np.empty_like(x)
    _LOOPS[name](out, x)
    return out


def dense_sample():
    return np.arange(0, 2 ** 32, 97, dtype=np.uint64).astype(np.uint32).view(np.float32)


def ulps(name, x, y):
    """|y - f(x)| in ulps of the correctly rounded float32 result (finite, normal results only), and
    the mask of those results."""
    with np.errstate(invalid="ignore"):  # signalling nan patterns of the sweep
        ref = FUNCS[name][1](torch.from_numpy(x.astype(np.float64))).numpy()
    normal = np.isfinite(ref) & (np.abs(ref) >= TINY) & (np.abs(ref) <= np.finfo(np.float32).max)
    spacing = np.spacing(np.abs(ref[normal]).astype(np.float32)).astype(np.float64)
    return np.abs(y[normal].astype(np.float64) - ref[normal]) / spacing, normal


def same_as_torch(name, x, y):
    t = FUNCS[name][1](torch.from_numpy(x)).numpy()
    return (y == t) & (np.signbit(y) == np.signbit(t)) | (np.isnan(y) & np.isnan(t))


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_dense_sweep_within_ulp_bound_and_torch_off_the_normal_range(name):
    x = dense_sample()
    y = ours(name, x)
    err, normal = ulps(name, x, y)
    assert err.max() <= MAX_ULP[name], (name, err.max(), x[normal][err.argmax()])
    # inf, nan, overflow to inf, zero results: exactly torch's
    rest = ~normal & ~((y != 0) & (np.abs(y) < TINY))
    ok = same_as_torch(name, x[rest], y[rest])
    assert ok.all(), (name, x[rest][~ok][:5], y[rest][~ok][:5])


def test_exp_subnormal_results_within_one_subnormal_step_of_torch():
    x = np.linspace(-104.5, -87.0, 200_001, dtype=np.float32)
    y = ours("exp", x)
    t = torch.exp(torch.from_numpy(x)).numpy()
    assert (np.abs(y.astype(np.float64) - t) <= SMALLEST_SUBNORMAL).all()
    assert (y[x < -103.98] == 0).all() and (y >= 0).all()


EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 88.72283, 88.7229, 89.0, -87.33655,
                  -103.97, -104.0, -150.0, 1e-45, -1e-45, TINY, -TINY, 1e-30, -1e-30, 0.625, -0.625,
                  np.nextafter(np.float32(0.625), np.float32(0)), 9.0, -9.0, 44.0, 1e30, -1e30,
                  np.finfo(np.float32).max, -np.finfo(np.float32).max], np.float32)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_edge_values_are_torchs(name):
    y = ours(name, EDGES)
    t = FUNCS[name][1](torch.from_numpy(EDGES)).numpy()
    exact = same_as_torch(name, EDGES, y)
    err, normal = ulps(name, EDGES, y)
    close = np.zeros_like(exact)
    close[normal] = err <= MAX_ULP[name]
    assert (exact | close).all(), (name, EDGES[~(exact | close)], y[~(exact | close)], t[~(exact | close)])


@pytest.mark.parametrize("name", sorted(FUNCS))
@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True), min_size=1, max_size=64))
def test_hypothesis_inputs(name, values):
    x = np.array(values, np.float32)
    y = ours(name, x)
    err, normal = ulps(name, x, y)
    assert (err <= MAX_ULP[name]).all()
    t = FUNCS[name][1](torch.from_numpy(x)).numpy()
    sub = (y != 0) & (np.abs(y) < TINY) | (t != 0) & (np.abs(t) < TINY)
    rest = ~normal & ~sub
    assert same_as_torch(name, x[rest], y[rest]).all()
    assert (np.abs(y[sub].astype(np.float64) - t[sub]) <= SMALLEST_SUBNORMAL).all()


def test_float64_keeps_libm():
    @numba.njit
    def f(x):
        return _exp(x), _log(x), _tanh(x)
    x = 0.7310585786300049
    assert f(x) == (np.exp(x), np.log(x), np.tanh(x))


def test_loops_vectorize_with_the_widest_vectors():
    """The loop body is vector code; on an AVX-512 CPU LLVM is allowed 512-bit vectors (its default
    tuning there is 256-bit, which halves the elements per instruction)."""
    features = llvm_binding.get_host_cpu_features().flatten()
    f32 = numba.types.float32[::1]
    d = numba.njit(error_model="numpy")(_LOOPS["exp"].py_func)
    d.compile((f32, f32))
    llvm = d.inspect_llvm((f32, f32))
    assert re.search(r"<(8|16) x float>", llvm), "exp loop not vectorized"
    assert '"prefer-vector-width"="512"' in llvm
    if "+avx512f" in features.split(","):
        assert "zmm" in d.inspect_asm((f32, f32))
