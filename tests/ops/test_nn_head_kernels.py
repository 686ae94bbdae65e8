"""The classification head's one-pass loops (derivgen/ops/forwards/_nn_kernels.py): log_softmax over
the last dim and nll_loss without class weights, forward and backward.

Each is checked against what it replaced (the numpy spelling, which the other cases still use), against
float64 finite differences, and against PyTorch when it is installed: values, gradients, the graph's
node names, ignored rows, special values and the out-of-range target error."""
import numpy as np
import pytest

import derivgen
from derivgen.ops.forwards import nn as fwd_nn
from derivgen.ops.formula_fns import losses

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")


def _numpy_log_softmax(x, d):
    shifted = x - np.max(x, axis=d, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=d, keepdims=True))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(256, 10), (3, 4), (1, 7), (5,), (2, 3, 4), (4, 1)])
def test_log_softmax_rows_match_numpy(dtype, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype) * 5
    out = fwd_nn._log_softmax(x, -1, False)
    assert out.dtype == dtype and out.shape == x.shape
    tol = 2e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(out, _numpy_log_softmax(x, -1), rtol=tol, atol=tol)


def test_log_softmax_rows_special_values_match_numpy():
    x = np.array([[np.nan, 1, 2], [1, np.inf, 0], [-np.inf, -np.inf, -np.inf], [-np.inf, 0, 1],
                  [1e30, -1e30, 0], [3, 3, 3]], np.float32)
    with np.errstate(all="ignore"):
        ref = _numpy_log_softmax(x, 1)
    np.testing.assert_allclose(fwd_nn._log_softmax(x, 1, False), ref, rtol=1e-6, atol=1e-6)


def test_log_softmax_other_layouts_keep_the_numpy_path():
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    for arr, d in ((x, 0), (x.T, 1), (x[:, ::2], 1)):
        np.testing.assert_allclose(fwd_nn._log_softmax(arr, d, False), _numpy_log_softmax(arr, d), rtol=1e-6)


def _cases(rng, dtype):
    for shape in [(256, 10), (7, 3), (1, 5), (5,), (0, 4), (3, 1)]:
        n, c = (1, shape[0]) if len(shape) == 1 else shape
        x = rng.standard_normal(shape).astype(dtype)
        for ignore in (-100, 0):
            t = rng.integers(0, c, n)
            yield x, (t.reshape(()) if len(shape) == 1 else t), ignore


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nll_unweighted_matches_the_weighted_path(dtype):
    """Without weights the loop gives what the general path gives with all-ones weights, in forward and
    backward, except that rows whose target is ignore_index get a 0 gradient even when the mean's total
    weight is 0 (as PyTorch, where the general path wrote 0/0)."""
    rng = np.random.default_rng(2)
    for x, t, ignore in _cases(rng, dtype):
        ones = np.ones(x.shape[-1], dtype)
        for red in (0, 1, 2):
            out, total = fwd_nn.nll_loss_forward(x, t, None, red, ignore)
            ref, ref_total = fwd_nn.nll_loss_forward(x, t, ones, red, ignore)
            assert out.dtype == ref.dtype and out.shape == ref.shape
            np.testing.assert_allclose(out, ref, rtol=1e-6)
            np.testing.assert_array_equal(total, ref_total)
            assert total.dtype == ref_total.dtype
            g = np.asarray(dtype(1.7)) if red else rng.standard_normal(out.shape).astype(dtype)
            grad = losses.nll_loss_backward(g, x, t, None, red, ignore, total)
            ref_grad = losses.nll_loss_backward(g, x, t, ones, red, ignore, total)
            assert grad.dtype == ref_grad.dtype and grad.shape == x.shape
            np.testing.assert_array_equal(grad, np.where(np.isnan(ref_grad), 0, ref_grad))


def test_nll_target_out_of_bounds_errors():
    x = np.zeros((3, 4), np.float32)
    for bad, shown in (([0, 5, 1], 5), ([0, -1, 7], -1), ([4, 0, 0], 4)):
        with pytest.raises(IndexError, match=f"^Target {shown} is out of bounds.$"):
            fwd_nn.nll_loss_forward(x, np.array(bad), None, 1, -100)
        with pytest.raises(IndexError, match=f"^Target {shown} is out of bounds.$"):
            losses.nll_loss_backward(np.asarray(np.float32(1)), x, np.array(bad), None, 1, -100,
                                     np.asarray(np.float32(3)))
    # an ignored target is never checked
    out, total = fwd_nn.nll_loss_forward(x, np.array([0, 9, 1]), None, 1, 9)
    assert float(total) == 2.0


def test_head_gradients_match_finite_differences_float64():
    rng = np.random.default_rng(3)
    z = derivgen.tensor(rng.standard_normal((6, 5)), dtype=derivgen.float64, requires_grad=True)
    y = derivgen.tensor(np.array([0, 4, 2, 2, 1, 3]))
    for kwargs in ({}, {"reduction": "sum"}, {"ignore_index": 2}):
        assert derivgen.autograd.gradcheck(
            lambda z: derivgen.nn.functional.nll_loss(derivgen.nn.functional.log_softmax(z, 1), y, **kwargs),
            (z,), eps=1e-6, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("kwargs", [{}, {"reduction": "sum"}, {"ignore_index": 3}, {"reduction": "none"},
                                    {"ignore_index": 1, "reduction": "sum"}])
def test_mlp_head_matches_torch(kwargs):
    """W3's head, float32: log_softmax(z, 1) then nll_loss, values, graph node names and gradients."""
    rng = np.random.default_rng(4)
    z0 = rng.standard_normal((256, 10)).astype(np.float32) * 3
    y0 = rng.integers(0, 10, 256)
    y0[:5] = 3
    res = {}
    for name, T in (("derivgen", derivgen), ("torch", torch)):
        z = T.tensor(z0, requires_grad=True)
        lp = T.nn.functional.log_softmax(z, 1)
        loss = T.nn.functional.nll_loss(lp, T.tensor(y0), **kwargs)
        names = (type(loss.grad_fn).__name__, type(lp.grad_fn).__name__)
        (loss.sum() if loss.dim() else loss).backward()
        res[name] = (lp.detach().numpy(), loss.detach().numpy(), z.grad.numpy(), names)
    d, t = res["derivgen"], res["torch"]
    np.testing.assert_allclose(d[0], t[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d[1], t[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d[2], t[2], rtol=1e-5, atol=1e-7)
    assert d[3] == t[3] == ("NllLossBackward0", "LogSoftmaxBackward0")


@needs_torch
def test_nll_all_targets_ignored_matches_torch():
    """mean over no rows: the loss is nan and the gradient is zeros (not nan), as in PyTorch."""
    for shape, target in (((5,), 0), ((3, 5), [0, 0, 0])):
        x0 = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
        grads = []
        for T in (derivgen, torch):
            x = T.tensor(x0, requires_grad=True)
            loss = T.nn.functional.nll_loss(x, T.tensor(target), ignore_index=0)
            assert np.isnan(loss.item())
            loss.backward()
            grads.append(x.grad.numpy())
        np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", [((256, 10), 1), ((3, 4), -1), ((2, 3, 4), 2), ((3, 4), 0), ((2, 3, 4), 1),
                                       ((5,), 0), ((), 0)])
def test_log_softmax_backward_data_matches_its_formula(dtype, shape, dim):
    """The one-pass loop (last dim) and the numpy fallback (other dims) against the table's former
    elementwise formula ``grad - exp(result) * grad.sum(dim, keepdim=True)``."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape).astype(dtype)
    out = fwd_nn._log_softmax(x, dim, False)
    g = rng.standard_normal(shape).astype(dtype)
    got = losses.log_softmax_backward_data(g, out, dim)
    ref = g - np.exp(out) * (np.sum(g, axis=dim, keepdims=True) if g.ndim else g)
    assert got.dtype == dtype and got.shape == g.shape
    tol = 2e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)
    # a broadcast (non-contiguous) incoming gradient, as the gradient of a sum arrives
    gb = np.broadcast_to(dtype(0.5), shape)
    np.testing.assert_allclose(losses.log_softmax_backward_data(gb, out, dim),
                               gb - np.exp(out) * (np.sum(gb, axis=dim, keepdims=True) if gb.ndim else gb),
                               rtol=tol, atol=tol)


def test_log_softmax_double_backward_float64():
    """create_graph=True goes through log_softmax_backward_data_graph: second derivatives by gradgradcheck."""
    x = derivgen.tensor(np.random.default_rng(7).standard_normal((4, 5)), dtype=derivgen.float64,
                        requires_grad=True)
    for dim in (1, 0, -1):
        assert derivgen.autograd.gradgradcheck(lambda t: derivgen.nn.functional.log_softmax(t, dim), (x,))


@needs_torch
def test_log_softmax_double_backward_matches_torch():
    x0 = np.random.default_rng(8).standard_normal((3, 4))
    v0 = np.random.default_rng(9).standard_normal((3, 4))
    res = []
    for T in (derivgen, torch):
        x = T.tensor(x0, requires_grad=True)
        y = T.nn.functional.log_softmax(x, 1)
        (g,) = T.autograd.grad((y * T.tensor(v0)).sum(), x, create_graph=True)
        # (torch's g has one LogSoftmaxBackwardDataBackward0 node; derivgen composes the formula from
        # sub/mul/exp/sum nodes, as before the row called log_softmax_backward_data: values only here)
        (gg,) = T.autograd.grad((g * g).sum(), x)
        res.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10)
