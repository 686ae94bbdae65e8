"""create_graph parity: the second derivatives of a cross-section of the table's rows (every helper's
``_graph`` version is exercised) against torch, through ``autograd.grad(..., create_graph=True)``."""
import pytest

from tests.support.parity import Case, compare_double_backward, torch
from tests.parity.test_parity_ops import BINARY, LINALG, MULTI, NN, REDUCTIONS, SHAPE, UNARY

if torch is None:  # pragma: no cover
    pytest.skip("SKIPPED LOUDLY: PyTorch (the oracle of the parity tests) is not installed",
                allow_module_level=True)

# cases whose second derivative is not defined the same way in both libraries
_SKIP = {
    "sign", "floor", "ceil", "round", "round-decimals", "trunc", "frac",  # zero gradients: no graph in torch
    "div-floor", "div-trunc-number", "fmax", "fmin", "maximum-ties", "nan_to_num", "nan_to_num-default",
    "eq", "ne", "lt", "le", "gt-number", "ge", "argmax", "argmin", "argmax-keepdim", "min-dim-indices",
    "one_hot", "one_hot-n", "dropout-eval", "max-ties", "min", "amax", "amin", "amax-keepdim",
    "abs-kinks", "relu", "clamp-min", "clamp-max", "clamp_min", "clamp_max", "hardtanh", "relu6",
    "hardsigmoid", "hardswish", "leaky_relu", "gelu", "gelu-tanh", "silu", "mish", "softplus",
    "softplus-beta", "elu", "selu", "celu",  # KINKS inputs sit on kinks; covered with smooth inputs below
    "sigmoid-tails", "tanh-tails", "silu-tails", "softplus-tails", "prod-zero", "prod-dim-zeros",
    "cumprod-zeros", "xlogy", "getitem-mask",
}

SMOOTH = [
    ("gelu-smooth", lambda T, F, x: F.gelu(x)), ("gelu-tanh-smooth", lambda T, F, x: F.gelu(x, approximate="tanh")),
    ("silu-smooth", lambda T, F, x: F.silu(x)), ("mish-smooth", lambda T, F, x: F.mish(x)),
    ("softplus-smooth", lambda T, F, x: F.softplus(x, beta=2)), ("elu-smooth", lambda T, F, x: F.elu(x, 0.7)),
    ("celu-smooth", lambda T, F, x: F.celu(x, 1.5)), ("hardswish-smooth", lambda T, F, x: F.hardswish(x)),
]


def _all_cases():
    from tests.support.parity import I
    rows = UNARY + BINARY + REDUCTIONS + LINALG + SHAPE + MULTI + NN
    cases = [Case(i, f, list(inp)) for i, f, inp in rows if i not in _SKIP]
    cases += [Case(i, f, [I(3, 4)]) for i, f in SMOOTH]
    return cases


CASES = _all_cases()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_double_backward(case):
    problems = compare_double_backward(case, "float64")
    assert not problems, f"{case.id}:\n  " + "\n  ".join(problems)
