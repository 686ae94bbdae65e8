"""Python numbers entering tensors: torch's range rules and errors for integers that do not fit.

A wrapped number (``x + 2**63``) is read as torch reads it: any int in [-2**63, 2**64) is accepted
(values from 2**63 wrap around as uint64 does), others raise ``OverflowError``. A fill value
(``full``, ``fill_``) must fit the tensor's integer dtype."""
import numpy as np

_INT64_MIN, _UINT64_END = -(1 << 63), 1 << 64
_C_NAMES = {"int64": "int64_t", "int32": "int", "int16": "short", "int8": "signed char", "uint8": "unsigned char"}


def wrapped_int(value):
    """The int64 value torch stores for the Python int ``value`` as a wrapped number."""
    if value < _INT64_MIN:
        raise OverflowError("can't convert negative int to unsigned")
    if value >= _UINT64_END:
        raise OverflowError("int too big to convert")
    return value - _UINT64_END if value >= (1 << 63) else value


def check_fill(value, np_dtype):
    """``value`` unchanged when it fits ``np_dtype``; torch's RuntimeError for an int that does not."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype.kind in "iu" and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        info = np.iinfo(np_dtype)
        if not info.min <= int(value) <= info.max:
            name = _C_NAMES.get(np_dtype.name, np_dtype.name)
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    return value
