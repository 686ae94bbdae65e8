"""Tensor constructors, spelled as in torch (``tensor``, ``ones``, ``randn``, ``*_like`` ...).

Every constructor takes torch's ``device=`` (only the cpu computes; see ``derivgen.core.device``) and
the sized ones take the size as varargs, one sequence, or ``size=``. The random ones draw from a
``derivgen.Generator`` (``generator=``, else the default generator): reproducible for a seed, but not
the numbers torch draws for that seed.
"""
import numpy as np

from derivgen.core import dtypes as _dt
from derivgen.core.device import check_device
from derivgen.core.generator import manual_seed, numpy_generator  # noqa: F401 - manual_seed is re-exported
from derivgen.core.scalars import check_fill
from derivgen.core.tensor import Tensor, _infer_dtype


def _finish(arr, requires_grad):
    t = Tensor._make(arr)
    if requires_grad:
        if not t.dtype.is_floating_point:  # torch's factories word it differently from requires_grad_()
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad = True
    return t


def _size(size, keyword=None):
    if keyword is not None:
        if size:
            raise TypeError("size given both positionally and as size=")
        size = (keyword,)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(int(s) for s in size[0])
    return tuple(int(s) for s in size)


def _float_dtype(dtype):
    return _dt.to_numpy_dtype(dtype) if dtype is not None else _dt.get_default_dtype().np


def tensor(data, dtype=None, device=None, requires_grad=False):
    check_device(device)
    if isinstance(data, Tensor):
        data = data._array
    np_dtype = _dt.to_numpy_dtype(dtype) or _infer_dtype(data)
    arr = np.array(data, dtype=np_dtype)
    if np_dtype is None and arr.dtype not in _dt.NUMPY_DTYPES:
        arr = arr.astype(np.int64 if arr.dtype.kind in "iu" else _dt.get_default_dtype().np)
    return _finish(arr, requires_grad)


def as_tensor(data, dtype=None, device=None):
    check_device(device)
    if isinstance(data, Tensor) and (dtype is None or _dt.to_numpy_dtype(dtype) == data._array.dtype):
        return data
    return tensor(data, dtype=dtype)


def from_numpy(arr):
    arr = np.asarray(arr)
    _dt.from_numpy_dtype(arr.dtype)  # a dtype derivgen cannot compute in is refused here, not at first use
    # a view of the caller's array: the memory is shared, but reshaping theirs in place (``a.shape = ...``)
    # leaves the tensor's shape alone, as in torch
    return Tensor._make(arr.view())


def zeros(*args, size=None, dtype=None, requires_grad=False, device=None, out=None):
    check_device(device)
    return _finish(np.zeros(_size(args, size), _float_dtype(dtype)), requires_grad)


def ones(*args, size=None, dtype=None, requires_grad=False, device=None, out=None):
    check_device(device)
    return _finish(np.ones(_size(args, size), _float_dtype(dtype)), requires_grad)


def empty(*args, size=None, dtype=None, requires_grad=False, device=None, out=None):
    check_device(device)
    return _finish(np.empty(_size(args, size), _float_dtype(dtype)), requires_grad)


def full(size, fill_value, dtype=None, requires_grad=False, device=None):
    check_device(device)
    if dtype is None:
        dtype = (_dt.bool_ if isinstance(fill_value, bool) else
                 _dt.int64 if isinstance(fill_value, int) else _dt.get_default_dtype())
    np_dtype = _dt.to_numpy_dtype(dtype)
    return _finish(np.full(_size((size,)), check_fill(fill_value, np_dtype), np_dtype), requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False, device=None):
    check_device(device)
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad=False, device=None):
    check_device(device)
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        np_dtype = _dt.get_default_dtype().np if is_float else np.int64
    else:
        np_dtype = _dt.to_numpy_dtype(dtype)
    return _finish(np.arange(start, end, step).astype(np_dtype), requires_grad)


def linspace(start, end, steps, dtype=None, requires_grad=False, device=None):
    check_device(device)
    return _finish(np.linspace(start, end, steps).astype(_float_dtype(dtype)), requires_grad)


def randn(*args, size=None, dtype=None, requires_grad=False, generator=None, device=None, out=None):
    """Standard normal samples (numpy's transform of the generator's stream, not torch's numbers)."""
    check_device(device)
    np_dtype = _float_dtype(dtype)
    return _finish(numpy_generator(generator).standard_normal(_size(args, size)).astype(np_dtype), requires_grad)


def rand(*args, size=None, dtype=None, requires_grad=False, generator=None, device=None, out=None):
    """Uniform samples in [0, 1) (numpy's transform of the generator's stream, not torch's numbers)."""
    check_device(device)
    np_dtype = _float_dtype(dtype)
    return _finish(numpy_generator(generator).random(_size(args, size)).astype(np_dtype), requires_grad)


def randint(low, high=None, size=None, *, dtype=None, generator=None, device=None, requires_grad=False, out=None):
    """torch's ``randint(high, size)`` / ``randint(low, high, size)``: integers in [low, high)."""
    check_device(device)
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing 1 required positional argument: 'size'")
    np_dtype = _dt.to_numpy_dtype(dtype) or np.int64
    arr = numpy_generator(generator).integers(low, high, size=_size((size,))).astype(np_dtype)
    return _finish(arr, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype``)."""
    check_device(device)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    np_dtype = _dt.to_numpy_dtype(dtype) or np.int64
    return _finish(numpy_generator(generator).permutation(int(n)).astype(np_dtype), requires_grad)


def _like(t, dtype):
    return _dt.to_numpy_dtype(dtype) if dtype is not None else t._array.dtype


def zeros_like(t, dtype=None, requires_grad=False, device=None):
    check_device(device)
    return _finish(np.zeros(t._array.shape, _like(t, dtype)), requires_grad)


def ones_like(t, dtype=None, requires_grad=False, device=None):
    check_device(device)
    return _finish(np.ones(t._array.shape, _like(t, dtype)), requires_grad)


def empty_like(t, dtype=None, requires_grad=False, device=None):
    check_device(device)
    return _finish(np.empty(t._array.shape, _like(t, dtype)), requires_grad)


def full_like(t, fill_value, dtype=None, requires_grad=False, device=None):
    check_device(device)
    return _finish(np.full(t._array.shape, fill_value, _like(t, dtype)), requires_grad)


def randn_like(t, dtype=None, requires_grad=False, device=None):
    check_device(device)
    return _finish(numpy_generator().standard_normal(t._array.shape).astype(_like(t, dtype)), requires_grad)


def rand_like(t, dtype=None, requires_grad=False, device=None):
    check_device(device)
    return _finish(numpy_generator().random(t._array.shape).astype(_like(t, dtype)), requires_grad)


# ``Tensor.new_*``: a new tensor with this tensor's dtype (unless given) and device, not its values
def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    check_device(device)
    return _finish(np.zeros(_size(size), _like(self, dtype)), requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    check_device(device)
    return _finish(np.ones(_size(size), _like(self, dtype)), requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    check_device(device)
    return _finish(np.empty(_size(size), _like(self, dtype)), requires_grad)


def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
    check_device(device)
    return _finish(np.full(_size((size,)), fill_value, _like(self, dtype)), requires_grad)


def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    return tensor(data, dtype=dtype if dtype is not None else self.dtype, device=device, requires_grad=requires_grad)


NEW_METHODS = {"new_zeros": new_zeros, "new_ones": new_ones, "new_empty": new_empty, "new_full": new_full,
               "new_tensor": new_tensor}


# ---- sampling: normal, multinomial, randint_like (numpy's draws from the generator, not torch's numbers) ----

def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False,
           out=None):
    """torch.normal's forms: tensor mean and/or std (elementwise, broadcast), or float mean and std with a
    ``size``. The draw has no history (torch records a NormalBackward node for a mean or std that requires
    grad)."""
    check_device(device)
    rng = numpy_generator(generator)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._array if isinstance(mean, Tensor) else np.asarray(mean)
        s = std._array if isinstance(std, Tensor) else np.asarray(std)
        if (s < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
        ref = mean if isinstance(mean, Tensor) else std
        shape = np.broadcast_shapes(m.shape, s.shape)
        draw = m + s * rng.standard_normal(shape)
        return Tensor._make(np.asarray(draw, dtype=ref._array.dtype))
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments - got (float, float), but expected "
                        "a size")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    draw = mean + std * rng.standard_normal(_size((size,)))
    return _finish(np.asarray(draw, dtype=_float_dtype(dtype)), requires_grad)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):  # noqa: A002
    """Indices drawn from the rows of ``input`` (non-negative weights, one distribution per row)."""
    p = input._array.astype(np.float64)
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > p.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if not np.isfinite(p).all() or (p < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = p.reshape(-1, p.shape[-1])
    if (rows.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = numpy_generator(generator)
    picks = []
    for row in rows:
        w = row / row.sum()
        if replacement:
            picks.append(rng.choice(len(w), size=num_samples, replace=True, p=w))
        else:
            nonzero = int((w > 0).sum())
            first = rng.choice(len(w), size=min(num_samples, nonzero), replace=False, p=w)
            rest = [i for i in range(len(w)) if i not in set(first.tolist())][:num_samples - len(first)]
            picks.append(np.concatenate([first, np.asarray(rest, np.int64)]))
    result = np.stack(picks).astype(np.int64)
    return Tensor._make(result.reshape(p.shape[:-1] + (num_samples,)))


def randint_like(t, low=0, high=None, *, dtype=None, device=None, requires_grad=False, generator=None):
    """Integers in [low, high) shaped like ``t`` (``randint_like(t, high)`` when one bound is given)."""
    check_device(device)
    if high is None:
        low, high = 0, low
    np_dtype = _dt.to_numpy_dtype(dtype) or t._array.dtype
    return _finish(numpy_generator(generator).integers(low, high, size=t._array.shape).astype(np_dtype), requires_grad)
