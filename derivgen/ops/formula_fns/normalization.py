"""Backward helpers of the normalisation rows ``native_batch_norm`` and ``native_group_norm``: gradients
for input, weight and bias (None for an absent weight / bias).

In training both normalise with statistics of the input itself, so the input gradient is the
layer-norm form ``invstd * (g - mean(g) - xhat * mean(g * xhat))`` over the reduced elements; batch norm
in evaluation normalises with constants (the running statistics), a per-channel scale. The graph
versions recompute the statistics from the input, so that a second derivative sees their dependence
on it.
"""
import numpy as np

from derivgen.core.registry import aten
from derivgen.ops.forwards import _norm_kernels
from derivgen.ops.formula_fns.shapes import _T, _composite_reshape


def _bn_axes(ndim):
    return (0,) + tuple(range(2, ndim))


def _channel(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def batch_norm_backward(grad, input, weight, running_mean, running_var, save_mean, save_invstd, training, eps):  # noqa: A002
    """One pass for the per-channel sums of grad and grad * (x - mean), one for the input gradient
    (Numba loops, see ``derivgen/ops/forwards/normalization.py``)."""
    c = input.shape[1]
    shape = (input.shape[0], c, -1)
    g = np.ascontiguousarray(grad, dtype=input.dtype).reshape(shape)
    x = np.ascontiguousarray(input).reshape(shape)
    if training:
        mean, invstd = save_mean.astype(np.float64), save_invstd.astype(np.float64)
    else:
        mean = running_mean.astype(np.float64)
        invstd = 1.0 / np.sqrt(running_var.astype(np.float64) + eps)
    sum_g, sum_gx = np.empty(c), np.empty(c)
    _norm_kernels.channel_grad_sums(g, x, mean, sum_g, sum_gx)
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    gx = np.empty(g.shape, input.dtype)
    if training:
        _norm_kernels.batch_norm_input_grad(g, x, mean, invstd, w, sum_g, sum_gx, gx)
    else:
        _norm_kernels.channel_affine(g, (invstd * w).astype(input.dtype), np.zeros(c, input.dtype), gx)
    dw = None if weight is None else (sum_gx * invstd).astype(input.dtype)
    return gx.reshape(input.shape), dw, sum_g.astype(input.dtype)


def batch_norm_backward_graph(grad, input, weight, running_mean, running_var, save_mean, save_invstd, training, eps):  # noqa: A002
    ops = aten
    axes = list(_bn_axes(input.dim()))
    if training:
        mu = ops.mean(input, axes, True)
        centered = input - mu
        invstd = ops.rsqrt(ops.mean(centered * centered, axes, True) + eps)
    else:
        arr = input._array
        mean = running_mean._array.astype(arr.dtype)
        inv = (1 / np.sqrt(running_var._array.astype(arr.dtype) + arr.dtype.type(eps))).astype(arr.dtype)
        centered = input - _T(_channel(mean, arr.ndim))
        invstd = _T(_channel(inv, arr.ndim))
    xhat = centered * invstd
    gw = grad if weight is None else grad * ops.view(weight, (1, -1) + (1,) * (input.dim() - 2))
    if training:
        gx = invstd * (gw - ops.mean(gw, axes, True) - xhat * ops.mean(gw * xhat, axes, True))
    else:
        gx = gw * invstd
    dw = None if weight is None else ops.sum(grad * xhat, axes)
    return gx, dw, ops.sum(grad, axes)


def group_norm_backward(grad, input, mean, rstd, weight, bias, N, C, HxW, group, eps):  # noqa: A002,N803 - schema names
    """The batch-norm loops on the groups (rows of (1, N*G, C/G*S)); weight and bias sums per
    (sample, channel) rows of (1, N*C, S), then over the samples."""
    dt = input.dtype
    x = np.ascontiguousarray(input)
    g = np.ascontiguousarray(grad, dtype=dt)
    m64, r64 = mean.astype(np.float64).reshape(-1), rstd.astype(np.float64).reshape(-1)
    per_channel = np.repeat(np.arange(N * group), C // group)
    rows = (1, N * C, -1)
    sum_g, sum_gx = np.empty(N * C), np.empty(N * C)
    _norm_kernels.channel_grad_sums(g.reshape(rows), x.reshape(rows), m64[per_channel], sum_g, sum_gx)
    gw = g
    if weight is not None:
        gw = np.empty(g.shape, dt)
        _norm_kernels.channel_affine(g.reshape(rows), np.tile(weight.astype(dt), N), np.zeros(N * C, dt),
                                     gw.reshape(rows))
    groups = (1, N * group, -1)
    gsum, gsum_x = np.empty(N * group), np.empty(N * group)
    _norm_kernels.channel_grad_sums(gw.reshape(groups), x.reshape(groups), m64, gsum, gsum_x)
    gx = np.empty(x.shape, dt)
    _norm_kernels.batch_norm_input_grad(gw.reshape(groups), x.reshape(groups), m64, r64, np.ones(N * group), gsum,
                                        gsum_x, gx.reshape(groups))
    dw = None if weight is None else (sum_gx * r64[per_channel]).reshape(N, C).sum(axis=0).astype(dt)
    db = None if bias is None else sum_g.reshape(N, C).sum(axis=0).astype(dt)
    return gx, dw, db


def group_norm_backward_graph(grad, input, mean, rstd, weight, bias, N, C, HxW, group, eps):  # noqa: A002,N803
    ops = aten
    x = _composite_reshape(input, (N, group, -1))
    mu = ops.mean(x, [2], True)
    centered = x - mu
    r = ops.rsqrt(ops.mean(centered * centered, [2], True) + eps)
    xhat = centered * r
    g = _composite_reshape(grad, (N, C, -1))
    gw = g if weight is None else g * ops.view(weight, (1, C, 1))
    gw = _composite_reshape(gw, (N, group, -1))
    gx = r * (gw - ops.mean(gw, [2], True) - xhat * ops.mean(gw * xhat, [2], True))
    xc = _composite_reshape(xhat, (N, C, -1))
    dw = None if weight is None else ops.sum(g * xc, [0, 2])
    db = None if bias is None else ops.sum(g, [0, 2])
    return _composite_reshape(gx, tuple(input.shape)), dw, db


def _affine_jvp(out, xhat, weight, weight_t, bias_t, channel):
    """The tangent of ``xhat * weight + bias`` given the tangent ``out`` of ``xhat``; ``channel`` shapes a
    per-channel vector to broadcast against the input."""
    if weight is not None:
        out = out * channel(weight)
    if weight_t is not None:
        out = out + xhat * channel(weight_t)
    if bias_t is not None:
        out = out + channel(bias_t)
    return out


def batch_norm_jvp(input_p, input_t, weight_p, weight_t, bias_t, running_mean, running_var, save_mean,  # noqa: A002
                   save_invstd, training, eps):
    """Forward-mode tangent of native_batch_norm's output: in training the statistics move with the
    input (the layer-norm form over batch and spatial dims), in evaluation the running statistics are
    constants."""
    nd = input_p.ndim
    axes = _bn_axes(nd)
    if training:
        mean, invstd = _channel(save_mean, nd), _channel(save_invstd, nd)
    else:
        mean = _channel(running_mean, nd)
        invstd = _channel((1 / np.sqrt(running_var + eps)).astype(input_p.dtype), nd)
    xhat = (input_p - mean) * invstd
    if training:
        out = invstd * (input_t - np.mean(input_t, axis=axes, keepdims=True)
                        - xhat * np.mean(xhat * input_t, axis=axes, keepdims=True))
    else:
        out = input_t * invstd
    return _affine_jvp(out, xhat, weight_p, weight_t, bias_t, lambda v: _channel(v, nd))


def batch_norm_jvp_graph(input_p, input_t, weight_p, weight_t, bias_t, running_mean, running_var, save_mean,  # noqa: A002
                         save_invstd, training, eps):
    ops = aten
    nd = input_p.dim()
    axes = list(_bn_axes(nd))
    if training:
        centered = input_p - ops.mean(input_p, axes, True)
        invstd = ops.rsqrt(ops.mean(centered * centered, axes, True) + eps)
        xhat = centered * invstd
        out = invstd * (input_t - ops.mean(input_t, axes, True) - xhat * ops.mean(xhat * input_t, axes, True))
    else:
        arr = input_p._array
        inv = (1 / np.sqrt(running_var._array.astype(arr.dtype) + arr.dtype.type(eps))).astype(arr.dtype)
        invstd = _T(_channel(inv, nd))
        xhat = (input_p - _T(_channel(running_mean._array.astype(arr.dtype), nd))) * invstd
        out = input_t * invstd
    return _affine_jvp(out, xhat, weight_p, weight_t, bias_t,
                       lambda v: ops.view(v, (1, -1) + (1,) * (nd - 2)))


def group_norm_jvp(input_p, input_t, weight_p, weight_t, bias_t, mean, rstd, N, C, group, eps):  # noqa: A002,N803
    """Forward-mode tangent of native_group_norm's output: the layer-norm form within each group, then
    the per-channel affine."""
    groups = (N, group, -1)
    x, xt = input_p.reshape(groups), input_t.reshape(groups)
    m, r = mean.reshape(N, group, 1), rstd.reshape(N, group, 1)
    xhat = (x - m) * r
    out = r * (xt - np.mean(xt, axis=2, keepdims=True) - xhat * np.mean(xhat * xt, axis=2, keepdims=True))
    rows = (N, C, -1)
    out = _affine_jvp(out.reshape(rows), xhat.reshape(rows), weight_p, weight_t, bias_t,
                      lambda v: v.reshape(1, C, 1))
    return out.reshape(input_p.shape)


def group_norm_jvp_graph(input_p, input_t, weight_p, weight_t, bias_t, mean, rstd, N, C, group, eps):  # noqa: A002,N803
    ops = aten
    x, xt = _composite_reshape(input_p, (N, group, -1)), _composite_reshape(input_t, (N, group, -1))
    centered = x - ops.mean(x, [2], True)
    r = ops.rsqrt(ops.mean(centered * centered, [2], True) + eps)
    xhat = centered * r
    out = r * (xt - ops.mean(xt, [2], True) - xhat * ops.mean(xhat * xt, [2], True))
    out = _affine_jvp(_composite_reshape(out, (N, C, -1)), _composite_reshape(xhat, (N, C, -1)), weight_p,
                      weight_t, bias_t, lambda v: ops.view(v, (1, C, 1)))
    return _composite_reshape(out, tuple(input_p.shape))


TENSOR_FUNCTIONS = {
    "batch_norm_backward": (batch_norm_backward, batch_norm_backward_graph),
    "group_norm_backward": (group_norm_backward, group_norm_backward_graph),
    "batch_norm_jvp": (batch_norm_jvp, batch_norm_jvp_graph),
    "group_norm_jvp": (group_norm_jvp, group_norm_jvp_graph),
}
