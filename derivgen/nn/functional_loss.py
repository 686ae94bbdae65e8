"""torch.nn.functional's distances and the losses beyond functional.py's, composed as torch's ATen code
composes them (so the graphs are torch's: ``margin + x`` is AddBackward1, a ``clamp_min_`` is
ClampMinBackward0, ``at::norm`` is NormBackward1): ``cosine_similarity``, ``pairwise_distance``,
``margin_ranking_loss``, ``hinge_embedding_loss``, ``soft_margin_loss`` (its own row:
SoftMarginLossBackward0), ``triplet_margin_loss``, ``poisson_nll_loss``, ``gaussian_nll_loss``,
``cosine_embedding_loss`` and ``multilabel_soft_margin_loss``."""
import math

from derivgen.core.grad_mode import no_grad
from derivgen.core.registry import aten
from derivgen.nn._reduction import _reduction, apply_reduction
from derivgen.nn.functional_activation import logsigmoid
from derivgen.ops import composites as _c
from derivgen.ops.factories import empty_like, ones_like, zeros_like

_EPSILON = 1e-12


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Each input divided by its norm (clamped to ``eps`` outside autograd), multiplied, summed over ``dim``."""
    x1_norm = aten.clone(_c.vector_norm(x1, 2, dim, True))
    x2_norm = aten.clone(_c.vector_norm(x2, 2, dim, True))
    with no_grad():
        aten.clamp_min_(x1_norm, eps)
        aten.clamp_min_(x2_norm, eps)
    return aten.sum(aten.mul(aten.div(x1, x1_norm), aten.div(x2, x2_norm)), [dim])


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``norm(x1 - x2 + eps, p, last dim, keepdim)``."""
    inner = max(x1.dim(), x2.dim()) - 1
    return aten.norm(aten.add_Scalar(aten.sub(x1, x2), eps), p, [inner], keepdim)


def _scalar_minus(value, t):
    """ATen's ``Scalar - Tensor``: ``empty_like(t).fill_(value).sub_(t)`` (SubBackward0, no edge for the fill)."""
    return aten.sub_(aten.fill_(empty_like(t), value), t)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    r = _reduction(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    out = aten.add_Scalar(aten.mul(aten.neg(target), aten.sub(input1, input2)), margin)
    return apply_reduction(aten.clamp_min_(out, 0), r)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
    r = _reduction(reduction, size_average, reduce)
    zeros = zeros_like(input)
    margin_clamp = aten.clamp_min_(_scalar_minus(margin, input), 0)
    output_margin = aten.where(aten.ne(target, 1), margin_clamp, zeros)
    output_self = aten.where(aten.ne(target, -1), input, zeros)
    return apply_reduction(aten.add(output_margin, output_self), r)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
    return aten.soft_margin_loss(input, target, _reduction(reduction, size_average, reduce))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    r = _reduction(reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pd, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pd and pd == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {pd}D, and negative {n}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = aten.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    out = aten.clamp_min(aten.sub(aten.add_Scalar(dist_pos, margin), dist_neg), 0)
    return apply_reduction(out, r)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,  # noqa: A002
                     reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = ["none", "mean", "sum"][_reduction(reduction, size_average, reduce)]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = aten.sub(aten.exp(input), aten.mul(target, input))
    else:
        loss = aten.sub(input, aten.mul(target, aten.log(aten.add_Scalar(input, eps))))
    if full:
        stirling = aten.add(aten.sub(aten.mul(target, aten.log(target)), target),
                            aten.mul_Scalar(aten.log(aten.mul_Scalar(target, 2 * math.pi)), 0.5))
        loss = aten.add_(loss, aten.masked_fill(stirling, aten.le(target, 1), 0))
    return apply_reduction(loss, _reduction(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):  # noqa: A002
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = aten.mul(ones_like(input), var)
    elif bool(aten.any(aten.lt(var, 0)).item()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = aten.unsqueeze(var, -1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = aten.clone(var)
    with no_grad():
        aten.clamp_(var, eps)
    loss = aten.mul(aten.add(aten.log(var), aten.div(aten.pow(aten.sub(input, target), 2), var)), 0.5)
    if full:
        loss = aten.add_(loss, 0.5 * math.log(2 * math.pi))
    if reduction == "mean":
        return aten.mean(loss)
    if reduction == "sum":
        return aten.sum(loss)
    return loss


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    r = _reduction(reduction, size_average, reduce)
    td = target.dim()
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1 and input1.dim() != 2:
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    if td == 0 and input1.dim() != 1:
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    prod_sum = aten.sum(aten.mul(input1, input2), [td])
    mag1 = aten.add_Scalar(aten.sum(aten.mul(input1, input1), [td]), _EPSILON)
    mag2 = aten.add_Scalar(aten.sum(aten.mul(input2, input2), [td]), _EPSILON)
    denom = aten.sqrt_(aten.mul(mag1, mag2))
    cos = aten.div(prod_sum, denom)
    zeros = zeros_like(cos)
    pos = _scalar_minus(1, cos)
    neg = aten.clamp_min_(aten.sub_Scalar(cos, margin), 0)
    output = aten.add(aten.where(aten.eq(target, 1), pos, zeros), aten.where(aten.eq(target, -1), neg, zeros))
    return apply_reduction(output, r)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,  # noqa: A002
                                reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = ["none", "mean", "sum"][_reduction(reduction, size_average, reduce)]
    loss = aten.neg(aten.add(aten.mul(target, logsigmoid(input)),
                             aten.mul(aten.rsub(target, 1), logsigmoid(aten.neg(input)))))
    if weight is not None:
        loss = aten.mul(loss, weight)
    class_dim = input.dim() - 1
    loss = aten.div(aten.sum(loss, [class_dim]), input.shape[class_dim])
    if reduction == "none":
        return loss
    if reduction == "mean":
        return aten.mean(loss)
    if reduction == "sum":
        return aten.sum(loss)
    raise ValueError(reduction + " is not valid")
