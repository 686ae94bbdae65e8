"""The kind rules of elementwise kernels (derivgen/codegen/kernel_types.py) against PyTorch: a
``forward:`` expression is BOOL, INT or FLOAT exactly when torch computes it on int64 tensors into a
bool, an int64 or a float tensor; and a refusal names the node without compiling anything."""
import pytest

from derivgen.codegen.kernel_types import BOOL, FLOAT, INT, KernelTypeError, kernel_problem, scalar_kind
from derivgen.symbolic.parse import parse_formula, schema_scope
from derivgen.table import parse_schema

SCHEMA = parse_schema("f(Tensor self, Tensor other) -> Tensor")

# (forward expression, the same computation in torch)
EXPRESSIONS = [
    ("self + other", lambda t, a, b: a + b),
    ("self * other - 3", lambda t, a, b: a * b - 3),
    ("self * 1.5", lambda t, a, b: a * 1.5),
    ("self / other", lambda t, a, b: a / b),
    ("self ** 2", lambda t, a, b: a ** 2),
    ("self ** 0.5", lambda t, a, b: a ** 0.5),
    ("-abs(self)", lambda t, a, b: -t.abs(a)),
    ("sign(self) * other", lambda t, a, b: t.sign(a) * b),
    ("maximum(self, other)", lambda t, a, b: t.maximum(a, b)),
    ("minimum(self, other) + 1", lambda t, a, b: t.minimum(a, b) + 1),
    ("where(self > other, self, other)", lambda t, a, b: t.where(a > b, a, b)),
    ("self > other", lambda t, a, b: a > b),
    ("self <= 2", lambda t, a, b: a <= 2),
    ("sin(self)", lambda t, a, b: t.sin(a)),
    ("exp(self) * other", lambda t, a, b: t.exp(a) * b),
    ("tanh(self + other)", lambda t, a, b: t.tanh(a + b)),
    ("log1p(abs(self))", lambda t, a, b: t.log1p(t.abs(a))),
    ("atan2(self, other)", lambda t, a, b: t.atan2(a, b)),
]

_KIND_OF_DTYPE = {"bool": BOOL, "int64": INT}


@pytest.mark.parametrize("text, torch_fn", EXPRESSIONS, ids=[e[0] for e in EXPRESSIONS])
def test_kind_is_torchs_result_kind_on_integers(text, torch_fn):
    import torch
    a, b = torch.tensor([3, -2, 5]), torch.tensor([2, 4, -1])
    expected = _KIND_OF_DTYPE.get(str(torch_fn(torch, a, b).dtype).split(".")[-1], FLOAT)
    assert scalar_kind(parse_formula(text, schema_scope(SCHEMA)), {"self", "other"}) == expected


@pytest.mark.parametrize("text, reason", [
    ("self * sqrt(-1)", "the constant I is not a real number"),
    ("where(self > 0, (self, other), self)", "a tuple is not a number"),
    ("self * self.sym_numel()", "'self_sym_numel' has no per-element value in a kernel"),
    ("where(self > 0, 1/0, self)", "the expression is undefined (nan)"),
    ("self @ other", "'matmul' is not an elementwise function"),
])
def test_refusals_name_the_node(text, reason):
    expr = parse_formula(text, schema_scope(SCHEMA))
    assert kernel_problem(expr, {"self", "other"}) == reason
    with pytest.raises(KernelTypeError, match="^" + reason.replace("(", r"\(").replace(")", r"\)") + "$"):
        scalar_kind(expr, {"self", "other"})

