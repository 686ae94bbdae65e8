"""Forwards of the torch.nn.functional rows: softmax, log_softmax, losses, layer_norm, embedding."""
import numpy as np

from derivgen.core.dtypes import scalar_type_name
from derivgen.core.sizes import wrap_dim
from derivgen.ops.forwards._common import _legacy_type_name
from derivgen.ops.forwards import _nn_kernels


# ---- torch.nn.functional rows ------------------------------------------------------------

def _check_floating(self, dim, op):
    """torch's softmax kernels are defined for floating types only: its error names the kernel (the last-dim
    one for the last dim or a 0-dim tensor). An empty tensor never reaches a kernel."""
    if self.dtype.kind == "f" or self.size == 0:
        return
    last = self.ndim == 0 or wrap_dim(dim, self.ndim) == self.ndim - 1
    kernel = f"{op}_lastdim_kernel_impl" if last else f"{op}_kernel_impl"
    raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(self.dtype)}\'')


def _softmax(self, dim, half_to_float):
    _check_floating(self, dim, "softmax")
    if self.ndim == 0:
        return np.ones_like(self)
    d = wrap_dim(dim, self.ndim)
    if self.size == 0:
        return np.empty_like(self)
    with np.errstate(invalid="ignore"):  # a row of all -inf gives NaN, as torch's does, without a warning
        e = np.exp(self - np.max(self, axis=d, keepdims=True))
        return e / np.sum(e, axis=d, keepdims=True)


def _log_softmax(self, dim, half_to_float):
    _check_floating(self, dim, "log_softmax")
    if self.ndim == 0:
        return np.zeros_like(self)
    d = wrap_dim(dim, self.ndim)
    if self.size == 0:
        return np.empty_like(self)
    if d == self.ndim - 1 and self.size and self.dtype.char in "fd" and self.flags.c_contiguous:
        # rows of the last dim (a classifier's (N, C) logits): one loop instead of six numpy passes
        cols = self.shape[-1]
        out = np.empty(self.shape, self.dtype)
        _nn_kernels.log_softmax_rows(self.reshape(-1, cols), out.reshape(-1, cols))
        return out
    shifted = self - np.max(self, axis=d, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=d, keepdims=True))


_REDUCTIONS = {"None": 0, "none": 0, "Mean": 1, "mean": 1, "Sum": 2, "sum": 2}


def reduction_enum(reduction):
    return _REDUCTIONS.get(reduction, reduction)


def _reduce(loss, reduction):
    r = reduction_enum(reduction)
    if r == 1:
        return np.asarray(np.mean(loss), dtype=loss.dtype)
    if r == 2:
        return np.asarray(np.sum(loss), dtype=loss.dtype)
    return loss


def _check_same_size(self, target, name):
    if self.shape != target.shape:
        import warnings
        warnings.warn(f"Using a target size ({list(target.shape)}) that is different to the input size "
                      f"({list(self.shape)}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", UserWarning, stacklevel=4)


def mse_loss(self, target, reduction=1):
    d = self - target
    return _reduce(d * d, reduction)


def soft_margin_loss(self, target, reduction=1):
    """``log(1 + exp(-target * self))`` (torch computes log, not log1p), then the reduction."""
    return _reduce(np.log(1 + np.exp(-target * self)), reduction)


def smooth_l1_loss(self, target, reduction=1, beta=1.0):
    a = np.abs(self - target)
    if beta == 0:
        return _reduce(a, reduction)
    return _reduce(np.where(a < beta, 0.5 * a * a / self.dtype.type(beta), a - self.dtype.type(0.5 * beta)), reduction)


def huber_loss(self, target, reduction=1, delta=1.0):
    a = np.abs(self - target)
    dt = self.dtype.type
    return _reduce(np.where(a < delta, dt(0.5) * a * a, dt(delta) * (a - dt(0.5 * delta))), reduction)


def _nll_parts(self, target, weight, ignore_index):
    if self.ndim not in (1, 2):
        raise ValueError(f"Expected 2 or more dimensions (got {self.ndim})" if self.ndim < 1 else
                         "derivgen: nll_loss supports (C,) and (N, C) inputs")
    x = self.reshape(1, -1) if self.ndim == 1 else self
    t = target.reshape(-1)
    if x.shape[0] != t.shape[0]:
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size ({t.shape[0]}).")
    c = x.shape[1]
    valid = t != ignore_index
    bad = t[valid & ((t < 0) | (t >= c))]
    if bad.size:
        raise IndexError(f"Target {int(bad[0])} is out of bounds.")
    safe = np.where(valid, t, 0)
    w = np.ones(c, self.dtype) if weight is None else weight.astype(self.dtype)
    wi = np.where(valid, w[safe], 0).astype(self.dtype)
    return x, safe, wi


def nll_loss_forward(self, target, weight, reduction, ignore_index):
    r = reduction_enum(reduction)
    if (weight is None and r in (1, 2) and self.ndim in (1, 2) and self.dtype.char in "fd"
            and target.dtype.kind == "i" and target.size == (self.shape[0] if self.ndim == 2 else 1)):
        # no class weights, reduced: one loop checks the targets and sums the picked values (the
        # general path below builds masks, a weight vector and a fancy index: ~6x slower at (256, 10))
        x = self.reshape(1, -1) if self.ndim == 1 else self
        s, count, bad = _nn_kernels.nll_sum_rows(x, target.reshape(-1), int(ignore_index))
        if bad >= 0:
            raise IndexError(f"Target {int(target.reshape(-1)[bad])} is out of bounds.")
        dt = self.dtype.type
        total = np.asarray(count, dtype=self.dtype)
        if r == 2:
            return np.asarray(s, dtype=self.dtype), total
        # the mean over no rows is 0/0 = nan, as in torch (written out: numpy's 0/0 would warn)
        return np.asarray(dt(s) / total if count else dt("nan"), dtype=self.dtype), total
    x, safe, wi = _nll_parts(self, target, weight, ignore_index)
    losses = -wi * x[np.arange(x.shape[0]), safe]
    r = reduction_enum(reduction)
    total = np.asarray(np.sum(wi), dtype=self.dtype)
    if r == 0:
        return (losses.reshape(()) if self.ndim == 1 else losses), np.asarray(0, dtype=self.dtype)
    s = np.asarray(np.sum(losses), dtype=self.dtype)
    if r == 2:
        return s, total
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(s / total, dtype=self.dtype), total


def binary_cross_entropy(self, target, weight=None, reduction=1):
    if self.size and (np.min(self) < 0 or np.max(self) > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    with np.errstate(divide="ignore"):
        lx = np.maximum(np.log(self), -100)
        l1x = np.maximum(np.log1p(-self), -100)
    loss = -(target * lx + (1 - target) * l1x)
    if weight is not None:
        loss = loss * weight
    return _reduce(np.asarray(loss, dtype=self.dtype), reduction)


def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=1):
    softplus_neg = np.log1p(np.exp(-np.abs(self))) + np.maximum(-self, 0)
    lw = 1 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = (1 - target) * self + lw * softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(np.asarray(loss, dtype=self.dtype), reduction)


def native_layer_norm(input, normalized_shape, weight, bias, eps):  # noqa: A002 - schema name
    k = len(normalized_shape)
    if tuple(input.shape[input.ndim - k:]) != tuple(normalized_shape) or k > input.ndim:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size"
                           f"{list(input.shape)}")
    axes = tuple(range(input.ndim - k, input.ndim))
    mean = np.mean(input, axis=axes, keepdims=True)
    var = np.mean((input - mean) ** 2, axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(var + input.dtype.type(eps))
    out = (input - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return np.asarray(out, dtype=input.dtype), mean, rstd


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if indices.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {_legacy_type_name(indices)} instead (while checking arguments for "
                           "embedding)")
    n = weight.shape[0]
    if indices.size and (indices.max() >= n or indices.min() < 0):
        raise IndexError("index out of range in self")
    return np.take(weight, indices, axis=0)
