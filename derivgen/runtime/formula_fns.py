"""Functions that backward formulas in ``formulas.yaml`` may call besides elementwise math.

Each tensor function has two implementations with one meaning: ``name`` works on numpy arrays (the fast
path, no graph) and ``name_graph`` on Tensors through differentiable ops (``create_graph=True``), so one
table row serves both paths. ``META_FUNCTIONS`` compute plain Python values from saved metadata and are
the same on both paths. The generator reads ``TENSOR_FUNCTIONS`` and ``META_FUNCTIONS`` to know which
names a formula may use.
"""
import numpy as np

from .shape_utils import dims_list, sum_to as _sum_to


def _ops():
    from ..generated import ops
    return ops


# ---- reductions to a shape -------------------------------------------------------------------

def sum_to(x, shape):
    return _sum_to(x, shape)


def sum_to_graph(x, shape):
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    lead = x.dim() - len(shape)
    axes = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and x.shape[lead + i] != 1]
    if axes:
        x = x.sum(axes, keepdim=True)
    return x.view(shape) if tuple(x.shape) != shape else x


def sum_backward(grad, sizes, dim, keepdim):
    """Gradient of ``sum(self, dim, keepdim)``: put the reduced dims back and broadcast."""
    if not keepdim and len(sizes):
        for d in dims_list(dim, len(sizes)):
            grad = np.expand_dims(grad, d)
    return np.broadcast_to(grad, tuple(sizes))


def sum_backward_graph(grad, sizes, dim, keepdim):
    if not keepdim and len(sizes):
        for d in dims_list(dim, len(sizes)):
            grad = grad.unsqueeze(d)
    return grad.expand(tuple(sizes))


def expand(x, sizes):
    return np.broadcast_to(x, tuple(sizes))


def expand_graph(x, sizes):
    return x.expand(tuple(sizes))


# ---- multi-output ops: undefined gradients become zeros ----------------------------------------

def split_backward(grads, split_size, dim, sizes, dtype):
    d = dim % len(sizes)
    n = sizes[d]
    pieces = []
    for i, g in enumerate(grads):
        if g is None:
            shape = list(sizes)
            shape[d] = min(split_size, n - i * split_size)
            g = np.zeros(shape, dtype)
        pieces.append(g)
    return np.concatenate(pieces, axis=d)


def split_backward_graph(grads, split_size, dim, sizes, dtype):
    return _cat_with_zeros_graph(grads, [min(split_size, sizes[dim % len(sizes)] - i * split_size)
                                         for i in range(len(grads))], dim, sizes, dtype)


def split_with_sizes_backward(grads, split_sizes, dim, sizes, dtype):
    d = dim % len(sizes)
    pieces = []
    for g, k in zip(grads, split_sizes):
        if g is None:
            shape = list(sizes)
            shape[d] = k
            g = np.zeros(shape, dtype)
        pieces.append(g)
    return np.concatenate(pieces, axis=d)


def split_with_sizes_backward_graph(grads, split_sizes, dim, sizes, dtype):
    return _cat_with_zeros_graph(grads, list(split_sizes), dim, sizes, dtype)


def _cat_with_zeros_graph(grads, lengths, dim, sizes, dtype):
    from .tensor import Tensor
    d = dim % len(sizes)
    pieces = []
    for g, k in zip(grads, lengths):
        if g is None:
            shape = list(sizes)
            shape[d] = k
            g = Tensor._make(np.zeros(shape, dtype))
        pieces.append(g)
    return _ops().cat(pieces, d)


def unbind_backward(grads, dim, sizes, dtype):
    d = dim % len(sizes)
    shape = list(sizes)
    del shape[d]
    return np.stack([np.zeros(shape, dtype) if g is None else g for g in grads], axis=d)


def unbind_backward_graph(grads, dim, sizes, dtype):
    from .tensor import Tensor
    d = dim % len(sizes)
    shape = list(sizes)
    del shape[d]
    return _ops().stack([Tensor._make(np.zeros(shape, dtype)) if g is None else g for g in grads], d)


def reshape(x, sizes):
    return np.reshape(x, tuple(sizes))


def reshape_graph(x, sizes):
    from .composites import reshape as _reshape
    return _reshape(x, tuple(sizes))


def permute_backward(grad, dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d % len(dims)] = i
    return np.transpose(grad, inverse)


def permute_backward_graph(grad, dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d % len(dims)] = i
    return _ops().permute(grad, tuple(inverse))


def unsqueeze_to(grad, dim, sizes):
    """Undo ``squeeze(dim)``: put the dim back if the input had size 1 there."""
    d = dim % max(len(sizes), 1)
    if len(sizes) and sizes[d] == 1:
        return np.expand_dims(grad, d)
    return grad


def unsqueeze_to_graph(grad, dim, sizes):
    d = dim % max(len(sizes), 1)
    if len(sizes) and sizes[d] == 1:
        return grad.unsqueeze(d)
    return grad


def full_like(x, value):
    return np.full_like(x, value)


def full_like_graph(x, value):
    from .factories import full_like as _full_like
    return _full_like(x, value)


def zeros_like(x):
    return np.zeros_like(x)


def zeros_like_graph(x):
    from .factories import zeros_like as _zeros_like
    return _zeros_like(x)


def cat_tensors_backward(grad, sizes, dim):
    """Gradient of ``cat``: the slice of ``grad`` each input contributed (empty 1-D inputs get zeros)."""
    out, offset = [], 0
    d = None
    for shape in sizes:
        if len(shape) == 1 and shape[0] == 0:
            out.append(np.zeros((0,), grad.dtype))
            continue
        d = dim % len(shape)
        idx = [slice(None)] * grad.ndim
        idx[d] = slice(offset, offset + shape[d])
        out.append(grad[tuple(idx)])
        offset += shape[d]
    return out


def cat_tensors_backward_graph(grad, sizes, dim):
    from .tensor import Tensor
    out, offset = [], 0
    for shape in sizes:
        if len(shape) == 1 and shape[0] == 0:
            out.append(Tensor._make(np.zeros((0,), grad.data.dtype)))
            continue
        d = dim % len(shape)
        out.append(_ops().narrow(grad, d, offset, shape[d]) if hasattr(_ops(), "narrow")
                   else _ops().slice(grad, d, offset, offset + shape[d], 1))
        offset += shape[d]
    return out


def stack_tensors_backward(grad, dim):
    d = dim % grad.ndim
    return [np.take(grad, i, axis=d) for i in range(grad.shape[d])]


def stack_tensors_backward_graph(grad, dim):
    d = dim % grad.dim()
    return list(_ops().unbind(grad, d))


# ---- metadata functions (plain values, same on both paths) -------------------------------------

def reduced_numel(sizes, dim):
    """How many elements each output of a reduction over ``dim`` averages."""
    n = 1
    for d in dims_list(dim, len(sizes)):
        n *= sizes[d]
    return n


def numel(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


TENSOR_FUNCTIONS = {
    "sum_to": (sum_to, sum_to_graph),
    "sum_backward": (sum_backward, sum_backward_graph),
    "expand": (expand, expand_graph),
    "split_backward": (split_backward, split_backward_graph),
    "split_with_sizes_backward": (split_with_sizes_backward, split_with_sizes_backward_graph),
    "unbind_backward": (unbind_backward, unbind_backward_graph),
    "reshape": (reshape, reshape_graph),
    "permute_backward": (permute_backward, permute_backward_graph),
    "unsqueeze_to": (unsqueeze_to, unsqueeze_to_graph),
    "full_like": (full_like, full_like_graph),
    "zeros_like": (zeros_like, zeros_like_graph),
    "cat_tensors_backward": (cat_tensors_backward, cat_tensors_backward_graph),
    "stack_tensors_backward": (stack_tensors_backward, stack_tensors_backward_graph),
}

META_FUNCTIONS = {
    "reduced_numel": reduced_numel,
    "numel": numel,
}


# ---- helpers of issue-3 rows (elementwise ops whose forward takes optional or str arguments) -----------
# Masks (which elements pass a gradient) are not differentiable, so the graph versions compute them from
# the arrays and only the arithmetic on ``grad`` goes through ops.

def _mask_tensor(m):
    from .tensor import Tensor
    return Tensor._make(np.asarray(m))


def _arr(v):
    """The array of a Tensor, or the value itself (None, a number, an array)."""
    return getattr(v, "data", v) if v is not None and not isinstance(v, (int, float)) else v


def isfinite(x):
    return np.isfinite(x)


def isfinite_graph(x):
    return _mask_tensor(np.isfinite(x.data))


def isnan(x):
    return np.isnan(x)


def isnan_graph(x):
    return _mask_tensor(np.isnan(x.data))


def _clamp_mask(self, mn, mx):
    mask = None
    if mn is not None:
        mask = self >= mn
    if mx is not None:
        m2 = self <= mx
        mask = m2 if mask is None else mask & m2
    return mask


def clamp_backward(grad, self, min, max):  # noqa: A002 - torch's argument names
    """Gradient of clamp for self: passes where ``min <= self <= max`` (bounds optional)."""
    mask = _clamp_mask(self, min, max)
    return grad if mask is None else np.where(mask, grad, grad.dtype.type(0))


def clamp_backward_graph(grad, self, min, max):  # noqa: A002
    mask = _clamp_mask(self.data, _arr(min), _arr(max))
    return grad if mask is None else _ops().where(_mask_tensor(mask), grad, 0.0)


def _clamp_min_max_masks(self, mn, mx):
    if mn is not None and mx is not None:
        return (self < mn) & (mn < mx), (self > mx) | (mx < mn)
    return (None if mn is None else self < mn), (None if mx is None else self > mx)


def clamp_backward_min_max(grad, self, min, max):  # noqa: A002
    """Gradients of clamp.Tensor for ``min`` and ``max`` (torch's clamp_backward_min_max)."""
    m_lo, m_hi = _clamp_min_max_masks(self, min, max)
    zero = grad.dtype.type(0)
    return (None if m_lo is None else np.where(m_lo, grad, zero),
            None if m_hi is None else np.where(m_hi, grad, zero))


def clamp_backward_min_max_graph(grad, self, min, max):  # noqa: A002
    m_lo, m_hi = _clamp_min_max_masks(self.data, _arr(min), _arr(max))
    return (None if m_lo is None else _ops().where(_mask_tensor(m_lo), grad, 0.0),
            None if m_hi is None else _ops().where(_mask_tensor(m_hi), grad, 0.0))


def _logit_mask(self, eps):
    if eps is None:
        return (self < 0) | (self > 1), np.nan
    return (self < eps) | (self > 1 - eps), 0.0


def logit_backward(grad, self, eps):
    """torch's logit_backward: grad / (x (1 - x)); 0 outside [eps, 1 - eps], NaN outside [0, 1] without eps."""
    mask, fill = _logit_mask(self, eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = grad / (self * (1 - self))
    return np.where(mask, g.dtype.type(fill), g)


def logit_backward_graph(grad, self, eps):
    mask, fill = _logit_mask(self.data, eps)
    return _ops().where(_mask_tensor(mask), fill, grad / (self * (1 - self)))


_SQRT1_2 = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327
_GELU_BETA = 0.7978845608028654   # sqrt(2 / pi)
_GELU_KAPPA = 0.044715


def gelu_backward(grad, self, approximate):
    """torch's gelu_backward for approximate='none' (erf) and 'tanh'."""
    if approximate == "tanh":
        inner = _GELU_BETA * (self + _GELU_KAPPA * self * self * self)
        t = np.tanh(inner)
        right = (0.5 * self) * (1 - t * t) * _GELU_BETA * (1 + 3 * _GELU_KAPPA * self * self)
        return grad * (0.5 * (1 + t) + right)
    from .forwards import _erf
    cdf = 0.5 * (1 + _erf(self * self.dtype.type(_SQRT1_2)))
    pdf = np.exp(-0.5 * self * self) * _INV_SQRT_2PI
    return grad * (cdf + self * pdf)


def gelu_backward_graph(grad, self, approximate):
    ops = _ops()
    if approximate == "tanh":
        t = ops.tanh(_GELU_BETA * (self + _GELU_KAPPA * self * self * self))
        right = (0.5 * self) * (1 - t * t) * _GELU_BETA * (1 + 3 * _GELU_KAPPA * self * self)
        return grad * (0.5 * (1 + t) + right)
    cdf = 0.5 * (1 + ops.erf(self * _SQRT1_2))
    pdf = ops.exp(-0.5 * self * self) * _INV_SQRT_2PI
    return grad * (cdf + self * pdf)


def zero_if_rounding(x, rounding_mode):
    """div with a rounding mode is piecewise constant: its gradient is zero (torch's convention)."""
    return x if rounding_mode is None else np.zeros_like(x)


def zero_if_rounding_graph(x, rounding_mode):
    return x if rounding_mode is None else zeros_like_graph(x)


TENSOR_FUNCTIONS.update({
    "isfinite": (isfinite, isfinite_graph),
    "isnan": (isnan, isnan_graph),
    "clamp_backward": (clamp_backward, clamp_backward_graph),
    "clamp_backward_min_max": (clamp_backward_min_max, clamp_backward_min_max_graph),
    "logit_backward": (logit_backward, logit_backward_graph),
    "gelu_backward": (gelu_backward, gelu_backward_graph),
    "zero_if_rounding": (zero_if_rounding, zero_if_rounding_graph),
})


# ---- reductions, indexing and nn helpers (issue 3) ----------------------------------------------------

def _T(a):
    from .tensor import Tensor
    return Tensor._make(np.asarray(a))


def zeros_like_sized(x, sizes):
    """Zeros of shape ``sizes`` with ``x``'s dtype (torch's ``grad.new_zeros(sizes)``)."""
    return np.zeros(tuple(sizes), x.dtype)


def zeros_like_sized_graph(x, sizes):
    return _T(np.zeros(tuple(sizes), x.data.dtype))


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
        grad = _ops().unsqueeze(grad, d)
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
    ops = _ops()
    n = x.shape[d]
    shape = list(x.shape)
    shape[d] = 1
    one = _T(np.ones(shape, x.data.dtype))
    left = ops.cat([one, ops.slice(ops.cumprod(x, d), d, 0, n - 1, 1)], d)
    right = ops.flip(ops.cat([one, ops.slice(ops.cumprod(ops.flip(x, [d]), d), d, 0, n - 1, 1)], d), [d])
    return left * right


def prod_backward(grad, self, result):
    if self.ndim == 0:
        return grad * np.ones_like(self)
    return grad * _prod_others(self.reshape(-1), 0).reshape(self.shape)


def prod_backward_graph(grad, self, result):
    if self.dim() == 0:
        return grad * _T(np.ones_like(self.data))
    return grad * _ops().view(_prod_others_graph(_ops().view(self, (-1,)), 0), tuple(self.shape))


def prod_dim_backward(grad, self, dim, keepdim):
    if self.ndim == 0:
        return grad * np.ones_like(self)
    d = dim % self.ndim
    return _restore(grad, self.ndim, d, keepdim) * _prod_others(self, d)


def prod_dim_backward_graph(grad, self, dim, keepdim):
    if self.dim() == 0:
        return grad * _T(np.ones_like(self.data))
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
    ops = _ops()
    if len(sizes) == 0:
        return ops.view(grad, ())
    d = dim % len(sizes)
    g, idx = (grad, indices) if keepdim else (ops.unsqueeze(grad, d), ops.unsqueeze(indices, d))
    return ops.scatter(_T(np.zeros(tuple(sizes), grad.data.dtype)), d, idx, g)


def _even_mask(self, result):
    return (self == result) | (np.isnan(self) & np.isnan(result))


def evenly_distribute_backward(grad, self, result):
    """Gradient of max()/min() over all elements: shared evenly among the tied extrema."""
    mask = _even_mask(self, result)
    return np.where(mask, grad / mask.sum(), grad.dtype.type(0))


def evenly_distribute_backward_graph(grad, self, result):
    mask = _even_mask(self.data, result.data)
    return _ops().where(_mask_tensor(mask), grad / float(mask.sum()), 0.0)


def _count_mask(self, result, dim, keepdim):
    r = _restore(result, self.ndim, dim, keepdim)
    mask = r == self
    axes = dims_list(dim, self.ndim) if self.ndim else None
    return mask, np.sum(mask, axis=axes, keepdims=True)


def scale_grad_by_count(grad, self, result, dim, keepdim):
    """Gradient of amax/amin: the restored grad shared evenly among the ties of each reduced slice."""
    mask, count = _count_mask(self, result, dim, keepdim)
    return np.where(mask, _restore(grad, self.ndim, dim, keepdim) / count.astype(grad.dtype), grad.dtype.type(0))


def scale_grad_by_count_graph(grad, self, result, dim, keepdim):
    mask, count = _count_mask(self.data, result.data, dim, keepdim)
    g = _restore_graph(grad, self.dim(), dim, keepdim) / _T(count.astype(grad.data.dtype))
    return _ops().where(_mask_tensor(mask), g, 0.0)


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
    ops = _ops()
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
    ops = _ops()
    nd = self.dim()
    g = _restore_graph(grad, nd, dim, keepdim)
    r = _restore_graph(result, nd, dim, keepdim)
    rd = _restore(result.data, nd, dim, keepdim)
    if ord == 0:
        return zeros_like_graph(self)
    if ord == 1:
        return ops.sign(self) * g
    if ord == 2:
        return self * ops.where(_mask_tensor(rd == 0), 0.0, g / r)
    if ord in (np.inf, -np.inf):
        mask = np.abs(self.data) == rd
        axes = dims_list(dim, nd) if nd else None
        count = _T(np.sum(mask, axis=axes, keepdims=True).astype(self.data.dtype))
        return ops.sign(self) * ops.where(_mask_tensor(mask), g / count, 0.0)
    if ord < 1:
        out = ops.sign(self) * ops.abs(self) ** (ord - 1) * g / r ** (ord - 1)
        return ops.where(_mask_tensor(self.data == 0), 0.0, out)
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
    ops = _ops()
    if self.dim() == 0:
        return grad
    d = dim % self.dim()
    if not (self.data == 0).any():
        return ops.flip(ops.cumsum(ops.flip(grad * result, [d]), d), [d]) / self
    n = self.shape[d]
    pieces = []
    for i in range(n):  # with zeros: prod_{k <= j, k != i} x_k by replacing x_i with 1
        mask = np.zeros(self.data.shape, bool)
        mask[(slice(None),) * d + (i,)] = True
        prods = ops.cumprod(ops.where(_mask_tensor(mask), 1.0, self), d)
        pieces.append(ops.sum(ops.slice(grad * prods, d, i, n, 1), [d], True))
    return ops.cat(pieces, d)


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
    ops = _ops()
    lead = len(repeats) - len(sizes)
    full = (1,) * lead + tuple(sizes)
    inter = []
    for r, s in zip(repeats, full):
        inter += [r, s]
    g = ops.sum(_composite_reshape(grad, tuple(inter)), list(range(0, 2 * len(full), 2)))
    return _composite_reshape(g, tuple(sizes))


def _composite_reshape(x, shape):
    from .composites import reshape as _reshape
    return _reshape(x, shape)


def _nll_scale(self, target, weight, reduction, ignore_index, total_weight):
    from .forwards import _nll_parts, reduction_enum
    x, safe, wi = _nll_parts(self, target, weight, ignore_index)
    if reduction_enum(reduction) == 1:
        with np.errstate(divide="ignore", invalid="ignore"):
            wi = wi / total_weight
    return x, safe, -wi


def nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight):
    """Gradient of nll_loss: -w[t] (/ total weight for 'mean') at each row's target class."""
    x, safe, scale = _nll_scale(self, target, weight, reduction, ignore_index, total_weight)
    out = np.zeros(x.shape, grad.dtype)
    g = np.broadcast_to(grad.reshape(-1) if grad.ndim else grad, (x.shape[0],))
    out[np.arange(x.shape[0]), safe] = g * scale.astype(grad.dtype)
    return out.reshape(self.shape)


def nll_loss_backward_graph(grad, self, target, weight, reduction, ignore_index, total_weight):
    ops = _ops()
    x, safe, scale = _nll_scale(self.data, target.data, None if weight is None else weight.data, reduction,
                                ignore_index, total_weight.data)
    n = x.shape[0]
    g = ops.expand(ops.view(grad, (-1,)) if grad.dim() else grad, (n,))
    vals = ops.unsqueeze(g * _T(scale.astype(grad.data.dtype)), 1)
    out = ops.scatter(_T(np.zeros(x.shape, grad.data.dtype)), 1, _T(safe.reshape(-1, 1)), vals)
    return ops.view(out, tuple(self.shape))


def _red_div(reduction, numel):
    from .forwards import reduction_enum
    return numel if reduction_enum(reduction) == 1 else 1


def binary_cross_entropy_backward(grad, self, target, weight, reduction):
    g = grad * (self - target) / np.maximum((1 - self) * self, 1e-12)
    if weight is not None:
        g = g * weight
    return g / self.dtype.type(_red_div(reduction, self.size))


def binary_cross_entropy_backward_graph(grad, self, target, weight, reduction):
    ops = _ops()
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
    ops = _ops()
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
    s = _ops().sigmoid(self)
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
    ops = _ops()
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
    ops = _ops()
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
    ops = _ops()
    idx, scale = _embedding_rows(grad.data, indices.data, sizes, padding_idx, scale_grad_by_freq)
    rows = _composite_reshape(grad, (-1, sizes[1])) * _T(scale[:, None])
    return ops.index_add(_T(np.zeros(tuple(sizes), grad.data.dtype)), 0, _T(idx), rows)


TENSOR_FUNCTIONS.update({
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
    "repeat_backward": (repeat_backward, repeat_backward_graph),
    "nll_loss_backward": (nll_loss_backward, nll_loss_backward_graph),
    "binary_cross_entropy_backward": (binary_cross_entropy_backward, binary_cross_entropy_backward_graph),
    "binary_cross_entropy_target_backward": (binary_cross_entropy_target_backward,
                                             binary_cross_entropy_target_backward_graph),
    "bce_with_logits_backward": (bce_with_logits_backward, bce_with_logits_backward_graph),
    "bce_with_logits_target_backward": (bce_with_logits_target_backward, bce_with_logits_target_backward_graph),
    "layer_norm_backward": (layer_norm_backward, layer_norm_backward_graph),
    "embedding_backward": (embedding_backward, embedding_backward_graph),
})


def neg_list(values):
    """``[-v for v in values]`` (roll's and constant_pad_nd's backward undo the shift / padding)."""
    return tuple(-v for v in values)


def reduction_divisor(numel, reduction):
    """What a loss's reduction divides by: the element count for 'mean', else 1."""
    return _red_div(reduction, numel)


META_FUNCTIONS.update({"neg_list": neg_list, "reduction_divisor": reduction_divisor})


def _strided_flat_index(size, stride, storage_offset):
    idx = np.full(tuple(size), storage_offset or 0, np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        idx = idx + (np.arange(n) * s).reshape(shape)
    return idx.reshape(-1)


def as_strided_backward(grad, sizes, size, stride, storage_offset):
    """Gradient of as_strided of a contiguous tensor: each view element's gradient added at its position."""
    out = np.zeros(int(np.prod(sizes)), grad.dtype)
    np.add.at(out, _strided_flat_index(size, stride, storage_offset), np.asarray(grad).reshape(-1))
    return out.reshape(tuple(sizes))


def as_strided_backward_graph(grad, sizes, size, stride, storage_offset):
    ops = _ops()
    zeros = _T(np.zeros(int(np.prod(sizes)), grad.data.dtype))
    flat = ops.index_put(zeros, [_T(_strided_flat_index(size, stride, storage_offset))],
                         _composite_reshape(grad, (-1,)), True)
    return ops.view(flat, tuple(sizes))


TENSOR_FUNCTIONS["as_strided_backward"] = (as_strided_backward, as_strided_backward_graph)
