"""Integer division as torch does it: exact integer results (never through floats), and
``RuntimeError: ZeroDivisionError`` for a zero divisor where numpy would silently give 0 or garbage."""
import numpy as np


def integral_result(self, other):
    """torch's result dtype of ``self`` and ``other`` when both are integral (bool or int), else None."""
    if self.dtype.kind not in "biu" or np.asarray(other).dtype.kind not in "biu":
        return None
    from derivgen.core.tensor import result_dtype
    return result_dtype(self, np.asarray(other))


def _check_divisor(other):
    if np.any(np.asarray(other) == 0):
        raise RuntimeError("ZeroDivisionError")


def divide(self, other, rounding_mode, dtype):
    """``self / other`` rounded to ``dtype`` (an integral dtype) by 'floor' or 'trunc'."""
    if dtype.kind == "b":
        kernel = "div_floor_cpu" if rounding_mode == "floor" else "div_trunc_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    _check_divisor(other)
    a, b = self.astype(dtype, copy=False), np.asarray(other).astype(dtype, copy=False)
    q = np.floor_divide(a, b)
    if rounding_mode == "trunc":
        # floor and trunc differ by one where the quotient is negative and inexact
        q = q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0))).astype(dtype)
    return np.asarray(q, dtype=dtype)


def modulo(fn, self, other, dtype):
    """``fn`` (np.remainder: torch.remainder, np.fmod: torch.fmod) on integral operands."""
    _check_divisor(other)
    return np.asarray(fn(self.astype(dtype, copy=False), np.asarray(other).astype(dtype, copy=False)), dtype=dtype)
