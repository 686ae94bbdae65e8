"""``tensor[index]`` as torch does it: ints select, slices slice, ``None`` unsqueezes, ``...`` skips
dims, each step a differentiable op (SelectBackward0, SliceBackward0, UnsqueezeBackward0)."""
import numpy as np


def _ops():
    from ..generated import ops
    return ops


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def getitem(t, index):
    from .tensor import Tensor
    ops = _ops()
    if isinstance(index, slice):
        # torch keeps a single slice as a slice op even when it covers everything
        return ops.slice(t, 0, index.start, index.stop, 1 if index.step is None else index.step)
    if not isinstance(index, tuple):
        index = (index,)
    if any(isinstance(i, (Tensor, list, np.ndarray)) for i in index):
        if hasattr(ops, "index"):
            return _advanced(t, index)
        raise IndexError("derivgen: tensor (advanced) indexing is not supported by this table")
    n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
    if n_real > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    result, dim = t, 0
    for pos, i in enumerate(index):
        if i is Ellipsis:
            dim += t.dim() - n_real
        elif i is None:
            result = ops.unsqueeze(result, dim)
            dim += 1
        elif _is_int(i):
            size = result.shape[dim]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
            result = ops.select(result, dim, int(i))
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


def _advanced(t, index):
    from .tensor import Tensor
    ops = _ops()
    if len(index) == 1:
        i = index[0]
        if not isinstance(i, Tensor):
            i = Tensor._make(np.asarray(i))
        if i.data.dtype == np.bool_:
            return ops.masked_select(t, i) if hasattr(ops, "masked_select") else ops.index(t, [i])
        return ops.index(t, [i])
    raise IndexError("derivgen: only a single tensor index is supported")
