"""Composite tensor functions as torch composes them (CompositeImplicitAutograd), so their graphs are
torch's: ``movedim`` (PermuteBackward0), ``tile`` (RepeatBackward0), ``broadcast_to`` (ExpandBackward0),
``meshgrid``, ``repeat_interleave``, ``take_along_dim`` (GatherBackward0), ``fliplr``/``flipud``,
``column_stack``, ``diff``, ``inner``, ``tensordot``, ``kron``, ``cartesian_prod``, ``diag``/``diagflat``
(DiagEmbedBackward0), ``ravel``, ``sum_to_size``, ``nanmean``; and functions without a gradient:
``nonzero``/``argwhere``, ``bincount``, ``signbit``, ``broadcast_shapes``, the ``is_*`` predicates."""
import numbers

import numpy as np

from derivgen.core import dtypes as _dt
from derivgen.core.grad_mode import is_grad_enabled
from derivgen.core.registry import aten
from derivgen.core.sizes import wrap_dim
from derivgen.core.tensor import Size, Tensor
from derivgen.kernels.dispatch import broadcast_shape
from derivgen.ops.composites import contiguous, flatten, reshape, vstack
from derivgen.ops.tensor_set import NotImplementedBackward


def _dims(dims):
    return [dims] if isinstance(dims, numbers.Integral) else list(dims)


def movedim(self, source, destination):
    """torch.movedim: a permute (PermuteBackward0)."""
    nd = self.dim()
    src = [wrap_dim(d, nd) for d in _dims(source)]
    dst = [wrap_dim(d, nd) for d in _dims(destination)]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({_dims(source)} dims) should "
                           f"contain the same number of dims as destination ({_dims(destination)} dims)")
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({_dims(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({_dims(destination)})")
    order = [-1] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in src)
    order = [o if o != -1 else next(rest) for o in order]
    return aten.permute(self, order)


def tile(self, dims):
    """torch.tile: repeat with the reps padded by leading ones (RepeatBackward0)."""
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(dims) < self.dim():
        dims = (1,) * (self.dim() - len(dims)) + dims
    return aten.repeat(self, list(dims))


def broadcast_to(self, size):
    return aten.expand(self, tuple(size))


def broadcast_shapes(*shapes):
    shapes = [(s,) if isinstance(s, numbers.Integral) else tuple(s) for s in shapes]
    return Size(broadcast_shape(shapes))


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shape([tuple(t.shape) for t in tensors])
    return tuple(aten.expand(t, shape) for t in tensors)


def meshgrid(*tensors, indexing=None):
    """torch.meshgrid: each input viewed along its own dim and expanded (ExpandBackward0)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        import warnings
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    swap = indexing == "xy" and len(tensors) >= 2
    ts = list(tensors)
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    out = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        out.append(aten.expand(aten.view(t, tuple(view)), shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
    """torch.repeat_interleave: an int count is unsqueeze + expand + clone + flatten (ViewBackward0); a
    tensor of counts is an index_select (IndexSelectBackward0); a lone tensor gives the repeated indices."""
    if repeats is None:  # repeat_interleave(repeats_tensor)
        counts = self._array
        return Tensor._make(np.repeat(np.arange(counts.size, dtype=np.int64), counts.reshape(-1)))
    x = self
    if dim is None:
        x = flatten(self)
        dim = 0
    d = wrap_dim(dim, x.dim())
    if isinstance(repeats, Tensor) and repeats.numel() != 1:
        counts = repeats._array.reshape(-1)
        if counts.size != x.shape[d]:
            raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{counts.size} and input.size({d}) = {x.shape[d]}")
        if (counts < 0).any():
            raise RuntimeError("repeats can not be negative")
        index = Tensor._make(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
        return aten.index_select(x, d, index)
    n = int(repeats.item() if isinstance(repeats, Tensor) else repeats)
    if n < 0:
        raise RuntimeError("Repeats must be non-negative")
    sizes = list(x.shape)
    expanded = sizes[:d + 1] + [n] + sizes[d + 1:]
    y = aten.expand(aten.unsqueeze(x, d + 1), tuple(expanded))
    return flatten(aten.clone(y), d, d + 1)


def take_along_dim(self, indices, dim=None):
    if dim is None:
        return aten.gather(flatten(self), 0, flatten(indices))
    d = wrap_dim(dim, self.dim())
    shape = list(broadcast_shape([tuple(self.shape[:d]) + tuple(self.shape[d + 1:]),
                                  tuple(indices.shape[:d]) + tuple(indices.shape[d + 1:])]))
    self_shape = shape[:d] + [self.shape[d]] + shape[d:]
    idx_shape = shape[:d] + [indices.shape[d]] + shape[d:]
    return aten.gather(aten.expand(self, tuple(self_shape)), d, aten.expand(indices, tuple(idx_shape)))


def fliplr(self):
    if self.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return aten.flip(self, [1])


def flipud(self):
    if self.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return aten.flip(self, [0])


def column_stack(tensors):
    cols = [reshape(t, (t.numel(), 1)) if t.dim() <= 1 else t for t in tensors]
    return aten.cat(cols, 1)


def row_stack(tensors):
    return vstack(tensors)


def diff(self, n=1, dim=-1, prepend=None, append=None):
    """torch.diff: ``x[1:] - x[:-1]`` along ``dim`` (narrow + sub), ``n`` times, after cat of prepend/append."""
    d = wrap_dim(dim, self.dim())
    x = self
    if prepend is not None or append is not None:
        parts = [p for p in (prepend, x, append) if p is not None]
        x = aten.cat(parts, d)
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        x = aten.sub(aten.slice(x, d, 1, size, 1), aten.slice(x, d, 0, size - 1, 1))
    return x


def tensordot(a, b, dims=2, out=None):
    """torch.tensordot: permute both operands, reshape to matrices, mm, reshape (ViewBackward0)."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, numbers.Integral):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims_a = list(range(a.dim() - dims, a.dim()))
        dims_b = list(range(dims))
    else:
        dims_a, dims_b = [_dims(x) for x in dims]
    dims_a = [wrap_dim(x, a.dim()) for x in dims_a]
    dims_b = [wrap_dim(x, b.dim()) for x in dims_b]
    free_a = [i for i in range(a.dim()) if i not in dims_a]
    free_b = [i for i in range(b.dim()) if i not in dims_b]
    size = int(np.prod([a.shape[i] for i in dims_a])) if dims_a else 1
    ra = reshape(aten.permute(a, free_a + dims_a), (int(np.prod([a.shape[i] for i in free_a])), size))
    rb = reshape(aten.permute(b, dims_b + free_b), (size, int(np.prod([b.shape[i] for i in free_b]))))
    return reshape(aten.mm(ra, rb), tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b))


def inner(self, other):
    if self.dim() == 0 or other.dim() == 0:
        return aten.mul(self, other)
    return tensordot(self, other, ([-1], [-1]))


def kron(self, other):
    """torch.kron: each operand ``_unsafe_view``-ed to interleave its dims with ones, multiplied, viewed to
    the product shape (UnsafeViewBackward0)."""
    nd = max(self.dim(), other.dim())
    pad_a, pad_b = nd - self.dim(), nd - other.dim()
    a_shape, b_shape, out_shape = [], [], []
    for i in range(nd):
        a = self.shape[i - pad_a] if i >= pad_a else 1
        b = other.shape[i - pad_b] if i >= pad_b else 1
        a_shape += [a, 1]
        b_shape += [1, b]
        out_shape.append(a * b)
    prod = aten.mul(aten._unsafe_view(self, tuple(a_shape)), aten._unsafe_view(other, tuple(b_shape)))
    return aten._unsafe_view(prod, tuple(out_shape))


def cartesian_prod(*tensors):
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return aten.stack([flatten(g) for g in grids], 1)


def diag(self, diagonal=0):
    """torch.diag: a 1-D input becomes a matrix (diag_embed: DiagEmbedBackward0); of a matrix, the
    ``diagonal``-th diagonal, copied (diagonal_copy: DiagonalBackward0_copy)."""
    if self.dim() == 1:
        return aten.diag_embed(self, diagonal)
    if self.dim() == 2:
        return aten.diagonal_copy(self, diagonal, 0, 1)
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{self.dim()}D")


def diagflat(self, offset=0):
    return aten.diag_embed(flatten(contiguous(self)), offset)


def ravel(self):
    return reshape(contiguous(self), (-1,))


def sum_to_size(self, *size):
    """The sum over the dims ``size`` broadcasts along (SumBackward1), then a view to ``size``."""
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    shape = tuple(self.shape)
    try:
        if broadcast_shape([size, shape]) != shape:
            raise ValueError
    except (ValueError, RuntimeError):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.") from None
    lead = len(shape) - len(size)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1]
    if not dims:
        return self
    out = aten.sum(self, dims, True)
    return aten.view(out, size) if lead else out


def nanmean(self, dim=None, keepdim=False, *, dtype=None):
    """torch.nanmean: ``nansum`` (NansumBackward0) over the count of non-NaN elements (DivBackward0)."""
    not_nan = aten.logical_not(aten.isnan(self))
    dims = None if dim is None else _dims(dim)
    count = aten.sum(not_nan, dims if dims is not None else list(range(self.dim())), keepdim) \
        if dims is not None or keepdim else aten.sum(not_nan)
    return aten.div(aten.nansum(self, dims, keepdim, dtype=dtype), count)


# ---- no gradient ---------------------------------------------------------------------------------------------

def nonzero(self, *, as_tuple=False, out=None):
    idx = np.nonzero(self._array) if self.dim() else np.nonzero(self._array.reshape(1))
    if as_tuple:
        if self.dim() == 0:
            return (Tensor._make(idx[0].astype(np.int64)),)
        return tuple(Tensor._make(np.ascontiguousarray(i, dtype=np.int64)) for i in idx)
    if self.dim() == 0:
        return Tensor._make(np.zeros((int(self._array != 0), 0), np.int64))
    return Tensor._make(np.ascontiguousarray(np.stack(idx, axis=1), dtype=np.int64))


def argwhere(self):
    return nonzero(self)


def where(condition, *args, **kwargs):
    """torch.where: ``where(condition, input, other)`` is the table's row; ``where(condition)`` alone is
    ``nonzero(condition, as_tuple=True)``."""
    if not args and not kwargs:
        return nonzero(condition, as_tuple=True)
    return aten.where(condition, *args, **kwargs)


def bincount(self, weights=None, minlength=0):
    a = self._array
    if a.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if a.dtype.kind not in "iub":
        raise RuntimeError(f'"bincount_cpu" not implemented for \'{_dt.scalar_type_name(a.dtype)}\'')
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return Tensor._make(np.bincount(a, minlength=minlength).astype(np.int64))
    w = weights._array
    out_dtype = w.dtype if w.dtype == np.float32 else np.float64
    counts = np.bincount(a, weights=w.astype(np.float64), minlength=minlength).astype(out_dtype)
    if is_grad_enabled() and weights.requires_grad:  # torch has no derivative for bincount
        return Tensor._make(counts, NotImplementedBackward("aten::bincount", (weights,)), 0)
    return Tensor._make(counts)


def signbit(self):
    a = self._array
    return Tensor._make(np.signbit(a) if a.dtype.kind == "f" else (a < 0) if a.dtype.kind == "i" else
                        np.zeros(a.shape, bool))


def is_floating_point(self):
    return self.dtype.is_floating_point


def is_complex(self):
    return False


def is_signed(self):
    return self._array.dtype.kind in "if"


def is_nonzero(self):
    n = self.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(self._array.reshape(-1)[0] != 0)


def is_same_size(self, other):
    return tuple(self.shape) == tuple(other.shape)


FUNCTIONS = {
    "movedim": movedim, "moveaxis": movedim, "tile": tile, "broadcast_to": broadcast_to,
    "broadcast_shapes": broadcast_shapes, "broadcast_tensors": broadcast_tensors, "meshgrid": meshgrid,
    "repeat_interleave": repeat_interleave, "take_along_dim": take_along_dim, "fliplr": fliplr, "flipud": flipud,
    "column_stack": column_stack, "row_stack": row_stack, "diff": diff, "tensordot": tensordot, "inner": inner,
    "kron": kron, "cartesian_prod": cartesian_prod, "diag": diag, "diagflat": diagflat, "ravel": ravel,
    "nanmean": nanmean, "nonzero": nonzero, "argwhere": argwhere, "where": where, "bincount": bincount, "signbit": signbit,
    "is_floating_point": is_floating_point, "is_complex": is_complex, "is_signed": is_signed,
    "is_nonzero": is_nonzero, "is_same_size": is_same_size,
}
METHODS = {
    "movedim": movedim, "moveaxis": movedim, "tile": tile, "broadcast_to": broadcast_to,
    "repeat_interleave": repeat_interleave, "take_along_dim": take_along_dim, "fliplr": fliplr, "flipud": flipud,
    "diff": diff, "inner": inner, "kron": kron, "diag": diag, "diagflat": diagflat, "ravel": ravel,
    "sum_to_size": sum_to_size, "nanmean": nanmean, "nonzero": nonzero, "argwhere": argwhere,
    "bincount": bincount, "signbit": signbit, "is_complex": is_complex, "is_signed": is_signed,
    "is_nonzero": is_nonzero, "is_same_size": is_same_size,
}
