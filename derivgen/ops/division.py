"""``floor_divide`` and the ``//`` operators: torch's ``div(rounding_mode='floor')`` on the promoted
operands (integers exactly, a zero integer divisor refused by the forward)."""
import numbers

import numpy as np

from derivgen.core.grad_mode import no_grad
from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor, python_number, wrap_scalar


def _operand(v):
    if isinstance(v, Tensor):
        return v
    if isinstance(v, (numbers.Number, np.number, np.bool_)) and not isinstance(v, complex):
        return wrap_scalar(python_number(v))
    raise TypeError(f"floor_divide(): argument 'other' must be Tensor or Number, not {type(v).__name__}")


def floor_divide(input, other):  # noqa: A002 - torch spelling
    """torch.floor_divide. torch records no derivative for it (its node raises "not implemented"
    on backward); here the result simply carries no history."""
    with no_grad():
        return aten.div(_operand(input), _operand(other), rounding_mode="floor")


def floordiv(self, other):
    if not isinstance(other, Tensor) and not isinstance(other, (numbers.Number, np.number, np.bool_)):
        return NotImplemented
    return floor_divide(self, other)


def rfloordiv(self, other):
    if not isinstance(other, (numbers.Number, np.number, np.bool_)):
        return NotImplemented
    return floor_divide(other, self)
