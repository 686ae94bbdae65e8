"""Batching rules written by hand: ops whose schema does not say how the batch dimension moves (views
with sizes, matrix products, joins, full reductions, indexing, losses, layers)."""
import numpy as np

from derivgen.core.registry import aten
from derivgen.core.sizes import wrap_dim
from derivgen.core.tensor import Tensor
from derivgen.batching.derived_rules import pad, pointwise, pointwise_inplace, shift_dims, wrap
from derivgen.batching.fallback import loop_fallback
from derivgen.batching.registry import batch_size, register
from derivgen.batching.tensor import BatchedTensor, materialize, physical
from derivgen.ops import composites

# Ops that act elementwise (hand-written forwards) or on trailing dimensions only: the batch dimension in
# front passes through them unchanged.
register("ceil_default", "floor_default", "frac_default", "trunc_default", "round_default", "round_decimals",
         "clamp_default", "clamp_Tensor", "clone_default", "_to_copy_default", "fill_Scalar", "fill_Tensor",
         "fmax_default", "fmin_default", "fmod_Scalar", "fmod_Tensor", "remainder_Scalar", "remainder_Tensor",
         "gelu_default", "logit_default", "nan_to_num_default", "div_Scalar_mode", "div_Tensor_mode",
         "tril_default", "triu_default", "constant_pad_nd_default",
         # rows named like in-place ops that compute their result out of place (the Python-facing op
         # writes it into self through the BatchedTensor's logical array)
         "fill__Scalar", "fill__Tensor", "zero__default", "copy__default")(pointwise)
register("clamp__default")(pointwise_inplace)


def _logical(kwargs, name, level):
    v = kwargs[name]
    return physical(v, level), v


@register("view_default", "_unsafe_view_default")
def _view(fn, kwargs, level):
    p, _ = _logical(kwargs, "self", level)
    # the batch dimension stays as it is: the physical view exists exactly when each example's does
    return BatchedTensor(fn(**dict(kwargs, self=p, size=(p.shape[0],) + tuple(kwargs["size"]))), level)


@register("expand_default")
def _expand(fn, kwargs, level):
    p, self = _logical(kwargs, "self", level)
    size = tuple(kwargs["size"])
    p = pad(p, len(size) - self.dim())
    return BatchedTensor(aten.expand(p, (p.shape[0],) + size), level)


@register("permute_default")
def _permute(fn, kwargs, level):
    p, self = _logical(kwargs, "self", level)
    dims = kwargs["dims"]
    if len(dims) != self.dim():
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {self.dim()} is not "
                           f"equal to len(dims) = {len(dims)}")
    return BatchedTensor(aten.permute(p, [0] + shift_dims(dims, self.dim())), level)


@register("t_default")
def _t(fn, kwargs, level):
    p, self = _logical(kwargs, "self", level)
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return BatchedTensor(aten.transpose(p, 1, 2) if self.dim() == 2 else p, level)


@register("squeeze_default")
def _squeeze(fn, kwargs, level):
    p, self = _logical(kwargs, "self", level)
    dims = [d + 1 for d, s in enumerate(self.shape) if s == 1]
    return BatchedTensor(aten.squeeze(p, dims) if dims else aten.slice(p, 0, None, None, 1), level)


@register("squeeze__default", "squeeze__dim", "squeeze__dims")
def _squeeze_functional(fn, kwargs, level):
    # out of place, as the row is; the Python-facing squeeze_ rebinds self to the result
    self = kwargs["self"]
    return aten.squeeze(self, kwargs["dim"]) if "dim" in kwargs else aten.squeeze(self)


@register("repeat_default")
def _repeat(fn, kwargs, level):
    p, self = _logical(kwargs, "self", level)
    repeats = tuple(kwargs["repeats"])
    if len(repeats) < self.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    p = pad(p, len(repeats) - self.dim())
    return BatchedTensor(aten.repeat(p, (1,) + repeats), level)


@register("roll_default")
def _roll(fn, kwargs, level):
    p, self = _logical(kwargs, "self", level)
    dims = kwargs.get("dims") or []
    if dims:
        return BatchedTensor(aten.roll(p, kwargs["shifts"], shift_dims(dims, self.dim())), level)
    flat = composites.reshape(p, (p.shape[0], -1))
    return BatchedTensor(composites.reshape(aten.roll(flat, kwargs["shifts"], [1]), tuple(p.shape)), level)


@register("argmax_default", "argmin_default")
def _argmax(fn, kwargs, level):
    p, self = _logical(kwargs, "self", level)
    dim = kwargs.get("dim")
    keepdim = kwargs.get("keepdim", False)
    if dim is not None:
        if self.dim() == 0:
            return BatchedTensor(fn(self=aten.unsqueeze(p, 1), dim=1, keepdim=False), level)
        return BatchedTensor(fn(self=p, dim=shift_dims(dim, self.dim()), keepdim=keepdim), level)
    out = fn(self=composites.reshape(p, (p.shape[0], -1)), dim=1, keepdim=False)
    if keepdim:
        out = composites.reshape(out, (p.shape[0],) + (1,) * self.dim())
    return BatchedTensor(out, level)


def _flat(p):
    return composites.reshape(p, (p.shape[0], -1))


@register("sum_default")
def _sum(fn, kwargs, level):
    return BatchedTensor(aten.sum(_flat(kwargs["self"]._value), [1], dtype=kwargs.get("dtype")), level)


@register("mean_default")
def _mean(fn, kwargs, level):
    return BatchedTensor(aten.mean(_flat(kwargs["self"]._value), [1], dtype=kwargs.get("dtype")), level)


@register("prod_default")
def _prod(fn, kwargs, level):
    return BatchedTensor(aten.prod(_flat(kwargs["self"]._value), 1, dtype=kwargs.get("dtype")), level)


@register("max_default", "min_default")
def _max(fn, kwargs, level):
    p = kwargs["self"]._value
    if kwargs["self"].numel() == 0:
        return loop_fallback(fn, kwargs, level)
    reduce = aten.amax if fn.__name__.startswith("max") else aten.amin
    return BatchedTensor(reduce(_flat(p), [1]), level)


@register("all_default")
def _all(fn, kwargs, level):
    p = kwargs["self"]._value
    return BatchedTensor(aten.eq(aten.sum(aten.eq(_flat(p), 0), [1]), 0), level)


# ---- matrix products: the physical values go through matmul, whose broadcasting batch dims carry the
# examples (a batched vector becomes a batched column so that it stays on its own side)
def _matmul_phys(a, b):
    return composites.matmul(a, b)


@register("mm_default", "bmm_default")
def _mm(fn, kwargs, level):
    a, b = kwargs["self"], kwargs["mat2"]
    if a.dim() != (2 if fn.__name__ == "mm_default" else 3) or b.dim() != a.dim():
        _mm_shape_error(fn, a, b)
    pa, pb = physical(a, level), physical(b, level)
    if pa is not None and pb is None:
        return BatchedTensor(_matmul_phys(pa, b), level)
    if pa is None:
        return BatchedTensor(_matmul_phys(a, pb), level)
    return BatchedTensor(_matmul_phys(pa, pb), level)


def _mm_shape_error(fn, a, b):
    if fn.__name__ == "mm_default":
        bad = a if a.dim() != 2 else b
        raise RuntimeError(f"{'self' if bad is a else 'mat2'} must be a matrix")
    raise RuntimeError("batch1 must be a 3D tensor" if a.dim() != 3 else "batch2 must be a 3D tensor")


@register("mv_default")
def _mv(fn, kwargs, level):
    a, v = kwargs["self"], kwargs["vec"]
    pa, pv = physical(a, level), physical(v, level)
    if pv is None:
        return BatchedTensor(_matmul_phys(pa, v), level)
    left = pa if pa is not None else a
    return BatchedTensor(aten.squeeze(_matmul_phys(left, aten.unsqueeze(pv, -1)), -1), level)


@register("dot_default")
def _dot(fn, kwargs, level):
    a, b = kwargs["self"], kwargs["tensor"]
    if a.dim() != 1 or b.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.dim()}D and {b.dim()}D tensors")
    return aten.sum(aten.mul(a, b), [0])


@register("addmm_default", "baddbmm_default")
def _addmm(fn, kwargs, level):
    mats = ("mat1", "mat2") if "mat1" in kwargs else ("batch1", "batch2")
    prod = composites.matmul(kwargs[mats[0]], kwargs[mats[1]])
    beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
    if alpha != 1:
        prod = aten.mul(prod, alpha)
    if beta == 0:
        return prod
    return aten.add(prod, kwargs["self"], alpha=beta)


# ---- joins
@register("cat_default")
def _cat(fn, kwargs, level):
    tensors = kwargs["tensors"]
    ref = next((t for t in tensors if t.dim() != 1 or t.shape[0] != 0), tensors[0])
    dim = wrap_dim(kwargs.get("dim", 0), ref.dim())
    size = batch_size(level)
    phys = [materialize(t, level, size) for t in tensors if t.dim() != 1 or t.shape[0] != 0 or t is ref]
    return BatchedTensor(aten.cat(phys, dim + 1), level)


@register("stack_default")
def _stack(fn, kwargs, level):
    tensors = kwargs["tensors"]
    dim = wrap_dim(kwargs.get("dim", 0), tensors[0].dim() + 1)
    size = batch_size(level)
    return BatchedTensor(aten.stack([materialize(t, level, size) for t in tensors], dim + 1), level)


# ---- indexing
@register("index_Tensor")
def _index(fn, kwargs, level):
    p, self = _logical(kwargs, "self", level)
    indices = list(kwargs["indices"])
    positions = [i for i, x in enumerate(indices) if x is not None]
    adjacent = positions == list(range(positions[0], positions[-1] + 1)) if positions else True
    if p is None or any(isinstance(x, BatchedTensor) and x._level == level for x in indices) or not adjacent:
        return loop_fallback(fn, kwargs, level)
    return BatchedTensor(fn(self=p, indices=[None] + indices), level)


@register("index_select_default")
def _index_select(fn, kwargs, level):
    p, self = _logical(kwargs, "self", level)
    if p is None or physical(kwargs["index"], level) is not None:
        return loop_fallback(fn, kwargs, level)
    return BatchedTensor(fn(self=p, dim=shift_dims(kwargs["dim"], self.dim()), index=kwargs["index"]), level)


@register("gather_default")
def _gather(fn, kwargs, level):
    self, index = kwargs["self"], kwargs["index"]
    size = batch_size(level)
    p, pi = materialize(self, level, size), materialize(index, level, size)
    if self.dim() == 0:
        return loop_fallback(fn, kwargs, level)
    return BatchedTensor(fn(self=p, dim=shift_dims(kwargs["dim"], self.dim()), index=pi,
                            sparse_grad=kwargs.get("sparse_grad", False)), level)


@register("embedding_default")
def _embedding(fn, kwargs, level):
    weight, indices = kwargs["weight"], kwargs["indices"]
    pw = physical(weight, level)
    if pw is None:
        return BatchedTensor(fn(**dict(kwargs, indices=indices._value)), level)
    if kwargs.get("padding_idx", -1) != -1 or kwargs.get("scale_grad_by_freq") or kwargs.get("sparse"):
        return loop_fallback(fn, kwargs, level)
    # each example's rows of its own weight: weight[b, indices[b]] by advanced indexing
    pi = physical(indices, level)
    rank = indices.dim()
    example = Tensor._make(np.arange(batch_size(level)).reshape((-1,) + (1,) * rank))
    return BatchedTensor(aten.index(pw, [example, pi if pi is not None else indices]), level)


# ---- losses: the elementwise loss (reduction none) per example, then its mean or sum
_NONE, _MEAN = 0, 1


@register("mse_loss_default", "smooth_l1_loss_default", "huber_loss_default", "binary_cross_entropy_default",
          "binary_cross_entropy_with_logits_default")
def _loss(fn, kwargs, level):
    reduction = kwargs.get("reduction", _MEAN)
    if reduction == _NONE:
        return pointwise(fn, kwargs, level)
    out = fn(**dict(kwargs, reduction=_NONE))
    return aten.mean(out) if reduction == _MEAN else aten.sum(out)


# ---- layers
@register("native_layer_norm_default")
def _layer_norm(fn, kwargs, level):
    if any(physical(kwargs.get(k), level) is not None for k in ("weight", "bias")):
        return loop_fallback(fn, kwargs, level)
    return wrap(fn(**dict(kwargs, input=kwargs["input"]._value)), level)


def _fold(fn, kwargs, level, name, spatial):
    """Image ops: an example with a leading N folds into N*B; one without uses the batch as its N."""
    x = kwargs[name]
    p = physical(x, level)
    others = [v for k, v in kwargs.items() if k != name and isinstance(v, Tensor)]
    if p is None or any(physical(v, level) is not None for v in others):
        return loop_fallback(fn, kwargs, level)
    if x.dim() == spatial + 1:
        return wrap(fn(**dict(kwargs, **{name: p})), level)
    b, n = p.shape[0], p.shape[1]
    out = fn(**dict(kwargs, **{name: composites.reshape(p, (b * n,) + tuple(p.shape[2:]))}))

    def unfold(o):
        return composites.reshape(o, (b, n) + tuple(o.shape[1:]))
    return wrap(unfold(out) if isinstance(out, Tensor) else tuple(unfold(o) for o in out), level)


@register("max_pool2d_with_indices_default", "avg_pool2d_default", "_adaptive_avg_pool2d_default")
def _pool2d(fn, kwargs, level):
    return _fold(fn, kwargs, level, "self", 2)


@register("convolution_default")
def _convolution(fn, kwargs, level):
    return _fold(fn, kwargs, level, "input", kwargs["weight"].dim() - 2)


@register("masked_fill_Tensor")
def _masked_fill(fn, kwargs, level):
    # the value is one number per example: torch loops over the examples then too
    if physical(kwargs["value"], level) is not None:
        return loop_fallback(fn, kwargs, level)
    return pointwise(fn, kwargs, level)


@register("nll_loss_forward_default")
def _nll_loss(fn, kwargs, level):
    """The unreduced loss of all examples' rows in one call, then each example's own sum (and, for the
    mean, its own total weight of the targets that are not ignored)."""
    self, target, weight = kwargs["self"], kwargs["target"], kwargs.get("weight")
    size = batch_size(level)
    pt = materialize(target, level, size)
    if physical(weight, level) is not None or type(pt) is not Tensor:
        return loop_fallback(fn, kwargs, level)
    ps = materialize(self, level, size)
    classes = ps.shape[-1]
    flat_self = composites.reshape(ps, (-1, classes))
    flat_target = composites.reshape(pt, (-1,))
    out, _ = fn(**dict(kwargs, self=flat_self, target=flat_target, reduction=_NONE))
    out = composites.reshape(out, (size, -1))
    t = pt._array.reshape(size, -1)
    kept = t != kwargs["ignore_index"]
    w = np.ones(t.shape, ps._array.dtype) if weight is None else weight._array[np.where(kept, t, 0)]
    total = Tensor._make((w * kept).sum(1).astype(ps._array.dtype))
    loss = aten.sum(out, [1])
    if kwargs["reduction"] == _MEAN:
        loss = aten.div(loss, total)
    elif kwargs["reduction"] == _NONE:
        loss = composites.reshape(out, tuple(pt.shape))
    return BatchedTensor(loss, level), BatchedTensor(total, level)
