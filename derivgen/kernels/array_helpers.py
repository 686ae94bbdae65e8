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
