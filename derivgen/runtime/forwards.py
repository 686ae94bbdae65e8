"""Hand-written forwards of the non-elementwise rows of ``formulas.yaml``, one small numpy function
each, bound to its row by schema name (``sum.dim_IntList`` -> ``sum_dim_IntList``).

Each takes and returns numpy arrays (a list for ``Tensor[]`` returns, a tuple for tuple returns).
View rows (``-> Tensor(a)``) must return a numpy view of ``self``. Errors name the op and the shapes,
with PyTorch's wording.
"""
import builtins

import numpy as np

from .dtypes import to_numpy_dtype
from .shape_utils import dims_list, infer_size, wrap_dim

_TYPE_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int", "bool": "bool"}


def _tn(a):
    return _TYPE_NAMES.get(a.dtype.name, a.dtype.name)


def _reduce_dtype(self, dtype):
    if dtype is not None:
        return to_numpy_dtype(dtype)
    if self.dtype.kind in "biu":
        return np.dtype(np.int64)
    return self.dtype


# ---- reductions ------------------------------------------------------------------------------

def sum(self, *, dtype=None):  # noqa: A001 - schema name
    return np.asarray(np.add.reduce(self, axis=None, dtype=_reduce_dtype(self, dtype)))


def sum_dim_IntList(self, dim, keepdim=False, *, dtype=None):
    axes = dims_list(dim, self.ndim)
    return np.asarray(np.add.reduce(self, axis=axes, keepdims=keepdim, dtype=_reduce_dtype(self, dtype)))


def _mean_check(self, dtype):
    out = to_numpy_dtype(dtype) if dtype is not None else self.dtype
    if out.kind != "f":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_tn(self).title()}")
    return out


def mean(self, *, dtype=None):
    out = _mean_check(self, dtype)
    return np.asarray(np.mean(self, dtype=out), dtype=out)


def mean_dim(self, dim, keepdim=False, *, dtype=None):
    out = _mean_check(self, dtype)
    return np.asarray(np.mean(self, axis=dims_list(dim, self.ndim), keepdims=keepdim, dtype=out), dtype=out)


# ---- linear algebra -------------------------------------------------------------------------

def mm(self, mat2):
    if self.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    if self.dtype != mat2.dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: {_tn(self)} != {_tn(mat2)}")
    return self @ mat2


def mv(self, vec):
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.ndim}, {vec.ndim}")
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({self.shape[0]}), mat ({self.shape[0]}x{self.shape[1]}), "
                           f"vec ({vec.shape[0]})")
    if self.dtype != vec.dtype:
        raise RuntimeError(f"expected scalar type {_tn(self).title()} but found {_tn(vec).title()}")
    return self @ vec


def dot(self, tensor):
    if self.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {tensor.ndim}D tensors")
    if self.shape[0] != tensor.shape[0]:
        raise RuntimeError("inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of "
                           "elements, but got {} and {} elements respectively".format(
                               self.shape[0], tensor.shape[0], self.shape[0], tensor.shape[0]))
    if self.dtype != tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_tn(self).title()} and "
                           f"{_tn(tensor).title()}")
    return np.asarray(self @ tensor)


def bmm(self, mat2):
    if self.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (bmm: got {list(self.shape)} and {list(mat2.shape)})")
    if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{self.shape[0]}, "
                           f"{self.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    return np.matmul(self, mat2)


# ---- views and shape ops --------------------------------------------------------------------

def t(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self.T


def transpose_int(self, dim0, dim1):
    d0, d1 = wrap_dim(dim0, self.ndim), wrap_dim(dim1, self.ndim)
    if self.ndim == 0:
        return self
    return np.swapaxes(self, d0, d1)


def permute(self, dims):
    if len(dims) != self.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {self.ndim} is not equal to "
                           f"len(dims) = {len(dims)}")
    return np.transpose(self, [wrap_dim(d, self.ndim) for d in dims])


def view(self, size):
    shape = infer_size(size, self.size)
    try:
        return np.reshape(self, shape, copy=False)
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
    return np.broadcast_to(self, tuple(target))


def unsqueeze(self, dim):
    return np.expand_dims(self, wrap_dim(dim, self.ndim + 1))


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
        out.append(self[tuple(idx)])
    return out


def select_int(self, dim, index):
    d = wrap_dim(dim, self.ndim)
    n = self.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} at dimension {d}")
    idx = [slice(None)] * self.ndim
    idx[d] = index
    return self[tuple(idx)]


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
        from .tensor import promote_types
        dtype = promote_types(dtype, a.dtype)
    return np.concatenate([a.astype(dtype, copy=False) for a in arrays], axis=d)


def stack(tensors, dim=0):
    ref = tensors[0]
    for i, a in enumerate(tensors[1:], 1):
        if a.shape != ref.shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ref.shape)} at entry 0 "
                               f"and {list(a.shape)} at entry {i}")
    return np.stack(tensors, axis=wrap_dim(dim, ref.ndim + 1))


def all(self):  # noqa: A001 - schema name
    return np.asarray(np.all(self))


def any(self):  # noqa: A001 - schema name
    return np.asarray(np.any(self))


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


# ---- elementwise rows with a hand-written forward (optional Scalars, str arguments) ------------------

def _promoted(*arrays):
    """torch's result dtype of the arrays (0-dim arrays rank below dimensioned ones, as in torch)."""
    from .tensor import result_dtype
    dt = result_dtype(*[a for a in arrays if a is not None])
    if dt.kind != "f":
        from .dtypes import get_default_dtype
        dt = get_default_dtype().np
    return dt


def _erf(a):
    from ..generated import kernels
    return kernels.erf_forward((a,), ())


def logit(self, eps=None):
    x = self if eps is None else np.clip(self, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x / (1 - x))


def floor(self):
    return np.floor(self)


def ceil(self):
    return np.ceil(self)


def round(self):  # noqa: A001 - schema name
    return np.round(self)


def round_decimals(self, *, decimals):
    if decimals == 0:
        return np.round(self)
    scale = self.dtype.type(10.0 ** decimals) if decimals > 0 else self.dtype.type(10.0 ** -decimals)
    if decimals > 0:
        return np.round(self * scale) / scale
    return np.round(self / scale) * scale


def trunc(self):
    return np.trunc(self)


def frac(self):
    return self - np.trunc(self)


def _clamp_check(mn, mx):
    if mn is None and mx is None:
        raise RuntimeError("derivgen.clamp: At least one of 'min' or 'max' must not be None")


def clamp_Tensor(self, min=None, max=None):  # noqa: A002 - schema names
    _clamp_check(min, max)
    dt = _promoted(self, min, max)
    out = self.astype(dt, copy=True)
    if min is not None:
        out = np.where(out < min, min.astype(dt), out)
    if max is not None:
        out = np.where(out > max, max.astype(dt), out)
    return np.asarray(out, dtype=dt)


def clamp(self, min=None, max=None):  # noqa: A002 - schema names
    _clamp_check(min, max)
    out = self if self.dtype.kind == "f" else self.astype(_promoted(self))
    if min is not None:
        out = np.where(out < min, out.dtype.type(min), out)
    if max is not None:
        out = np.where(out > max, out.dtype.type(max), out)
    return np.asarray(out, dtype=out.dtype)


def nan_to_num(self, nan=None, posinf=None, neginf=None):
    if self.dtype.kind != "f":
        return self.copy()
    info = np.finfo(self.dtype)
    return np.nan_to_num(self, nan=0.0 if nan is None else nan,
                         posinf=info.max if posinf is None else posinf,
                         neginf=info.min if neginf is None else neginf)


def gelu(self, *, approximate="none"):
    if approximate == "tanh":
        k = self.dtype.type(0.7978845608028654)  # sqrt(2 / pi)
        return self.dtype.type(0.5) * self * (1 + np.tanh(k * (self + self.dtype.type(0.044715) * self ** 3)))
    if approximate != "none":
        raise RuntimeError("approximate argument must be either none or tanh.")
    return self.dtype.type(0.5) * self * (1 + _erf(self * self.dtype.type(0.7071067811865476)))


def _div_round(q, rounding_mode):
    if rounding_mode is None:
        return q
    if rounding_mode == "trunc":
        return np.trunc(q)
    if rounding_mode == "floor":
        return np.floor(q)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                       f"'{rounding_mode}'")


def div_Tensor_mode(self, other, *, rounding_mode):
    if rounding_mode is not None and self.dtype.kind in "biu" and other.dtype.kind in "biu":
        if rounding_mode == "floor":
            return np.floor_divide(self, other)
        return np.asarray(np.trunc(self / other), dtype=np.int64)
    dt = _promoted(self, other)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(_div_round(self.astype(dt) / other.astype(dt), rounding_mode), dtype=dt)


def div_Scalar_mode(self, other, *, rounding_mode):
    return div_Tensor_mode(self, np.asarray(other), rounding_mode=rounding_mode)


def _binary_float(fn, self, other):
    dt = _promoted(self, other)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(fn(self.astype(dt), np.asarray(other).astype(dt)), dtype=dt)


def fmax(self, other):
    return _binary_float(np.fmax, self, other)


def fmin(self, other):
    return _binary_float(np.fmin, self, other)


def remainder_Scalar(self, other):
    return _binary_float(np.remainder, self, np.asarray(other))


def remainder_Tensor(self, other):
    return _binary_float(np.remainder, self, other)


def fmod_Scalar(self, other):
    return _binary_float(np.fmod, self, np.asarray(other))


def fmod_Tensor(self, other):
    return _binary_float(np.fmod, self, other)


# ---- reductions (issue 3) ------------------------------------------------------------------------------

def _red_dtype(self, dtype):
    return _reduce_dtype(self, dtype)


def prod(self, *, dtype=None):
    return np.asarray(np.prod(self, dtype=_reduce_dtype(self, dtype)))


def prod_dim_int(self, dim, keepdim=False, *, dtype=None):
    d = wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return np.asarray(self, dtype=_reduce_dtype(self, dtype)).copy()
    return np.asarray(np.prod(self, axis=d, keepdims=keepdim, dtype=_reduce_dtype(self, dtype)))


def _check_nonempty(self, name, d=None):
    if self.size == 0:
        if d is None:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        raise RuntimeError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _select_dim(self, dim, keepdim, arg, name):
    d = wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return self.copy(), np.asarray(0, dtype=np.int64)
    if self.shape[d] == 0:
        _check_nonempty(self, name, d)
    idx = arg(self, axis=d, keepdims=True)
    values = np.take_along_axis(self, idx, axis=d)
    if not keepdim:
        idx, values = np.squeeze(idx, d), np.squeeze(values, d)
    return values, np.asarray(idx, dtype=np.int64)


def max_dim(self, dim, keepdim=False):
    return _select_dim(self, dim, keepdim, np.argmax, "max")


def min_dim(self, dim, keepdim=False):
    return _select_dim(self, dim, keepdim, np.argmin, "min")


def max(self):  # noqa: A001 - schema name
    _check_nonempty(self, "max")
    return np.asarray(np.max(self))


def min(self):  # noqa: A001 - schema name
    _check_nonempty(self, "min")
    return np.asarray(np.min(self))


def amax(self, dim=(), keepdim=False):
    return np.asarray(np.max(self, axis=dims_list(dim, self.ndim) if self.ndim else None, keepdims=keepdim))


def amin(self, dim=(), keepdim=False):
    return np.asarray(np.min(self, axis=dims_list(dim, self.ndim) if self.ndim else None, keepdims=keepdim))


def _arg_reduce(fn, self, dim, keepdim):
    if dim is None:
        out = np.asarray(fn(self.reshape(-1)), dtype=np.int64)
        return out.reshape((1,) * self.ndim) if keepdim else out
    if self.ndim == 0:
        wrap_dim(dim, 0)
        return np.asarray(0, dtype=np.int64)
    return np.asarray(fn(self, axis=wrap_dim(dim, self.ndim), keepdims=keepdim), dtype=np.int64)


def argmax(self, dim=None, keepdim=False):
    return _arg_reduce(np.argmax, self, dim, keepdim)


def argmin(self, dim=None, keepdim=False):
    return _arg_reduce(np.argmin, self, dim, keepdim)


def logsumexp(self, dim, keepdim=False):
    if self.ndim == 0:
        return self.astype(self.dtype if self.dtype.kind == "f" else np.float32, copy=True)
    axes = dims_list(dim, self.ndim)
    m = np.max(self, axis=axes, keepdims=True)
    m = np.where(np.isinf(m), 0, m)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(self - m), axis=axes, keepdims=True)) + m
    return np.asarray(out if keepdim else np.squeeze(out, axes), dtype=self.dtype)


def _var(self, dim, correction, keepdim):
    axes = dims_list(dim, self.ndim) if self.ndim else None
    c = 1 if correction is None else correction
    n = self.size if axes is None else int(np.prod([self.shape[a] for a in axes]))
    mean = np.mean(self, axis=axes, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sum((self - mean) ** 2, axis=axes, keepdims=keepdim) / self.dtype.type(_max0(n - c))
    return np.asarray(out, dtype=self.dtype), np.asarray(mean if keepdim else np.squeeze(mean, axes), dtype=self.dtype)


def _max0(v):
    return v if v > 0 else 0


def var_correction(self, dim=None, *, correction=None, keepdim=False):
    return _var(self, dim, correction, keepdim)[0]


def std_correction(self, dim=None, *, correction=None, keepdim=False):
    return np.sqrt(_var(self, dim, correction, keepdim)[0])


def var_mean_correction(self, dim=None, *, correction=None, keepdim=False):
    return _var(self, dim, correction, keepdim)


def std_mean_correction(self, dim=None, *, correction=None, keepdim=False):
    v, m = _var(self, dim, correction, keepdim)
    return np.sqrt(v), m


def linalg_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None):
    x = self.astype(to_numpy_dtype(dtype)) if dtype is not None else self
    axes = dims_list(dim, x.ndim) if x.ndim else None
    a = np.abs(x)
    if ord == np.inf:
        out = np.max(a, axis=axes, keepdims=keepdim)
    elif ord == -np.inf:
        out = np.min(a, axis=axes, keepdims=keepdim)
    elif ord == 0:
        out = np.sum(a != 0, axis=axes, keepdims=keepdim).astype(x.dtype)
    elif ord == 1:
        out = np.sum(a, axis=axes, keepdims=keepdim)
    elif ord == 2:
        out = np.sqrt(np.sum(a * a, axis=axes, keepdims=keepdim))
    else:
        out = np.sum(a ** ord, axis=axes, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(out, dtype=x.dtype)


def cumsum(self, dim, *, dtype=None):
    if self.ndim == 0:
        wrap_dim(dim, 0)
        return self.astype(_reduce_dtype(self, dtype), copy=True)
    return np.cumsum(self, axis=wrap_dim(dim, self.ndim), dtype=_reduce_dtype(self, dtype))


def cumprod(self, dim, *, dtype=None):
    if self.ndim == 0:
        wrap_dim(dim, 0)
        return self.astype(_reduce_dtype(self, dtype), copy=True)
    return np.cumprod(self, axis=wrap_dim(dim, self.ndim), dtype=_reduce_dtype(self, dtype))


# ---- linear algebra (issue 3) --------------------------------------------------------------------------

def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    prod = mm(mat1, mat2)
    out_shape = prod.shape
    try:
        np.broadcast_shapes(self.shape, out_shape)
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({out_shape[-1]}) must match the existing size "
                           f"({self.shape[-1]}) at non-singleton dimension {len(out_shape) - 1}.  Target sizes: "
                           f"{list(out_shape)}.  Tensor sizes: {list(self.shape)}") from None
    out = prod if alpha == 1 else prod * prod.dtype.type(alpha)
    if beta != 0:
        out = out + (self if beta == 1 else self * self.dtype.type(beta))
    return np.asarray(np.broadcast_to(out, out_shape), dtype=prod.dtype).copy()


def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    prod = bmm(batch1, batch2)
    out = prod if alpha == 1 else prod * prod.dtype.type(alpha)
    if beta != 0:
        out = out + (self if beta == 1 else self * self.dtype.type(beta))
    return np.asarray(np.broadcast_to(out, prod.shape), dtype=prod.dtype).copy()


# ---- shape ops and indexing (issue 3) -------------------------------------------------------------------

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
    return getattr(t, "data", t)


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
    out = self.copy()
    idx = _index_tuple(self, indices, "index_put")
    values = np.asarray(values, dtype=self.dtype)
    if accumulate:
        np.add.at(out, idx, values)
    else:
        out[idx] = values
    return out


def _check_index_range(index, n, d):
    bad = index[(index >= n) | (index < -n)] if index.size else index[:0]
    if bad.size:
        raise RuntimeError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {d} with size {n}")


def _along(self, dim, index, name):
    d = wrap_dim(dim, self.ndim)
    if index.ndim != self.ndim and not (self.ndim == 0 and index.ndim <= 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {name} tensor")
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
    for k in range(self.ndim):
        if k != d and index.shape[k] > self.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be "
                               f"no larger than self {list(self.shape)} apart from dimension {d}")
    return self[_full_index(index, d)]


def _scatter(self, dim, index, src, add):
    d = _along(self, dim, index, "scatter")
    out = self.copy()
    if index.size == 0:
        return out
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
    return np.diagonal(self, offset, d1, d2)


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


def sort(self, dim=-1, descending=False):
    if self.ndim == 0:
        return self.copy(), np.asarray(0, dtype=np.int64)
    d = wrap_dim(dim, self.ndim)
    idx = np.argsort(-self if descending else self, axis=d, kind="stable")
    return np.take_along_axis(self, idx, axis=d), idx.astype(np.int64)


def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - schema name
    d = wrap_dim(dim, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if self.ndim == 0:
        return self.copy(), np.asarray(0, dtype=np.int64)
    idx = np.argsort(-self if largest else self, axis=d, kind="stable")
    idx = np.take(idx, np.arange(k), axis=d)
    return np.take_along_axis(self, idx, axis=d), idx.astype(np.int64)


# ---- torch.nn.functional rows (issue 3) ------------------------------------------------------------

def _softmax(self, dim, half_to_float):
    if self.ndim == 0:
        return np.ones_like(self)
    d = wrap_dim(dim, self.ndim)
    e = np.exp(self - np.max(self, axis=d, keepdims=True))
    return e / np.sum(e, axis=d, keepdims=True)


def _log_softmax(self, dim, half_to_float):
    if self.ndim == 0:
        return np.zeros_like(self)
    d = wrap_dim(dim, self.ndim)
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
                           f"Long, Int; but got {indices.dtype} instead")
    n = weight.shape[0]
    if indices.size and (indices.max() >= n or indices.min() < 0):
        raise IndexError("index out of range in self")
    return np.take(weight, indices, axis=0)


# ---- in-place rows (issue 3): row functions return the result; squeeze_/zero_/fill_ commit it ------------

def fill_Scalar(self, value):
    return np.full_like(self, value)


def _fill_value(value):
    if value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions.")
    return value.item()


def fill_Tensor(self, value):
    return np.full_like(self, _fill_value(value))


def fill__Scalar(self, value):
    return np.full_like(self, value)


def fill__Tensor(self, value):
    return np.full_like(self, _fill_value(value))


def zero_(self):
    return np.zeros_like(self)


def _reshape_alias(self, size, stride):
    """reshape's view of a non-contiguous tensor (ReshapeAliasBackward0); ``stride`` is implied by numpy."""
    return np.reshape(self, tuple(size), copy=False)


def copy_(self, src, non_blocking=False):
    """The values ``self`` holds after ``self.copy_(src)``: ``src`` broadcast to ``self`` in its dtype."""
    try:
        out = np.broadcast_to(src, self.shape)
    except ValueError:
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(np.broadcast_shapes(self.shape, src.shape)) if _bcastable(self, src) else list(src.shape)}"
                           ) from None
    return out.astype(self.dtype, copy=True)


def _bcastable(a, b):
    try:
        np.broadcast_shapes(a.shape, b.shape)
        return True
    except ValueError:
        return False


def as_strided(self, size, stride, storage_offset=None):
    """A strided view of a C-contiguous ``self`` (sizes, element strides and offset into its elements)."""
    if not self.flags.c_contiguous:
        raise RuntimeError("derivgen: as_strided needs a contiguous tensor")
    flat = self.reshape(-1)
    off = storage_offset or 0
    return np.lib.stride_tricks.as_strided(flat[off:] if flat.size else flat, tuple(size),
                                           tuple(s * self.itemsize for s in stride))
