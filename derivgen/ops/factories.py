"""Tensor constructors, spelled as in torch (``tensor``, ``ones``, ``randn``, ``*_like`` ...)."""
import numpy as np

from derivgen.core import dtypes as _dt
from derivgen.core.scalars import check_fill
from derivgen.core.tensor import Tensor, _infer_dtype

_rng = [np.random.default_rng()]


def manual_seed(seed):
    _rng[0] = np.random.default_rng(int(seed))
    return _rng[0]


def _finish(arr, requires_grad):
    t = Tensor._make(arr)
    if requires_grad:
        if not t.dtype.is_floating_point:  # torch's factories word it differently from requires_grad_()
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad = True
    return t


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(int(s) for s in size[0])
    return tuple(int(s) for s in size)


def _float_dtype(dtype):
    return _dt.to_numpy_dtype(dtype) if dtype is not None else _dt.get_default_dtype().np


def tensor(data, dtype=None, device=None, requires_grad=False):
    if isinstance(data, Tensor):
        data = data._array
    np_dtype = _dt.to_numpy_dtype(dtype) or _infer_dtype(data)
    arr = np.array(data, dtype=np_dtype)
    if np_dtype is None and arr.dtype not in (np.float32, np.float64, np.int64, np.int32, np.bool_):
        arr = arr.astype(np.int64 if arr.dtype.kind in "iu" else _dt.get_default_dtype().np)
    return _finish(arr, requires_grad)


def as_tensor(data, dtype=None):
    if isinstance(data, Tensor) and dtype is None:
        return data
    return tensor(data, dtype=dtype)


def from_numpy(arr):
    return Tensor._make(np.asarray(arr))


def zeros(*size, dtype=None, requires_grad=False, device=None):
    return _finish(np.zeros(_size(size), _float_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, requires_grad=False, device=None):
    return _finish(np.ones(_size(size), _float_dtype(dtype)), requires_grad)


def empty(*size, dtype=None, requires_grad=False, device=None):
    return _finish(np.empty(_size(size), _float_dtype(dtype)), requires_grad)


def full(size, fill_value, dtype=None, requires_grad=False, device=None):
    if dtype is None:
        dtype = (_dt.bool_ if isinstance(fill_value, bool) else
                 _dt.int64 if isinstance(fill_value, int) else _dt.get_default_dtype())
    np_dtype = _dt.to_numpy_dtype(dtype)
    return _finish(np.full(_size((size,)), check_fill(fill_value, np_dtype), np_dtype), requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False, device=None):
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad=False, device=None):
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        np_dtype = _dt.get_default_dtype().np if is_float else np.int64
    else:
        np_dtype = _dt.to_numpy_dtype(dtype)
    return _finish(np.arange(start, end, step).astype(np_dtype), requires_grad)


def linspace(start, end, steps, dtype=None, requires_grad=False, device=None):
    return _finish(np.linspace(start, end, steps).astype(_float_dtype(dtype)), requires_grad)


def randn(*size, dtype=None, requires_grad=False, generator=None, device=None):
    rng = generator if generator is not None else _rng[0]
    return _finish(rng.standard_normal(_size(size)).astype(_float_dtype(dtype)), requires_grad)


def rand(*size, dtype=None, requires_grad=False, generator=None, device=None):
    rng = generator if generator is not None else _rng[0]
    return _finish(rng.random(_size(size)).astype(_float_dtype(dtype)), requires_grad)


def randint(low, high=None, size=None, dtype=None, generator=None, device=None):
    if high is None:
        low, high = 0, low
    rng = generator if generator is not None else _rng[0]
    return Tensor._make(rng.integers(low, high, size=_size((size,))).astype(_dt.to_numpy_dtype(dtype) or np.int64))


def _like(t, dtype):
    return _dt.to_numpy_dtype(dtype) if dtype is not None else t._array.dtype


def zeros_like(t, dtype=None, requires_grad=False, device=None):
    return _finish(np.zeros(t._array.shape, _like(t, dtype)), requires_grad)


def ones_like(t, dtype=None, requires_grad=False, device=None):
    return _finish(np.ones(t._array.shape, _like(t, dtype)), requires_grad)


def empty_like(t, dtype=None, requires_grad=False, device=None):
    return _finish(np.empty(t._array.shape, _like(t, dtype)), requires_grad)


def full_like(t, fill_value, dtype=None, requires_grad=False, device=None):
    return _finish(np.full(t._array.shape, fill_value, _like(t, dtype)), requires_grad)


def randn_like(t, dtype=None, requires_grad=False, device=None):
    return _finish(_rng[0].standard_normal(t._array.shape).astype(_like(t, dtype)), requires_grad)


def rand_like(t, dtype=None, requires_grad=False, device=None):
    return _finish(_rng[0].random(t._array.shape).astype(_like(t, dtype)), requires_grad)
