"""In-place elementwise ops that record nothing (``w.sub_(lr * w.grad)`` under no_grad) and a tensor
combined with a Python number (``lr * g``) have a direct path in derivgen; these tests pin what both
paths must give: values, the version bump, and the refusals of the general path. Each body runs
against derivgen and PyTorch (the ``torch`` fixture)."""
import warnings

import numpy as np
import pytest

import derivgen

RNG = np.random.default_rng(7)


def _arrays(shape, dtype):
    a = RNG.standard_normal(shape).astype(dtype)
    b = (RNG.standard_normal(shape) + 3.0).astype(dtype)  # away from 0: div_ stays finite
    return a, b


BINARY = {
    "add_": lambda a, b: a + b,
    "sub_": lambda a, b: a - b,
    "mul_": lambda a, b: a * b,
    "div_": lambda a, b: a / b,
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(8,), (4, 5), (2, 3, 4)])
@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("grad_mode", ["no_grad", "enabled"])
def test_binary_inplace_values_and_version(torch, name, shape, dtype, grad_mode):
    a, b = _arrays(shape, dtype)
    x, y = torch.from_numpy(a.copy()), torch.from_numpy(b.copy())
    if grad_mode == "no_grad":
        with torch.no_grad():
            out = getattr(x, name)(y)
    else:
        out = getattr(x, name)(y)  # nothing requires grad: nothing is recorded either
    assert out is x
    assert x._version == 1 and y._version == 0
    assert x.grad_fn is None
    np.testing.assert_array_equal(x.numpy(), BINARY[name](a, b))
    np.testing.assert_array_equal(y.numpy(), b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_alpha_is_applied_in_the_operand_dtype(torch, dtype):
    a, b = _arrays((16,), dtype)
    x, y = torch.from_numpy(a.copy()), torch.from_numpy(b)
    with torch.no_grad():
        x.sub_(y, alpha=0.1).add_(y, alpha=3)
    expected = (a - dtype(0.1) * b) + dtype(3) * b
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-6 if dtype == np.float32 else 1e-15)
    assert x._version == 2


def test_self_as_operand(torch):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = torch.from_numpy(a.copy())
    with torch.no_grad():
        x.add_(x)
        x.mul_(x)
    np.testing.assert_array_equal(x.numpy(), (2 * a) ** 2)
    assert x._version == 2


def test_partial_overlap_is_still_refused(torch):
    x = torch.arange(8.0)
    with torch.no_grad():
        with pytest.raises(RuntimeError, match="unsupported operation: some elements of the input tensor and "
                                               "the written-to tensor refer to a single memory location"):
            x[1:].add_(x[:-1])


def test_arrays_that_are_numpy_views_of_disjoint_memory_take_the_direct_path(torch, monkeypatch):
    # from_numpy hands the tensor a view of the caller's array: the direct path checks its bounds
    # rather than refusing every array that does not own its memory
    memory = np.arange(10, dtype=np.float32)
    x, y = torch.from_numpy(memory[:5]), torch.from_numpy(memory[5:])
    if torch is derivgen:
        from derivgen.ops.elementwise import ElementwiseOp
        calls = []
        into2 = ElementwiseOp.into2
        monkeypatch.setattr(ElementwiseOp, "into2", lambda *a: calls.append(into2(*a)) or calls[-1])
    with torch.no_grad():
        x.sub_(y)
    np.testing.assert_array_equal(memory, [-5, -5, -5, -5, -5, 5, 6, 7, 8, 9])
    assert x._version == 1
    if torch is derivgen:
        assert calls == [True]


def test_view_written_in_place_updates_its_base(torch):
    base = torch.zeros(2, 4)
    row = base[1]
    with torch.no_grad():
        row.add_(torch.ones(4))
    np.testing.assert_array_equal(base.numpy(), [[0, 0, 0, 0], [1, 1, 1, 1]])
    assert base._version == 1 and row._version == 1


def test_mixed_dtypes_take_the_promotion_rules(torch):
    x = torch.ones(4, dtype=torch.float32)
    y = torch.full((4,), 0.5, dtype=torch.float64)
    with torch.no_grad():
        x.add_(y)
    assert x.dtype == torch.float32
    np.testing.assert_array_equal(x.numpy(), np.full(4, 1.5, np.float32))
    i = torch.ones(4, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.add_(torch.ones(4))


def test_leaf_update_under_no_grad_invalidates_what_was_saved(torch):
    w = torch.ones(3, requires_grad=True)
    x = torch.full((3,), 2.0, requires_grad=True)
    loss = (x * w).sum()  # saves w for x's gradient
    with torch.no_grad():
        w.sub_(torch.full((3,), 0.5))
    assert w.is_leaf and w.requires_grad and w._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_leaf_requiring_grad_is_refused_with_grad_enabled(torch):
    w = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        w.add_(torch.ones(3))


def test_inference_tensor_is_refused_outside_inference_mode(torch):
    with torch.inference_mode():
        t = torch.ones(3)
    with torch.no_grad():
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
            t.mul_(torch.ones(3))


UNARY = {
    "sigmoid_": lambda a: 1 / (1 + np.exp(-a)),
    "tanh_": np.tanh,
    "exp_": np.exp,
    "neg_": np.negative,
    "relu_": lambda a: np.maximum(a, 0),
    "abs_": np.abs,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_inplace(torch, name):
    a = RNG.standard_normal((3, 5))
    x = torch.from_numpy(a.copy())
    with torch.no_grad():
        assert getattr(x, name)() is x
    assert x._version == 1
    np.testing.assert_allclose(x.numpy(), UNARY[name](a), rtol=1e-14, atol=1e-300)


def test_pow_with_number_exponent(torch):
    a = np.abs(RNG.standard_normal(10)).astype(np.float32) + 0.5
    x = torch.from_numpy(a.copy())
    with torch.no_grad():
        x.pow_(2)
    np.testing.assert_allclose(x.numpy(), a * a, rtol=1e-6)
    assert x._version == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("number", [1e-6, 3, -2.5])
def test_tensor_times_number(torch, dtype, number):
    a = RNG.standard_normal((5, 7)).astype(dtype)
    g = torch.from_numpy(a)
    for out in (number * g, g * number):
        assert out.dtype == g.dtype
        np.testing.assert_array_equal(out.numpy(), a * dtype(number))
    out = g + number
    np.testing.assert_array_equal(out.numpy(), a + dtype(number))


# ---- zero_ / fill_ with a number: the direct fill (derivgen.ops.inplace.fill_directly) -------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("shape", [(), (7,), (64, 100), (3, 4, 5)])
@pytest.mark.parametrize("call", ["zero_", "fill_(2.5)", "fill_(-0.0)", "fill_(3)"])
def test_fill_values_and_version(torch, call, shape, dtype):
    x = torch.from_numpy(RNG.standard_normal(shape).astype(dtype))
    with torch.no_grad():
        out = x.zero_() if call == "zero_" else x.fill_(float(call[6:-1]) if "." in call else int(call[6:-1]))
    assert out is x
    assert x._version == 1
    expected = np.zeros(shape, dtype) if call == "zero_" else np.full(shape, float(call[6:-1]), dtype)
    np.testing.assert_array_equal(x.numpy(), expected)
    assert np.array_equal(np.signbit(x.numpy()), np.signbit(expected))  # -0.0 stays negative, 0 does not


def test_fill_of_a_leaf_that_requires_grad_refuses_with_grad_mode_on(torch):
    w = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        w.zero_()
    with torch.no_grad():
        w.fill_(2.0)  # allowed without recording
    assert w.tolist() == [2.0, 2.0, 2.0] and w.grad_fn is None and w.requires_grad


def test_fill_of_a_view_writes_through_and_shares_the_version(torch):
    base = torch.ones(2, 3)
    row = base[1]
    row.zero_()
    assert base.tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
    assert base._version == row._version == 1


def test_fill_of_a_saved_tensor_is_caught_by_backward(torch):
    w = torch.ones(3, requires_grad=True)
    x = torch.full((3,), 2.0)
    y = (w * x).sum()
    with torch.no_grad():
        x.zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_fill_of_a_tensor_that_requires_grad_is_recorded(torch):
    w = torch.ones(3, requires_grad=True)
    h = w * 2
    h.fill_(5.0)
    assert type(h.grad_fn).__name__ == "FillBackward2"  # fill_.Scalar, in-place
    h.sum().backward()
    assert w.grad.tolist() == [0.0, 0.0, 0.0]


def test_fill_waits_for_deferred_values_that_read_the_tensor():
    n = 1 << 18  # above the fusion threshold: ``y`` is deferred and reads ``x`` when computed
    x = derivgen.ones(n)
    y = x * 3
    with derivgen.no_grad():
        x.zero_()
    assert float(y.sum()) == 3.0 * n and float(x.sum()) == 0.0


# ---- Tensor.clamp with one number bound: the Scalar row without the argument parser -----------------

@pytest.mark.parametrize("kwargs", [{"min": 0}, {"min": -0.5}, {"max": 0.25}, {"max": 1}])
def test_clamp_with_one_number_bound(torch, kwargs):
    a = RNG.standard_normal((4, 5))
    x = torch.from_numpy(a.copy()).requires_grad_()
    y = x.clamp(**kwargs)
    assert type(y.grad_fn).__name__ == "ClampBackward1"
    lo, hi = kwargs.get("min"), kwargs.get("max")
    np.testing.assert_array_equal(y.detach().numpy(), np.clip(a, lo, hi))
    y.sum().backward()
    inside = (a >= (lo if lo is not None else -np.inf)) & (a <= (hi if hi is not None else np.inf))
    np.testing.assert_array_equal(x.grad.numpy(), inside.astype(np.float64))


def test_clamp_with_a_tensor_bound_takes_the_tensor_row(torch):
    x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = x.clamp(min=torch.tensor(0.0))
    assert type(y.grad_fn).__name__ == "ClampBackward0"
    assert y.tolist() == [0.0, 0.5, 2.0]


def test_clamp_of_an_int_tensor_with_a_float_bound_promotes(torch):
    y = torch.tensor([1, 5, 9]).clamp(max=4.5)
    assert y.dtype == torch.float32 and y.tolist() == [1.0, 4.5, 4.5]


# ---- clamp_ with number bounds that records nothing: clamped in place (ops.inplace.clamp_directly) ---

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bounds", [{"min": 0}, {"min": -0.5, "max": 0.25}, {"max": 1}, {"min": 1.0, "max": -1.0},
                                    {"min": 3.4e38}])
@pytest.mark.parametrize("grad_mode", ["no_grad", "enabled"])
def test_clamp_in_place_values_and_version(torch, dtype, bounds, grad_mode):
    a = np.array([-2.0, -0.5, -0.0, 0.0, 0.1, 0.25, 1.0, 3.0, np.nan, np.inf, -np.inf], dtype)
    x = torch.from_numpy(a.copy())
    with (torch.no_grad() if grad_mode == "no_grad" else torch.enable_grad()):
        out = x.clamp_(**bounds)
    assert out is x and x._version == 1 and x.grad_fn is None
    t = np.dtype(dtype).type
    want = a.copy()
    if "min" in bounds:
        want = np.where(want < t(bounds["min"]), t(bounds["min"]), want)
    if "max" in bounds:
        want = np.where(want > t(bounds["max"]), t(bounds["max"]), want)
    np.testing.assert_array_equal(x.numpy(), want)
    assert np.array_equal(np.signbit(x.numpy()), np.signbit(want))


def test_clamp_in_place_takes_the_direct_path_only_where_it_cannot_differ(monkeypatch):
    from derivgen.generated import ops
    calls = []
    general = ops.clamp__default

    def counted(*args, **kwargs):
        calls.append(args)
        return general(*args, **kwargs)
    monkeypatch.setattr(ops, "clamp__default", counted)
    from derivgen import tensor_methods
    tensor_methods.install(ops)  # the methods bound to the counting row
    try:
        x = derivgen.arange(6.0) - 2
        with derivgen.no_grad():
            x.clamp_(0, 2)
            x.clamp_(min=1)
            x.double().clamp_(max=0.5)
        assert calls == [] and x.tolist() == [1.0, 1.0, 1.0, 1.0, 2.0, 2.0]
        base = derivgen.tensor([-1.0, -2.0, 3.0])
        base[1:].clamp_(min=0)                                   # a view: the general path (shared version)
        assert base.tolist() == [-1.0, 0.0, 3.0] and base._version == 1
        derivgen.tensor([1.0, -3.0]).clamp_(min=float("nan"))    # NaN bound: the general path's rule
        derivgen.arange(4).clamp_(1, 2)                          # an int tensor
        w = derivgen.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            w.clamp_(0, 1)                                       # grad mode on: refused by the general path
        with pytest.raises(RuntimeError, match="without overflow"):
            derivgen.tensor([1.0]).clamp_(max=1e39)              # beyond float32: torch's error
        assert len(calls) == 5
        y = (derivgen.ones(3, requires_grad=True) * 2).clamp_(0, 1)  # recorded: ClampBackward1
        assert type(y.grad_fn).__name__ == "ClampBackward1" and len(calls) == 6
    finally:
        monkeypatch.undo()
        tensor_methods.install(ops)


# ---- add/sub with a Python-number alpha: the .Tensor row without the argument parser ---------------

@pytest.mark.parametrize("name", ["add", "add_", "sub", "sub_"])
@pytest.mark.parametrize("alpha", [2, -0.5, 1e-3])
def test_alpha_keyword_values_version_and_node(torch, name, alpha):
    a, b = _arrays((4, 5), np.float64)
    x, y = torch.from_numpy(a.copy()), torch.from_numpy(b.copy())
    with torch.no_grad():
        out = getattr(x, name)(y, alpha=alpha)
    sign = 1 if name.startswith("add") else -1
    np.testing.assert_allclose(out.numpy(), a + sign * alpha * b, rtol=1e-15)
    assert (out is x) == name.endswith("_") and x._version == (1 if name.endswith("_") else 0)
    w = torch.from_numpy(a.copy()).requires_grad_()
    z = getattr(w * 1, name)(torch.from_numpy(b.copy()).requires_grad_(), alpha=alpha)
    assert type(z.grad_fn).__name__ == ("AddBackward0" if name.startswith("add") else "SubBackward0")
    z.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.ones((4, 5)))


def test_alpha_refusals_match(torch):
    i = torch.tensor([1, 2, 3])
    with pytest.raises(RuntimeError) as err:
        i.add_(torch.tensor([1, 1, 1]), alpha=0.5)
    assert "alpha must not be a floating point number" in str(err.value)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        torch.ones(2, requires_grad=True).sub_(torch.ones(2), alpha=2)
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results."):
        torch.ones(2).add(torch.ones(2), alpha=True)


# ---- a tensor over read-only memory -----------------------------------------------------------------

READ_ONLY_WRITES = {
    "zero_": lambda t: t.zero_(), "fill_": lambda t: t.fill_(2.0), "add_": lambda t: t.add_(1),
    "sub_ alpha": lambda t: t.sub_(t, alpha=1), "mul_ tensor": lambda t: t.mul_(t), "exp_": lambda t: t.exp_(),
    "clamp_": lambda t: t.clamp_(min=0), "copy_": lambda t: t.copy_(t * 0), "setitem": lambda t: t.__setitem__(0, 5.0),
    "index setitem": lambda t: t.__setitem__(derivgen.tensor([0]), 5.0), "normal_": lambda t: t.normal_(),
}


@pytest.mark.parametrize("name", sorted(READ_ONLY_WRITES))
def test_in_place_write_into_read_only_memory_is_refused_clearly(name):
    # torch writes there (undefined behaviour, after a warning at from_numpy); numpy cannot, so derivgen
    # refuses before any kernel sees the array, and the array is left as it was
    a = np.arange(1.0, 4.0, dtype=np.float32)
    a.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # from_numpy warns (once per process, as torch) of the read-only array
        t = derivgen.from_numpy(a)
    with pytest.raises(RuntimeError, match="memory is read-only .* cannot be modified in place. Please clone"):
        READ_ONLY_WRITES[name](t)
    assert a.tolist() == [1.0, 2.0, 3.0] and t._version == 0
    c = t.clone()
    READ_ONLY_WRITES[name](c)  # a copy is writable


# ---- a float tensor with a number: in place, comparisons, copy_ -------------------------------------

NUMBER_INPLACE = {
    "add_": lambda a, v: a + v, "sub_": lambda a, v: a - v, "mul_": lambda a, v: a * v, "div_": lambda a, v: a / v,
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(9,), (4, 5)])
@pytest.mark.parametrize("number", [0.1, 3, -2.5])
@pytest.mark.parametrize("name", sorted(NUMBER_INPLACE))
def test_inplace_with_a_number_values_version_and_no_promotion(torch, name, number, shape, dtype):
    a = RNG.standard_normal(shape).astype(dtype)
    x = torch.from_numpy(a.copy())
    with torch.no_grad():
        out = getattr(x, name)(number)
    assert out is x and x._version == 1 and x.dtype == torch.from_numpy(a).dtype
    np.testing.assert_array_equal(x.numpy(), NUMBER_INPLACE[name](a, dtype(number)))


@pytest.mark.parametrize("operand", ["float64 0-dim", "int 0-dim"])
def test_inplace_with_a_0_dim_tensor_reads_it_as_a_number(torch, operand):
    a = RNG.standard_normal(6).astype(np.float32)
    x = torch.from_numpy(a.copy())
    v = torch.tensor(0.3, dtype=torch.float64) if operand == "float64 0-dim" else torch.tensor(2)
    with torch.no_grad():
        x.mul_(v).sub_(v, alpha=2)
    value = np.float32(v.item())
    np.testing.assert_array_equal(x.numpy(), a * value - np.float32(2) * value)
    assert x.dtype == torch.float32 and x._version == 2 and v._version == 0


def test_inplace_with_an_element_of_itself_is_refused(torch):
    x = torch.arange(1.0, 5.0)
    with torch.no_grad(), pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to"):
        x.mul_(x[1])  # a partial overlap, however it is read
    assert x.tolist() == [1.0, 2.0, 3.0, 4.0] and x._version == 0


def test_inplace_number_refusals_of_the_general_path_remain(torch):
    i = torch.arange(4)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.mul_(2.5)
    b = torch.ones(3, dtype=torch.bool)
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor is not supported"):
        b.sub_(1)
    f = torch.ones(3)
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor is not supported"):
        f.sub_(True)
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
        f.add_(1.0, alpha=True)


def test_inplace_with_a_number_is_recorded_when_grad_is_needed(torch):
    w = torch.ones(3, requires_grad=True)
    y = w * 1
    y.mul_(3.0).add_(1)
    assert y.grad_fn.name() == "AddBackward0" and y.grad_fn.next_functions[0][0].name() == "MulBackward0"
    y.sum().backward()
    assert w.grad.tolist() == [3.0, 3.0, 3.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["lt", "le", "gt", "ge", "eq", "ne"])
@pytest.mark.parametrize("number", [0, 0.5, -1])
def test_comparison_with_a_number(torch, op, number, dtype):
    a = np.array([-1.0, -0.5, 0.0, 0.5, 1.0, np.nan, 0.1], dtype)
    x = torch.from_numpy(a)
    out = getattr(x, f"__{op}__")(number)
    assert out.dtype == torch.bool and out.grad_fn is None
    np.testing.assert_array_equal(out.numpy(), getattr(np, {"lt": "less", "le": "less_equal", "gt": "greater",
                                                            "ge": "greater_equal", "eq": "equal",
                                                            "ne": "not_equal"}[op])(a, dtype(number)))


def test_comparison_of_float32_with_a_float_rounds_the_number_to_float32(torch):
    x = torch.tensor([0.1], dtype=torch.float32)
    assert (x == 0.1).tolist() == [True]  # 0.1 compared in float32, as torch computes
    assert (torch.arange(3) > 0.5).tolist() == [False, True, True]  # an int tensor: promoted, general path


@pytest.mark.parametrize("src_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7,), (3, 4)])
def test_copy_values_version_and_rounding(torch, shape, src_dtype):
    s = RNG.standard_normal(shape).astype(src_dtype)
    x = torch.zeros(shape)
    src = torch.from_numpy(s)
    out = x.copy_(src)
    assert out is x and x._version == 1 and src._version == 0 and x.dtype == torch.float32
    np.testing.assert_array_equal(x.numpy(), s.astype(np.float32))
    s[...] = 0  # a copy, not a view of src
    assert x.numpy().any()


def test_copy_special_cases_keep_torchs_behaviour(torch):
    x = torch.arange(5.0)
    x.copy_(x)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and x._version == 1
    x.copy_(torch.tensor(7.0))  # broadcast
    assert x.tolist() == [7.0] * 5
    x.copy_(torch.arange(5))  # int to float
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    v = x[1:3]
    v.copy_(torch.tensor([9.0, 8.0]))  # a view writes through to its base
    assert x.tolist() == [0.0, 9.0, 8.0, 3.0, 4.0] and x._version == v._version
    w = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        w.copy_(torch.zeros(2))
    y = torch.zeros(2)
    y.copy_(w * 2)  # a source that requires grad is recorded
    assert type(y.grad_fn).__name__ == "CopyBackwards" and y.requires_grad


def test_number_and_copy_calls_take_the_direct_paths(monkeypatch):
    from derivgen.generated import ops
    from derivgen.ops.elementwise import ElementwiseOp

    def general(*args, **kwargs):
        raise AssertionError("the general path ran")
    monkeypatch.setattr(ElementwiseOp, "forward", general)
    monkeypatch.setattr(ops, "copy__default", general)
    x, y = derivgen.ones(4), derivgen.arange(4.0)
    with derivgen.no_grad():
        x.mul_(0.5).add_(2).sub_(y, alpha=0.5).div_(2).addcmul_(y, y, value=0).addcdiv_(y, x, value=0)
        assert (x > 1).tolist() == [True, False, False, False] and (y <= 1).tolist() == [True, True, False, False]
        x.copy_(y)
    assert x.tolist() == y.tolist() and x._version == 7


THREE_OPERANDS = {
    "addcmul_": lambda x, a, b: x.addcmul_(a, b, value=0.1),
    "addcdiv_": lambda x, a, b: x.addcdiv_(a, b, value=-0.5),
    "lerp_": lambda x, a, b: x.lerp_(a, b),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(9,), (3, 4)])
@pytest.mark.parametrize("name", sorted(THREE_OPERANDS))
def test_three_operand_inplace_values_and_version(torch, name, shape, dtype):
    a, b = _arrays(shape, dtype)
    c = RNG.random(shape).astype(dtype)
    x = torch.from_numpy(c.copy())
    with torch.no_grad():
        out = THREE_OPERANDS[name](x, torch.from_numpy(a), torch.from_numpy(b))
    assert out is x and x._version == 1
    strided = np.repeat(b[..., None], 2, axis=-1)[..., 0]  # b's values, not contiguous: the general path
    general = THREE_OPERANDS[name](torch.from_numpy(c.copy()), torch.from_numpy(a), torch.from_numpy(strided))
    np.testing.assert_array_equal(x.numpy(), general.numpy())
