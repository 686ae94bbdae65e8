"""Forwards of selection and structure rows: ``masked_select``, ``trace``, ``diag_embed``, ``median``,
``cummax``/``cummin``, ``glu``, ``norm``, ``_embedding_bag`` and the linear-algebra rows ``linalg_inv_ex``
and ``_linalg_det``, with torch's results (dtypes, tie rules) and error texts."""
import numpy as np

from derivgen.core.dtypes import scalar_type_name
from derivgen.core.sizes import wrap_dim
from derivgen.ops.forwards._common import _legacy_type_name
from derivgen.ops.forwards.reductions import linalg_vector_norm
from derivgen.ops.forwards.shapes import diagonal


def masked_select(self, mask):
    if mask.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    a, m = np.broadcast_arrays(self, mask)
    return np.ascontiguousarray(a[m])


def trace(self):
    if self.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
    out_dtype = np.int64 if self.dtype.kind in "biu" else self.dtype
    return np.asarray(np.trace(self, dtype=out_dtype), dtype=out_dtype)


def diagonal_copy(self, offset=0, dim1=0, dim2=1):
    return np.ascontiguousarray(diagonal(self, offset, dim1, dim2))


def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    nd = self.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = self.shape[-1] if self.ndim else 1
    m = n + abs(offset)
    values = self.reshape(self.shape[:-1] + (n,)) if self.ndim else self.reshape(1)
    tmp = np.zeros(values.shape[:-1] + (m, m), self.dtype)
    i = np.arange(n)
    rows, cols = (i, i + offset) if offset >= 0 else (i - offset, i)
    tmp[..., rows, cols] = values
    return np.ascontiguousarray(np.moveaxis(tmp, (-2, -1), (d1, d2)))


def median(self):
    """The lower of the two middle values of all elements (NaN when there is one), as torch."""
    if self.size == 0:
        return np.asarray(np.nan, self.dtype) if self.dtype.kind == "f" else np.asarray(0, self.dtype)
    flat = self.reshape(-1)
    if self.dtype.kind == "f" and np.isnan(flat).any():
        return np.asarray(np.nan, self.dtype)
    return np.asarray(np.sort(flat, kind="stable")[(flat.size - 1) // 2], self.dtype)


def median_dim(self, dim, keepdim=False):
    """Values and indices of the lower median along ``dim`` (a NaN in a row is its median, at the first
    NaN, as torch's CPU kernel picks)."""
    d = wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    if self.shape[d] == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    a = np.moveaxis(self, d, -1)
    order = np.argsort(a, axis=-1, kind="stable")
    k = (a.shape[-1] - 1) // 2
    idx = order[..., k]
    if self.dtype.kind == "f":
        nan_rows = np.isnan(a).any(axis=-1)
        if nan_rows.any():
            idx = np.where(nan_rows, np.argmax(np.isnan(a), axis=-1), idx)
    values = np.take_along_axis(a, idx[..., None], -1)[..., 0]
    if keepdim:
        values, idx = np.expand_dims(values, d), np.expand_dims(idx, d)
    return np.ascontiguousarray(values), np.ascontiguousarray(idx.astype(np.int64))


def _cumulative_extreme(self, dim, better):
    """Running max/min along ``dim`` and the index where it was taken: a later equal value takes over
    (torch's ``>=`` / ``<=``), and a NaN holds the running value from where it appears."""
    if self.ndim == 0:
        wrap_dim(dim, 0)
        return self.copy(), np.zeros((), np.int64)
    d = wrap_dim(dim, self.ndim)
    a = np.moveaxis(self, d, -1)
    values = np.empty_like(a)
    indices = np.empty(a.shape, np.int64)
    if a.shape[-1]:
        cur, where = a[..., 0].copy(), np.zeros(a.shape[:-1], np.int64)
        for i in range(a.shape[-1]):
            x = a[..., i]
            take = better(x, cur)
            if a.dtype.kind == "f":
                take = (np.isnan(x) | (take & ~np.isnan(cur)))
            cur = np.where(take, x, cur)
            where = np.where(take, i, where)
            values[..., i], indices[..., i] = cur, where
    return (np.ascontiguousarray(np.moveaxis(values, -1, d)), np.ascontiguousarray(np.moveaxis(indices, -1, d)))


def cummax(self, dim):
    return _cumulative_extreme(self, dim, np.greater_equal)


def cummin(self, dim):
    return _cumulative_extreme(self, dim, np.less_equal)


def glu(self, dim=-1):
    if self.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, self.ndim)
    n = self.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, b = np.split(self, 2, axis=d)
    return a / (1 + np.exp(-b))


def norm_Scalar(self, p=2):
    return linalg_vector_norm(self, 2 if p is None else p)


def norm_ScalarOpt_dim(self, p, dim, keepdim=False):
    return linalg_vector_norm(self, 2 if p is None else p, dim, keepdim)


# ---- _embedding_bag ---------------------------------------------------------------------------------------

def _bags(indices, offsets, include_last_offset):
    """(offset2bag, bag count): the bag of each index position (a bag may be empty)."""
    starts = offsets[:-1] if include_last_offset else offsets
    offset2bag = np.searchsorted(starts, np.arange(indices.shape[0]), side="right") - 1
    return offset2bag.astype(np.int64), len(starts)


def _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                   per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    """torch's ``_embedding_bag``: (output, offset2bag, bag_size, max_indices). Each bag reduces the
    weight rows of its indices (``padding_idx`` skipped); an empty bag is zeros."""
    for name, t in (("indices", indices), ("offsets", offsets)):
        if t.dtype.kind not in "iu":
            raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the following scalar "
                               f"types: Long, Int; but got {_legacy_type_name(t)} instead (while checking "
                               "arguments for embedding_bag)")
    if indices.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {indices.ndim}")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    n_rows, dim = weight.shape
    if indices.size and (indices.max() >= n_rows or indices.min() < 0):
        raise IndexError("index out of range in self")
    if offsets.size and offsets[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                           f"from position 0. However, got {int(offsets[0])}\n[ {_legacy_type_name(offsets)}{{}} ]")
    if offsets.size and offsets[-1] > indices.shape[0]:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {indices.shape[0]} but got "
                           f"offsets[-1] of {int(offsets[-1])}")
    offset2bag, bags = _bags(indices, offsets, include_last_offset)
    keep = indices != padding_idx if padding_idx >= 0 else np.ones(indices.shape, bool)
    bag_size = np.zeros(bags, np.int64)
    np.add.at(bag_size, offset2bag[keep], 1)
    rows = weight[indices]
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    out = np.zeros((bags, dim), weight.dtype)
    max_indices = np.zeros((bags, dim) if mode == 2 else (0,), np.int64)
    if mode in (0, 1):
        np.add.at(out, offset2bag[keep], rows[keep])
        if mode == 1:
            out = out / np.maximum(bag_size, 1)[:, None].astype(weight.dtype)
    else:
        best = np.full((bags, dim), -np.inf, weight.dtype)
        for i in np.nonzero(keep)[0]:
            b = offset2bag[i]
            better = rows[i] > best[b]
            best[b] = np.where(better, rows[i], best[b])
            max_indices[b] = np.where(better, indices[i], max_indices[b])
        out = np.where(bag_size[:, None] > 0, best, 0).astype(weight.dtype)
    return out, offset2bag, bag_size, max_indices


# ---- linear algebra ---------------------------------------------------------------------------------------

def _check_square(A, op):
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if A.dtype.kind != "f":
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(A.dtype)}")


def _first_zero_pivot(m):
    """LAPACK getrf's ``info`` for one matrix: the 1-based column of the first exactly zero pivot of its LU
    factorization with partial pivoting (0 when there is none). Only a failed inversion asks, so a plain
    loop over the columns suffices."""
    a = np.array(m, np.float64)
    n = a.shape[0]
    for j in range(n):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        if a[p, j] == 0:
            return j + 1
        if p != j:
            a[[j, p]] = a[[p, j]]
        a[j + 1:, j] /= a[j, j]
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return 0


def _singular_pivot(A):
    """The first zero pivot (LAPACK's info) of each matrix of A."""
    return [_first_zero_pivot(m) for m in A.reshape((-1,) + A.shape[-2:])]


def linalg_inv_ex(A, *, check_errors=False):
    _check_square(A, "linalg.inv")
    info = np.zeros(A.shape[:-2], np.int32)
    try:
        with np.errstate(all="ignore"):
            inv = np.linalg.inv(A)
    except np.linalg.LinAlgError:
        infos = _singular_pivot(A)
        info = np.asarray(infos, np.int32).reshape(A.shape[:-2])
        inv = np.full(A.shape, np.nan, A.dtype)
    return np.ascontiguousarray(inv.astype(A.dtype, copy=False)), info


def _linalg_det(A):
    _check_square(A, "linalg.det")
    with np.errstate(all="ignore"):
        return np.asarray(np.linalg.det(A), A.dtype)

