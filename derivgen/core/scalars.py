"""Python numbers entering tensors: torch's range rules and errors for integers that do not fit.

A wrapped number (``x + 2**63``) is read as torch reads it: any int in [-2**63, 2**64) is accepted
(values from 2**63 wrap around as uint64 does), others raise ``OverflowError``. A fill value
(``full``, ``fill_``) must fit the tensor's integer dtype."""
import math

import numpy as np

# the Python ints torch reads as a Scalar: [INT64_MIN, UINT64_END)
INT64_MIN, UINT64_END = -(1 << 63), 1 << 64
FLOAT32_MAX = float(np.finfo(np.float32).max)
# the C++ type names torch 2.13 prints in "value cannot be converted to type ... without overflow"
_C_NAMES = {"int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}


def wrapped_int(value):
    """The int64 value torch stores for the Python int ``value`` as a wrapped number."""
    if value < INT64_MIN:
        raise OverflowError("can't convert negative int to unsigned")
    if value >= UINT64_END:
        raise OverflowError("int too big to convert")
    return value - UINT64_END if value >= (1 << 63) else value


def check_fill(value, np_dtype):
    """The value ``full``/``fill_`` write into an ``np_dtype`` array, with torch's range rules: OverflowError
    for a Python int outside [-2**63, 2**64) (any dtype); RuntimeError for a number outside an integer
    dtype's range (NaN and infinities included) or a finite one beyond float32's largest value; a negative
    int down to -max wraps around for an unsigned dtype, as torch's does. Otherwise ``value`` unchanged."""
    np_dtype = np.dtype(np_dtype)
    if isinstance(value, int) and not isinstance(value, bool):
        wrapped_int(value)  # the range torch's argument parser reads a Python int in
        if np_dtype.kind == "b":
            return bool(value)  # (numpy cannot convert an int beyond int64 to bool itself)
    if np_dtype.kind in "iu" and isinstance(value, (int, np.integer, float, np.floating)) \
            and not isinstance(value, bool):
        info = np.iinfo(np_dtype)
        if np_dtype.kind == "u" and isinstance(value, (int, np.integer)) and -info.max <= value < 0:
            return int(value) % (info.max + 1)  # torch accepts down to -max for unsigned types and wraps
        if not info.min <= value <= info.max:  # NaN too, as torch's overflow check
            raise RuntimeError(f"value cannot be converted to type {_C_NAMES.get(np_dtype.name, np_dtype.name)} "
                               "without overflow")
    elif np_dtype == np.float32 and isinstance(value, (int, float, np.integer, np.floating)) \
            and not isinstance(value, bool) and math.isfinite(value) and abs(value) > FLOAT32_MAX:
        raise RuntimeError("value cannot be converted to type float without overflow")
    return value
