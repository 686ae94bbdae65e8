"""The helpers the generated kernels' loops call, as plain Python: ``prange``, ``_l`` (a literal in the
kernel's dtype), ``_exp``/``_log``/``_tanh``, ``_pow``, ``_max``/``_min``, ``_sign``. numba_backend overloads
each for compiled code, so kernel modules can be imported without importing Numba; in Python they give
the same results (``prange`` is ``range``, ``_l`` the value itself).
"""
import math


def prange(*args):
    """``range``; in a kernel made with ``kernel_parallel``, Numba's ``prange`` (numba_backend binds it
    when it compiles the kernel), so kernel modules need not import Numba."""
    return range(*args)


# The helpers below are what they say in Python; numba_backend overloads each for compiled code:
# ``_l`` casts a literal to the kernel's dtype, ``_exp``/``_log``/``_tanh`` pick vectorizable float32
# versions, ``_pow`` unrolls small constant exponents, ``_max``/``_min`` propagate NaN as torch does, ``_sign`` maps
# NaN to 0 as torch does.

def _l(value, like):
    """A literal typed like ``like`` (so float32 kernels never compute in float64)."""
    return value


def _exp(x):
    return math.exp(x)


def _log(x):
    return math.log(x)


def _tanh(x):
    return math.tanh(x)


def _pow(x, e):
    return x ** e


def _sign(x):
    """torch's sign: 0 for NaN (numpy's sign propagates it)."""
    return type(x)(1 if x > 0 else (-1 if x < 0 else 0))


def _max(a, b):
    return a if (a != a or a >= b) else b


def _min(a, b):
    return a if (a != a or a <= b) else b


def _gemm(fn, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    """``C = alpha * op(A) @ op(B) + beta * C`` through the row-major cblas GEMM at address ``fn``
    (blas.py): ``a``, ``b``, ``c`` are addresses, ``op`` transposes where ``trans_a``/``trans_b`` is
    true. A call from compiled code only (numba_blas.py compiles it); Python has numpy's matmul."""
    raise NotImplementedError("loop_helpers._gemm is called from compiled kernels only")
