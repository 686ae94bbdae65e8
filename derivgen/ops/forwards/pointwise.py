"""Elementwise rows whose forward needs more than an expression (optional Scalars, str
arguments, rounding modes): written with numpy here instead of a generated kernel."""
import numpy as np

from derivgen.core.dtypes import get_default_dtype
from derivgen.core.scalars import FLOAT32_MAX, INT64_MIN, UINT64_END, check_fill, wrapped_int
from derivgen.core.tensor import result_dtype, wrap_scalar
from derivgen.kernels.loops import clamp as _clamp_loop, erf as _erf
from derivgen.ops.forwards import intdiv


# ---- elementwise rows with a hand-written forward (optional Scalars, str arguments) ------------------

def _promoted(*arrays):
    """torch's result dtype of the arrays (0-dim arrays rank below dimensioned ones, as in torch)."""
    dt = result_dtype(*[a for a in arrays if a is not None])
    if dt.kind != "f":
        dt = get_default_dtype().np
    return dt


def logit(self, eps=None):
    if self.dtype.kind != "f":
        self = self.astype(get_default_dtype().np)  # an integer or bool input: torch's default float dtype
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


_CLAMP_LOOP_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_NUMBER_BOUNDS = (int, float, type(None))


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


def _is_nan(v):
    return v is not None and v != v


def clamp(self, min=None, max=None):  # noqa: A002 - schema names
    _clamp_check(min, max)
    for bound in (min, max):
        if type(bound) is int and not INT64_MIN <= bound < UINT64_END:
            wrapped_int(bound)  # torch's OverflowError
    if self.dtype in _CLAMP_LOOP_DTYPES and type(min) in _NUMBER_BOUNDS and type(max) in _NUMBER_BOUNDS:
        # a float tensor and Python-number bounds (``x.clamp(min=0)``): one loop, no promotion
        if ((min is not None and not -FLOAT32_MAX <= min <= FLOAT32_MAX)
                or (max is not None and not -FLOAT32_MAX <= max <= FLOAT32_MAX)):  # NaN, infinite or large
            if _is_nan(min) or _is_nan(max):
                return np.full(self.shape, np.nan, self.dtype)  # torch's clamp propagates a NaN bound
            if self.dtype == np.float32:  # a finite bound beyond float32 raises torch's error
                min, max = (None if v is None else check_fill(v, self.dtype) for v in (min, max))
        t = self.dtype.type
        return _clamp_loop(self, None if min is None else t(min), None if max is None else t(max))
    dt = result_dtype(self, *[wrap_scalar(v) for v in (min, max) if v is not None])
    if dt.kind in "iu" or dt == np.float32:
        # the bounds as values of the result dtype (a negative one wraps for uint8, as in torch; one beyond
        # the dtype's range raises torch's error)
        min, max = (None if v is None or isinstance(v, np.ndarray) else check_fill(v, dt) for v in (min, max))
    if dt.kind == "f" and (_is_nan(min) or _is_nan(max)):
        return np.full(self.shape, np.nan, dt)
    out = self if dt == self.dtype else self.astype(dt if dt.kind != "b" else np.dtype(np.int64))
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


def gelu_backward(grad_output, self, approximate="none"):
    """torch's gelu_backward: the gradient of gelu (erf or tanh form) times ``grad_output``."""
    if approximate == "tanh":
        beta, kappa = 0.7978845608028654, 0.044715  # sqrt(2 / pi) and the cubic term's coefficient
        t = np.tanh(beta * (self + kappa * self * self * self))
        right = (0.5 * self) * (1 - t * t) * beta * (1 + 3 * kappa * self * self)
        return grad_output * (0.5 * (1 + t) + right)
    if approximate != "none":
        raise RuntimeError("approximate argument must be either none or tanh.")
    cdf = 0.5 * (1 + _erf(self * self.dtype.type(0.7071067811865476)))
    pdf = np.exp(-0.5 * self * self) * 0.3989422804014327  # 1 / sqrt(2 pi)
    return grad_output * (cdf + self * pdf)


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
    if rounding_mode in ("floor", "trunc"):
        dt = intdiv.integral_result(self, other)
        if dt is not None:
            return intdiv.divide(self, other, rounding_mode, dt)
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


def _modulo(fn, self, other, promote_as=None):
    """``fn`` on the promoted operands; ``promote_as`` stands in for ``other`` in type promotion (a
    Python float promotes as the default dtype but computes with its full value)."""
    like = other if promote_as is None else promote_as
    dt = intdiv.integral_result(self, like)
    if dt is not None:
        return intdiv.modulo(fn, self, other, dt)
    dt = _promoted(self, like)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(fn(self.astype(dt), np.asarray(other).astype(dt)), dtype=dt)


def _number(other):
    """How a Scalar argument promotes in torch: a Python float as the default dtype (a wrapped number)."""
    if isinstance(other, float):
        from derivgen.core.dtypes import get_default_dtype
        return np.asarray(other, get_default_dtype().np)
    return np.asarray(other)


def remainder_Scalar(self, other):
    return _modulo(np.remainder, self, other, _number(other))


def remainder_Tensor(self, other):
    return _modulo(np.remainder, self, other)


def fmod_Scalar(self, other):
    return _modulo(np.fmod, self, other, _number(other))


def fmod_Tensor(self, other):
    return _modulo(np.fmod, self, other)


def _float_test(fn, self):
    """A floating-point class test (``isnan``, ``isinf``, ...): False everywhere for integer and bool tensors."""
    if self.dtype.kind != "f":
        return np.zeros(self.shape, np.bool_)
    return np.asarray(fn(self))


def isnan(self):
    return _float_test(np.isnan, self)


def isinf(self):
    return _float_test(np.isinf, self)


def isposinf(self):
    return _float_test(np.isposinf, self)


def isneginf(self):
    return _float_test(np.isneginf, self)


def isfinite(self):
    if self.dtype.kind != "f":
        return np.ones(self.shape, np.bool_)
    return np.asarray(np.isfinite(self))
