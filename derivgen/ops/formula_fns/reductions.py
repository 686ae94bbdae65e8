"""Backward helpers of reductions (prod, max/min, var/std, norms, cumprod) and of repeat."""
import numpy as np

from derivgen.core.sizes import dims_list
from derivgen.ops.formula_fns.pointwise import _mask_tensor, _zero
from derivgen.core.registry import aten
from derivgen.ops.formula_fns.shapes import _T, _composite_reshape, reduced_numel, zeros_like_graph




def zeros_like_sized(x, sizes):
    """Zeros of shape ``sizes`` with ``x``'s dtype (torch's ``grad.new_zeros(sizes)``)."""
    return np.zeros(tuple(sizes), x.dtype)


def zeros_like_sized_graph(x, sizes):
    return _T(np.zeros(tuple(sizes), x._array.dtype))


def _restore(grad, ndim, dim, keepdim):
    """Put back the dims a reduction over ``dim`` removed (torch's restore_reduced_dims)."""
    if keepdim or ndim == 0:
        return grad
    for d in dims_list(dim, ndim):
        grad = np.expand_dims(grad, d)
    return grad


def _restore_graph(grad, ndim, dim, keepdim):
    if keepdim or ndim == 0:
        return grad
    for d in dims_list(dim, ndim):
        grad = aten.unsqueeze(grad, d)
    return grad


def _prod_others(x, d):
    """prod_{j != i} x_j along ``d`` without division (exclusive cumulative products from both ends)."""
    n = x.shape[d]
    shape = list(x.shape)
    shape[d] = 1
    one = np.ones(shape, x.dtype)
    left = np.concatenate([one, np.take(np.cumprod(x, d), np.arange(n - 1), axis=d)], d)
    rev = np.flip(x, d)
    right = np.flip(np.concatenate([one, np.take(np.cumprod(rev, d), np.arange(n - 1), axis=d)], d), d)
    return left * right


def _prod_others_graph(x, d):
    ops = aten
    n = x.shape[d]
    shape = list(x.shape)
    shape[d] = 1
    one = _T(np.ones(shape, x._array.dtype))
    left = ops.cat([one, ops.slice(ops.cumprod(x, d), d, 0, n - 1, 1)], d)
    right = ops.flip(ops.cat([one, ops.slice(ops.cumprod(ops.flip(x, [d]), d), d, 0, n - 1, 1)], d), [d])
    return left * right


def prod_backward(grad, self, result):
    if self.ndim == 0:
        return grad * np.ones_like(self)
    return grad * _prod_others(self.reshape(-1), 0).reshape(self.shape)


def prod_backward_graph(grad, self, result):
    if self.dim() == 0:
        return grad * _T(np.ones_like(self._array))
    return grad * aten.view(_prod_others_graph(aten.view(self, (-1,)), 0), tuple(self.shape))


def prod_dim_backward(grad, self, dim, keepdim):
    if self.ndim == 0:
        return grad * np.ones_like(self)
    d = dim % self.ndim
    return _restore(grad, self.ndim, d, keepdim) * _prod_others(self, d)


def prod_dim_backward_graph(grad, self, dim, keepdim):
    if self.dim() == 0:
        return grad * _T(np.ones_like(self._array))
    d = dim % self.dim()
    return _restore_graph(grad, self.dim(), d, keepdim) * _prod_others_graph(self, d)


def value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim):
    """Gradient of max/min along a dim, sort and topk: ``grad`` scattered to the selected positions."""
    if len(sizes) == 0:
        return np.asarray(grad).reshape(()).copy()
    d = dim % len(sizes)
    out = np.zeros(tuple(sizes), grad.dtype)
    g, idx = (grad, indices) if keepdim else (np.expand_dims(grad, d), np.expand_dims(indices, d))
    np.put_along_axis(out, idx, g, axis=d)
    return out


def value_selecting_reduction_backward_graph(grad, dim, indices, sizes, keepdim):
    ops = aten
    if len(sizes) == 0:
        return ops.view(grad, ())
    d = dim % len(sizes)
    g, idx = (grad, indices) if keepdim else (ops.unsqueeze(grad, d), ops.unsqueeze(indices, d))
    return ops.scatter(_T(np.zeros(tuple(sizes), grad._array.dtype)), d, idx, g)


def _even_mask(self, result):
    return (self == result) | (np.isnan(self) & np.isnan(result))


def evenly_distribute_backward(grad, self, result):
    """Gradient of max()/min() over all elements: shared evenly among the tied extrema."""
    mask = _even_mask(self, result)
    return np.where(mask, grad / mask.sum(), grad.dtype.type(0))


def evenly_distribute_backward_graph(grad, self, result):
    mask = _even_mask(self._array, result._array)
    return aten.where(_mask_tensor(mask), grad / float(mask.sum()), _zero(grad))


def _count_mask(self, result, dim, keepdim):
    r = _restore(result, self.ndim, dim, keepdim)
    mask = r == self
    axes = dims_list(dim, self.ndim) if self.ndim else None
    return mask, np.sum(mask, axis=axes, keepdims=True)


def scale_grad_by_count(grad, self, result, dim, keepdim):
    """Gradient of amax/amin: the restored grad shared evenly among the ties of each reduced slice."""
    mask, count = _count_mask(self, result, dim, keepdim)
    # torch's (grad / count) * mask: a slice whose extremum is NaN has no tie (NaN != NaN), so its
    # count is 0 and every element's gradient is 0 * inf = NaN, as in torch
    with np.errstate(divide="ignore", invalid="ignore"):
        return (_restore(grad, self.ndim, dim, keepdim) / count.astype(grad.dtype)) * mask


def scale_grad_by_count_graph(grad, self, result, dim, keepdim):
    mask, count = _count_mask(self._array, result._array, dim, keepdim)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = _restore_graph(grad, self.dim(), dim, keepdim) / _T(count.astype(grad._array.dtype))
        return g * _T(mask.astype(grad._array.dtype))


def _var_scale(sizes, dim, correction):
    n = reduced_numel(sizes, dim) if len(sizes) else 1
    c = 1 if correction is None else correction
    return 2.0 / (n - c) if n - c > 0 else float("inf")


def var_backward(grad, self, dim, correction, keepdim):
    """Gradient of var(self, dim, correction): 2 / (N - c) * grad * (self - mean)."""
    axes = dims_list(dim, self.ndim) if self.ndim else None
    g = _restore(grad, self.ndim, dim, keepdim)
    return (_var_scale(self.shape, dim, correction) * g) * (self - np.mean(self, axis=axes, keepdims=True))


def var_backward_graph(grad, self, dim, correction, keepdim):
    ops = aten
    g = _restore_graph(grad, self.dim(), dim, keepdim)
    mean = ops.mean(self, dims_list(dim, self.dim()), True) if self.dim() else self
    return (_var_scale(tuple(self.shape), dim, correction) * g) * (self - mean)


def _norm_parts(self, ord, result, dim, keepdim):
    return _restore(result, self.ndim, dim, keepdim)


def linalg_vector_norm_backward(grad, self, ord, result, dim, keepdim):
    """torch's linalg_vector_norm_backward for ord 0, 1, 2, +-inf and general p."""
    g = _restore(grad, self.ndim, dim, keepdim)
    r = _restore(result, self.ndim, dim, keepdim)
    zero = grad.dtype.type(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        if ord == 0:
            return np.zeros_like(self)
        if ord == 1:
            return np.sign(self) * g
        if ord == 2:
            return self * np.where(r == 0, zero, g / r)
        if ord in (np.inf, -np.inf):
            mask = np.abs(self) == r
            axes = dims_list(dim, self.ndim) if self.ndim else None
            count = np.sum(mask, axis=axes, keepdims=True).astype(self.dtype)
            return np.sign(self) * np.where(mask, g / count, zero)
        if ord < 1:
            out = np.sign(self) * np.abs(self) ** (ord - 1) * g / r ** (ord - 1)
            return np.where(self == 0, zero, out)
        out = self * np.abs(self) ** (ord - 2) * g / r ** (ord - 1)
        return np.where(r == 0, zero, out)


def linalg_vector_norm_backward_graph(grad, self, ord, result, dim, keepdim):
    ops = aten
    nd = self.dim()
    g = _restore_graph(grad, nd, dim, keepdim)
    r = _restore_graph(result, nd, dim, keepdim)
    rd = _restore(result._array, nd, dim, keepdim)
    if ord == 0:
        return zeros_like_graph(self)
    if ord == 1:
        return ops.sign(self) * g
    if ord == 2:
        return self * ops.where(_mask_tensor(rd == 0), _zero(g), g / r)
    if ord in (np.inf, -np.inf):
        mask = np.abs(self._array) == rd
        axes = dims_list(dim, nd) if nd else None
        count = _T(np.sum(mask, axis=axes, keepdims=True).astype(self._array.dtype))
        return ops.sign(self) * ops.where(_mask_tensor(mask), g / count, _zero(g))
    if ord < 1:
        out = ops.sign(self) * ops.abs(self) ** (ord - 1) * g / r ** (ord - 1)
        return ops.where(_mask_tensor(self._array == 0), 0.0, out)
    out = self * ops.abs(self) ** (ord - 2) * g / r ** (ord - 1)
    return ops.where(_mask_tensor(rd == 0), 0.0, out)


def _rev_cumsum(x, d):
    return np.flip(np.cumsum(np.flip(x, d), d), d)


def cumprod_backward(grad, self, dim, result):
    """Gradient of cumprod: sum_{j >= i} grad_j * prod_{k <= j, k != i} x_k (exact with zeros)."""
    if self.ndim == 0:
        return grad.copy()
    d = dim % self.ndim
    if not (self == 0).any():
        return _rev_cumsum(grad * result, d) / self
    x, g = np.moveaxis(self, d, -1), np.moveaxis(grad, d, -1)
    n = x.shape[-1]
    out = np.zeros_like(x)
    for i in range(n):
        y = x.copy()
        y[..., i] = 1
        prods = np.cumprod(y, -1)
        out[..., i] = np.sum((g * prods)[..., i:], -1)
    return np.moveaxis(out, -1, d)


def cumprod_backward_graph(grad, self, dim, result):
    ops = aten
    if self.dim() == 0:
        return grad
    d = dim % self.dim()
    if not (self._array == 0).any():
        return ops.flip(ops.cumsum(ops.flip(grad * result, [d]), d), [d]) / self
    n = self.shape[d]
    pieces = []
    for i in range(n):  # with zeros: prod_{k <= j, k != i} x_k by replacing x_i with 1
        mask = np.zeros(self._array.shape, bool)
        mask[(slice(None),) * d + (i,)] = True
        prods = ops.cumprod(ops.where(_mask_tensor(mask), 1.0, self), d)
        pieces.append(ops.sum(ops.slice(grad * prods, d, i, n, 1), [d], True))
    return ops.cat(pieces, d)


def _cumprod_jvp_zero_masks(self, d):
    """For torch's cumprod_jvp with zeros in ``self``: the first zero along ``d`` and every element from
    it on (where ``result`` is 0 and the tangent is ``cumprod`` of ``self`` with the first zero replaced
    by its tangent)."""
    zeros = self == 0
    first = zeros & (np.cumsum(zeros, d) == 1)
    return first, np.cumsum(first, d) > 0


def cumprod_jvp(self_t, self_p, result, dim):
    """Forward-mode tangent of cumprod: ``cumsum(self_t / self_p) * result`` away from zeros, exact with
    zeros (torch's cumprod_jvp)."""
    if self_p.ndim == 0:
        return self_t.copy()
    d = dim % self_p.ndim
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.cumsum(self_t / self_p, d) * result
    if not (self_p == 0).any():
        return out
    first, after = _cumprod_jvp_zero_masks(self_p, d)
    return np.where(after, np.cumprod(np.where(first, self_t, self_p), d), out)


def cumprod_jvp_graph(self_t, self_p, result, dim):
    ops = aten
    if self_p.dim() == 0:
        return self_t
    d = dim % self_p.dim()
    if not (self_p._array == 0).any():
        return ops.cumsum(self_t / self_p, d) * result
    first, after = _cumprod_jvp_zero_masks(self_p._array, d)
    safe = ops.where(_mask_tensor(self_p._array == 0), 1.0, self_p)  # no 0/0 where the value is replaced
    return ops.where(_mask_tensor(after), ops.cumprod(ops.where(_mask_tensor(first), self_t, self_p), d),
                     ops.cumsum(self_t / safe, d) * result)


def repeat_backward(grad, repeats, sizes):
    """Gradient of repeat: the tiles summed back onto the input."""
    lead = len(repeats) - len(sizes)
    sizes = (1,) * lead + tuple(sizes)
    inter = []
    for r, s in zip(repeats, sizes):
        inter += [r, s]
    g = grad.reshape(inter).sum(axis=tuple(range(0, 2 * len(sizes), 2)))
    return g.reshape(sizes[lead:])


def repeat_backward_graph(grad, repeats, sizes):
    ops = aten
    lead = len(repeats) - len(sizes)
    full = (1,) * lead + tuple(sizes)
    inter = []
    for r, s in zip(repeats, full):
        inter += [r, s]
    g = ops.sum(_composite_reshape(grad, tuple(inter)), list(range(0, 2 * len(full), 2)))
    return _composite_reshape(g, tuple(sizes))


TENSOR_FUNCTIONS = {
    "zeros_like_sized": (zeros_like_sized, zeros_like_sized_graph),
    "prod_backward": (prod_backward, prod_backward_graph),
    "prod_dim_backward": (prod_dim_backward, prod_dim_backward_graph),
    "value_selecting_reduction_backward": (value_selecting_reduction_backward,
                                           value_selecting_reduction_backward_graph),
    "evenly_distribute_backward": (evenly_distribute_backward, evenly_distribute_backward_graph),
    "scale_grad_by_count": (scale_grad_by_count, scale_grad_by_count_graph),
    "var_backward": (var_backward, var_backward_graph),
    "linalg_vector_norm_backward": (linalg_vector_norm_backward, linalg_vector_norm_backward_graph),
    "cumprod_backward": (cumprod_backward, cumprod_backward_graph),
    "cumprod_jvp": (cumprod_jvp, cumprod_jvp_graph),
    "repeat_backward": (repeat_backward, repeat_backward_graph),
}
