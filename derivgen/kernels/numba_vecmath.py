"""Vectorizable float32 exp / log / tanh for the generated kernels.

PyPI's numba has no SVML, so ``math.exp`` on float32 is a scalar libm call per element and keeps a loop
from vectorizing. These are the Cephes single-precision algorithms (range reduction, then a minimax
polynomial) in branch-free arithmetic, evaluated with fused multiply-adds: within 1.3 ulp of the
correctly rounded result over the normal range, and torch's results at the edges (inf, nan, overflow
to inf, underflow to 0, signed zeros). float64 keeps libm. Kernels call ``loop_helpers._exp``, ``_log`` and
``_tanh``; the overloads here give them their compiled meaning, picking by the argument's type at compile
time. Imported by numba_backend only, when the first kernel runs.

On one thread a transcendental-heavy loop is bound by arithmetic, not memory, so the functions also
ask LLVM for the machine's widest vectors (``_prefer_wide_vectors``): on AVX-512 machines LLVM's
default is 256-bit vectors, and 512-bit ones halve the instructions per element. The width changes
no result (every lane computes the same sequence of roundings).
"""
import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from derivgen.kernels import loop_helpers as _h
from derivgen.kernels.fma import fma

_F = np.float32


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


# An LLVM string attribute on the function being compiled. llvmlite's attribute set only admits its
# list of keyword attributes, so the string form is added to the underlying set directly (llvmlite
# prints set members verbatim into the function definition).
_PREFER_WIDE = '"prefer-vector-width"="512"'


@intrinsic
def _prefer_wide_vectors(typingctx):
    """Let LLVM vectorize the enclosing kernel with 512-bit vectors where the CPU has them (a no-op
    elsewhere: the attribute only lifts LLVM's tuning preference for 256-bit vectors)."""
    sig = types.none()

    def codegen(context, builder, signature, args):
        set.add(builder.function.attributes, _PREFER_WIDE)
        return context.get_dummy_value()
    return sig, codegen


@numba.njit(inline="always", error_model="numpy")
def _ldexpf(p, n):
    """p * 2**n for integer-valued float32 n in [-150, 128], in two in-range steps (2**128 alone
    overflows float32, 2**-150 alone underflows)."""
    n1 = np.int32(n) >> np.int32(1)
    n2 = np.int32(n) - n1
    return (p * _i32_as_f32((n1 + np.int32(127)) << np.int32(23))) * _i32_as_f32((n2 + np.int32(127)) << np.int32(23))


@numba.njit(inline="always", error_model="numpy")
def _expf(x):
    _prefer_wide_vectors()
    # below -104 the result rounds to 0 and the clamped input gives that 0 too; above the largest finite
    # result the select gives inf; nan passes through the last select
    xc = min(max(x, _F(-104.0)), _F(88.72283))
    n = np.floor(fma(xc, _F(1.44269504088896341), _F(0.5)))
    r = fma(n, _F(-0.693359375), xc)          # ln 2 in two parts (Cody-Waite)
    r = fma(n, _F(2.12194440e-4), r)
    z = r * r
    p = _F(1.9875691500e-4)
    p = fma(p, r, _F(1.3981999507e-3))
    p = fma(p, r, _F(8.3334519073e-3))
    p = fma(p, r, _F(4.1665795894e-2))
    p = fma(p, r, _F(1.6666665459e-1))
    p = fma(p, r, _F(5.0000001201e-1))
    p = fma(p, z, r + _F(1.0))
    y = _ldexpf(p, n)
    y = _F(np.inf) if x > _F(88.72283) else y
    return x if x != x else y


@numba.njit(inline="always", error_model="numpy")
def _logf(x):
    _prefer_wide_vectors()
    tiny = x < _F(1.17549435e-38)
    xs = x * _F(8388608.0) if tiny else x       # subnormals: scale into the normal range first
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
    y = fma(y, t, _F(-1.1514610310e-1))
    y = fma(y, t, _F(1.1676998740e-1))
    y = fma(y, t, _F(-1.2420140846e-1))
    y = fma(y, t, _F(1.4249322787e-1))
    y = fma(y, t, _F(-1.6668057665e-1))
    y = fma(y, t, _F(2.0000714765e-1))
    y = fma(y, t, _F(-2.4999993993e-1))
    y = fma(y, t, _F(3.3333331174e-1))
    y = y * t * z
    y = fma(_F(-2.12194440e-4), fe, y)
    y = fma(_F(-0.5), z, y)
    r = fma(_F(0.693359375), fe, t + y)
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
    p = _F(-5.70498872745e-3)
    p = fma(p, z, _F(2.06390887954e-2))
    p = fma(p, z, _F(-5.37397155531e-2))
    p = fma(p, z, _F(1.33314422036e-1))
    p = fma(p, z, _F(-3.33332819422e-1))
    small = fma(p * z, x, x)
    small = x if ax == _F(0.0) else small      # keeps the sign of a zero
    return small if ax < _F(0.625) else big



def _is_f32(x):
    return isinstance(x, types.Float) and x.bitwidth == 32


@overload(_h._exp)
def _ol_exp(x):
    if _is_f32(x):
        return lambda x: _expf(x)
    return lambda x: math.exp(x)


@overload(_h._log)
def _ol_log(x):
    if _is_f32(x):
        return lambda x: _logf(x)
    return lambda x: math.log(x)


@overload(_h._tanh)
def _ol_tanh(x):
    if _is_f32(x):
        return lambda x: _tanhf(x)
    return lambda x: math.tanh(x)
