"""The dispatcher's variants for a number operand (a one-element array passed to the 1-D loop as a
number), for an in-place op (the ``_inplace`` loop that writes into its first operand), and the plain
loops of ``zero_``/``fill_``/``clamp``: each must give exactly what the general path gives, and what
PyTorch gives, including for overlapping in-place operands (torch's result or torch's error)."""
import numba
import numpy as np
import pytest
import torch as real_torch

import derivgen as torch
from derivgen.generated import kernels as K

DTYPES = [np.float32, np.float64, np.int64, np.int32, np.bool_]
KERNELS = [("add_Tensor_forward", (1,)), ("mul_Tensor_forward", ()), ("sub_Tensor_forward", (2,)),
           ("maximum_forward", ()), ("div_Tensor_forward", ())]


def _array(dtype, rng, n=37):
    if np.dtype(dtype).kind == "b":
        return rng.random(n) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-9, 9, n).astype(dtype)
    a = (rng.standard_normal(n) * 4).astype(dtype)
    a[[3, 11]] = np.nan
    a[5] = np.inf
    return a


def _number(dtype):
    return np.array(True if np.dtype(dtype).kind == "b" else 3, dtype)


def _has_number_signature(dispatcher):
    return any(not isinstance(t, numba.types.Array) for sig in dispatcher.signatures for t in sig[1:-1])


def _supported(name, dtype):
    # sub refuses bools (torch's error), as the general path does
    return not (name == "sub_Tensor_forward" and np.dtype(dtype).kind == "b")


@pytest.mark.parametrize("name,scalars", KERNELS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("number_first", [False, True])
def test_number_operand_matches_full_array(name, scalars, dtype, number_first):
    if not _supported(name, dtype):
        pytest.skip("sub of bools is refused")
    k = getattr(K, name)
    a = _array(dtype, np.random.default_rng(0))
    s = _number(dtype)
    full = np.full(a.shape, s)
    ops, ref_ops = ((s, a), (full, a)) if number_first else ((a, s), (a, full))
    with np.errstate(all="ignore"):
        got = k(ops, scalars)
        want = k(ref_ops, scalars)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert _has_number_signature(k.k1d)


@pytest.mark.parametrize("name,scalars", KERNELS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("other", ["array", "number"])
def test_inplace_variant_matches_general_path(name, scalars, dtype, other):
    if not _supported(name, dtype):
        pytest.skip("sub of bools is refused")
    k = getattr(K, name)
    rng = np.random.default_rng(1)
    w = _array(dtype, rng)
    g = _array(dtype, rng) if other == "array" else _number(dtype)
    with np.errstate(all="ignore"):
        want = k((w, g), scalars)
        if want.dtype != w.dtype:
            pytest.skip("the result does not fit the operand's dtype (true division of ints)")
        res = k((w, g), scalars, out=w)
    assert res is w
    np.testing.assert_array_equal(w, want)
    assert k.inplace.signatures


INPLACE = [
    ("sub_", lambda w, g: w.sub_(g)),
    ("add_ alpha", lambda w, g: w.add_(g, alpha=2)),
    ("mul_", lambda w, g: w.mul_(g)),
    ("-= lr *", lambda w, g: w.sub_(3 * g)),
    ("mul_ number", lambda w, g: w.mul_(3)),
    ("add_ number", lambda w, g: w.add_(2)),
    ("add_ self", lambda w, g: w.add_(w)),
]


@pytest.mark.parametrize("label,fn", INPLACE, ids=[c[0] for c in INPLACE])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_inplace_ops_match_torch(label, fn, dtype):
    rng = np.random.default_rng(2)
    w, g = _array(dtype, rng), _array(dtype, rng)
    results = []
    for lib in (real_torch, torch):
        tw, tg = lib.from_numpy(w.copy()), lib.from_numpy(g.copy())
        try:
            with np.errstate(all="ignore"):
                out = fn(tw, tg)
            assert out is tw
            results.append(tw.numpy().copy())
        except RuntimeError as exc:
            results.append((type(exc), str(exc).split("\n")[0][:60]))
    if isinstance(results[0], tuple):
        assert isinstance(results[1], tuple) and results[0][0] is results[1][0]
    else:
        np.testing.assert_array_equal(results[1], results[0])


OVERLAPS = [
    ("shifted right", lambda x: x[1:].add_(x[:-1])),
    ("shifted left", lambda x: x[:-1].add_(x[1:])),
    ("same tensor", lambda x: x.add_(x)),
    ("interleaved", lambda x: x[::2].mul_(x[1::2])),
    ("transposed self", lambda x: x.view(2, 3).t().add_(x.view(2, 3).t())),
    ("transpose into itself", lambda x: x.view(3, 2).t().add_(x.view(2, 3))),
    ("sub_ shifted", lambda x: x[2:].sub_(x[:-2], alpha=0.5)),
    ("number and overlap", lambda x: x[1:].mul_(x[:-1] * 0 + 2)),
]


@pytest.mark.parametrize("label,fn", OVERLAPS, ids=[c[0] for c in OVERLAPS])
def test_inplace_on_overlapping_views_matches_torch(label, fn):
    results = []
    for lib in (real_torch, torch):
        x = lib.arange(6.0)
        try:
            fn(x)
            results.append(x.numpy().copy())
        except RuntimeError as exc:
            results.append(str(exc))
    if isinstance(results[0], str):
        assert results[1] == results[0]
    else:
        np.testing.assert_array_equal(results[1], results[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.bool_])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "0-d"])
@pytest.mark.parametrize("op", ["zero_", "fill_ 1", "fill_ tensor"])
def test_zero_and_fill_match_torch(dtype, layout, op):
    base = _array(dtype, np.random.default_rng(3), 24).reshape(4, 6)
    results = []
    for lib in (real_torch, torch):
        t = lib.from_numpy(base.copy())
        view = t[:, ::2] if layout == "strided" else t[1, 2] if layout == "0-d" else t
        before = t._version
        if op == "zero_":
            out = view.zero_()
        elif op == "fill_ 1":
            out = view.fill_(1)
        else:
            out = view.fill_(lib.tensor(5, dtype=t.dtype))
        assert out is view
        assert t._version > before
        results.append(t.numpy().copy())
    np.testing.assert_array_equal(results[1], results[0])


def test_fill_refuses_overflow_as_torch():
    with pytest.raises(RuntimeError) as want:
        real_torch.zeros(3, dtype=real_torch.int32).fill_(2 ** 40)
    with pytest.raises(RuntimeError) as got:
        torch.zeros(3, dtype=torch.int32).fill_(2 ** 40)
    assert str(got.value) == str(want.value)


BOUNDS = [(0, None), (None, 0.5), (-0.5, 0.5), (1, -1), (0.25, 0.25)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lo,hi", BOUNDS)
def test_clamp_forward_and_gradient_match_torch(dtype, lo, hi):
    x = _array(dtype, np.random.default_rng(4), 40).reshape(5, 8)
    x[0, :4] = [lo or 0, hi or 0, -0.0, 0.5]  # values on the bounds
    results = []
    for lib in (real_torch, torch):
        t = lib.from_numpy(x.copy()).requires_grad_()
        y = t.clamp(min=lo, max=hi)
        g = lib.from_numpy(np.arange(40, dtype=dtype).reshape(5, 8))
        y.backward(g)
        results.append((y.detach().numpy().copy(), t.grad.numpy().copy()))
    for got, want in zip(results[1], results[0]):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


NUMBERS = [("float", lambda lib: 1e-6), ("int", lambda lib: 3),
           ("float64 0-d", lambda lib: lib.tensor(2.5, dtype=lib.float64)), ("int 0-d", lambda lib: lib.tensor(-4)),
           ("bool 0-d", lambda lib: lib.tensor(True)), ("huge", lambda lib: 1e40)]
BINARY = [("mul", lambda t, s: t * s), ("add", lambda t, s: t + s), ("sub", lambda t, s: t - s),
          ("div", lambda t, s: t / s), ("pow", lambda t, s: t ** s)]


@pytest.mark.parametrize("op,fn", BINARY, ids=[c[0] for c in BINARY])
@pytest.mark.parametrize("label,number", NUMBERS, ids=[c[0] for c in NUMBERS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tensor_and_number_match_torch(op, fn, label, number, dtype):
    """A float tensor with a number or a 0-dim tensor (the forward's number fast path)."""
    x = _array(dtype, np.random.default_rng(5), 30).reshape(5, 6)
    results = []
    for lib in (real_torch, torch):
        try:
            with np.errstate(all="ignore"):
                y = fn(lib.from_numpy(x.copy()), number(lib))
            results.append(y.numpy().copy())
        except RuntimeError as exc:
            results.append(str(exc))
    if isinstance(results[0], str):
        assert results[1] == results[0]
    else:
        assert results[1].dtype == results[0].dtype
        if op == "pow" and label == "float64 0-d":
            # x ** 2.5: torch's kernel calls SLEEF's pow (1-ulp accurate; its last bit depends on the CPU's
            # vector width), derivgen's libm's. Infinities and NaNs must agree, finite values within 1 ulp.
            np.testing.assert_array_equal(np.isfinite(results[1]), np.isfinite(results[0]))
            np.testing.assert_array_equal(np.isnan(results[1]), np.isnan(results[0]))
            finite = np.isfinite(results[0])
            np.testing.assert_array_max_ulp(results[1][finite], results[0][finite], maxulp=1)
        else:
            np.testing.assert_array_equal(results[1], results[0])
