"""Reduction forwards: sum, mean, prod, max/min, var/std, norms, cumulative ops."""
import numpy as np

from derivgen.core.dtypes import scalar_type_name, to_numpy_dtype
from derivgen.core.sizes import dims_list, wrap_dim
from derivgen.core.pending import Pending
from derivgen.ops.forwards._common import _reduce_dtype, accepts_pending
from derivgen.engine.fusion import reduce


# ---- reductions ------------------------------------------------------------------------------

def _fused(self, dim, keepdim, dtype, mean):
    """A deferred elementwise input (fusion.py) is reduced in the loop that computes it; returns the
    result, or the computed input array when that does not apply."""
    out = reduce(self, dim, keepdim, dtype, mean)
    return (out, None) if out is not None else (None, self.materialize())


@accepts_pending
def sum(self, *, dtype=None):  # noqa: A001 - schema name
    if self.__class__ is Pending:
        out, self = _fused(self, None, False, dtype, False)
        if out is not None:
            return out
    return np.asarray(np.add.reduce(self, axis=None, dtype=_reduce_dtype(self, dtype)))


@accepts_pending
def sum_dim_IntList(self, dim, keepdim=False, *, dtype=None):
    if self.__class__ is Pending:
        out, self = _fused(self, dim, keepdim, dtype, False)
        if out is not None:
            return out
    axes = dims_list(dim, self.ndim)
    return np.asarray(np.add.reduce(self, axis=axes, keepdims=keepdim, dtype=_reduce_dtype(self, dtype)))




def _mean_check(self, dtype):
    out = to_numpy_dtype(dtype) if dtype is not None else self.dtype
    if out.kind != "f":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {scalar_type_name(self.dtype)}")
    return out


@accepts_pending
def mean(self, *, dtype=None):
    out = _mean_check(self, dtype)
    if self.__class__ is Pending:
        res, self = _fused(self, None, False, dtype, True)
        if res is not None:
            return res
    n = self.size
    if n == 0:
        return np.full((), np.nan, dtype=out)  # torch's mean of nothing, without numpy's warning
    # np.mean's arithmetic without its Python layers: the sum in ``out``, divided by the count in float64
    return np.asarray(out.type(float(np.add.reduce(self, axis=None, dtype=out)) / n), dtype=out)


@accepts_pending
def mean_dim(self, dim, keepdim=False, *, dtype=None):
    out = _mean_check(self, dtype)
    if self.__class__ is Pending:
        res, self = _fused(self, dim, keepdim, dtype, True)
        if res is not None:
            return res
    return np.asarray(np.mean(self, axis=dims_list(dim, self.ndim), keepdims=keepdim, dtype=out), dtype=out)


# ---- reductions ------------------------------------------------------------------------------

def _red_dtype(self, dtype):
    return _reduce_dtype(self, dtype)


def prod(self, *, dtype=None):
    return np.asarray(np.prod(self, dtype=_reduce_dtype(self, dtype)))


def prod_dim_int(self, dim, keepdim=False, *, dtype=None):
    d = wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return np.asarray(self, dtype=_reduce_dtype(self, dtype)).copy()
    return np.asarray(np.prod(self, axis=d, keepdims=keepdim, dtype=_reduce_dtype(self, dtype)))


def _check_nonempty(self, name, d=None, specify=True):
    """torch's refusal of a max/min-like reduction with no identity over no elements: a RuntimeError
    when no dim was given, an IndexError naming the reduced dim of size 0."""
    if self.size == 0:
        if d is None:
            raise (RuntimeError if specify else IndexError)(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                + (" Specify the reduction dim with the 'dim' argument." if specify else ""))
        for a in ((d,) if isinstance(d, int) else d):
            if self.shape[a] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


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
    return np.asarray(np.maximum.reduce(self, axis=None))  # np.max without its Python layers


def min(self):  # noqa: A001 - schema name
    _check_nonempty(self, "min")
    return np.asarray(np.minimum.reduce(self, axis=None))


def _amax_amin(fn, name, self, dim, keepdim):
    axes = dims_list(dim, self.ndim)
    if self.size == 0:
        _check_nonempty(self, name, axes if dim not in (None, (), []) else None)
    return np.asarray(fn(self, axis=axes if self.ndim else None, keepdims=keepdim))


def amax(self, dim=(), keepdim=False):
    return _amax_amin(np.max, "amax", self, dim, keepdim)


def amin(self, dim=(), keepdim=False):
    return _amax_amin(np.min, "amin", self, dim, keepdim)


def _arg_reduce(fn, self, dim, keepdim):
    if self.size == 0:
        _check_nonempty(self, fn.__name__, None if dim is None else wrap_dim(dim, self.ndim), specify=False)
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


def count_nonzero_dim_IntList(self, dim):
    axes = dims_list(dim, self.ndim)
    if len(set(axes)) != len(axes):
        repeated = next(a for i, a in enumerate(axes) if a in axes[:i])
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    return np.asarray(np.count_nonzero(self, axis=axes), dtype=np.int64)


def count_nonzero(self, dim=None):
    return count_nonzero_dim_IntList(self, () if dim is None else (dim,))


def logsumexp(self, dim, keepdim=False):
    if self.ndim == 0:
        return self.astype(self.dtype if self.dtype.kind == "f" else np.float32, copy=True)
    axes = dims_list(dim, self.ndim)
    if self.size == 0:  # a sum of no exponentials is 0: log gives -inf (torch's result)
        return np.asarray(np.full(np.sum(self, axis=axes, keepdims=keepdim).shape, -np.inf, self.dtype))
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


def nansum(self, dim=None, keepdim=False, *, dtype=None):
    """The sum with NaNs counted as zero (integers have none)."""
    axes = dims_list(dim, self.ndim) if self.ndim and dim is not None else None
    if self.ndim and dim is not None and not list(dim):
        axes = None
    out_dtype = _reduce_dtype(self, dtype)
    return np.asarray(np.nansum(self, axis=axes, keepdims=keepdim, dtype=out_dtype), dtype=out_dtype)


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
