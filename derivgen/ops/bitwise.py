"""Bitwise ops on integer and bool tensors (``bitwise_and/or/xor/not``, ``bitwise_left_shift`` /
``bitwise_right_shift``, the operators ``& | ^ ~ << >>`` and their in-place forms), with torch's type
promotion and its refusal of floating types. Their results are integers or bools, which have no
gradient, so they record no node; numpy computes them."""
import numbers

import numpy as np

from derivgen.core.dtypes import scalar_type_name
from derivgen.core.tensor import Tensor, bump_version, python_number, result_dtype, wrap_scalar
from derivgen.kernels.promotion import can_cast
from derivgen.ops.inplace import check_inplace
from derivgen.ops.out_arg import call_with_out


def _operand(v):
    if isinstance(v, Tensor):
        return v
    if isinstance(v, (numbers.Number, np.number, np.bool_)) and not isinstance(v, complex):
        return wrap_scalar(python_number(v))
    raise TypeError(f"expected Tensor or number as operand, but got {type(v).__name__}")


def _shift(kernel, a, b, dtype):
    """torch's shifts: an amount outside [0, bits) shifts everything out (left: 0; right: the sign)."""
    bits = dtype.itemsize * 8
    out_of_range = (b < 0) | (b >= bits)
    if kernel == "lshift":
        # shifting the unsigned bit pattern wraps as torch's does, without numpy's overflow rules
        unsigned = np.dtype(f"u{dtype.itemsize}")
        r = np.left_shift(a.astype(unsigned), np.where(out_of_range, 0, b).astype(unsigned)).astype(dtype)
        return np.where(out_of_range, dtype.type(0), r)
    if dtype.kind == "i":
        return np.right_shift(a, np.where(out_of_range, bits - 1, b).astype(dtype))
    return np.where(out_of_range, dtype.type(0), np.right_shift(a, np.where(out_of_range, 0, b).astype(dtype)))


_NUMPY = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}


def _check_cast(result, self):
    if not can_cast(result, self._array.dtype):
        raise RuntimeError(f"result type {scalar_type_name(result)} can't be cast to the desired output type "
                           f"{scalar_type_name(self._array.dtype)}")


def _compute(kernel, self, other, into=None):
    """The op's array; ``into``: the tensor an in-place form writes, whose dtype torch checks first."""
    a, b = _operand(self), _operand(other)
    dtype = result_dtype(a, b)
    if into is not None:
        _check_cast(dtype, into)
    if dtype.kind == "f" or (kernel in ("lshift", "rshift") and dtype.kind == "b"):
        raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'{scalar_type_name(dtype)}\'')
    x, y = a._array.astype(dtype, copy=False), b._array.astype(dtype, copy=False)
    if kernel in ("lshift", "rshift"):
        return _shift(kernel, x, y, dtype)
    return _NUMPY[kernel](x, y)


def _binary(name, kernel):
    def op(self, other, *, out=None):
        if out is not None:
            return call_with_out(name, lambda a, k: op(*a), (self, other), {"out": out})
        return Tensor._make(np.asarray(_compute(kernel, self, other)))
    op.__name__ = op.__qualname__ = name
    return op


def _write_into(self, result):
    _check_cast(result.dtype, self)
    check_inplace(self)
    np.copyto(self._array, result, casting="unsafe")
    bump_version(self)
    return self


def _binary_inplace(name, kernel):
    def op(self, other):
        return _write_into(self, _compute(kernel, self, other, into=self))
    op.__name__ = op.__qualname__ = name
    return op


bitwise_and = _binary("bitwise_and", "bitwise_and")
bitwise_or = _binary("bitwise_or", "bitwise_or")
bitwise_xor = _binary("bitwise_xor", "bitwise_xor")
bitwise_left_shift = _binary("bitwise_left_shift", "lshift")
bitwise_right_shift = _binary("bitwise_right_shift", "rshift")
bitwise_and_ = _binary_inplace("bitwise_and_", "bitwise_and")
bitwise_or_ = _binary_inplace("bitwise_or_", "bitwise_or")
bitwise_xor_ = _binary_inplace("bitwise_xor_", "bitwise_xor")
bitwise_left_shift_ = _binary_inplace("bitwise_left_shift_", "lshift")
bitwise_right_shift_ = _binary_inplace("bitwise_right_shift_", "rshift")


def _invert(self):
    a = self._array
    if a.dtype.kind == "f":
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{scalar_type_name(a.dtype)}\'')
    return np.invert(a)


def bitwise_not(self, *, out=None):
    if out is not None:
        return call_with_out("bitwise_not", lambda a, k: bitwise_not(*a), (self,), {"out": out})
    return Tensor._make(np.asarray(_invert(self)))


def bitwise_not_(self):
    return _write_into(self, _invert(self))


def _operator(fn, reflected=False):
    """A Python operator: an operand that is neither a Tensor nor a number gives NotImplemented (Python's
    TypeError), as torch's operators do."""
    def method(self, other):
        if not isinstance(other, Tensor) and not (isinstance(other, (numbers.Number, np.number, np.bool_))
                                                  and not isinstance(other, complex)):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)
    return method


def _invert_operator(self):
    if self._array.dtype.kind == "f":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


FUNCTIONS = {"bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
             "bitwise_not": bitwise_not, "bitwise_left_shift": bitwise_left_shift,
             "bitwise_right_shift": bitwise_right_shift}
METHODS = {**FUNCTIONS, "bitwise_and_": bitwise_and_, "bitwise_or_": bitwise_or_, "bitwise_xor_": bitwise_xor_,
           "bitwise_not_": bitwise_not_, "bitwise_left_shift_": bitwise_left_shift_,
           "bitwise_right_shift_": bitwise_right_shift_,
           "__and__": _operator(bitwise_and), "__rand__": _operator(bitwise_and),
           "__or__": _operator(bitwise_or), "__ror__": _operator(bitwise_or),
           "__xor__": _operator(bitwise_xor), "__rxor__": _operator(bitwise_xor),
           "__lshift__": _operator(bitwise_left_shift), "__rlshift__": _operator(bitwise_left_shift, reflected=True),
           "__rshift__": _operator(bitwise_right_shift), "__rrshift__": _operator(bitwise_right_shift, reflected=True),
           "__iand__": _operator(bitwise_and_), "__ior__": _operator(bitwise_or_), "__ixor__": _operator(bitwise_xor_),
           "__ilshift__": _operator(bitwise_left_shift_), "__irshift__": _operator(bitwise_right_shift_),
           "__invert__": _invert_operator}
