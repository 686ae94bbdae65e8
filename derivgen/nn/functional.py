"""``derivgen.nn.functional``: torch.nn.functional's spelling over derivgen's table ops.

Each function calls the row torch calls (``F.softmax`` -> ``_softmax``: SoftmaxBackward0,
``F.nll_loss`` -> ``nll_loss_forward``: NllLossBackward0) or composes ops exactly as torch's Python or
CompositeImplicit code does (``F.l1_loss`` is ``(input - target).abs().mean()``), so graphs match torch's.
"""

from derivgen.ops import composites as _c
from derivgen.ops.ops_module import ops as _ops


def relu(input, inplace=False):
    return _ops().relu_(input) if inplace else _ops().relu(input)


def relu_(input):
    return _ops().relu_(input)


def sigmoid(input):
    return _ops().sigmoid(input)


def tanh(input):
    return _ops().tanh(input)


def gelu(input, approximate="none"):
    return _ops().gelu(input, approximate=approximate)


def silu(input, inplace=False):
    return _ops().silu(input)


def mish(input, inplace=False):
    return _ops().mish(input)


def softplus(input, beta=1.0, threshold=20.0):
    return _ops().softplus(input, beta, threshold)


def elu(input, alpha=1.0, inplace=False):
    return _ops().elu(input, alpha)


def selu(input, inplace=False):
    return _c.selu(input)


def celu(input, alpha=1.0, inplace=False):
    return _ops().celu(input, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _ops().leaky_relu(input, negative_slope)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _ops().hardtanh(input, min_val, max_val)


def relu6(input, inplace=False):
    return _ops().hardtanh(input, 0.0, 6.0)


def hardsigmoid(input, inplace=False):
    return _ops().hardsigmoid(input)


def hardswish(input, inplace=False):
    return _ops().hardswish(input)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1
    if dtype is not None:
        input = input.to(dtype)
    return _ops()._softmax(input, dim, False)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1
    if dtype is not None:
        input = input.to(dtype)
    return _ops()._log_softmax(input, dim, False)


def dropout(input, p=0.5, training=True, inplace=False, generator=None):
    """torch's dropout; ``generator`` (a numpy Generator, e.g. ``derivgen.manual_seed(0)``) makes the mask
    reproducible. Identity (no node) when ``training`` is False."""
    return _c.dropout(input, p, training, generator)


def linear(input, weight, bias=None):
    return _c.linear(input, weight, bias)


def _reduction(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if size_average and reduce else ("sum" if reduce else "none")
    enum = {"none": 0, "mean": 1, "sum": 2}
    if reduction not in enum:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return enum[reduction]


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    return _ops().mse_loss(input, target, _reduction(reduction, size_average, reduce))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """torch's l1_loss is ``(input - target).abs()`` then mean / sum (no row of its own)."""
    loss = _ops().abs(_ops().sub(input, target))
    r = _reduction(reduction, size_average, reduce)
    return _ops().mean(loss) if r == 1 else _ops().sum(loss) if r == 2 else loss


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    return _ops().smooth_l1_loss(input, target, _reduction(reduction, size_average, reduce), beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    return _ops().huber_loss(input, target, _reduction(reduction), delta)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    return _ops().nll_loss_forward(input, target, weight, _reduction(reduction, size_average, reduce),
                                   ignore_index)[0]


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """torch's cross_entropy_loss: log_softmax + nll_loss for class indices (with torch's label-smoothing
    composition), ``-(log_softmax * target)`` reductions for class probabilities."""
    ops = _ops()
    r = _reduction(reduction, size_average, reduce)
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    logp = ops._log_softmax(input, class_dim, False)
    if target.dtype.is_floating_point:  # class probabilities
        if label_smoothing > 0:
            target = ops.add_Scalar(ops.mul_Scalar(target, 1 - label_smoothing), label_smoothing / n_classes)
        prod = ops.mul(logp, target)
        if weight is not None:
            shape = [1] * input.dim()
            shape[class_dim] = n_classes
            prod = ops.mul(prod, ops.view(weight, tuple(shape)))
        if r == 1:
            return ops.div_Scalar(ops.neg(ops.sum(prod)), input.numel() // n_classes)
        if r == 2:
            return ops.neg(ops.sum(prod))
        return ops.neg(ops.sum(prod, [class_dim]))
    nll = ops.nll_loss_forward(logp, target, weight, r, ignore_index)[0]
    if label_smoothing <= 0:
        return nll
    ignore_mask = ops.eq(target, ignore_index)
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = n_classes
        smooth = ops.neg(ops.sum(ops.mul(logp, ops.view(weight, tuple(shape))), [class_dim]))
    else:
        smooth = ops.neg(ops.sum(logp, [class_dim]))
    smooth = ops.masked_fill_(smooth, ignore_mask, 0.0)
    if r == 1:
        keep = ops.logical_not(ignore_mask)
        if weight is not None:
            denom = ops.sum(ops.index_Tensor(weight, [ops.index_Tensor(target, [keep])]))
        else:
            denom = ops.sum(keep)
        ret = ops.div(ops.sum(smooth), denom)
    elif r == 2:
        ret = ops.sum(smooth)
    else:
        ret = smooth
    return ops.add(ops.mul_Scalar(nll, 1 - label_smoothing), ops.mul_Scalar(ret, label_smoothing / n_classes))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    return _ops().binary_cross_entropy(input, target, weight, _reduction(reduction, size_average, reduce))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return _ops().binary_cross_entropy_with_logits(input, target, weight, pos_weight,
                                                   _reduction(reduction, size_average, reduce))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """torch's kl_div: ``exp(t) * (t - input)`` or ``xlogy(t, t) - t * input``, then the reduction
    ('batchmean' divides the sum by the batch size)."""
    ops = _ops()
    if size_average is not None or reduce is not None:
        reduction = ["none", "mean", "sum"][_reduction("mean", size_average, reduce)]
    if log_target:
        out = ops.mul(ops.exp(target), ops.sub(target, input))
    else:
        out = ops.sub(ops.xlogy(target, target), ops.mul(target, input))
    if reduction == "batchmean":
        s = ops.sum(out)
        return ops.div(s, input.shape[0]) if input.dim() else s
    if reduction == "mean":
        return ops.mean(out)
    if reduction == "sum":
        return ops.sum(out)
    return out


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return _ops().native_layer_norm(input, list(normalized_shape), weight, bias, eps)[0]


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """torch's normalize: ``input / norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)``."""
    denom = _ops().clamp_min(_c.norm(input, p, dim, True), eps)
    return _ops().div(input, _c.expand_as(denom, input))


def one_hot(tensor, num_classes=-1):
    import numpy as np
    from derivgen.core.tensor import Tensor
    idx = tensor._array
    if idx.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(idx.max()) + 1 if idx.size else 0
    if idx.size and (idx.min() < 0 or idx.max() >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes." if idx.max() >= num_classes
                           else "Class values must be non-negative.")
    return Tensor._make((idx[..., None] == np.arange(num_classes)).astype(np.int64))


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if padding_idx is not None:
        if padding_idx < 0:
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    return _ops().embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def pad(input, pad, mode="constant", value=None):
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                         f"padding length {len(pad)} and input of dimension {input.dim()}")
    if mode != "constant":
        raise NotImplementedError(f"derivgen: pad mode {mode!r} is not supported (only 'constant')")
    return _ops().constant_pad_nd(input, list(pad), 0.0 if value is None else value)
