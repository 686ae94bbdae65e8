"""Value comparisons that build no graph: ``equal``, ``isclose``, ``allclose`` (functions and Tensor
methods), with torch's rules: ``isclose`` is ``|a - b| <= atol + rtol * |b|`` computed in the tensors'
dtype (integers in the default float dtype), infinities close only to themselves, NaN close to NaN
only with ``equal_nan``; both tensors must have the same dtype; shapes broadcast."""
import numpy as np

from derivgen.core.dtypes import scalar_type_name
from derivgen.core import dtypes as _dt
from derivgen.kernels.dispatch import broadcast_shape
from derivgen.core.tensor import Tensor



def _check_tensor(fn, v, name, position):
    if not isinstance(v, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(v).__name__}")
    return v._array


def equal(input, other):  # noqa: A002 - torch's spelling
    """True when both have the same shape and the same values (NaN is never equal)."""
    a = _check_tensor("equal", input, "input", 1)
    b = _check_tensor("equal", other, "other", 2)
    return a.shape == b.shape and bool(np.array_equal(a, b))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    a = _check_tensor("isclose", input, "input", 1)
    b = _check_tensor("isclose", other, "other", 2)
    if a.dtype != b.dtype:
        raise RuntimeError(f"{scalar_type_name(a.dtype)} did not match {scalar_type_name(b.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    broadcast_shape([a.shape, b.shape])
    close = a == b
    if a.dtype == np.bool_ or (rtol == 0 and atol == 0):
        return Tensor._make(np.asarray(close))
    if a.dtype.kind != "f":
        ft = _dt.get_default_dtype().np
        a, b = a.astype(ft), b.astype(ft)
    if equal_nan:
        close = close | (np.isnan(a) & np.isnan(b))
    with np.errstate(invalid="ignore", over="ignore"):
        allowed = a.dtype.type(atol) + np.abs(a.dtype.type(rtol) * b)
        actual = np.abs(a - b)
        close = close | (np.isfinite(actual) & (actual <= allowed))
    return Tensor._make(np.asarray(close))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    return bool(isclose(input, other, rtol, atol, equal_nan)._array.all())


FUNCTIONS = {"equal": equal, "isclose": isclose, "allclose": allclose}
METHODS = FUNCTIONS
