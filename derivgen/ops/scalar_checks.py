"""torch's refusals of Scalar argument values in elementwise ops (CELU's zero alpha, softshrink's negative
lambda, the negative slope of an in-place activation's backward). Unlike the dtype rules these depend on values, not dtypes, so each is
attached to its row's forward kernel as ``ElementwiseOp.arg_rule`` and runs on every call, fast paths
included; only the few rows listed here pay for it."""
import numpy as np

from derivgen.core.dtypes import scalar_type_name

# With a negative slope an in-place activation's result no longer tells which side of zero the input was on,
# so torch refuses the backward that reads the result (``elu_backward(..., is_result=True, result)``).
_NEGATIVE_SLOPE = ("In-place {op} backward calculation is triggered with a negative slope which is not supported. "
                   "This is caused by calling in-place forward function with a negative slope, please call "
                   "out-of-place version instead.")
_LEAKY_TAIL = (" File an issue at https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
               "backward calculation with negative slope")


def check_elu_slope(alpha):
    if float(alpha) < 0:
        raise RuntimeError(_NEGATIVE_SLOPE.format(op="elu"))


def check_leaky_relu_slope(negative_slope):
    if float(negative_slope) < 0:
        raise RuntimeError(_NEGATIVE_SLOPE.format(op="leakyReLu") + _LEAKY_TAIL)


def _celu_alpha(scalars, first=None):
    """torch divides by alpha in CELU's kernel and refuses 0 first (its text: the C++ ZeroDivisionError)."""
    if scalars and scalars[0] == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")


def _elu_backward(scalars, first=None):
    """elu_backward's scalars: (alpha, scale, input_scale, is_result)."""
    if scalars[3]:
        check_elu_slope(scalars[0])


def _leaky_relu_backward(scalars, first=None):
    """leaky_relu_backward's scalars: (negative_slope, self_is_result)."""
    if scalars[1]:
        check_leaky_relu_slope(scalars[0])


def _softshrink_lambda(scalars, first=None):
    """torch refuses a negative lambda, naming the range the input's dtype allows."""
    if scalars and float(scalars[0]) < 0:
        dtype = first._array.dtype if first is not None else np.dtype(np.float32)
        top = float(np.finfo(dtype).max) if dtype.kind == "f" else float(np.iinfo(dtype).max)
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype {scalar_type_name(dtype)}, but "
                           f"found {float(scalars[0]):g}")


def _bool_alpha(scalars, first=None):
    """torch's alpha check for a bool alpha (the last scalar): only with a bool result, which a first operand
    that is not bool rules out. The fast path of two same-dtype floats consults no dtype rule, so the check
    runs here; the dtype rules see the mixed cases."""
    alpha = scalars[-1] if scalars else None
    if (type(alpha) is bool or type(alpha) is np.bool_) and first is not None and first._array.dtype.kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")


# The checks above that refuse no plain Python int or float: a kernel whose one Scalar argument is one
# (``x + y``: alpha=1) skips the call (derivgen.ops.elementwise: forward1/forward2).
PLAIN_SCALARS_PASS = frozenset({_bool_alpha})

# forward kernel name -> check(scalars, first tensor), raising torch's error
ARG_RULES = {
    "add_Tensor_forward": _bool_alpha, "sub_Tensor_forward": _bool_alpha, "rsub_Tensor_forward": _bool_alpha,
    "add_Scalar_forward": _bool_alpha, "sub_Scalar_forward": _bool_alpha, "rsub_Scalar_forward": _bool_alpha,
    "celu_forward": _celu_alpha, "celu__forward": _celu_alpha, "softshrink_forward": _softshrink_lambda,
    "elu_backward_forward": _elu_backward,
    "leaky_relu_backward_forward": _leaky_relu_backward,
}
