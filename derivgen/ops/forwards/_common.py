"""Shared helpers of the hand-written forwards (dtype names for messages, reduction dtypes)."""
import numpy as np

from derivgen.core.dtypes import from_numpy_dtype, scalar_type_name, to_numpy_dtype


# C++ names of the element types, which some of torch's messages print
_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int", "int32": "int",
               "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
               "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _tn(a):
    return _TYPE_NAMES.get(a.dtype.name, a.dtype.name)


def _scalar_type_name(a):
    """torch's ScalarType name of an array's dtype (Float, Double, Long, Int, Bool)."""
    return scalar_type_name(a.dtype)


def _legacy_type_name(a):
    """torch.typename of a tensor with this array's dtype (``derivgen.FloatTensor``)."""
    return f"derivgen.{from_numpy_dtype(a.dtype)._legacy}"


def _reduce_dtype(self, dtype):
    if dtype is not None:
        return to_numpy_dtype(dtype)
    if self.dtype.kind in "biu":
        return np.dtype(np.int64)
    return self.dtype


def accepts_pending(fn):
    """Mark a forward that takes a deferred elementwise input (a ``Pending``, see fusion.py) as it is,
    to reduce it in the loop that computes it; the generator then passes it undeferred."""
    fn.accepts_pending = True
    return fn


def returns_new_array(fn):
    """Mark a forward whose result is always a new array sharing memory with nothing else; a backward
    formula that ends in it yields a gradient the engine owns (it may sum into it in place or make it
    a leaf's ``.grad`` without a copy, see derivgen/engine/execute.py)."""
    fn.returns_new_array = True
    return fn
