"""``derivgen.nn.functional``: torch.nn.functional's spelling over derivgen's table ops.

Each function calls the row torch calls (``F.softmax`` -> ``_softmax``: SoftmaxBackward0,
``F.nll_loss`` -> ``nll_loss_forward``: NllLossBackward0) or composes ops exactly as torch's Python or
CompositeImplicit code does (``F.l1_loss`` is ``(input - target).abs().mean()``), so graphs match torch's.
"""

from derivgen.ops import composites as _c
from derivgen.ops import factories as _factories
from derivgen.core.grad_mode import is_grad_enabled
from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor
from derivgen.nn._reduction import _broadcast_target, _reduction  # noqa: F401 - used below and by the loss modules
from derivgen.nn.functional_sparse import embedding_renorm_ as _embedding_renorm_


def _in_place(input, fn, inplace):
    """``fn(input)``, or with torch's ``inplace=True`` that result written into ``input``, which is
    returned (dropout: computed on a clone, then a copy_, so CloneBackward0 and CopyBackwards nodes where
    torch's dropout_ records one MulBackward0)."""
    if not inplace:
        return fn(input)
    return input.copy_(fn(aten.clone(input)))


def relu(input, inplace=False):
    return aten.relu_(input) if inplace else aten.relu(input)


def relu_(input):
    return aten.relu_(input)


def sigmoid(input):
    return aten.sigmoid(input)


def tanh(input):
    return aten.tanh(input)


def gelu(input, approximate="none"):
    return aten.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    return aten.silu_(input) if inplace else aten.silu(input)


def mish(input, inplace=False):
    return aten.mish_(input) if inplace else aten.mish(input)


def softplus(input, beta=1.0, threshold=20.0):
    return aten.softplus(input, beta, threshold)


# The in-place forms of elu, celu, leaky_relu and threshold are rows of their own (EluBackward1, ...: their
# backward reads the result); silu, mish, hardsigmoid and hardswish in place record the out-of-place node.

def elu(input, alpha=1.0, inplace=False):
    return aten.elu_(input, alpha) if inplace else aten.elu(input, alpha)


def elu_(input, alpha=1.0):
    return aten.elu_(input, alpha)


def selu(input, inplace=False):
    return _c.selu_(input) if inplace else _c.selu(input)


def selu_(input):
    return _c.selu_(input)


def celu(input, alpha=1.0, inplace=False):
    return aten.celu_(input, alpha) if inplace else aten.celu(input, alpha)


def celu_(input, alpha=1.0):
    return aten.celu_(input, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return aten.leaky_relu_(input, negative_slope) if inplace else aten.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return aten.leaky_relu_(input, negative_slope)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """torch's ``rrelu``: the ``rrelu_with_noise`` row with a fresh noise tensor (RreluWithNoiseBackward0),
    in place its ``rrelu_with_noise_`` row (RreluWithNoiseBackward1)."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    op = aten.rrelu_with_noise_ if inplace else aten.rrelu_with_noise
    return op(input, _factories.empty_like(input), lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return aten.hardtanh_(input, min_val, max_val) if inplace else aten.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False):
    return aten.hardsigmoid_(input) if inplace else aten.hardsigmoid(input)


def hardswish(input, inplace=False):
    return aten.hardswish_(input) if inplace else aten.hardswish(input)


def threshold(input, threshold, value, inplace=False):
    """``input`` where it is greater than ``threshold``, else ``value``."""
    return aten.threshold_(input, threshold, value) if inplace else aten.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return aten.threshold_(input, threshold, value)


def _implicit_softmax_dim(name, ndim, stacklevel):
    """torch's ``_get_softmax_dim``: dim 0 for 0-, 1- and 3-d inputs, else 1, with its deprecation warning."""
    import warnings
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_softmax_dim("softmax", input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return aten._softmax(input, dim, False)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_softmax_dim("log_softmax", input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return aten._log_softmax(input, dim, False)


def dropout(input, p=0.5, training=True, inplace=False, generator=None):
    """torch's dropout; ``generator`` (a ``derivgen.Generator``, e.g. ``derivgen.manual_seed(0)``) makes the mask
    reproducible. Identity (no node) when ``training`` is False."""
    if not training or p == 0:
        return _c.dropout(input, p, training, generator)
    return _in_place(input, lambda x: _c.dropout(x, p, training, generator), inplace)


def linear(input, weight, bias=None):
    return _c.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``, with torch's
    argument checks; computed as one matmul of ``input1`` with the weight, then a product with
    ``input2`` summed over ``j`` (torch's graph has a ``_trilinear``; values and gradients agree)."""
    ops = aten
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{input1.shape[i]} and {input2.shape[i]}")
    out_f, in1_f, in2_f = weight.shape
    if input1.shape[-1] != in1_f:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {in1_f}")
    if input2.shape[-1] != in2_f:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {in2_f}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_f):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[-1]} but "
                           f"expected {out_f}")
    batch = tuple(input1.shape[:-1])
    x1 = _c.reshape(input1, (-1, in1_f))
    x2 = _c.reshape(input2, (-1, 1, in2_f))
    w = _c.reshape(ops.permute(weight, [1, 0, 2]), (in1_f, out_f * in2_f))
    t = _c.reshape(_c.matmul(x1, w), (-1, out_f, in2_f))
    out = ops.sum(ops.mul(t, x2), [2])
    if bias is not None:
        out = ops.add(out, bias)
    return _c.reshape(out, batch + (out_f,))


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    input, target = _broadcast_target(input, target)
    return aten.mse_loss(input, target, _reduction(reduction, size_average, reduce))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """torch's l1_loss is ``(input - target).abs()`` then mean / sum (no row of its own)."""
    input, target = _broadcast_target(input, target)
    loss = aten.abs(aten.sub(input, target))
    r = _reduction(reduction, size_average, reduce)
    return aten.mean(loss) if r == 1 else aten.sum(loss) if r == 2 else loss


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    input, target = _broadcast_target(input, target)
    return aten.smooth_l1_loss(input, target, _reduction(reduction, size_average, reduce), beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    input, target = _broadcast_target(input, target)
    return aten.huber_loss(input, target, _reduction(reduction), delta)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    return _nll(input, target, weight, _reduction(reduction, size_average, reduce), ignore_index)


def _nll(input, target, weight, reduction, ignore_index):
    """nll_loss_forward for (C,) and (N, C) inputs; an (N, C, d1, ...) input is moved to (N*d1*..., C)
    first (torch has nll_loss2d rows for that; the values and gradients are the same)."""
    ops = aten
    if input.dim() <= 2:
        return ops.nll_loss_forward(input, target, weight, reduction, ignore_index)[0]
    n, c = input.shape[0], input.shape[1]
    expected = (n,) + tuple(input.shape[2:])
    if tuple(target.shape) != expected:
        if input.dim() == 4:
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")
    perm = [0] + list(range(2, input.dim())) + [1]
    flat = _c.reshape(ops.permute(input, perm), (-1, c))
    out = ops.nll_loss_forward(flat, _c.reshape(target, (-1,)), weight, reduction, ignore_index)[0]
    return _c.reshape(out, expected) if reduction == 0 else out


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """torch's cross_entropy_loss: log_softmax + nll_loss for class indices (with torch's label-smoothing
    composition), ``-(log_softmax * target)`` reductions for class probabilities."""
    ops = aten
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
    nll = _nll(logp, target, weight, r, ignore_index)
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
    return aten.binary_cross_entropy(input, target, weight, _reduction(reduction, size_average, reduce))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return aten.binary_cross_entropy_with_logits(input, target, weight, pos_weight,
                                                   _reduction(reduction, size_average, reduce))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """torch's kl_div: ``exp(t) * (t - input)`` or ``xlogy(t, t) - t * input``, then the reduction
    ('batchmean' divides the sum by the batch size)."""
    ops = aten
    if size_average is not None or reduce is not None:
        reduction = ["none", "mean", "sum"][_reduction("mean", size_average, reduce)]
    elif reduction == "mean":
        import warnings
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
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
    return aten.native_layer_norm(input, list(normalized_shape), weight, bias, eps)[0]


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """torch's normalize: ``input / norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)``."""
    denom = aten.clamp_min(_c.norm(input, p, dim, True), eps)
    return aten.div(input, _c.expand_as(denom, input))


def one_hot(tensor, num_classes=-1):
    import numpy as np
    idx = tensor._array
    if idx.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(idx.max()) + 1 if idx.size else 0
    if idx.size and (idx.min() < 0 or idx.max() >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes." if idx.max() >= num_classes
                           else "Class values must be non-negative.")
    return Tensor._make((idx[..., None] == np.arange(num_classes)).astype(np.int64))


SPARSE_EMBEDDING_UNSUPPORTED = (
    "derivgen: embedding with sparse=True makes a sparse gradient for the weight, and derivgen has no sparse "
    "tensors; use sparse=False (the same values, as a dense gradient)")


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """torch's ``embedding``. ``sparse=True`` is refused where a gradient for the weight would be made (a
    sparse tensor); without one (no grad, a frozen weight) it is the dense lookup, as in torch."""
    if sparse and weight.requires_grad and is_grad_enabled():
        raise NotImplementedError(SPARSE_EMBEDDING_UNSUPPORTED)
    if padding_idx is not None:
        if padding_idx < 0:
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    return aten.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


from derivgen.nn.functional_pad import pad  # noqa: E402,F401 - constant, reflect, replicate, circular
from derivgen.nn.functional_conv import (  # noqa: E402,F401 - convolution, pooling, normalisation
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    batch_norm,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    group_norm,
    instance_norm,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from derivgen.nn.functional_activation import (  # noqa: E402,F401 - activations, channel dropout, rms_norm
    dropout1d,
    dropout2d,
    dropout3d,
    glu,
    hardshrink,
    logsigmoid,
    prelu,
    rms_norm,
    softmin,
    softshrink,
    softsign,
    tanhshrink,
)
from derivgen.nn.functional_loss import (  # noqa: E402,F401 - distances and more losses
    cosine_embedding_loss,
    cosine_similarity,
    gaussian_nll_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multilabel_soft_margin_loss,
    pairwise_distance,
    poisson_nll_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from derivgen.nn.functional_sparse import embedding_bag  # noqa: E402,F401
from derivgen.nn.functional_vision import (interpolate, upsample, upsample_bilinear,  # noqa: E402,F401
                                           upsample_nearest)
from derivgen.nn.functional_attention import (  # noqa: E402,F401 - attention
    _canonical_mask,
    _in_projection,
    _in_projection_packed,
    _mha_shape_check,
    _none_or_dtype,
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
