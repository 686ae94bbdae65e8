"""``node.formula()``: each generated node class carries its table row, where it is (formulas.yaml:LINE)
and how each formula was obtained, as data; printing a node stays torch's."""
import re

import pytest

import derivgen
from tests.support.node_classes import all_node_classes
from tests.support.paths import TABLE


def _row_line(name):
    with open(TABLE) as fh:
        for i, line in enumerate(fh, start=1):
            if line.startswith(f"- name: {name}("):
                return i
    raise AssertionError(name)


def _row_text(line):
    with open(TABLE) as fh:
        lines = fh.read().splitlines()
    out = [lines[line - 1]]
    for ln in lines[line:]:
        if not ln.startswith("  ") or not ln.strip():
            break
        out.append(ln)
    return "\n".join(out).rstrip()


def _graph():
    x = derivgen.ones(2, 3, requires_grad=True)
    w = derivgen.ones(3, 4, requires_grad=True)
    h = (x * 2.0).mm(w).tanh()
    return x, w, h.sum()


@pytest.mark.parametrize("walk, row", [
    (lambda y: y.grad_fn, "sum"),
    (lambda y: y.grad_fn.next_functions[0][0], "tanh"),
    (lambda y: y.grad_fn.next_functions[0][0].next_functions[0][0], "mm"),
    (lambda y: y.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0], "mul.Tensor"),
])
def test_formula_is_the_table_row_and_its_line(walk, row):
    _, _, y = _graph()
    node = walk(y)
    f = node.formula()
    line = _row_line(row)
    assert (f.file, f.line, f.location) == ("formulas.yaml", line, f"formulas.yaml:{line}")
    assert f.text == _row_text(line)
    assert str(f) == f"{f.text}\n(formulas.yaml:{line})"
    assert type(node).__doc__.splitlines()[0].endswith(f"(formulas.yaml, line {line}):")


def test_formula_origins():
    _, _, y = _graph()
    tanh = y.grad_fn.next_functions[0][0]
    mm = tanh.next_functions[0][0]
    assert tanh.formula().origins == ((("self",), "proven"),)       # elementwise: proven against sympy
    assert mm.formula().origins == ((("self",), "hand-written"), (("mat2",), "hand-written"))
    assert y.grad_fn.formula().origins == ((("self",), "hand-written"),)


def test_hand_written_nodes_have_no_row_and_repr_stays_torchs():
    x, _, y = _graph()
    node = y.grad_fn
    acc = node.next_functions[0][0].next_functions[0][0].next_functions[0][0].next_functions[0][0]
    assert acc.name() == "derivgen::autograd::AccumulateGrad"
    assert acc.formula() is None
    assert re.fullmatch(r"<SumBackward0 object at 0x[0-9a-f]+>", repr(node))
    assert re.fullmatch(r"<SumBackward0 object at 0x[0-9a-f]+>", str(node))


def test_every_generated_class_has_a_row():
    from derivgen.core.node import FormulaRow
    classes = all_node_classes()
    assert len(classes) > 100
    for c in classes:
        f = c._formula_row
        assert isinstance(f, FormulaRow), c
        assert f.text.startswith("- name: ") and f.line > 0
        assert {origin for _, origin in f.origins} <= {"derived", "proven", "hand-written"}
