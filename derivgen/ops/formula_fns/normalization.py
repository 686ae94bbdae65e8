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
from derivgen.ops.formula_fns.shapes import _T, _composite_reshape


def _bn_axes(ndim):
    return (0,) + tuple(range(2, ndim))


def _channel(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def batch_norm_backward(grad, input, weight, running_mean, running_var, save_mean, save_invstd, training, eps):  # noqa: A002
    axes = _bn_axes(input.ndim)
    dt = input.dtype.type
    if training:
        mean, invstd = save_mean, save_invstd
    else:
        mean = running_mean.astype(input.dtype)
        invstd = (dt(1) / np.sqrt(running_var.astype(input.dtype) + dt(eps))).astype(input.dtype)
    xhat = (input - _channel(mean, input.ndim)) * _channel(invstd, input.ndim)
    gw = grad if weight is None else grad * _channel(weight, input.ndim)
    if training:
        gx = _channel(invstd, input.ndim) * (gw - np.mean(gw, axis=axes, keepdims=True, dtype=input.dtype)
                                             - xhat * np.mean(gw * xhat, axis=axes, keepdims=True, dtype=input.dtype))
    else:
        gx = gw * _channel(invstd, input.ndim)
    dw = None if weight is None else np.sum(grad * xhat, axis=axes, dtype=input.dtype)
    db = np.sum(grad, axis=axes, dtype=input.dtype)
    return np.asarray(gx, dtype=input.dtype), dw, db


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
    g = grad.reshape(N, group, -1)
    x = input.reshape(N, group, -1)
    xhat = (x - mean[:, :, None]) * rstd[:, :, None]
    if weight is None:
        gw = g
    else:
        gw = (grad.reshape(N, C, -1) * weight.reshape(1, C, 1)).reshape(N, group, -1)
    gx = rstd[:, :, None] * (gw - np.mean(gw, axis=2, keepdims=True, dtype=input.dtype)
                             - xhat * np.mean(gw * xhat, axis=2, keepdims=True, dtype=input.dtype))
    per_channel = grad.reshape(N, C, -1)
    dw = None if weight is None else np.sum(per_channel * xhat.reshape(N, C, -1), axis=(0, 2), dtype=input.dtype)
    db = None if bias is None else np.sum(per_channel, axis=(0, 2), dtype=input.dtype)
    return np.asarray(gx.reshape(input.shape), dtype=input.dtype), dw, db


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


TENSOR_FUNCTIONS = {
    "batch_norm_backward": (batch_norm_backward, batch_norm_backward_graph),
    "group_norm_backward": (group_norm_backward, group_norm_backward_graph),
}
