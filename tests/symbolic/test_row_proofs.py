"""The row-level proof (``derivgen.symbolic.prove``): PyTorch's subgradients at kinks are accepted,
and the mistakes random points in [-3, 3] miss are found."""
import pytest
import sympy as sp

from derivgen.symbolic.parse import parse_formula, schema_scope
from derivgen.symbolic.prove import RowProof, concrete_metadata, switch_expressions
from derivgen.table.schema import parse_schema


def prove(schema_text, forward, **formulas):
    schema = parse_schema(schema_text)
    scope = schema_scope(schema)
    fwd = parse_formula(forward, scope)
    scope.tensors |= {"grad", "result"}
    ints = [a.name for a in schema.args if a.type.rstrip("?") == "int"]
    proof = RowProof(fwd, [a.name for a in schema.args], [a.name for a in schema.args if a.is_tensor], ints,
                     "result", scope.metadata)
    for arg, text in formulas.items():
        assert proof.add(arg, parse_formula(text, scope))
    return proof.check()


BINARY = "f(Tensor self, Tensor other) -> Tensor"
UNARY = "f(Tensor self) -> Tensor"


@pytest.mark.parametrize("schema, forward, formulas", [
    (BINARY, "maximum(self, other)", dict(self="where(self == other, grad / 2, grad * (self > other))",
                                          other="where(self == other, grad / 2, grad * (other > self))")),
    (BINARY, "minimum(self, other)", dict(self="where(self == other, grad / 2, grad * (self < other))",
                                          other="where(self == other, grad / 2, grad * (other < self))")),
    (UNARY, "maximum(self, 0)", dict(self="where(self > 0, grad, 0)")),                 # relu'(0) = 0
    (UNARY, "abs(self)", dict(self="grad * sign(self)")),                               # abs'(0) = 0
    ("f(Tensor self, Scalar lo, Scalar hi) -> Tensor", "minimum(maximum(self, lo), hi)",
     dict(self="where((self >= lo) and (self <= hi), grad, 0)")),                        # clamp: bounds pass
    ("f(Tensor self, Scalar lo, Scalar hi) -> Tensor", "minimum(maximum(self, lo), hi)",
     dict(self="where((self > lo) and (self < hi), grad, 0)")),                          # hardtanh: they do not
    ("f(Tensor self, Scalar slope) -> Tensor", "where(self > 0, self, self * slope)",
     dict(self="where(self > 0, grad, grad * slope)")),                                 # leaky_relu
    (UNARY, "self * self", dict(self="2 * grad * self")),
    (UNARY, "self * self", dict(self="2 * grad * self * self.sym_numel() / self.sym_numel()")),
    (BINARY, "self * other", dict(self="grad * other", other="grad * self")),
])
def test_correct_formulas_are_proven(schema, forward, formulas):
    assert prove(schema, forward, **formulas) is None


@pytest.mark.parametrize("schema, forward, formulas, bad_arg, words", [
    (UNARY, "sin(self)", dict(self="where(abs(self) > 10, 0, grad * cos(self))"), "self", "self=1000"),
    (UNARY, "self * self", dict(self="where(self < -1e5, grad * self, 2 * grad * self)"), "self", "self=-1e+06"),
    (BINARY, "maximum(self, other)", dict(self="grad * (self >= other)", other="grad * (other >= self)"),
     "other", "counted more than once"),
    (UNARY, "maximum(self, 0)", dict(self="where(self >= 0, where(self == 0, 3 * grad, grad), 0)"), "self", "self=0"),
    (UNARY, "self * self", dict(self="grad * self * self.sym_numel()"), "self", "formula gives"),
])
def test_wrong_formulas_are_found(schema, forward, formulas, bad_arg, words):
    bad = prove(schema, forward, **formulas)
    assert bad is not None and bad[0] == bad_arg and words in bad[1], bad


def test_switch_expressions_find_ties_zeros_and_thresholds():
    x, y, t = sp.symbols("self other threshold", real=True)
    e = sp.Max(x, y) + sp.Abs(x) + sp.Piecewise((x, x > t), (0, True))
    found = {sp.simplify(f) for f in switch_expressions(e)}
    for expected in (x - y, x, x - t):
        assert expected in found or -expected in found, (expected, found)


def test_metadata_gets_a_concrete_shape():
    n, d = sp.Symbol("self_sym_numel", real=True), sp.Symbol("self_dim", real=True)
    assert concrete_metadata(n + d, {"self_sym_numel", "self_dim"}) == 8
    assert concrete_metadata(sp.Symbol("self_sym_sizes"), {"self_sym_sizes"}) is None
