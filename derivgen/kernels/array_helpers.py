"""The helpers a generated kernel's ``_array`` form calls: the whole-array meaning of the one-element
helpers in loop_helpers.py, with the same results element by element (the compiled loops' rules for
NaN and for a literal's dtype)."""
import numpy as np


def _lit(value, zero):
    """A literal as a number of the kernel's dtype (``zero`` is that dtype's zero), so float32 arithmetic
    stays float32 as in the compiled loop, and an integer literal never meets numpy's integer rules
    (``2 ** -1``)."""
    return type(zero)(value)


def _maximum(a, b):
    """The larger of ``a`` and ``b``, NaN when either is NaN, ``a`` when they compare equal (so
    ``max(-0.0, 0.0)`` is -0.0), as loop_helpers._max."""
    return np.where((a != a) | (a >= b), a, b)


def _minimum(a, b):
    """The smaller of ``a`` and ``b``, with loop_helpers._min's rules for NaN and equal values."""
    return np.where((a != a) | (a <= b), a, b)


def _power(x, e):
    """``x ** e``, with the compiled ``_pow``'s spelling (and so its rounding) for a single exponent of
    2, 1, 3, 0.5, -1, -2 or -0.5."""
    if np.ndim(e) == 0:
        if e == 2:
            return x * x
        if e == 1:
            return x
        if e == 3:
            return x * x * x
        if e == 0.5:
            return np.sqrt(x)
        if e == -1:
            return 1 / x
        if e == -2:
            return 1 / (x * x)
        if e == -0.5:
            return 1 / np.sqrt(x)
    return np.power(x, e)


def _sign_of(x):
    """torch's sign: -1, 0 or 1, and 0 for NaN (numpy's sign propagates it)."""
    return np.where(x != x, 0, np.sign(x))


def _fma32(a, b, c):
    """``a * b + c`` rounded once to float32, for float32 operands (arrays or numbers), as the compiled
    ``fma`` rounds it. The product is exact in float64 (24 + 24 bits). The sum is rounded to odd in
    float64: the exact sum's truncation toward zero, its last bit set where the sum was inexact (the
    error comes from Knuth's two-sum). Rounding that to float32 is the one rounding of the exact value
    (float64's 53 bits are at least float32's 24 + 2: Boldo and Melquiond's rounding to odd), where
    rounding the float64 sum to nearest first could land on a float32 halfway point and round twice."""
    p = np.multiply(a, b, dtype=np.float64)
    c = np.asarray(c, np.float64)
    s = np.asarray(p + c)
    t = s - p
    err = (p - (s - t)) + (c - t)
    inexact = (err != 0) & np.isfinite(s)
    truncated = np.where((err > 0) == (s > 0), s, np.nextafter(s, 0))
    odd = (np.asarray(truncated).view(np.int64) | 1).view(np.float64)
    return np.where(inexact, odd, s).astype(np.float32)
