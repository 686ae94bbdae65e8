"""torch's type promotion by category (bool < integer < float) and priority (dimensioned tensors,
then 0-dim tensors, then Python numbers): result dtypes and values of binary ops over every pair of
operand kinds, and gradient dtypes (each leaf's gradient has the leaf's dtype)."""
import pytest

from tests.support.edge import Case, check, grad_of, inf, nan, ok

DTYPES = ("float32", "float64", "int64", "int32", "bool")
NUMBERS = {"int": 3, "float": 2.5, "bool": True}
OPS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b}


def _tensor(t, dtype, zero_dim):
    values = 1 if zero_dim else [1, 0]
    return t.tensor(values, dtype=getattr(t, dtype))


def _binary(op, left, right):
    return lambda t: OPS[op](left(t), right(t))


def _cases():
    cases = []
    for op in OPS:
        for d in DTYPES:
            tensor = (lambda d: lambda t: _tensor(t, d, False))(d)
            for kind, number in NUMBERS.items():
                value = (lambda v: lambda t: v)(number)
                cases.append(Case(f"{op}-{d}-{kind}_number", _binary(op, tensor, value)))
                cases.append(Case(f"{op}-{kind}_number-{d}", _binary(op, value, tensor)))
            for other in DTYPES:
                zero = (lambda o: lambda t: _tensor(t, o, True))(other)
                cases.append(Case(f"{op}-{d}-{other}_0dim", _binary(op, tensor, zero)))
                if other != d:
                    full = (lambda o: lambda t: _tensor(t, o, False))(other)
                    cases.append(Case(f"{op}-{d}-{other}", _binary(op, tensor, full)))
    return cases


def _grads(t, left, right, op="mul"):
    """A leaf of each dtype spec (dtype, zero_dim) that requires grad when it is a float."""
    leaves = []
    for dtype, zero_dim in (left, right):
        x = _tensor(t, dtype, zero_dim)
        if dtype.startswith("float"):
            x.requires_grad_()
        leaves.append(x)
    y = OPS[op](leaves[0] + 0.5 if leaves[0].requires_grad else leaves[0], leaves[1])
    y.sum().backward()
    return (y,) + tuple(x.grad for x in leaves if x.requires_grad)


GRAD_CASES = [
    Case("grad-float32-float64", lambda t: _grads(t, ("float32", False), ("float64", False))),
    Case("grad-float32-float64_0dim", lambda t: _grads(t, ("float32", False), ("float64", True))),
    Case("grad-float64_0dim-float32", lambda t: _grads(t, ("float64", True), ("float32", False))),
    Case("grad-float32-int64", lambda t: _grads(t, ("float32", False), ("int64", False))),
    Case("grad-float64-int32_0dim", lambda t: _grads(t, ("float64", False), ("int32", True))),
    Case("grad-float32-bool", lambda t: _grads(t, ("float32", False), ("bool", False))),
    Case("grad-div-float64-float32", lambda t: _grads(t, ("float64", False), ("float32", False), "div")),
    Case("grad-add-float32_0dim-float64_0dim", lambda t: _grads(t, ("float32", True), ("float64", True), "add")),
    Case("grad-number-times-float64", lambda t: grad_of(t, lambda x: 2.5 * x, [1., 2.])),
    Case("grad-float32-leaf-times-float64", lambda t: grad_of(t, lambda x: x * t.ones(2, dtype=t.float64), [1., 2.],
                                                             dtype="float32")),
]

CASES = _cases() + GRAD_CASES

EXPECTED = {
    'add-float32-int_number': ok(('float32', [2], [4.0, 3.0])),
    'add-int_number-float32': ok(('float32', [2], [4.0, 3.0])),
    'add-float32-float_number': ok(('float32', [2], [3.5, 2.5])),
    'add-float_number-float32': ok(('float32', [2], [3.5, 2.5])),
    'add-float32-bool_number': ok(('float32', [2], [2.0, 1.0])),
    'add-bool_number-float32': ok(('float32', [2], [2.0, 1.0])),
    'add-float32-float32_0dim': ok(('float32', [2], [2.0, 1.0])),
    'add-float32-float64_0dim': ok(('float32', [2], [2.0, 1.0])),
    'add-float32-float64': ok(('float64', [2], [2.0, 0.0])),
    'add-float32-int64_0dim': ok(('float32', [2], [2.0, 1.0])),
    'add-float32-int64': ok(('float32', [2], [2.0, 0.0])),
    'add-float32-int32_0dim': ok(('float32', [2], [2.0, 1.0])),
    'add-float32-int32': ok(('float32', [2], [2.0, 0.0])),
    'add-float32-bool_0dim': ok(('float32', [2], [2.0, 1.0])),
    'add-float32-bool': ok(('float32', [2], [2.0, 0.0])),
    'add-float64-int_number': ok(('float64', [2], [4.0, 3.0])),
    'add-int_number-float64': ok(('float64', [2], [4.0, 3.0])),
    'add-float64-float_number': ok(('float64', [2], [3.5, 2.5])),
    'add-float_number-float64': ok(('float64', [2], [3.5, 2.5])),
    'add-float64-bool_number': ok(('float64', [2], [2.0, 1.0])),
    'add-bool_number-float64': ok(('float64', [2], [2.0, 1.0])),
    'add-float64-float32_0dim': ok(('float64', [2], [2.0, 1.0])),
    'add-float64-float32': ok(('float64', [2], [2.0, 0.0])),
    'add-float64-float64_0dim': ok(('float64', [2], [2.0, 1.0])),
    'add-float64-int64_0dim': ok(('float64', [2], [2.0, 1.0])),
    'add-float64-int64': ok(('float64', [2], [2.0, 0.0])),
    'add-float64-int32_0dim': ok(('float64', [2], [2.0, 1.0])),
    'add-float64-int32': ok(('float64', [2], [2.0, 0.0])),
    'add-float64-bool_0dim': ok(('float64', [2], [2.0, 1.0])),
    'add-float64-bool': ok(('float64', [2], [2.0, 0.0])),
    'add-int64-int_number': ok(('int64', [2], [4, 3])),
    'add-int_number-int64': ok(('int64', [2], [4, 3])),
    'add-int64-float_number': ok(('float32', [2], [3.5, 2.5])),
    'add-float_number-int64': ok(('float32', [2], [3.5, 2.5])),
    'add-int64-bool_number': ok(('int64', [2], [2, 1])),
    'add-bool_number-int64': ok(('int64', [2], [2, 1])),
    'add-int64-float32_0dim': ok(('float32', [2], [2.0, 1.0])),
    'add-int64-float32': ok(('float32', [2], [2.0, 0.0])),
    'add-int64-float64_0dim': ok(('float64', [2], [2.0, 1.0])),
    'add-int64-float64': ok(('float64', [2], [2.0, 0.0])),
    'add-int64-int64_0dim': ok(('int64', [2], [2, 1])),
    'add-int64-int32_0dim': ok(('int64', [2], [2, 1])),
    'add-int64-int32': ok(('int64', [2], [2, 0])),
    'add-int64-bool_0dim': ok(('int64', [2], [2, 1])),
    'add-int64-bool': ok(('int64', [2], [2, 0])),
    'add-int32-int_number': ok(('int32', [2], [4, 3])),
    'add-int_number-int32': ok(('int32', [2], [4, 3])),
    'add-int32-float_number': ok(('float32', [2], [3.5, 2.5])),
    'add-float_number-int32': ok(('float32', [2], [3.5, 2.5])),
    'add-int32-bool_number': ok(('int32', [2], [2, 1])),
    'add-bool_number-int32': ok(('int32', [2], [2, 1])),
    'add-int32-float32_0dim': ok(('float32', [2], [2.0, 1.0])),
    'add-int32-float32': ok(('float32', [2], [2.0, 0.0])),
    'add-int32-float64_0dim': ok(('float64', [2], [2.0, 1.0])),
    'add-int32-float64': ok(('float64', [2], [2.0, 0.0])),
    'add-int32-int64_0dim': ok(('int32', [2], [2, 1])),
    'add-int32-int64': ok(('int64', [2], [2, 0])),
    'add-int32-int32_0dim': ok(('int32', [2], [2, 1])),
    'add-int32-bool_0dim': ok(('int32', [2], [2, 1])),
    'add-int32-bool': ok(('int32', [2], [2, 0])),
    'add-bool-int_number': ok(('int64', [2], [4, 3])),
    'add-int_number-bool': ok(('int64', [2], [4, 3])),
    'add-bool-float_number': ok(('float32', [2], [3.5, 2.5])),
    'add-float_number-bool': ok(('float32', [2], [3.5, 2.5])),
    'add-bool-bool_number': ok(('bool', [2], [True, True])),
    'add-bool_number-bool': ok(('bool', [2], [True, True])),
    'add-bool-float32_0dim': ok(('float32', [2], [2.0, 1.0])),
    'add-bool-float32': ok(('float32', [2], [2.0, 0.0])),
    'add-bool-float64_0dim': ok(('float64', [2], [2.0, 1.0])),
    'add-bool-float64': ok(('float64', [2], [2.0, 0.0])),
    'add-bool-int64_0dim': ok(('int64', [2], [2, 1])),
    'add-bool-int64': ok(('int64', [2], [2, 0])),
    'add-bool-int32_0dim': ok(('int32', [2], [2, 1])),
    'add-bool-int32': ok(('int32', [2], [2, 0])),
    'add-bool-bool_0dim': ok(('bool', [2], [True, True])),
    'mul-float32-int_number': ok(('float32', [2], [3.0, 0.0])),
    'mul-int_number-float32': ok(('float32', [2], [3.0, 0.0])),
    'mul-float32-float_number': ok(('float32', [2], [2.5, 0.0])),
    'mul-float_number-float32': ok(('float32', [2], [2.5, 0.0])),
    'mul-float32-bool_number': ok(('float32', [2], [1.0, 0.0])),
    'mul-bool_number-float32': ok(('float32', [2], [1.0, 0.0])),
    'mul-float32-float32_0dim': ok(('float32', [2], [1.0, 0.0])),
    'mul-float32-float64_0dim': ok(('float32', [2], [1.0, 0.0])),
    'mul-float32-float64': ok(('float64', [2], [1.0, 0.0])),
    'mul-float32-int64_0dim': ok(('float32', [2], [1.0, 0.0])),
    'mul-float32-int64': ok(('float32', [2], [1.0, 0.0])),
    'mul-float32-int32_0dim': ok(('float32', [2], [1.0, 0.0])),
    'mul-float32-int32': ok(('float32', [2], [1.0, 0.0])),
    'mul-float32-bool_0dim': ok(('float32', [2], [1.0, 0.0])),
    'mul-float32-bool': ok(('float32', [2], [1.0, 0.0])),
    'mul-float64-int_number': ok(('float64', [2], [3.0, 0.0])),
    'mul-int_number-float64': ok(('float64', [2], [3.0, 0.0])),
    'mul-float64-float_number': ok(('float64', [2], [2.5, 0.0])),
    'mul-float_number-float64': ok(('float64', [2], [2.5, 0.0])),
    'mul-float64-bool_number': ok(('float64', [2], [1.0, 0.0])),
    'mul-bool_number-float64': ok(('float64', [2], [1.0, 0.0])),
    'mul-float64-float32_0dim': ok(('float64', [2], [1.0, 0.0])),
    'mul-float64-float32': ok(('float64', [2], [1.0, 0.0])),
    'mul-float64-float64_0dim': ok(('float64', [2], [1.0, 0.0])),
    'mul-float64-int64_0dim': ok(('float64', [2], [1.0, 0.0])),
    'mul-float64-int64': ok(('float64', [2], [1.0, 0.0])),
    'mul-float64-int32_0dim': ok(('float64', [2], [1.0, 0.0])),
    'mul-float64-int32': ok(('float64', [2], [1.0, 0.0])),
    'mul-float64-bool_0dim': ok(('float64', [2], [1.0, 0.0])),
    'mul-float64-bool': ok(('float64', [2], [1.0, 0.0])),
    'mul-int64-int_number': ok(('int64', [2], [3, 0])),
    'mul-int_number-int64': ok(('int64', [2], [3, 0])),
    'mul-int64-float_number': ok(('float32', [2], [2.5, 0.0])),
    'mul-float_number-int64': ok(('float32', [2], [2.5, 0.0])),
    'mul-int64-bool_number': ok(('int64', [2], [1, 0])),
    'mul-bool_number-int64': ok(('int64', [2], [1, 0])),
    'mul-int64-float32_0dim': ok(('float32', [2], [1.0, 0.0])),
    'mul-int64-float32': ok(('float32', [2], [1.0, 0.0])),
    'mul-int64-float64_0dim': ok(('float64', [2], [1.0, 0.0])),
    'mul-int64-float64': ok(('float64', [2], [1.0, 0.0])),
    'mul-int64-int64_0dim': ok(('int64', [2], [1, 0])),
    'mul-int64-int32_0dim': ok(('int64', [2], [1, 0])),
    'mul-int64-int32': ok(('int64', [2], [1, 0])),
    'mul-int64-bool_0dim': ok(('int64', [2], [1, 0])),
    'mul-int64-bool': ok(('int64', [2], [1, 0])),
    'mul-int32-int_number': ok(('int32', [2], [3, 0])),
    'mul-int_number-int32': ok(('int32', [2], [3, 0])),
    'mul-int32-float_number': ok(('float32', [2], [2.5, 0.0])),
    'mul-float_number-int32': ok(('float32', [2], [2.5, 0.0])),
    'mul-int32-bool_number': ok(('int32', [2], [1, 0])),
    'mul-bool_number-int32': ok(('int32', [2], [1, 0])),
    'mul-int32-float32_0dim': ok(('float32', [2], [1.0, 0.0])),
    'mul-int32-float32': ok(('float32', [2], [1.0, 0.0])),
    'mul-int32-float64_0dim': ok(('float64', [2], [1.0, 0.0])),
    'mul-int32-float64': ok(('float64', [2], [1.0, 0.0])),
    'mul-int32-int64_0dim': ok(('int32', [2], [1, 0])),
    'mul-int32-int64': ok(('int64', [2], [1, 0])),
    'mul-int32-int32_0dim': ok(('int32', [2], [1, 0])),
    'mul-int32-bool_0dim': ok(('int32', [2], [1, 0])),
    'mul-int32-bool': ok(('int32', [2], [1, 0])),
    'mul-bool-int_number': ok(('int64', [2], [3, 0])),
    'mul-int_number-bool': ok(('int64', [2], [3, 0])),
    'mul-bool-float_number': ok(('float32', [2], [2.5, 0.0])),
    'mul-float_number-bool': ok(('float32', [2], [2.5, 0.0])),
    'mul-bool-bool_number': ok(('bool', [2], [True, False])),
    'mul-bool_number-bool': ok(('bool', [2], [True, False])),
    'mul-bool-float32_0dim': ok(('float32', [2], [1.0, 0.0])),
    'mul-bool-float32': ok(('float32', [2], [1.0, 0.0])),
    'mul-bool-float64_0dim': ok(('float64', [2], [1.0, 0.0])),
    'mul-bool-float64': ok(('float64', [2], [1.0, 0.0])),
    'mul-bool-int64_0dim': ok(('int64', [2], [1, 0])),
    'mul-bool-int64': ok(('int64', [2], [1, 0])),
    'mul-bool-int32_0dim': ok(('int32', [2], [1, 0])),
    'mul-bool-int32': ok(('int32', [2], [1, 0])),
    'mul-bool-bool_0dim': ok(('bool', [2], [True, False])),
    'div-float32-int_number': ok(('float32', [2], [0.3333333432674408, 0.0])),
    'div-int_number-float32': ok(('float32', [2], [3.0, inf])),
    'div-float32-float_number': ok(('float32', [2], [0.4000000059604645, 0.0])),
    'div-float_number-float32': ok(('float32', [2], [2.5, inf])),
    'div-float32-bool_number': ok(('float32', [2], [1.0, 0.0])),
    'div-bool_number-float32': ok(('float32', [2], [1.0, inf])),
    'div-float32-float32_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-float32-float64_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-float32-float64': ok(('float64', [2], [1.0, nan])),
    'div-float32-int64_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-float32-int64': ok(('float32', [2], [1.0, nan])),
    'div-float32-int32_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-float32-int32': ok(('float32', [2], [1.0, nan])),
    'div-float32-bool_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-float32-bool': ok(('float32', [2], [1.0, nan])),
    'div-float64-int_number': ok(('float64', [2], [0.3333333333333333, 0.0])),
    'div-int_number-float64': ok(('float64', [2], [3.0, inf])),
    'div-float64-float_number': ok(('float64', [2], [0.4, 0.0])),
    'div-float_number-float64': ok(('float64', [2], [2.5, inf])),
    'div-float64-bool_number': ok(('float64', [2], [1.0, 0.0])),
    'div-bool_number-float64': ok(('float64', [2], [1.0, inf])),
    'div-float64-float32_0dim': ok(('float64', [2], [1.0, 0.0])),
    'div-float64-float32': ok(('float64', [2], [1.0, nan])),
    'div-float64-float64_0dim': ok(('float64', [2], [1.0, 0.0])),
    'div-float64-int64_0dim': ok(('float64', [2], [1.0, 0.0])),
    'div-float64-int64': ok(('float64', [2], [1.0, nan])),
    'div-float64-int32_0dim': ok(('float64', [2], [1.0, 0.0])),
    'div-float64-int32': ok(('float64', [2], [1.0, nan])),
    'div-float64-bool_0dim': ok(('float64', [2], [1.0, 0.0])),
    'div-float64-bool': ok(('float64', [2], [1.0, nan])),
    'div-int64-int_number': ok(('float32', [2], [0.3333333432674408, 0.0])),
    'div-int_number-int64': ok(('float32', [2], [3.0, inf])),
    'div-int64-float_number': ok(('float32', [2], [0.4000000059604645, 0.0])),
    'div-float_number-int64': ok(('float32', [2], [2.5, inf])),
    'div-int64-bool_number': ok(('float32', [2], [1.0, 0.0])),
    'div-bool_number-int64': ok(('float32', [2], [1.0, inf])),
    'div-int64-float32_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-int64-float32': ok(('float32', [2], [1.0, nan])),
    'div-int64-float64_0dim': ok(('float64', [2], [1.0, 0.0])),
    'div-int64-float64': ok(('float64', [2], [1.0, nan])),
    'div-int64-int64_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-int64-int32_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-int64-int32': ok(('float32', [2], [1.0, nan])),
    'div-int64-bool_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-int64-bool': ok(('float32', [2], [1.0, nan])),
    'div-int32-int_number': ok(('float32', [2], [0.3333333432674408, 0.0])),
    'div-int_number-int32': ok(('float32', [2], [3.0, inf])),
    'div-int32-float_number': ok(('float32', [2], [0.4000000059604645, 0.0])),
    'div-float_number-int32': ok(('float32', [2], [2.5, inf])),
    'div-int32-bool_number': ok(('float32', [2], [1.0, 0.0])),
    'div-bool_number-int32': ok(('float32', [2], [1.0, inf])),
    'div-int32-float32_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-int32-float32': ok(('float32', [2], [1.0, nan])),
    'div-int32-float64_0dim': ok(('float64', [2], [1.0, 0.0])),
    'div-int32-float64': ok(('float64', [2], [1.0, nan])),
    'div-int32-int64_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-int32-int64': ok(('float32', [2], [1.0, nan])),
    'div-int32-int32_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-int32-bool_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-int32-bool': ok(('float32', [2], [1.0, nan])),
    'div-bool-int_number': ok(('float32', [2], [0.3333333432674408, 0.0])),
    'div-int_number-bool': ok(('float32', [2], [3.0, inf])),
    'div-bool-float_number': ok(('float32', [2], [0.4000000059604645, 0.0])),
    'div-float_number-bool': ok(('float32', [2], [2.5, inf])),
    'div-bool-bool_number': ok(('float32', [2], [1.0, 0.0])),
    'div-bool_number-bool': ok(('float32', [2], [1.0, inf])),
    'div-bool-float32_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-bool-float32': ok(('float32', [2], [1.0, nan])),
    'div-bool-float64_0dim': ok(('float64', [2], [1.0, 0.0])),
    'div-bool-float64': ok(('float64', [2], [1.0, nan])),
    'div-bool-int64_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-bool-int64': ok(('float32', [2], [1.0, nan])),
    'div-bool-int32_0dim': ok(('float32', [2], [1.0, 0.0])),
    'div-bool-int32': ok(('float32', [2], [1.0, nan])),
    'div-bool-bool_0dim': ok(('float32', [2], [1.0, 0.0])),
    'grad-float32-float64': ok(('float64', [2], [1.5, 0.0]), ('float32', [2], [1.0, 0.0]), ('float64', [2], [1.5, 0.5])),
    'grad-float32-float64_0dim': ok(('float32', [2], [1.5, 0.5]), ('float32', [2], [1.0, 1.0]), ('float64', [], 2.0)),
    'grad-float64_0dim-float32': ok(('float32', [2], [1.5, 0.0]), ('float64', [], 1.0), ('float32', [2], [1.5, 1.5])),
    'grad-float32-int64': ok(('float32', [2], [1.5, 0.0]), ('float32', [2], [1.0, 0.0])),
    'grad-float64-int32_0dim': ok(('float64', [2], [1.5, 0.5]), ('float64', [2], [1.0, 1.0])),
    'grad-float32-bool': ok(('float32', [2], [1.5, 0.0]), ('float32', [2], [1.0, 0.0])),
    'grad-div-float64-float32': ok(('float64', [2], [1.5, inf]), ('float64', [2], [1.0, inf]), ('float32', [2], [-1.5, -inf])),
    'grad-add-float32_0dim-float64_0dim': ok(('float64', [], 2.5), ('float32', [], 1.0), ('float64', [], 1.0)),
    'grad-number-times-float64': ok(('float64', [2], [2.5, 5.0]), ('float64', [2], [2.5, 2.5])),
    'grad-float32-leaf-times-float64': ok(('float64', [2], [1.0, 2.0]), ('float32', [2], [1.0, 1.0])),
}


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_dtype_promotion(torch, case):
    check(torch, case, EXPECTED[case.id])
