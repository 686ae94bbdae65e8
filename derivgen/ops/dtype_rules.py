"""torch's dtype-specific rules of elementwise forwards that a generated kernel cannot express:
refusals (bool subtraction and negation, integers to negative powers, alpha of the wrong kind) and
exact integer powers. Each rule is attached to its row's forward kernel (``Elementwise.dtype_rule``),
which consults it only off the same-dtype float fast paths, so float ops pay nothing for it."""
import numpy as np

from derivgen.core.dtypes import scalar_type_name
from derivgen.core.tensor import Tensor, result_dtype, wrap_scalar
from derivgen.kernels.promotion import can_cast
from derivgen.ops.forwards._common import _tn
from derivgen.ops.scalar_checks import ARG_RULES, PLAIN_SCALARS_PASS

_SUB_TWO_BOOLS = ("Subtraction, the `-` operator, with two bool tensors is not supported. "
                  "Use the `^` or `logical_xor()` operator instead.")
_SUB_BOOL = ("Subtraction, the `-` operator, with a bool tensor is not supported. "
             "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
_NEG_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. "
             "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
_NEG_POWER = "Integers to negative integer powers are not allowed."


def _is_bool(t):
    return t._array.dtype.kind == "b"


def _is_int_number(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _check_alpha(tensors, alpha, other=None):
    """torch's alpha_check: a bool alpha only for bool results, a float alpha never for integral ones; the
    result's dtype includes a ``.Scalar`` row's ``other`` as a wrapped number (``int_tensor.sub(0.5,
    alpha=0.5)`` is float)."""
    operands = tuple(tensors) + ((wrap_scalar(other),) if other is not None else ())
    kind = result_dtype(*operands).kind
    if isinstance(alpha, (bool, np.bool_)) and kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, (float, np.floating)) and kind in "biu":
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _scalar_tensor_kinds(tensors, scalars):
    """The bool-ness of every operand of a ``.Scalar`` row: its tensors and its Scalar ``other``."""
    return [_is_bool(t) for t in tensors] + [isinstance(scalars[0], (bool, np.bool_))]


def _sub_check(bools):
    if all(bools):
        raise RuntimeError(_SUB_TWO_BOOLS)
    if any(bools):
        raise RuntimeError(_SUB_BOOL)


def sub_tensor(tensors, scalars, out):
    """sub.Tensor, rsub.Tensor: (self, other), scalars (alpha,)."""
    _sub_check([_is_bool(t) for t in tensors])
    _check_alpha(tensors, scalars[-1])


def sub_scalar(tensors, scalars, out):
    """sub.Scalar, rsub.Scalar: (self,), scalars (other, alpha)."""
    _sub_check(_scalar_tensor_kinds(tensors, scalars))
    _check_alpha(tensors, scalars[-1], scalars[0])


def add_alpha(tensors, scalars, out):
    """add.Tensor (scalars (alpha,)) and add.Scalar (scalars (other, alpha))."""
    _check_alpha(tensors, scalars[-1], scalars[0] if len(scalars) == 2 else None)


def neg(tensors, scalars, out):
    if _is_bool(tensors[0]):
        raise RuntimeError(_NEG_BOOL)


def abs_(tensors, scalars, out):
    if _is_bool(tensors[0]):
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")


def _finish(res, out):
    if out is None:
        return res
    out[...] = res
    return out


def _int_power(base, exponent, dtype):
    """Elementwise integer power as torch computes it: a negative exponent gives 1 / base ** -e
    truncated (0 except for bases 1 and -1)."""
    base = np.asarray(base).astype(dtype, copy=False)
    exponent = np.asarray(exponent).astype(dtype, copy=False)
    negative = exponent < 0
    res = np.power(base, np.where(negative, 0, exponent))
    if negative.any():
        odd = (exponent % 2) != 0
        res = np.where(negative, np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0)), res)
    return np.asarray(res, dtype=dtype)


def pow_tensor_scalar(tensors, scalars, out):
    """pow.Tensor_Scalar: an integral tensor to an int power stays integral; a negative one is refused."""
    self, exponent = tensors[0], scalars[0]
    if self._array.dtype.kind not in "biu" or isinstance(exponent, (float, np.floating)):
        return None
    if exponent < 0:
        raise RuntimeError(_NEG_POWER)
    dtype = self._array.dtype if self._array.dtype.kind != "b" else np.dtype(np.int64)
    return _finish(_int_power(self._array, int(exponent), dtype), out)


def pow_tensor_tensor(tensors, scalars, out):
    """pow.Tensor_Tensor with integral operands: exact integer powers (bool ** bool is not implemented)."""
    dtype = result_dtype(*tensors)
    if dtype.kind not in "biu":
        return None
    if dtype.kind == "b":
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    return _finish(_int_power(tensors[0]._array, tensors[1]._array, dtype), out)


def pow_scalar(tensors, scalars, out):
    """pow.Scalar (a number to a tensor power): an int base with an integral exponent stays integral."""
    base, exponent = scalars[0], tensors[0]
    if not _is_int_number(base) or exponent._array.dtype.kind not in "biu":
        return None
    dtype = exponent._array.dtype if exponent._array.dtype.kind != "b" else np.dtype(np.int64)
    return _finish(_int_power(np.asarray(base), exponent._array, dtype), out)




def _float_only(kernel):
    """A rule for an op torch implements for floating dtypes only: its NotImplementedError, naming
    torch's CPU kernel, for integral operands."""
    def rule(tensors, scalars, out):
        dtype = result_dtype(*tensors)
        if dtype.kind in "biu":
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dtype)}'")
    return rule


def relu(tensors, scalars, out):
    if _is_bool(tensors[0]):
        raise RuntimeError("Boolean inputs not supported for relu")


def addcmul(tensors, scalars, out):
    if result_dtype(*tensors).kind == "b":
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")


def addcdiv(tensors, scalars, out):
    if tensors[1]._array.dtype.kind in "biu" and tensors[2]._array.dtype.kind in "biu":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
            "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
            "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
            "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes.")


# torch's CPU kernels of these ops dispatch over floating dtypes only (name of the kernel in its error)
_FLOAT_ONLY = {
    "silu_forward": "silu_cpu", "mish_forward": "mish_cpu", "softplus_forward": "softplus_cpu",
    "elu_forward": "elu_cpu", "celu_forward": "elu_cpu", "leaky_relu_forward": "leaky_relu_cpu",
    "elu__forward": "elu_cpu", "celu__forward": "elu_cpu", "leaky_relu__forward": "leaky_relu_cpu",
    "hardsigmoid_forward": "hardsigmoid_cpu", "hardswish_forward": "hardswish_cpu", "hypot_forward": "hypot_cpu",
    "logaddexp_forward": "logaddexp_cpu", "hardshrink_forward": "hardshrink_cpu",
    "softshrink_forward": "softshrink_check", "log_sigmoid_forward": "log_sigmoid_cpu",
    "leaky_relu_backward_forward": "leaky_relu_backward_cpu", "hardtanh_backward_forward": "hardshrink_backward_cpu",
    "elu_backward_forward": "elu_backward_cpu", "softplus_backward_forward": "softplus_backward_cpu",
    "hardswish_backward_forward": "hardswish_backward_cpu",
}

def hardtanh(tensors, scalars, out):
    if _is_bool(tensors[0]):
        raise RuntimeError("Bool inputs not supported for hardtanh")


# the C++ element type names torch's masked_fill error prints for a non-boolean mask
_CPP_TYPE_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
                   "int16": "short int", "int8": "signed char", "uint8": "unsigned char"}


def _boolean_mask(mask):
    if mask.dtype.kind != "b":
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_CPP_TYPE_NAMES.get(mask.dtype.name, mask.dtype.name)}")


def masked_fill_scalar(tensors, scalars, out):
    _boolean_mask(tensors[1]._array)


def where_self(tensors, scalars, out):
    condition = tensors[0]._array
    if condition.dtype.kind != "b":
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{scalar_type_name(condition.dtype)}")


def masked_fill_tensor(tensors, scalars, out):
    """The value must be 0-dim; the result keeps self's dtype (the value is cast to it), as in torch."""
    self, mask, value = (t._array for t in tensors)
    if value.ndim != 0:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    _boolean_mask(mask)
    if value.dtype != self.dtype:
        return _finish(np.where(mask, value.astype(self.dtype), self), out)


def lerp(tensors, scalars, out):
    """lerp's operands must share self's dtype (a 0-dim weight may differ), as in torch."""
    self = tensors[0]._array
    for name, t in zip(("end", "weight"), tensors[1:]):
        if t._array.dtype != self.dtype and (name == "end" or t._array.ndim):
            raise RuntimeError(f"expected dtype {_tn(self)} for `{name}` but got dtype {_tn(t._array)}")
    if self.dtype.kind in "biu":
        _float_only("lerp_kernel_tensor" if len(tensors) == 3 else "lerp_kernel_scalar")(tensors, scalars, out)


def prelu_kernel(tensors, scalars, out):
    """_prelu_kernel promotes nothing: the weight must have self's dtype."""
    self, weight = tensors[0]._array, tensors[1]._array
    if weight.dtype != self.dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(weight.dtype)} but expected {scalar_type_name(self.dtype)}")
    if self.dtype.kind in "biu":
        _float_only("prelu_cpu")(tensors, scalars, out)


def _scalar_operand(kernel):
    """For a ``.Scalar`` row whose first Scalar is an operand (``clamp_min(int_tensor, 2.5)``): the
    Python number takes part in type promotion as a wrapped number, as in torch, so a float number
    lifts an integral tensor to the default float dtype and an int number a bool one to int64."""
    def rule(tensors, scalars, out):
        self = tensors[0]
        dtype = result_dtype(self, wrap_scalar(scalars[0]))
        if dtype == self._array.dtype:
            return None
        if out is not None:
            # in place (``int_tensor.clamp_min_(2.5)``): the promoted result must fit the output, as in torch
            if not can_cast(dtype, out.dtype):
                name = _tn(out) if kernel.name in _CPP_NAMED_OUTPUT else scalar_type_name(out.dtype)
                raise RuntimeError(f"result type {scalar_type_name(dtype)} can't be cast to the desired output "
                                   f"type {name}")
            return None
        return kernel.forward((Tensor._make(self._array.astype(dtype)),) + tuple(tensors[1:]), scalars)
    return rule


# the rows whose cast refusal names the output type by its C++ element type, as torch's clamp kernels do
_CPP_NAMED_OUTPUT = ("clamp_min_forward", "clamp_max_forward")


_SCALAR_OPERAND = ("add_Scalar_forward", "sub_Scalar_forward", "rsub_Scalar_forward", "mul_Scalar_forward",
                   "clamp_min_forward", "clamp_max_forward")

RULES = {
    "sub_Tensor_forward": sub_tensor, "rsub_Tensor_forward": sub_tensor,
    "sub_Scalar_forward": sub_scalar, "rsub_Scalar_forward": sub_scalar,
    "add_Tensor_forward": add_alpha, "add_Scalar_forward": add_alpha,
    "neg_forward": neg, "abs_forward": abs_,
    "pow_Tensor_Scalar_forward": pow_tensor_scalar, "pow_Tensor_Tensor_forward": pow_tensor_tensor,
    "pow_Scalar_forward": pow_scalar, "relu_forward": relu, "addcmul_forward": addcmul,
    "addcdiv_forward": addcdiv, "hardtanh_forward": hardtanh, "lerp_Scalar_forward": lerp, "lerp_Tensor_forward": lerp, "masked_fill_Tensor_forward": masked_fill_tensor,
    "masked_fill_Scalar_forward": masked_fill_scalar, "where_self_forward": where_self,
    "_prelu_kernel_forward": prelu_kernel,
    **{name: _float_only(kernel) for name, kernel in _FLOAT_ONLY.items()},
}


# The rules that refuse nothing for a float32/float64 tensor with an int or float number and plain-number
# scalars (they refuse bool operands and bool or integral-result alphas only): the number fast paths of
# ElementwiseOp may skip them.
_FLOAT_WITH_NUMBER_PASSES = frozenset({"add_Tensor_forward", "sub_Tensor_forward", "rsub_Tensor_forward"})


def _chain(first, second):
    def rule(tensors, scalars, out):
        res = first(tensors, scalars, out)
        return res if res is not None else second(tensors, scalars, out)
    return rule


def attach(*kernels):
    """Give each generated forward kernel its rules, if it has them: the dtype refusals first, then
    (``.Scalar`` rows) the promotion of the Python number; and the check of its Scalar arguments' values. Each generated kernel module calls this for its kernels
    when it is imported, so a kernel has its rule from its first use."""
    for k in kernels:
        name = k.name
        rule = RULES.get(name)
        if name in _SCALAR_OPERAND:
            rule = _scalar_operand(k) if rule is None else _chain(rule, _scalar_operand(k))
        if rule is not None:
            k.dtype_rule = rule
            k.float_number_passes = name in _FLOAT_WITH_NUMBER_PASSES and name not in _SCALAR_OPERAND
        k.arg_rule = ARG_RULES.get(name)
        k.plain_scalars_pass = k.arg_rule in PLAIN_SCALARS_PASS
