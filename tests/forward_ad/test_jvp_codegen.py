"""The generator's forward-mode part: sympy's JVP kernel for an elementwise row, `result:` overrides,
`auto_linear` / `auto_element_wise`, and table errors naming file, line and entry."""
import os

import pytest

from derivgen.codegen.model import build_models
from derivgen.table import TableError
from derivgen.table.loader import load_table_text
from tests.support.paths import REPO

MM = "- name: mm(Tensor self, Tensor mat2) -> Tensor\n  self: grad.mm(mat2.t())\n  mat2: self.t().mm(grad)\n\n" \
     "- name: t(Tensor(a) self) -> Tensor(a)\n  self: grad.t()\n\n"


def _model(text):
    models = build_models(load_table_text(text))
    return {m.entry.name: m for m in models}


@pytest.fixture(scope="module")
def with_table():
    """The models of the real table plus a new elementwise row (its create_graph path needs the table's ops)."""
    with open(os.path.join(REPO, "formulas.yaml"), encoding="utf-8") as fh:
        table = fh.read()
    return _model("- name: softsign(Tensor self) -> Tensor\n  forward: self / (1 + abs(self))\n  self: derived\n\n"
                  + table)


def test_elementwise_row_gets_sympy_jvp_kernel(with_table):
    m = with_table
    jvp = m["softsign"].jvp
    assert jvp.kind == "kernel" and jvp.kernel.name == "softsign_jvp"
    assert jvp.kernel.arrays == ["self", "self_t"]
    assert jvp.kernel in m["softsign"].kernels  # printed in the row's kernel module
    body = "\n".join(jvp.kernel.body_scalar)
    assert "self_t" in body and "return" in body


def test_two_inputs_sum_their_terms_and_numbers_stay_numbers():
    m = _model("- name: axpy(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
               "  forward: self + alpha * other\n  self: grad\n  other: grad * alpha\n")
    k = m["axpy"].jvp.kernel
    assert k.arrays == ["self_t", "other_t"] and k.scalars == ["alpha"]


def test_result_formula_overrides_and_is_lowered_to_tensor_ops():
    m = _model(MM.replace("  self: grad.mm", "  result: mm(self_t, mat2_p) + mm(self_p, mat2_t)\n  self: grad.mm", 1))
    jvp = m["mm"].jvp
    assert jvp.kind == "function" and jvp.tangents == ["self", "mat2"]
    assert jvp.body == ["return (_ops.mm_default(self, mat2_t) + _ops.mm_default(self_t, mat2))"]


def test_auto_linear_applies_the_op_to_the_tangents():
    m = _model(MM.replace("  self: grad.t()", "  result: auto_linear\n  self: grad.t()"))
    assert m["t"].jvp.kind == "linear" and m["t"].jvp.body == ["return _ops.t_default(self=self_t)"]
    assert m["mm"].jvp is None  # no forward, no result: -> torch's error at run time


def test_auto_element_wise_replaces_grad_by_the_tangent(with_table):
    jvp = with_table["logit"].jvp  # self: logit_backward(grad, self, eps)
    assert jvp.kind == "function" and jvp.formula == "auto_element_wise"
    assert "_fns.logit_backward_graph(self_t, self, eps)" in "\n".join(jvp.body)


def test_bad_result_formula_names_line_and_entry():
    with pytest.raises(TableError) as info:
        _model(MM.replace("  self: grad.mm", "  result: mm(self_t, __import__('os'))\n  self: grad.mm", 1))
    assert info.value.line == 2 and info.value.entry == "mm"
    assert "forward-mode formula 'result'" in str(info.value)


def test_unknown_tangent_name_is_rejected():
    with pytest.raises(TableError) as info:
        _model(MM.replace("  self: grad.mm", "  result: mm(self_t, other_t)\n  self: grad.mm", 1))
    assert info.value.line == 2
