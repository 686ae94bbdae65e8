"""``tensor[index]`` as torch does it: ints select, slices slice, ``None`` unsqueezes, ``...`` skips
dims, each step a differentiable op (SelectBackward0, SliceBackward0, UnsqueezeBackward0)."""
import numpy as np

from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor, wrap_scalar
from derivgen.ops.inplace import check_inplace, commit_inplace


def _is_int(v):
    """A Python/numpy integer, or a 0-dim integer tensor (torch indexes with it as with its value)."""
    if isinstance(v, Tensor):
        return v._array.ndim == 0 and v._array.dtype.kind in "iu"
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


_ZERO_DIM_INDEX = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
                   "to convert a 0-dim tensor to a number")


def getitem(t, index):
    ops = aten
    if type(index) is int:  # x[i]: select on dim 0
        shape = t._array.shape
        if shape and -shape[0] <= index < shape[0]:
            return ops.select_int(t, 0, index)
    if isinstance(index, slice):
        # torch keeps a single slice as a slice op even when it covers everything
        if not t._array.ndim:
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        return ops.slice(t, 0, index.start, index.stop, 1 if index.step is None else index.step)
    if not isinstance(index, tuple):
        if not t._array.ndim and _is_int(index) and not isinstance(index, Tensor):
            raise IndexError(_ZERO_DIM_INDEX)
        index = (index,)
    if any(_is_advanced(i) for i in index):
        return _advanced(t, index)
    n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
    if n_real > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    result, dim = t, 0
    for pos, i in enumerate(index):
        if i is Ellipsis:
            dim += t.dim() - n_real
        elif i is None:
            result = ops.unsqueeze_default(result, dim)
            dim += 1
        elif _is_int(i):
            i = int(i)
            size = result.shape[dim]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
            result = ops.select_int(result, dim, i)
        elif isinstance(i, slice):
            step = 1 if i.step is None else i.step
            start, stop, _ = i.indices(result.shape[dim])
            if not (start == 0 and stop >= result.shape[dim] and step == 1):
                result = ops.slice(result, dim, i.start, i.stop, step)
            dim += 1
        else:
            raise IndexError(f"derivgen: unsupported index {i!r}")
    if result is t:
        result = ops.slice(t, 0, None, None, 1)
    return result


def _is_advanced(i):
    if isinstance(i, Tensor):
        return not (i._array.ndim == 0 and i._array.dtype.kind in "iu")  # a 0-dim integer tensor is an int
    return isinstance(i, (list, np.ndarray)) or isinstance(i, (bool, np.bool_))


def _as_index_tensor(i):
    if isinstance(i, Tensor):
        return i
    arr = np.asarray(i)
    if arr.dtype.kind == "f" or (arr.size == 0 and arr.dtype.kind != "b"):
        arr = arr.astype(np.int64)
    return Tensor._make(arr)


def _advanced(t, index):
    """Basic indices (ints, slices, None, ...) are applied first as views; the tensor indices then go to
    index.Tensor (IndexBackward0) with None for the dims they leave alone, as torch does."""
    view, tensors = _apply_basic(t, index)
    return aten.index_Tensor(view, tensors)


def _apply_basic(t, index):
    """torch's applySlicing: the view of ``t`` the basic indices of ``index`` select, and the list of index
    tensors (None for a dim they leave alone, trailing Nones dropped) to apply to that view."""
    ops = aten
    tensors = []
    n_real = 0
    for i in index:
        if i is None or i is Ellipsis:
            continue
        if _is_advanced(i):
            it = _as_index_tensor(i)
            n_real += it.dim() if it._array.dtype == np.bool_ else 1
        else:
            n_real += 1
    if n_real > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    dim = 0
    result = t
    for i in index:
        if i is Ellipsis:
            skip = t.dim() - n_real
            tensors += [None] * skip
            dim += skip
        elif i is None:
            result = ops.unsqueeze(result, dim)
            tensors.append(None)
            dim += 1
        elif _is_advanced(i):
            it = _as_index_tensor(i)
            tensors.append(it)
            dim += it.dim() if it._array.dtype == np.bool_ else 1
        elif isinstance(i, slice):
            step = 1 if i.step is None else i.step
            start, stop, _ = i.indices(result.shape[dim])
            if not (start == 0 and stop >= result.shape[dim] and step == 1):
                result = ops.slice(result, dim, i.start, i.stop, step)
            tensors.append(None)
            dim += 1
        else:
            v = int(i)
            size = result.shape[dim]
            if not -size <= v < size:
                raise IndexError(f"index {v} is out of bounds for dimension {dim} with size {size}")
            result = ops.select_int(result, dim, v)
    while tensors and tensors[-1] is None:
        tensors.pop()
    return result, tensors


def setitem(t, index, value):
    """``t[index] = value`` as torch does it: basic indices select a view that is ``copy_``-ed into
    (CopySlices on ``t``), tensor indices go to ``index_put_`` (IndexPutBackward0)."""
    ops = aten
    idx = index if isinstance(index, tuple) else (index,)
    given = value
    if not isinstance(value, Tensor):
        value = wrap_scalar(value.item() if isinstance(value, np.generic) else value) \
            if isinstance(value, (int, float, bool, np.number, np.bool_)) else Tensor._make(np.asarray(value))
    if any(_is_advanced(i) for i in idx):
        # basic indices give a view (CopySlices on t when it is one), tensor indices go to index_put_ on it
        view, tensors = _apply_basic(t, idx)
        check_inplace(view)
        if not isinstance(given, Tensor) and value._array.dtype != view._array.dtype:
            # a number or a list is taken in t's dtype; a Tensor of another dtype is refused by index_put_
            value = Tensor._make(value._array.astype(view._array.dtype))
        commit_inplace(view, ops.index_put_default(view, tensors, value, False))
        return None
    view = getitem(t, index)
    ops.copy_(view, value)
    return None
