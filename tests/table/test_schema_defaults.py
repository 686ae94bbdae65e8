"""Schema defaults: every value torch's schema grammar allows is printed as Python that means it (inf,
-inf and nan included), and the rest is a table error."""
import ast
import math

import pytest

from derivgen.codegen.literals import python_literal
from derivgen.codegen.render import render_all
from derivgen.table.schema import SchemaError, parse_schema


@pytest.mark.parametrize("text, value", [
    ("inf", math.inf), ("-inf", -math.inf), ("None", None), ("True", True), ("False", False), ("3", 3),
    ("-2", -2), ("0.5", 0.5), ("1e-3", 1e-3), ("-1.5e10", -1.5e10), ("[1, 2]", (1, 2)), ("[]", ()),
    ("[0]", (0,)), ('"mean"', "mean"), ("'sum'", "sum"), ("Mean", "Mean"), ("contiguous_format", "contiguous_format"),
])
def test_default_values_parse(text, value):
    schema = parse_schema(f"f(Tensor self, Scalar x={text}) -> Tensor")
    assert schema.args[1].default == value and schema.args[1].has_default


def test_nan_default_parses():
    assert math.isnan(parse_schema("f(Tensor self, float x=nan) -> Tensor").args[1].default)


@pytest.mark.parametrize("text", ["1+2", "abc", "[1, x]", "0x10", "1_000", "12345678901234567890123", "'a\"b'"])
def test_bad_default_values_are_refused(text):
    with pytest.raises(SchemaError):
        parse_schema(f"f(Tensor self, Scalar x={text}) -> Tensor")


@pytest.mark.parametrize("value, code", [
    (math.inf, "float('inf')"), (-math.inf, "float('-inf')"), (math.nan, "float('nan')"), (None, "None"),
    (True, "True"), (3, "3"), (0.25, "0.25"), ((1, 2), "(1, 2)"), ((1,), "(1,)"), ((), "()"), ("mean", "'mean'"),
    ((math.inf, 1), "(float('inf'), 1)"),
])
def test_python_literal(value, code):
    assert python_literal(value) == code


def test_generated_signatures_spell_every_default(tmp_path):
    table = tmp_path / "formulas.yaml"
    table.write_text("- name: f(Tensor self, float a=inf, float b=-inf, float c=nan, int[2] d=[1, 2], "
                     "str e=\"mean\", bool g=True, int h=Mean, Scalar? i=None) -> Tensor\n"
                     "  forward: sin(self) + a * 0\n", encoding="utf-8")
    files = render_all(str(table))
    tree = ast.parse(files["ops.py"])
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f_default")
    namespace = {}
    exec(compile(ast.Module([fn], []), "ops.py", "exec"), namespace)  # only the def: its defaults are evaluated
    a, b, c, d, e, g, h, i = namespace["f_default"].__defaults__
    assert (a, b, d, e, g, h, i) == (math.inf, -math.inf, (1, 2), "mean", True, "Mean", None) and math.isnan(c)
    assert "_b.Param(\"a\", \"float\", float('inf'))" in files["ops.py"]
