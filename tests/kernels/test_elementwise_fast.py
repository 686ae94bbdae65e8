"""The fixed-arity entry points of generated kernels (``call1/2/3``, ``forward1/2``) that generated
nodes and ops call: they must give exactly what the general entry points give (``k((a, b), ())`` and
``k.forward((t, u), scalars)``) for every operand form, and take the general path for anything but
small same-shape float arrays."""
import numpy as np
import pytest

import derivgen as torch
from derivgen.generated import kernels as K


def _operands(kind, dtype, rng):
    if kind == "1d":
        return [rng.standard_normal(7).astype(dtype) for _ in range(3)]
    if kind == "2d":
        return [rng.standard_normal((3, 5)).astype(dtype) for _ in range(3)]
    if kind == "0d":
        return [np.array(rng.standard_normal(), dtype) for _ in range(3)]
    if kind == "strided":
        return [rng.standard_normal((4, 6)).astype(dtype)[:, ::2] for _ in range(3)]
    if kind == "broadcast":
        return [rng.standard_normal((3, 5)).astype(dtype), rng.standard_normal(5).astype(dtype),
                rng.standard_normal((3, 1)).astype(dtype)]
    if kind == "expanded":  # a broadcast single value (sum's backward expands one) first, then last
        return [np.broadcast_to(np.array(rng.standard_normal(), dtype), (3, 5)), rng.standard_normal((3, 5)).astype(dtype),
                np.broadcast_to(np.array(rng.standard_normal(), dtype), (3, 5))]
    if kind == "expanded_row":  # stride 0 on one dim only: not a single value
        return [np.broadcast_to(rng.standard_normal(5).astype(dtype), (3, 5)), rng.standard_normal((3, 5)).astype(dtype),
                rng.standard_normal((3, 5)).astype(dtype)]
    if kind == "mixed":
        return [rng.standard_normal(6).astype(np.float32), rng.standard_normal(6),
                rng.standard_normal(6).astype(np.float32)]
    raise AssertionError(kind)


KINDS = ["1d", "2d", "0d", "strided", "broadcast", "expanded", "expanded_row", "mixed"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_call_entry_points_match_the_general_path(kind, dtype):
    rng = np.random.default_rng(0)
    a, b, c = _operands(kind, dtype, rng)
    cases = [(K.exp_backward_self, (a, b)),          # grad * result
             (K.sin_backward_self, (a, b)),
             (K.neg_backward_self, (a,)),
             (K.maximum_backward_self, (a, b, c))]
    for k, args in cases:
        fast = getattr(k, f"call{len(args)}")(*args)
        general = k(args, ())
        assert fast.dtype == general.dtype and fast.shape == general.shape, k
        assert fast.strides == general.strides, k
        np.testing.assert_array_equal(fast, general)
    with_scalars = [(K.sub_Tensor_backward_other, (a,), (2.5,)),      # -grad * alpha
                    (K.mul_Scalar_backward_self, (a,), (-3,)),
                    (K.lerp_Scalar_backward_self, (a,), (0.25,))]
    for k, args, scalars in with_scalars:
        fast = getattr(k, f"call{len(args)}")(*args, scalars)
        general = k(args, scalars)
        assert fast.dtype == general.dtype and fast.shape == general.shape, k
        np.testing.assert_array_equal(fast, general)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_entry_points_match_the_general_path(kind, dtype):
    rng = np.random.default_rng(1)
    a, b, _ = (torch.from_numpy(x) for x in _operands(kind, dtype, rng))
    for fast, general in [
            (K.sin_forward.forward1(a), K.sin_forward.forward((a,), ())),
            (K.mul_Tensor_forward.forward2(a, b), K.mul_Tensor_forward.forward((a, b), ())),
            (K.add_Tensor_forward.forward2(a, b, (2.5,)), K.add_Tensor_forward.forward((a, b), (2.5,))),
            (K.add_Tensor_forward.forward2(a, torch.tensor(3.0), (1,)),
             K.add_Tensor_forward.forward((a, torch.tensor(3.0)), (1,)))]:
        assert fast.dtype == general.dtype and fast.shape == general.shape
        np.testing.assert_array_equal(fast, general)


def test_forward_entry_points_keep_integer_and_bool_rules():
    i = torch.tensor([1, 2, 3])
    f = torch.tensor([1.0, -2.0, 0.5])
    product = K.mul_Tensor_forward.forward2(i, i)
    assert product.dtype == np.int64
    np.testing.assert_array_equal(product, [1, 4, 9])
    above = K.gt_Tensor_forward.forward2(f, torch.tensor([0.0, 0.0, 1.0]))
    assert above.dtype == np.bool_
    np.testing.assert_array_equal(above, [True, False, False])
    assert K.exp_forward.forward1(i).dtype == torch.get_default_dtype().np   # ints compute in floats


def test_scalars_take_the_kernels_dtype():
    a = torch.from_numpy(np.full(4, 1.0, np.float32))
    out = K.add_Tensor_forward.forward2(a, a, (1e-8,))   # alpha: a float32 kernel computes in float32
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.float32(1.0) + np.float32(1.0) * np.float32(1e-8))


def test_compiled_entry_points_are_kept_per_dtype_and_give_the_dispatchers_results():
    k = K.tanh_backward_self
    rng = np.random.default_rng(2)
    for dtype in (np.float64, np.float32, np.float64):
        g, r = rng.standard_normal(9).astype(dtype), rng.standard_normal(9).astype(dtype)
        first = k.call2(g, r)
        assert np.dtype(dtype) in k._entry          # the second call skips Numba's dispatcher
        second = k.call2(g, r)
        assert second.dtype == dtype
        np.testing.assert_array_equal(first, second)
        np.testing.assert_array_equal(second, k((g, r), ()))
    ro = np.arange(9, dtype=np.float32)
    ro.flags.writeable = False                      # read-only inputs are read the same way
    np.testing.assert_array_equal(k.call2(ro, ro), k((ro.copy(), ro.copy()), ()))


@pytest.mark.parametrize("alpha", [0.1, 1 / 3, 1e-8, -2.5e-40, 3.3e38, 7, -(2 ** 40), True])
def test_number_arguments_round_like_the_general_path(alpha):
    # the fast path hands a plain int/float to the compiled kernel, which converts it to float32 itself
    rng = np.random.default_rng(3)
    a, b = (torch.from_numpy(rng.standard_normal(6).astype(np.float32)) for _ in range(2))
    K.add_Tensor_forward.forward2(a, b, (1,))       # make sure the entry point is known
    if alpha is True:  # torch refuses a bool alpha for a float result, on the fast path as on the general one
        with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results."):
            K.add_Tensor_forward.forward2(a, b, (alpha,))
    else:
        fast = K.add_Tensor_forward.forward2(a, b, (alpha,))
        general = K.add_Tensor_forward((a.numpy(), b.numpy()), (np.float32(alpha),))
        np.testing.assert_array_equal(fast, general)
    g = K.sub_Tensor_backward_other.call1(a.numpy(), (alpha,))
    np.testing.assert_array_equal(g, K.sub_Tensor_backward_other((a.numpy(),), (alpha,)))


NUMBERS = [0.1, 1 / 3, 3.3e38, -2.5e-40, 16777217, 2 ** 62 + 2 ** 38 + 1, -(2 ** 61) - 12345, 7]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wrapped_numbers_round_like_the_general_path(dtype):
    # ``x * 0.1``, ``x + 1``, ``w.mul_(0.9)``: the compiled kernels are handed the Python number and
    # convert it themselves; the result must be the one of the number converted to the tensor's dtype
    rng = np.random.default_rng(5)
    x = rng.standard_normal(6).astype(dtype)
    t = torch.from_numpy(x.copy())
    for _ in range(2):  # the first call goes through Numba's dispatcher, the second through the kept entry
        for v in NUMBERS:
            c = np.dtype(dtype).type(v)
            with np.errstate(over="ignore"):
                np.testing.assert_array_equal((t * v).numpy(), x * c)
                np.testing.assert_array_equal((t + v).numpy(), x + c)
                np.testing.assert_array_equal((t - v).numpy(), x - c)
                zero_dim = torch.tensor(v)  # a 0-dim tensor, not wrapped (float32 for a float)
                np.testing.assert_array_equal((t + zero_dim).numpy(), x + np.dtype(dtype).type(zero_dim.item()))
                w = torch.from_numpy(x.copy())
                w.mul_(v)
                np.testing.assert_array_equal(w.numpy(), x * c)
                w = torch.from_numpy(x.copy())
                w.add_(v, alpha=2)
                np.testing.assert_array_equal(w.numpy(), x + c * np.dtype(dtype).type(2))
    for k in (K.mul_Tensor_forward.k1d, K.add_Tensor_forward.k1d, K.mul_Tensor_forward.inplace):
        for sig in k.signatures:  # numbers reach the dispatcher converted: no version for Python numbers
            arrays = [a for a in sig if hasattr(a, "dtype") and hasattr(a, "ndim")]
            numbers = [a for a in sig if a not in arrays]
            if arrays and all(str(a.dtype) == "float32" for a in arrays):  # a float32 kernel
                # (a Python float types as float64, an int as int64)
                assert not any(str(n) in ("float64", "int64") for n in numbers), sig


def _rows_case(kind, dtype, rng):
    x = rng.standard_normal((5, 7)).astype(dtype) if dtype != np.int64 else rng.integers(-9, 9, (5, 7))
    other = {"row": x[0].copy(), "row2d": x[:1].copy(), "one": np.array(x[0, 0]), "one2d": x[:1, :1].copy(),
             "column": x[:, :1].copy()}[kind]
    return x, other


@pytest.mark.parametrize("kind", ["row", "row2d", "one", "one2d", "column"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_bias_row_kernels_match_numpy(kind, dtype):
    """(R, C) with a row, a number or a column: the _rows variant (or the strided one for a column)
    gives numpy's broadcasting result, for arithmetic, comparisons and a three-array kernel."""
    rng = np.random.default_rng(4)
    x, other = _rows_case(kind, dtype, rng)
    tx, to = torch.from_numpy(x), torch.from_numpy(other)
    np.testing.assert_array_equal(K.add_Tensor_forward.forward2(tx, to, (2,)), x + 2 * other)
    np.testing.assert_array_equal(K.mul_Tensor_forward.forward2(to, tx), other * x)
    np.testing.assert_array_equal(K.gt_Tensor_forward.forward2(tx, to), x > other)
    if dtype != np.int64:
        mask = x > 0
        np.testing.assert_array_equal(K.where_self_forward.forward((torch.from_numpy(mask), tx, to)),
                                      np.where(mask, x, other))
    if kind in ("row", "row2d"):  # (a one-element operand is read as a number by the 1-D variant)
        assert K.add_Tensor_forward.rows.signatures, "the bias-row variant ran"


def test_bias_add_gradients_match_torch_spelling():
    # x @ W + b: the forward runs the _rows variant, the bias gradient is the column sum
    rng = np.random.default_rng(5)
    x = torch.from_numpy(rng.standard_normal((6, 4)).astype(np.float32))
    w = torch.from_numpy(rng.standard_normal((4, 3)).astype(np.float32)).requires_grad_()
    b = torch.from_numpy(rng.standard_normal(3).astype(np.float32)).requires_grad_()
    out = x @ w + b
    np.testing.assert_allclose(out.detach().numpy(), x.numpy() @ w.detach().numpy() + b.detach().numpy(), rtol=1e-6)
    (out * out).sum().backward()
    g = 2 * out.detach().numpy()
    np.testing.assert_allclose(b.grad.numpy(), g.sum(0), rtol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), x.numpy().T @ g, rtol=1e-5)


@pytest.mark.parametrize("shape", [(256, 10), (1, 4), (7, 1), (3, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bias_gradient_sums_are_numpys_sums_bit_for_bit(shape, dtype):
    from derivgen.core.sizes import sum_to
    g = np.random.default_rng(6).standard_normal(shape).astype(dtype)
    for target in [(shape[1],), (1, shape[1])]:
        got = sum_to(g, target)
        assert got.shape == target and got.dtype == dtype
        np.testing.assert_array_equal(got, np.add.reduce(g, axis=0).reshape(target))
    np.testing.assert_array_equal(sum_to(g[:, ::2], (1, g[:, ::2].shape[1])),      # strided: numpy's path
                                  np.add.reduce(g[:, ::2], axis=0, keepdims=True))


def test_an_expanded_single_value_takes_the_direct_path(monkeypatch):
    # sum's backward hands on a stride-0 view of one value: the fixed-arity calls copy it (a few
    # elements) and run the compiled kernel instead of the general broadcasting path
    from derivgen.kernels import dispatch
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    g = np.broadcast_to(np.array(0.5, np.float32), x.shape)
    expected = {1: K.neg_backward_self((g,), ()), 2: K.exp_backward_self((g, x), ()),
                3: K.maximum_backward_self((g, x, x * 2), ())}
    K.neg_backward_self.call1(g), K.exp_backward_self.call2(g, x), K.maximum_backward_self.call3(g, x, x * 2)

    def general(*args, **kwargs):
        raise AssertionError("the general path ran")
    monkeypatch.setattr(dispatch, "run_elementwise", general)
    got = {1: K.neg_backward_self.call1(g), 2: K.exp_backward_self.call2(g, x),
           3: K.maximum_backward_self.call3(g, x, x * 2)}
    for n in expected:
        assert got[n].flags.c_contiguous and got[n].strides == expected[n].strides
        np.testing.assert_array_equal(got[n], expected[n])
    row = np.broadcast_to(x[0], x.shape)  # stride 0 on one dim only: still the general path
    with pytest.raises(AssertionError, match="general path"):
        K.exp_backward_self.call2(row, x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_matrix_and_a_row_take_the_direct_rows_path(monkeypatch, dtype):
    # x @ W + b (and b + x @ W): the _rows variant called directly, without the general path's
    # promotion and broadcasting, with the general path's result bit for bit
    from derivgen.kernels import dispatch
    rng = np.random.default_rng(7)
    x = rng.standard_normal((9, 5)).astype(dtype)
    b = rng.standard_normal(5).astype(dtype)
    tx, tb = torch.from_numpy(x), torch.from_numpy(b)
    expected = {"add": K.add_Tensor_forward((x, b), (3,)), "radd": K.add_Tensor_forward((b, x), (1,)),
                "mul": K.mul_Tensor_forward((x, b), ())}
    K.add_Tensor_forward.forward2(tx, tb, (3,))  # the first call per dtype goes through the dispatcher

    def general(*args, **kwargs):
        raise AssertionError("the general path ran")
    monkeypatch.setattr(dispatch, "run_elementwise", general)
    monkeypatch.setattr(elementwise_module(), "run_elementwise", general)
    got = {"add": K.add_Tensor_forward.forward2(tx, tb, (3,)), "radd": K.add_Tensor_forward.forward2(tb, tx, (1,)),
           "mul": K.mul_Tensor_forward.forward2(tx, tb)}
    for name in expected:
        assert got[name].dtype == dtype and got[name].shape == x.shape
        np.testing.assert_array_equal(got[name], expected[name])
    np.testing.assert_array_equal(got["add"], x + 3 * b)
    # what the direct path leaves to the general one: another dtype, a comparison's bool result, a
    # column, a row of the wrong length (the general path's error)
    for t, u in [(tx, torch.from_numpy(b.astype(np.float64 if dtype == np.float32 else np.float32))), (tx, torch.from_numpy(x[:, :1].copy())),
                 (tx, torch.from_numpy(b[:4].copy()))]:
        with pytest.raises(AssertionError, match="general path"):
            K.add_Tensor_forward.forward2(t, u, (1,))
    with pytest.raises(AssertionError, match="general path"):
        K.gt_Tensor_forward.forward2(tx, tb)


def elementwise_module():
    import derivgen.ops.elementwise as module
    return module
