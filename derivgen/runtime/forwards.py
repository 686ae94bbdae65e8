"""Hand-written forwards of the non-elementwise rows of ``formulas.yaml``, one small numpy function
each, bound to its row by schema name (``sum.dim_IntList`` -> ``sum_dim_IntList``).

Each takes and returns numpy arrays (a list for ``Tensor[]`` returns, a tuple for tuple returns).
View rows (``-> Tensor(a)``) must return a numpy view of ``self``. Errors name the op and the shapes,
with PyTorch's wording.
"""
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
        raise RuntimeError(f"self must be a matrix (mm: got a {self.ndim}-D tensor of shape {list(self.shape)})")
    if mat2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix (mm: got a {mat2.ndim}-D tensor of shape {list(mat2.shape)})")
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
        idx[d] = slice(s, min(s + split_size, n))
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
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {n}")
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
