"""Backward helpers of torch.nn.functional rows: nll_loss, binary cross entropy, layer_norm,
embedding."""
import numpy as np

from derivgen.ops.forwards import _nll_parts, _nn_kernels, reduction_enum
from derivgen.core.registry import aten
from derivgen.ops.formula_fns.shapes import _T, _composite_reshape




def _nll_scale(self, target, weight, reduction, ignore_index, total_weight):
    x, safe, wi = _nll_parts(self, target, weight, ignore_index)
    if reduction_enum(reduction) == 1:
        with np.errstate(divide="ignore", invalid="ignore"):
            wi = wi / total_weight
    return x, safe, -wi


def nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight):
    """Gradient of nll_loss: -w[t] (/ total weight for 'mean') at each row's target class."""
    if weight is None and self.ndim in (1, 2) and grad.dtype.char in "fd" and target.dtype.kind == "i":
        out = _nll_backward_unweighted(grad, self, target, reduction, ignore_index, total_weight)
        if out is not None:
            return out
    x, safe, scale = _nll_scale(self, target, weight, reduction, ignore_index, total_weight)
    out = np.zeros(x.shape, grad.dtype)
    g = np.broadcast_to(grad.reshape(-1) if grad.ndim else grad, (x.shape[0],))
    out[np.arange(x.shape[0]), safe] = g * scale.astype(grad.dtype)
    return out.reshape(self.shape)


def _nll_backward_unweighted(grad, self, target, reduction, ignore_index, total_weight):
    """nll_loss_backward without class weights in one loop: each row's target class gets
    ``grad * -(1 / total_weight)`` ('mean') or ``grad * -1``, the same float operations as the general
    path below (so the same bits), without its masks, weight vector and fancy index. None when the
    shapes are not the (N, C) / (C,) forms the forward accepted (the general path raises)."""
    x = self.reshape(1, -1) if self.ndim == 1 else self
    n = x.shape[0]
    t = target.reshape(-1)
    g = grad.reshape(-1)
    if t.shape[0] != n or g.shape[0] not in (1, n):
        return None
    dt = grad.dtype.type
    one = self.dtype.type(1)
    if reduction_enum(reduction) != 1:
        scale = -one
    elif total_weight != 0:
        scale = -(one / total_weight)
    else:
        scale = one  # no row counts (all ignored): nothing is written, and 1/0 would warn
    out = np.zeros(x.shape, grad.dtype)
    bad = _nn_kernels.nll_scatter_rows(out, t, g, dt(scale), int(ignore_index))
    if bad >= 0:
        raise IndexError(f"Target {int(t[bad])} is out of bounds.")
    return out.reshape(self.shape)


def nll_loss_backward_graph(grad, self, target, weight, reduction, ignore_index, total_weight):
    ops = aten
    x, safe, scale = _nll_scale(self._array, target._array, None if weight is None else weight._array, reduction,
                                ignore_index, total_weight._array)
    n = x.shape[0]
    g = ops.expand(ops.view(grad, (-1,)) if grad.dim() else grad, (n,))
    vals = ops.unsqueeze(g * _T(scale.astype(grad._array.dtype)), 1)
    out = ops.scatter(_T(np.zeros(x.shape, grad._array.dtype)), 1, _T(safe.reshape(-1, 1)), vals)
    return ops.view(out, tuple(self.shape))


def log_softmax_backward_data(grad, output, dim):
    """torch's _log_softmax_backward_data: ``grad - exp(output) * grad.sum(dim, keepdim=True)``.

    Over the last dim of contiguous float arrays (a classifier's (N, C) logits) this is one loop; the
    formula written out elementwise ran its broadcasting kernel plus a separate reduction (~30 us at
    (256, 10) against ~10 us)."""
    if grad.ndim == 0:
        return grad - np.exp(output) * grad  # the sum over the one "dim" of a number is the number
    d = dim + grad.ndim if dim < 0 else dim
    if (d == grad.ndim - 1 and grad.size and grad.shape == output.shape and grad.dtype.char in "fd"
            and output.dtype is grad.dtype and grad.flags.c_contiguous and output.flags.c_contiguous):
        cols = grad.shape[-1]
        out = np.empty(grad.shape, grad.dtype)
        _nn_kernels.log_softmax_backward_rows(grad.reshape(-1, cols), output.reshape(-1, cols),
                                             out.reshape(-1, cols))
        return out
    return np.asarray(grad - np.exp(output) * np.add.reduce(grad, axis=d, keepdims=True), dtype=grad.dtype)


def log_softmax_backward_data_graph(grad, output, dim):
    ops = aten
    return grad - ops.exp(output) * ops.sum(grad, [dim], True)


def _red_div(reduction, numel):
    return numel if reduction_enum(reduction) == 1 else 1


def binary_cross_entropy_backward(grad, self, target, weight, reduction):
    g = grad * (self - target) / np.maximum((1 - self) * self, 1e-12)
    if weight is not None:
        g = g * weight
    return g / self.dtype.type(_red_div(reduction, self.size))


def binary_cross_entropy_backward_graph(grad, self, target, weight, reduction):
    ops = aten
    g = grad * (self - target) / ops.clamp_min((1 - self) * self, 1e-12)
    if weight is not None:
        g = g * weight
    return g / float(_red_div(reduction, self.numel()))


def binary_cross_entropy_target_backward(grad, self, target, weight, reduction):
    g = grad * (np.log1p(-self) - np.log(self))
    if weight is not None:
        g = g * weight
    return g / self.dtype.type(_red_div(reduction, self.size))


def binary_cross_entropy_target_backward_graph(grad, self, target, weight, reduction):
    ops = aten
    g = grad * (ops.log1p(-self) - ops.log(self))
    if weight is not None:
        g = g * weight
    return g / float(_red_div(reduction, self.numel()))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def bce_with_logits_backward(grad, self, target, weight, pos_weight, reduction):
    """torch's binary_cross_entropy_with_logits_backward for the input."""
    with np.errstate(over="ignore"):
        s = _sigmoid(self)
    if pos_weight is None:
        g = s - target
    else:
        t = pos_weight * target
        g = (t + 1 - target) * s - t
    g = g * grad
    if weight is not None:
        g = g * weight
    return g / self.dtype.type(_red_div(reduction, self.size))


def bce_with_logits_backward_graph(grad, self, target, weight, pos_weight, reduction):
    s = aten.sigmoid(self)
    if pos_weight is None:
        g = s - target
    else:
        t = pos_weight * target
        g = (t + 1 - target) * s - t
    g = g * grad
    if weight is not None:
        g = g * weight
    return g / float(_red_div(reduction, self.numel()))


def bce_with_logits_target_backward(grad, self, target, weight, pos_weight, reduction):
    g = -self
    if pos_weight is not None:
        g = g + (pos_weight - 1) * (np.log1p(np.exp(-np.abs(self))) + np.maximum(-self, 0))
    g = g * grad
    if weight is not None:
        g = g * weight
    return g / self.dtype.type(_red_div(reduction, self.size))


def bce_with_logits_target_backward_graph(grad, self, target, weight, pos_weight, reduction):
    ops = aten
    g = -self
    if pos_weight is not None:
        g = g + (pos_weight - 1) * ops.softplus(-self)
    g = g * grad
    if weight is not None:
        g = g * weight
    return g / float(_red_div(reduction, self.numel()))


def layer_norm_backward(grad, input, normalized_shape, mean, rstd, weight, bias, eps):  # noqa: A002
    """Gradients of native_layer_norm for input, weight and bias (None for an absent weight / bias)."""
    k = len(normalized_shape)
    axes = tuple(range(input.ndim - k, input.ndim))
    batch = tuple(range(input.ndim - k))
    xhat = (input - mean) * rstd
    gw = grad * weight if weight is not None else grad
    dx = rstd * (gw - np.mean(gw, axis=axes, keepdims=True) - xhat * np.mean(gw * xhat, axis=axes, keepdims=True))
    dw = None if weight is None else np.sum(grad * xhat, axis=batch)
    db = None if bias is None else np.sum(grad, axis=batch)
    return dx, dw, db


def layer_norm_backward_graph(grad, input, normalized_shape, mean, rstd, weight, bias, eps):  # noqa: A002
    ops = aten
    k = len(normalized_shape)
    axes = list(range(input.dim() - k, input.dim()))
    batch = list(range(input.dim() - k))
    # mean and rstd are recomputed from input so that the second derivative sees their dependence on it
    mu = ops.mean(input, axes, True)
    centered = input - mu
    r = ops.rsqrt(ops.mean(centered * centered, axes, True) + eps)
    xhat = centered * r
    gw = grad * weight if weight is not None else grad
    dx = r * (gw - ops.mean(gw, axes, True) - xhat * ops.mean(gw * xhat, axes, True))
    dw = None if weight is None else (ops.sum(grad * xhat, batch) if batch else grad * xhat)
    db = None if bias is None else (ops.sum(grad, batch) if batch else grad)
    return dx, dw, db


def layer_norm_jvp(input, input_t, weight, weight_t, bias_t, mean, rstd, normalized_shape):  # noqa: A002
    """Forward-mode tangent of native_layer_norm's output: the normalisation's derivative applied to
    ``input_t`` (times the weight), plus ``xhat * weight_t`` and ``bias_t`` (None tangents are absent)."""
    axes = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    xhat = (input - mean) * rstd
    out = rstd * (input_t - np.mean(input_t, axis=axes, keepdims=True)
                  - xhat * np.mean(xhat * input_t, axis=axes, keepdims=True))
    if weight is not None:
        out = out * weight
    if weight_t is not None:
        out = out + xhat * weight_t
    if bias_t is not None:
        out = out + bias_t
    return out


def layer_norm_jvp_graph(input, input_t, weight, weight_t, bias_t, mean, rstd, normalized_shape):  # noqa: A002
    ops = aten
    axes = list(range(input.dim() - len(normalized_shape), input.dim()))
    xhat = (input - mean) * rstd
    out = rstd * (input_t - ops.mean(input_t, axes, True) - xhat * ops.mean(xhat * input_t, axes, True))
    if weight is not None:
        out = out * weight
    if weight_t is not None:
        out = out + xhat * weight_t
    if bias_t is not None:
        out = out + bias_t
    return out


def _embedding_rows(grad, indices, sizes, padding_idx, scale_grad_by_freq):
    idx = np.asarray(indices).reshape(-1)
    scale = np.ones(idx.shape, grad.dtype)
    if padding_idx is not None and padding_idx >= 0:
        scale = np.where(idx == padding_idx, 0, scale).astype(grad.dtype)
    if scale_grad_by_freq:
        counts = np.bincount(idx, minlength=sizes[0])
        scale = scale / counts[idx].astype(grad.dtype)
    return idx, scale


def embedding_backward(grad, indices, sizes, padding_idx, scale_grad_by_freq):
    """Gradient of embedding for the weight: each row's gradient added at its index."""
    idx, scale = _embedding_rows(grad, indices, sizes, padding_idx, scale_grad_by_freq)
    out = np.zeros(tuple(sizes), grad.dtype)
    np.add.at(out, idx, grad.reshape(-1, sizes[1]) * scale[:, None])
    return out


def embedding_backward_graph(grad, indices, sizes, padding_idx, scale_grad_by_freq):
    ops = aten
    idx, scale = _embedding_rows(grad._array, indices._array, sizes, padding_idx, scale_grad_by_freq)
    rows = _composite_reshape(grad, (-1, sizes[1])) * _T(scale[:, None])
    return ops.index_add(_T(np.zeros(tuple(sizes), grad._array.dtype)), 0, _T(idx), rows)




def neg_list(values):
    """``[-v for v in values]`` (roll's and constant_pad_nd's backward undo the shift / padding)."""
    return tuple(-v for v in values)


def reduction_divisor(numel, reduction):
    """What a loss's reduction divides by: the element count for 'mean', else 1."""
    return _red_div(reduction, numel)


TENSOR_FUNCTIONS = {
    "log_softmax_backward_data": (log_softmax_backward_data, log_softmax_backward_data_graph),
    "nll_loss_backward": (nll_loss_backward, nll_loss_backward_graph),
    "binary_cross_entropy_backward": (binary_cross_entropy_backward, binary_cross_entropy_backward_graph),
    "binary_cross_entropy_target_backward": (binary_cross_entropy_target_backward,
                                             binary_cross_entropy_target_backward_graph),
    "bce_with_logits_backward": (bce_with_logits_backward, bce_with_logits_backward_graph),
    "bce_with_logits_target_backward": (bce_with_logits_target_backward, bce_with_logits_target_backward_graph),
    "layer_norm_backward": (layer_norm_backward, layer_norm_backward_graph),
    "layer_norm_jvp": (layer_norm_jvp, layer_norm_jvp_graph),
    "embedding_backward": (embedding_backward, embedding_backward_graph),
}


META_FUNCTIONS = {
    "neg_list": neg_list,
    "reduction_divisor": reduction_divisor,
}
