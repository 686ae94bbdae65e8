"""The per-row sympy time budget (SIGALRM) and the static bounds checked before sympy."""
import signal
import time

import pytest

from derivgen.codegen.render import render_all
from derivgen.symbolic import budget
from derivgen.table import TableError


def test_budget_interrupts_a_long_computation_and_clears_its_timer():
    with pytest.raises(budget.BudgetExceeded):
        with budget.time_budget(0.05):
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.default_int_handler, None)


def test_budget_does_not_fire_after_the_work(tmp_path):
    with budget.time_budget(0.05):
        pass
    time.sleep(0.1)   # no stray alarm


def test_a_row_over_its_budget_is_a_table_error(tmp_path, monkeypatch):
    monkeypatch.setattr(budget, "ROW_BUDGET_S", 1e-4)
    table = tmp_path / "formulas.yaml"
    table.write_text("- name: f(Tensor self) -> Tensor\n  forward: exp(sin(self)) * tanh(self)\n"
                     "  self: derived\n", encoding="utf-8")
    with pytest.raises(TableError) as info:
        render_all(str(table))
    assert (info.value.line, info.value.entry) == (1, "f")
    assert info.value.reason == "sympy work on this row took longer than its budget of 0.0001 s"


def test_kernel_parameter_named_like_a_builtin_it_calls_is_renamed(tmp_path):
    table = tmp_path / "formulas.yaml"
    table.write_text("- name: f(Tensor self, Scalar abs) -> Tensor\n  forward: abs(self) * abs\n"
                     "- name: g(Tensor self, Scalar abs) -> Tensor\n  forward: self * abs\n", encoding="utf-8")
    files = render_all(str(table))
    assert "def f_forward_scalar(self, abs_, _zero):" in files["kernels/f.py"]
    assert "return abs_*abs(self)" in files["kernels/f.py"]
    assert "def g_forward_scalar(self, abs, _zero):" in files["kernels/g.py"]   # not called there: kept
