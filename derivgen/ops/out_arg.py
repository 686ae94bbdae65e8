"""torch's ``out=`` keyword: the op's result written into a given tensor. As in torch, ``out=`` ops are not
differentiable: with grad mode on, an input or ``out`` that requires grad is an error."""
import functools

import numpy as np

from derivgen.core.dtypes import scalar_type_name
from derivgen.core.grad_mode import is_grad_enabled, no_grad
from derivgen.core.tensor import Tensor, bump_version, replace_array
from derivgen.kernels.promotion import can_cast


def _requires_grad(values):
    for v in values:
        if isinstance(v, Tensor) and v.requires_grad:
            return True
        if isinstance(v, (list, tuple)) and _requires_grad(v):
            return True
    return False


def call_with_out(name, compute, args, kwargs):
    """Run ``compute(args, kwargs)`` (the op without ``out``) and write its result into ``kwargs['out']``."""
    kwargs = dict(kwargs)
    out = kwargs.pop("out")
    if out is None:
        return compute(args, kwargs)
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if is_grad_enabled() and (_requires_grad(args) or _requires_grad(kwargs.values()) or out.requires_grad):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    with no_grad():
        result = compute(args, kwargs)
    data = result._array
    if not can_cast(data.dtype, out._array.dtype):  # torch refuses a float result for an int out, ...
        raise RuntimeError(f"result type {scalar_type_name(data.dtype)} can't be cast to the desired output "
                           f"type {scalar_type_name(out._array.dtype)}")
    from derivgen.ops.inplace import check_inplace
    check_inplace(out)
    if data.shape == out._array.shape:
        np.copyto(out._array, data, casting="unsafe")
    else:  # torch resizes an out tensor of the wrong shape
        replace_array(out, data.astype(out._array.dtype, copy=True))
    bump_version(out)
    return out


def with_out(name, fn):
    """``fn`` taking torch's ``out=`` keyword too (``torch.matmul(a, b, out=c)``)."""
    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        return call_with_out(name, lambda a, k: fn(*a, **k), args, dict(kwargs, out=out))
    return call
