"""The ContiguousMeta a Tensor caches (derivgen.core.meta): whatever produced a tensor, a cache that is
valid (``_cmeta_of is _array``) describes the array exactly, and replacing a tensor's array drops it."""
import warnings

import numpy as np
import pytest
import torch as T

import derivgen as torch
from derivgen.config import fusion_threshold, set_fusion_threshold, settings
from derivgen.core.meta import contiguous_meta
from derivgen.generated import ops


def _check(t):
    """The cache invariant: a valid cache names the array's shape, dtype and size, and the array is
    C-contiguous."""
    m = t._cmeta
    if m is None or t._cmeta_of is not t._array:
        return False
    a = t._array
    assert (m.shape, m.dtype, m.size, m.one_dim) == (a.shape, a.dtype, a.size, a.ndim == 1)
    assert a.flags.c_contiguous
    assert m.one == ((a.shape, a.dtype),) and m.pair is m.one[0] and m.same2 == (m.pair, m.pair)
    return True


def _cmeta_rows():
    """(name, function, its parameters without a default) of every row whose function reads its
    inputs' cached metadata."""
    rows = []
    for name in dir(ops):
        overloads = getattr(ops, name)
        if not (name.startswith("_") and name.endswith("_rows") and isinstance(overloads, tuple)):
            continue
        for ov in overloads:
            if "_cmeta" not in ov.fn.__code__.co_names:
                continue
            required = tuple(p for p in ov.params if p.default is ops._b._MISSING)
            rows.append((ov.fn.__name__, ov.fn, required))
    return sorted({r[0]: r for r in rows}.values(), key=lambda r: r[0])


def _call(fn, params, tensors):
    """``fn`` with ``tensors`` for its Tensor parameters and a plain number for the others."""
    it = iter(tensors)
    return fn(*(next(it) if p.kind == "tensor" else (True if p.type == "bool" else 2) for p in params))


def _n_tensors(params):
    return sum(p.kind == "tensor" for p in params)


ROWS = _cmeta_rows()


COMMON = {"exp_default", "sin_default", "tanh_default", "sigmoid_default", "mul_Tensor", "add_Tensor",
          "sub_Tensor", "div_Tensor"}


def test_the_elementwise_rows_of_one_or_two_tensors_read_the_cache():
    names = {r[0] for r in ROWS}
    assert COMMON <= names
    assert all(_n_tensors(params) in (1, 2) for _, _, params in ROWS)


def _inputs(kind, dtype, n):
    rng = np.random.default_rng(0)
    if kind == "small":
        arrays = [rng.uniform(0.5, 1.5, (3, 4)).astype(dtype) for _ in range(n)]
    elif kind == "one_dim":
        arrays = [rng.uniform(0.5, 1.5, 7).astype(dtype) for _ in range(n)]
    elif kind == "large":  # the general path (parallel kernels; the test turns fusion off)
        arrays = [rng.uniform(0.5, 1.5, settings.small_array).astype(dtype) for _ in range(n)]
    elif kind == "transposed":  # not C-contiguous: no cache, and the result is not given one
        arrays = [rng.uniform(0.5, 1.5, (4, 3)).astype(dtype).T for _ in range(n)]
    else:  # a tensor and a 0-dim one: metadata differ
        arrays = [rng.uniform(0.5, 1.5, (3, 4)).astype(dtype)] + [np.array(1.25, dtype)] * (n - 1)
    return [torch.from_numpy(a).requires_grad_() for a in arrays]


@pytest.mark.parametrize("kind", ["small", "one_dim", "large", "transposed", "mixed"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_result_cache_describes_its_array(kind, dtype):
    checked = 0
    fusion = fusion_threshold()
    if kind == "large":
        set_fusion_threshold(None)
    try:
        checked = _check_rows(kind, dtype)
    finally:
        set_fusion_threshold(fusion)
    assert checked >= (len(COMMON) if kind == "large" else len(ROWS) // 2)


def _check_rows(kind, dtype):
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fn, params in ROWS:
            if kind == "large" and name not in COMMON:
                continue  # (each row's parallel kernels compile on first use: a few rows show the path)
            n_tensors = _n_tensors(params)
            if kind == "mixed" and n_tensors == 1:
                continue
            inputs = _inputs(kind, dtype, n_tensors)
            try:
                out = _call(fn, params, inputs)
                again = _call(fn, params, [out] * n_tensors)  # a cached input (from the producer)
            except (RuntimeError, TypeError, ValueError):
                continue  # a row that refuses these arguments (an integer-only Scalar, ...)
            for t in inputs + [out, again]:
                checked += _check(t)
            if kind == "transposed":
                assert not _check(inputs[0])
                assert not _check(out) or out._array.flags.c_contiguous
    return checked


def test_a_result_like_its_inputs_is_given_their_metadata_without_reading_its_array():
    x = torch.ones(2, 3, requires_grad=True)
    m = contiguous_meta(x)
    y = x.exp() * x
    assert y._cmeta is m and y._cmeta_of is y._array
    assert y.grad_fn._in_meta is m.same2 and y.grad_fn.next_functions[0][0]._in_meta is m.one


def test_a_deferred_value_has_no_cache_and_an_op_on_it_does_not_compute_it():
    x = torch.ones(settings.fusion_threshold + 10, dtype=torch.float64)
    y = x.exp()
    assert y._lazy and y._cmeta is None
    z = y.sin()
    assert y._lazy and z._lazy  # still deferred: reading the cache did not compute y
    np.testing.assert_allclose(z.numpy(), np.sin(np.exp(np.ones(x.numel()))))


def test_replacing_the_array_drops_the_cache():
    x = torch.ones(6)
    assert contiguous_meta(x) is not None and _check(x)
    x.data = torch.ones(2, 3, dtype=torch.float64)
    assert x._cmeta is None and x._cmeta_of is None
    assert contiguous_meta(x).shape == (2, 3)
    x.resize_(4)
    assert x._cmeta is None
    assert (x * x).shape == (4,) and _check(x)
    x.set_(torch.zeros(5, dtype=torch.float64))
    assert x._cmeta is None and (x + x).shape == (5,)


def test_an_in_place_op_keeps_the_array_and_its_valid_cache():
    x = torch.ones(4)
    m = contiguous_meta(x)
    x.mul_(2).add_(1)
    assert contiguous_meta(x) is m and _check(x)


def test_reshaping_a_users_array_in_place_does_not_reshape_the_tensor_as_in_torch():
    for lib in (torch, T):
        a = np.arange(6.0)
        t = lib.from_numpy(a)
        a.shape = (2, 3)
        assert tuple(t.shape) == (6,)
        assert tuple((t * t).shape) == (6,)
        n = t.numpy()
        n.shape = (3, 2)
        assert tuple(t.shape) == (6,)
        n[0, 0] = 7.0  # the memory is shared
        assert float(t[0]) == 7.0 and a[0, 0] == 7.0
        assert t.numpy() is not t.numpy()


def test_a_non_contiguous_array_gets_no_cache_and_the_ops_still_agree_with_torch():
    a = np.random.default_rng(1).standard_normal((3, 5))
    x = torch.from_numpy(a.T.copy().T).requires_grad_()  # F-order
    assert contiguous_meta(x) is None
    y = (x.exp() * x).sin()
    y.sum().backward()
    X = T.from_numpy(a).requires_grad_()
    (X.exp() * X).sin().sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), (X.exp() * X).sin().detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), X.grad.numpy(), rtol=1e-12)
