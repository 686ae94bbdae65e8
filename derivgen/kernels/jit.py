"""What the generated Numba kernels call: the decorator (with a cache directory that is known to be
writable) and the dtype-preserving literal helper ``_l``.

The generated kernel files stamp a hash of this file in their header, so editing it invalidates the
Numba cache of every kernel (Numba freezes callees from other files into a cached kernel). Keep it to
what kernels call; the Python-side dispatcher lives in ``elementwise.py``.
"""
import functools
import math
import os
import tempfile

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

_GENERATED_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                              "generated")


def _writable(path):
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, f".derivgen-probe-{os.getpid()}")
        with open(probe, "w"):
            pass
        os.remove(probe)
        return True
    except OSError:
        return False


def _choose_cache():
    """Numba raises at decoration time when no cache locator can write; pick a place or turn caching off."""
    if os.environ.get("DERIVGEN_NO_CACHE"):
        return False
    if os.environ.get("NUMBA_CACHE_DIR"):
        return _writable(os.environ["NUMBA_CACHE_DIR"])
    try:
        import derivgen.generated as gen
        here = os.path.dirname(os.path.abspath(gen.__file__))
    except Exception:  # noqa: BLE001 - generated package missing during generation
        here = _GENERATED_DIR
    for sub in ("__pycache__", os.path.join("kernels", "__pycache__")):
        if not _writable(os.path.join(here, sub)):
            break
    else:
        return True
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if _writable(os.path.join(xdg, "numba")):
        return True
    tmp = os.path.join(tempfile.gettempdir(), "derivgen-numba-cache")
    if _writable(tmp):
        numba.config.CACHE_DIR = tmp
        return True
    return False


CACHE = _choose_cache()

# One decorator for every generated loop: numpy error model (no ZeroDivisionError checks that block
# SIMD), cached on disk, compiled lazily on first use for each dtype / layout.
kernel = functools.partial(numba.njit, cache=CACHE, error_model="numpy")


def _l(value, like):
    """A literal typed like ``like`` (so float32 kernels never compute in float64)."""
    return value


@overload(_l, inline="always")
def _ol_l(value, like):
    if isinstance(like, (types.Float, types.Integer)):
        ty = like

        def impl(value, like):
            return ty(value)
        return impl
    if isinstance(like, types.Boolean):
        return lambda value, like: value


# Parallel (prange) variants of the loops, compiled lazily: only used when switched on (see
# derivgen/kernels/dispatch.py, DERIVGEN_PARALLEL) and only for arrays past a size threshold.
kernel_parallel = functools.partial(numba.njit, cache=CACHE, error_model="numpy", parallel=True)

# One element of a forward or of a VJP, for the kernels derivgen.engine.fusion writes across nodes.
# Inlined into its caller (so the fused loop vectorizes) and cached as part of it, never on its own.
scalar = functools.partial(numba.njit, inline="always", error_model="numpy")


# ---------------------------------------------------------------------------------------------
# Vectorizable float32 exp / log / tanh.
#
# PyPI's numba has no SVML, so math.exp on float32 is a scalar libm call per element and keeps a loop
# from vectorizing (11 ms for a 4M-element sigmoid backward, against 2 ms with these). These are the
# Cephes single-precision algorithms in branch-free arithmetic, exact to ~1e-7 relative; float64 keeps
# libm. Kernels call `_exp`, `_log`, `_tanh`, which pick by the argument's type at compile time.

@intrinsic
def _i32_as_f32(typingctx, i):
    sig = types.float32(types.int32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return sig, codegen


@intrinsic
def _f32_as_i32(typingctx, f):
    sig = types.int32(types.float32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return sig, codegen


_F = np.float32


@numba.njit(inline="always", error_model="numpy")
def _ldexpf(p, n):
    """p * 2**n for integer-valued float32 n in [-150, 128], in two in-range steps (2**128 alone
    overflows float32, 2**-150 alone underflows)."""
    n1 = np.int32(n) >> np.int32(1)
    n2 = np.int32(n) - n1
    return (p * _i32_as_f32((n1 + np.int32(127)) << np.int32(23))) * _i32_as_f32((n2 + np.int32(127)) << np.int32(23))


@numba.njit(inline="always", error_model="numpy")
def _expf(x):
    xc = min(max(x, _F(-104.0)), _F(88.72283))
    n = np.floor(xc * _F(1.44269504088896341) + _F(0.5))
    r = xc - n * _F(0.693359375) - n * _F(-2.12194440e-4)
    z = r * r
    p = _F(1.9875691500e-4)
    p = p * r + _F(1.3981999507e-3)
    p = p * r + _F(8.3334519073e-3)
    p = p * r + _F(4.1665795894e-2)
    p = p * r + _F(1.6666665459e-1)
    p = p * r + _F(5.0000001201e-1)
    p = p * z + r + _F(1.0)
    y = _ldexpf(p, n)
    y = _F(0.0) if x < _F(-104.0) else y
    y = _F(np.inf) if x > _F(88.72283) else y
    return x if x != x else y


@numba.njit(inline="always", error_model="numpy")
def _logf(x):
    tiny = x < _F(1.17549435e-38)
    xs = x * _F(8388608.0) if tiny else x
    bits = _f32_as_i32(xs)
    e = ((bits >> np.int32(23)) & np.int32(0xFF)) - np.int32(126)
    e = e - np.int32(23) if tiny else e
    m = _i32_as_f32((bits & np.int32(0x007FFFFF)) | np.int32(0x3F000000))
    low = m < _F(0.707106781186547524)
    e = e - np.int32(1) if low else e
    t = m + m - _F(1.0) if low else m - _F(1.0)
    fe = _F(e)
    z = t * t
    y = _F(7.0376836292e-2)
    y = y * t - _F(1.1514610310e-1)
    y = y * t + _F(1.1676998740e-1)
    y = y * t - _F(1.2420140846e-1)
    y = y * t + _F(1.4249322787e-1)
    y = y * t - _F(1.6668057665e-1)
    y = y * t + _F(2.0000714765e-1)
    y = y * t - _F(2.4999993993e-1)
    y = y * t + _F(3.3333331174e-1)
    y = y * t * z
    y = y + _F(-2.12194440e-4) * fe
    y = y - _F(0.5) * z
    r = t + y + _F(0.693359375) * fe
    r = _F(-np.inf) if x == _F(0.0) else r
    r = _F(np.nan) if x < _F(0.0) else r
    r = x if x == _F(np.inf) else r
    return x if x != x else r


@numba.njit(inline="always", error_model="numpy")
def _tanhf(x):
    ax = abs(x)
    e = _expf(_F(2.0) * ax)
    big = _F(1.0) - _F(2.0) / (e + _F(1.0))
    big = big if x >= _F(0.0) else -big
    z = x * x
    small = ((((_F(-5.70498872745e-3) * z + _F(2.06390887954e-2)) * z - _F(5.37397155531e-2)) * z
              + _F(1.33314422036e-1)) * z - _F(3.33332819422e-1)) * z * x + x
    return small if ax < _F(0.625) else big


def _exp(x):
    return math.exp(x)


def _log(x):
    return math.log(x)


def _tanh(x):
    return math.tanh(x)


def _is_f32(x):
    return isinstance(x, types.Float) and x.bitwidth == 32


@overload(_exp)
def _ol_exp(x):
    if _is_f32(x):
        return lambda x: _expf(x)
    return lambda x: math.exp(x)


@overload(_log)
def _ol_log(x):
    if _is_f32(x):
        return lambda x: _logf(x)
    return lambda x: math.log(x)


@overload(_tanh)
def _ol_tanh(x):
    if _is_f32(x):
        return lambda x: _tanhf(x)
    return lambda x: math.tanh(x)


def _pow(x, e):
    return x ** e


@overload(_pow, inline="always")
def _ol_pow(x, e):
    """``x ** e`` for a loop-invariant exponent: small integer and half exponents become multiplications
    and square roots (vectorizable, and exact where powf is not), the rest stays ``**``."""
    if isinstance(x, types.Float) and isinstance(e, (types.Float, types.Integer)):
        xt, et = x, e  # numba types are casts: every constant below is typed like its operand

        def impl(x, e):
            if e == et(2):
                return x * x
            if e == et(1):
                return x
            if e == et(3):
                return x * x * x
            if e == et(0):
                return x * xt(0) + xt(1)
            if e == et(0.5):
                return math.sqrt(x)
            if e == et(-1):
                return xt(1) / x
            return x ** xt(e)
        return impl
    return lambda x, e: x ** e


def _max(a, b):
    return a if (a != a or a >= b) else b


def _min(a, b):
    return a if (a != a or a <= b) else b


@overload(_max, inline="always")
def _ol_max(a, b):
    """torch's maximum: a NaN in either operand is the result (Python's ``max`` drops it when first)."""
    return lambda a, b: a if (a != a or a >= b) else b


@overload(_min, inline="always")
def _ol_min(a, b):
    """torch's minimum: a NaN in either operand is the result."""
    return lambda a, b: a if (a != a or a <= b) else b
