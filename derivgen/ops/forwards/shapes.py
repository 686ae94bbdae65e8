"""View, shape and indexing forwards (views return numpy views of ``self``), and the forwards of
the backward rows that undo them (select_backward, slice_backward, diagonal_backward)."""
import builtins

import numpy as np

from derivgen.core.dtypes import scalar_type_name, to_numpy_dtype
from derivgen.core.sizes import dims_list, expand_view, infer_size, wrap_dim
from derivgen.core.tensor import promote_types


# ---- views and shape ops --------------------------------------------------------------------

def t(self, _name="t()"):
    if self.ndim > 2:
        raise RuntimeError(f"{_name} expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self.T


def transpose_int(self, dim0, dim1):
    d0, d1 = wrap_dim(dim0, self.ndim), wrap_dim(dim1, self.ndim)
    if self.ndim == 0:
        return self
    return np.swapaxes(self, d0, d1)


def t_(self):
    return t(self, "t_()")


def transpose_(self, dim0, dim1):
    return transpose_int(self, dim0, dim1)


def unsqueeze_(self, dim):
    return unsqueeze(self, dim)


def permute(self, dims):
    if len(dims) != self.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {self.ndim} is not equal to "
                           f"len(dims) = {len(dims)}")
    return np.transpose(self, [wrap_dim(d, self.ndim) for d in dims])


def view(self, size):
    shape = infer_size(size, self.size)
    if self.flags.c_contiguous:
        return self.reshape(shape)  # never a copy; copy=False's check costs 0.2 µs more
    try:
        return self.reshape(shape, copy=False)
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.") from None


def _unsafe_view(self, size):
    return np.reshape(self, infer_size(size, self.size))


def expand(self, size, *, implicit=False):
    size = list(size)
    if len(size) < self.ndim:
        raise RuntimeError(f"expand(derivgen.FloatTensor{{{list(self.shape)}}}, size={size}): the number of sizes "
                           f"provided ({len(size)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({self.ndim})")
    lead = len(size) - self.ndim
    target = []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                                   "non-existing dimension 0")
            target.append(s)
            continue
        cur = self.shape[i - lead]
        if s == -1:
            s = cur
        if cur != s and cur != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {size}.  Tensor sizes: "
                               f"{list(self.shape)}")
        target.append(s)
    # a view with zero strides on the expanded dims, writable like torch's (when self is): an in-place op
    # on it is refused when elements repeat (check_inplace), and a slice of it that repeats none can be
    # written, as in torch
    return expand_view(self, tuple(target), writeable=True)


def unsqueeze(self, dim):
    d = wrap_dim(dim, self.ndim + 1)
    shape = self.shape
    out = self.reshape(shape[:d] + (1,) + shape[d:])  # np.expand_dims's own way, without its axis checks
    if d == self.ndim and d and out.strides[d] != self.itemsize:
        # torch gives a new last dim stride 1 (numpy repeats the last stride of a non-contiguous array);
        # before it, numpy's size * stride of the next dim is torch's rule too
        out = np.lib.stride_tricks.as_strided(self, out.shape, self.strides + (self.itemsize,),
                                              writeable=self.flags.writeable)
    return out


def squeeze_dim(self, dim):
    d = wrap_dim(dim, self.ndim)
    if self.ndim == 0 or self.shape[d] != 1:
        return self.view()
    return np.squeeze(self, axis=d)


def clone(self, *, memory_format=None):
    return self.copy()


def _to_copy(self, *, dtype=None):
    return self.astype(to_numpy_dtype(dtype) if dtype is not None else self.dtype, copy=True)


def split_Tensor(self, split_size, dim=0):
    d = wrap_dim(dim, self.ndim)
    n = self.shape[d]
    if split_size <= 0 and n:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    starts = range(0, n, split_size) if n else [0]
    idx = [slice(None)] * self.ndim
    out = []
    for s in starts:
        idx[d] = slice(s, builtins.min(s + split_size, n))
        out.append(self[tuple(idx)])
    return out


def split_with_sizes(self, split_sizes, dim=0):
    d = wrap_dim(dim, self.ndim)
    if sum_ints(split_sizes) != self.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {self.shape[d]} (input tensor's "
                           f"size at dimension {d}), but got split_sizes={list(split_sizes)}")
    idx = [slice(None)] * self.ndim
    out, s = [], 0
    for k in split_sizes:
        idx[d] = slice(s, s + k)
        out.append(self[tuple(idx)])
        s += k
    return out


def unsafe_split_Tensor(self, split_size, dim=0):
    """split's pieces, which autograd does not track as views (they still share ``self``'s memory, as torch's)."""
    return split_Tensor(self, split_size, dim)


def unsafe_split_with_sizes(self, split_sizes, dim=0):
    return split_with_sizes(self, split_sizes, dim)


def sum_ints(xs):
    total = 0
    for x in xs:
        total += x
    return total


def unbind_int(self, dim=0):
    d = wrap_dim(dim, self.ndim)
    idx = [slice(None)] * self.ndim
    out = []
    for i in range(self.shape[d]):
        idx[d] = i
        out.append(self[tuple(idx) + (Ellipsis,)])  # the trailing ... keeps a 0-d result a view, not a scalar
    return out


def select_int(self, dim, index):
    d = wrap_dim(dim, self.ndim)
    n = self.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} at dimension {d}")
    idx = [slice(None)] * self.ndim
    idx[d] = index
    return self[tuple(idx) + (Ellipsis,)]  # the trailing ... keeps a 0-d result a view, not a scalar


def slice_Tensor(self, dim=0, start=None, end=None, step=1):
    d = wrap_dim(dim, self.ndim)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    idx = [slice(None)] * self.ndim
    idx[d] = slice(start, end, step)
    return self[tuple(idx)]


def cat(tensors, dim=0):
    arrays = [a for a in tensors if not (a.ndim == 1 and a.shape[0] == 0)]
    if not arrays:
        return np.concatenate(tensors)
    d = wrap_dim(dim, arrays[0].ndim)
    ref = arrays[0]
    for i, a in enumerate(arrays[1:], 1):
        if a.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {a.ndim}")
        for k in range(ref.ndim):
            if k != d and a.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {a.shape[k]} for tensor number {i} in the list.")
    dtype = arrays[0].dtype
    for a in arrays[1:]:
        dtype = promote_types(dtype, a.dtype)
    return np.concatenate([a.astype(dtype, copy=False) for a in arrays], axis=d)


def stack(tensors, dim=0):
    ref = tensors[0]
    for i, a in enumerate(tensors[1:], 1):
        if a.shape != ref.shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ref.shape)} at entry 0 "
                               f"and {list(a.shape)} at entry {i}")
    dtype = ref.dtype
    from derivgen.core.tensor import promote_types
    for a in tensors[1:]:
        dtype = promote_types(dtype, a.dtype)
    return np.stack([a.astype(dtype, copy=False) for a in tensors], axis=wrap_dim(dim, ref.ndim + 1))


def _logical_reduce(fn, self, dim, keepdim):
    """``all``/``any`` over everything (dim None) or one dim: bool, or uint8 for uint8 input (torch's)."""
    out_dtype = np.uint8 if self.dtype == np.uint8 else np.bool_
    if dim is None:
        return np.asarray(fn(self), dtype=out_dtype)
    d = wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return np.asarray(self != 0, dtype=out_dtype)
    return np.asarray(fn(self, axis=d, keepdims=keepdim), dtype=out_dtype)


def all(self):  # noqa: A001 - schema name
    return _logical_reduce(np.all, self, None, False)


def all_dim(self, dim, keepdim=False):
    return _logical_reduce(np.all, self, dim, keepdim)


def any(self):  # noqa: A001 - schema name
    return _logical_reduce(np.any, self, None, False)


def any_dim(self, dim, keepdim=False):
    return _logical_reduce(np.any, self, dim, keepdim)


def select_backward(grad_output, input_sizes, dim, index):
    out = np.zeros(tuple(input_sizes), grad_output.dtype)
    idx = [slice(None)] * len(input_sizes)
    idx[wrap_dim(dim, len(input_sizes))] = index
    out[tuple(idx)] = grad_output
    return out


def slice_backward(grad_output, input_sizes, dim, start, end, step):
    out = np.zeros(tuple(input_sizes), grad_output.dtype)
    idx = [slice(None)] * len(input_sizes)
    idx[wrap_dim(dim, len(input_sizes))] = slice(start, end, step)
    out[tuple(idx)] = grad_output
    return out


def squeeze(self):
    return np.squeeze(self)


# ---- shape ops and indexing -------------------------------------------------------------------

def squeeze_dims(self, dim):
    dims = dims_list(dim, self.ndim) if self.ndim else ()
    return np.squeeze(self, axis=tuple(d for d in dims if self.shape[d] == 1))


def squeeze_(self):
    return np.squeeze(self)


def squeeze__dim(self, dim):
    return squeeze_dim(self, dim)


def squeeze__dims(self, dim):
    return squeeze_dims(self, dim)


def repeat(self, repeats):
    repeats = tuple(repeats)
    if len(repeats) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    x = self.reshape((1,) * (len(repeats) - self.ndim) + self.shape)
    return np.tile(x, repeats)


def _idx_array(t):
    return getattr(t, "_array", t)


def _index_tuple(self, indices, op="index"):
    """torch's ``Tensor?[]`` indices as a numpy index tuple, with torch's range and mask checks."""
    out, d = [], 0
    for t in indices:
        if t is None:
            out.append(slice(None))
            d += 1
            continue
        a = np.asarray(_idx_array(t))
        if a.dtype == np.bool_:
            for k in range(a.ndim):
                if d + k >= self.ndim or a.shape[k] != self.shape[d + k]:
                    raise IndexError(f"The shape of the mask {list(a.shape)} at index {k} does not match the shape "
                                     f"of the indexed tensor {list(self.shape)} at index {d + k}")
            out.append(a)
            d += a.ndim
            continue
        if a.dtype.kind not in "iu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if d >= self.ndim:
            raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
        n = self.shape[d]
        bad = a[(a >= n) | (a < -n)]
        if bad.size:
            raise IndexError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {d} with size {n}")
        out.append(a)
        d += 1
    if d > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    return tuple(out)


def index_Tensor(self, indices):
    return np.array(self[_index_tuple(self, indices)])


def index_put(self, indices, values, accumulate=False):
    values = np.asarray(values)
    if values.dtype != self.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{scalar_type_name(self.dtype)} for the destination and "
                           f"{scalar_type_name(values.dtype)} for the source.")
    out = self.copy()
    idx = _index_tuple(self, indices, "index_put")
    if accumulate:
        np.add.at(out, idx, values)
    else:
        out[idx] = values
    return out


def _flat_positions(self, index, name):
    """``index`` (int64, any shape) as flat positions into ``self`` (torch's linear indexing of put/take)."""
    if index.dtype != np.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {scalar_type_name(index.dtype)}")
    flat = index.reshape(-1)
    n = self.size
    bad = flat[(flat >= n) | (flat < -n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor of {n} elements.")
    return flat


def put(self, index, source, accumulate=False):
    if index.size != source.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.size}, index.numel() = {index.size}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{scalar_type_name(self.dtype)} and source.dtype = {scalar_type_name(source.dtype)}")
    positions = _flat_positions(self, index, "put_")
    out = np.array(self, order="C")
    flat = out.reshape(-1)
    if accumulate:
        np.add.at(flat, positions, source.reshape(-1))
    else:
        flat[positions] = source.reshape(-1)
    return out


def take(self, index):
    return np.ascontiguousarray(self).reshape(-1)[_flat_positions(self, index, "take")].reshape(index.shape)


def _check_index_range(index, n, d):
    bad = index[(index >= n) | (index < -n)] if index.size else index[:0]
    if bad.size:
        raise RuntimeError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {d} with size {n}")


def _along(self, dim, index, name):
    """The dim of a gather/scatter along ``dim``; a 0-dim tensor counts as 1-dim (torch's rule)."""
    d = wrap_dim(dim, self.ndim)
    if max(index.ndim, 1) != max(self.ndim, 1):
        what = "input" if name == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} tensor")
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")
    return d


def _full_index(index, d):
    """An index tuple addressing ``index``'s positions with ``index`` itself along ``d``."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[d] = index
    return tuple(grids)


def gather(self, dim, index, *, sparse_grad=False):
    d = _along(self, dim, index, "gather")
    if self.ndim == 0:
        return np.broadcast_to(self, index.shape).copy()
    _check_index_range(index, self.shape[d], d)
    if index.ndim == 0:
        return self[index.reshape(1)].reshape(())
    for k in range(self.ndim):
        if k != d and index.shape[k] > self.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be "
                               f"no larger than self {list(self.shape)} apart from dimension {d}")
    return self[_full_index(index, d)]


def _scatter(self, dim, index, src, add):
    d = _along(self, dim, index, "scatter")
    if isinstance(src, np.ndarray) and src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    out = self.copy()
    if index.size == 0:
        return out
    if index.ndim == 0 and self.ndim == 1:
        index = index.reshape(1)
        src = src.reshape(1) if np.ndim(src) == 0 and isinstance(src, np.ndarray) else src
    _check_index_range(index, self.shape[d], d)
    if np.ndim(src):
        src = src[tuple(slice(0, s) for s in index.shape)]
    if add:
        np.add.at(out, _full_index(index, d), src)
    else:
        out[_full_index(index, d)] = src
    return out


def scatter_src(self, dim, index, src):
    return _scatter(self, dim, index, src, False)


def scatter_value(self, dim, index, value):
    return _scatter(self, dim, index, self.dtype.type(value), False)


def scatter_add(self, dim, index, src):
    return _scatter(self, dim, index, src, True)


def index_select(self, dim, index):
    d = wrap_dim(dim, self.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    n = self.shape[d] if self.ndim else 1
    if index.size and (index.max() >= n or index.min() < -n):
        raise IndexError("index out of range in self")
    if self.ndim == 0:
        return self.reshape(()).copy()
    return np.take(self, index.reshape(-1), axis=d)


def index_add(self, dim, index, source, *, alpha=1):
    d = wrap_dim(dim, self.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{scalar_type_name(index.dtype)} and size: {list(index.shape)}")
    if index.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_type_name(index.dtype)}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"index_add_(): self ({scalar_type_name(self.dtype)}) and source "
                           f"({scalar_type_name(source.dtype)}) must have the same scalar type")
    out = self.copy()
    src = source if alpha == 1 else source * self.dtype.type(alpha)
    if self.ndim == 0:
        return out + src
    np.add.at(out, (slice(None),) * d + (index.reshape(-1),), src)
    return out


def flip(self, dims):
    if self.ndim == 0:
        return self.copy()
    return np.flip(self, axis=tuple(wrap_dim(d, self.ndim) for d in dims)).copy()


def roll(self, shifts, dims=()):
    shifts, dims = tuple(shifts), tuple(dims)
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError(f"`shifts` required to be of size 1 when `dims` is empty, but got {len(shifts)}")
        return np.roll(self.reshape(-1), shifts[0]).reshape(self.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    return np.roll(self, shifts, axis=tuple(wrap_dim(d, self.ndim) for d in dims))


def tril(self, diagonal=0):
    if self.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return np.tril(self, diagonal)


def triu(self, diagonal=0):
    if self.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return np.triu(self, diagonal)


def diagonal(self, offset=0, dim1=0, dim2=1):
    d1, d2 = wrap_dim(dim1, self.ndim), wrap_dim(dim2, self.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    # a writable view (numpy's np.diagonal is read-only), so ``t.diagonal().fill_(1)`` writes into t
    moved = np.moveaxis(self, (d1, d2), (-2, -1))
    sub = moved[..., :, offset:] if offset >= 0 else moved[..., -offset:, :]
    k = min(sub.shape[-2], sub.shape[-1])
    return np.lib.stride_tricks.as_strided(sub, sub.shape[:-2] + (k,), sub.strides[:-2] + (sub.strides[-2] + sub.strides[-1],))


def diagonal_backward(grad_output, input_sizes, offset, dim1, dim2):
    n = len(input_sizes)
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    out = np.zeros(tuple(input_sizes), grad_output.dtype)
    moved = np.moveaxis(out, (d1, d2), (-2, -1))
    k = grad_output.shape[-1]
    rows = np.arange(k) + (-offset if offset < 0 else 0)
    cols = np.arange(k) + (offset if offset > 0 else 0)
    moved[..., rows, cols] = grad_output
    return out


def constant_pad_nd(self, pad, value=0):
    pad = list(pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > self.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. Pad "
                           f"length is {len(pad)} while the input has {self.ndim} dimensions.")
    crop = [slice(None)] * self.ndim
    widths = [(0, 0)] * self.ndim
    for i in range(len(pad) // 2):
        d = self.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        crop[d] = slice(-lo if lo < 0 else 0, self.shape[d] + hi if hi < 0 else None)
        widths[d] = (lo if lo > 0 else 0, hi if hi > 0 else 0)
    x = self[tuple(crop)]
    return np.pad(x, widths, mode="constant", constant_values=self.dtype.type(value))


def stable_argsort(a, axis, descending=False):
    """Indices that sort ``a`` along ``axis``, ties in their original order, NaN as the largest value (torch's
    order). Descending sorts the reversed array ascending and maps the indices back, so that ties keep their
    order and bool and unsigned arrays need no negation."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    idx = np.flip(np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable"), axis=axis)
    return (n - 1) - idx


def sort(self, dim=-1, descending=False):
    if self.ndim == 0:
        wrap_dim(dim, 0)
        return self.copy(), np.asarray(0, dtype=np.int64)
    d = wrap_dim(dim, self.ndim)
    idx = stable_argsort(self, d, descending)
    return np.take_along_axis(self, idx, axis=d), idx.astype(np.int64)


def sort_stable(self, stable=None, dim=-1, descending=False):
    # every sort here is stable, so ``stable`` changes nothing but the row (torch's SortBackward1)
    return sort(self, dim, descending)


def kthvalue(self, k, dim=-1, keepdim=False):
    d = wrap_dim(dim, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if self.ndim == 0:
        return self.copy(), np.asarray(0, dtype=np.int64)
    idx = np.take(stable_argsort(self, d), [k - 1], axis=d)
    values = np.take_along_axis(self, idx, axis=d)
    if not keepdim:
        idx, values = np.squeeze(idx, axis=d), np.squeeze(values, axis=d)
    return values, idx.astype(np.int64)


def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - schema name
    d = wrap_dim(dim, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if self.ndim == 0:
        return self.copy(), np.asarray(0, dtype=np.int64)
    idx = np.take(stable_argsort(self, d, largest), np.arange(k), axis=d)
    return np.take_along_axis(self, idx, axis=d), idx.astype(np.int64)
