"""Gradient check of every row of formulas.yaml, straight from the table.

For each row with a differentiable input: every sample of ``tests.support.samples`` is gradchecked in float64
(central differences, eps 1e-6, against ``derivgen.autograd.grad`` with random upstream gradients) for
every differentiable input, and ``create_graph=True`` must give the same first-order gradients. Rows
with ``inplace: true`` are also checked through their in-place variant applied to a non-leaf. Rows
without a differentiable input must give outputs without grad_fn even when their inputs require grad.
"""
import os

import numpy as np
import pytest

import derivgen
from derivgen.table import load_table
from tests.support.gradcheck import check_gradients, flat_outputs
from tests.support.samples import missing_message, row_function, samples_for, suits_inplace

from tests.support.paths import REPO  # noqa: E402
ENTRIES = load_table(os.path.join(REPO, "formulas.yaml"))
DIFF_ROWS = [e for e in ENTRIES if e.formulas]
NONDIFF_ROWS = [e for e in ENTRIES if not e.formulas]
# rows with an in-place form: ``inplace: true``, or rows (``elu_``) whose kernel writes into self
INPLACE_ROWS = [e for e in ENTRIES if e.formulas and (e.inplace or e.writes_into_self)]
OUT_OF_PLACE_ROWS = [e for e in DIFF_ROWS if not e.writes_into_self]


def _run_all(entry, samples, check):
    failures = []
    for s in samples:
        try:
            check(s)
        except Exception as exc:  # noqa: BLE001 - collect every failing sample of the row
            failures.append(f"{s!r}:\n  {type(exc).__name__}: {exc}")
    assert not failures, f"row '{entry.name}' ({entry.file}:{entry.line}) fails for " \
                         f"{len(failures)} of {len(samples)} samples:\n" + "\n".join(failures)


def test_every_row_is_classified():
    assert len(DIFF_ROWS) + len(NONDIFF_ROWS) == len(ENTRIES) and DIFF_ROWS


@pytest.mark.parametrize("entry", OUT_OF_PLACE_ROWS, ids=lambda e: e.name)
def test_gradcheck_row(entry):
    samples = samples_for(entry, derivgen.float64)
    assert samples, missing_message(entry)
    fn = row_function(entry)
    assert any(s.diff_index for s in samples), \
        f"no sample of '{entry.name}' has a differentiable input: {missing_message(entry)}"

    def check(s):
        args, kwargs, leaves = s.leaves(requires_grad=True)
        if not leaves:
            return
        out = flat_outputs(fn(*args, **kwargs))
        # the node is the row's class, with one edge per differentiable argument
        node = next(o.grad_fn for o in out if o.requires_grad)
        assert type(node).__name__ == entry.class_name, (type(node).__name__, entry.class_name)
        assert len(node.next_functions) == len(leaves) or len(entry.differentiable_args) != len(s.diff_index)
        check_gradients(fn, args, kwargs, leaves)
    _run_all(entry, samples, check)


def _inplace_fn(entry):
    from derivgen.generated import ops
    if entry.writes_into_self:
        return getattr(ops, entry.schema.row_name)
    return getattr(ops, f"{entry.schema.base}__{entry.schema.overload or 'default'}")


@pytest.mark.parametrize("entry", INPLACE_ROWS, ids=lambda e: e.name)
def test_gradcheck_inplace_variant(entry):
    """``op_`` on a non-leaf (a clone of the leaf): history is rewritten to the row's node and the
    gradients through it are right."""
    fn = _inplace_fn(entry)
    from derivgen.generated import ops
    samples = []
    for s in samples_for(entry, derivgen.float64):
        if not suits_inplace(entry, s):
            continue
        samples.append(s)
    assert samples, f"no sample of '{entry.name}' suits its in-place variant: {missing_message(entry)}"

    def inplace(self, *rest, **kwargs):
        c = ops.clone(self) if self.requires_grad else self.clone()
        out = fn(c, *rest, **kwargs)
        assert out is c
        if self.requires_grad:
            assert type(c.grad_fn).__name__ == entry.class_name
            assert c.grad_fn.next_functions[0][0].name() == "CloneBackward0"
            assert c._version == 1
        return out

    def check(s):
        args, kwargs, leaves = s.leaves(requires_grad=True)
        check_gradients(inplace, args, kwargs, leaves)
    _run_all(entry, samples, check)


@pytest.mark.parametrize("entry", NONDIFF_ROWS, ids=lambda e: e.name)
def test_nondifferentiable_row_has_no_grad_fn(entry):
    samples = samples_for(entry, derivgen.float64)
    assert samples, missing_message(entry)
    fn = row_function(entry)

    def check(s):
        args, kwargs, leaves = s.leaves(requires_grad=True)
        assert leaves and all(t.requires_grad for t in leaves)
        for o in flat_outputs(fn(*args, **kwargs)):
            assert o.grad_fn is None, f"{entry.name} output has grad_fn {o.grad_fn}"
            assert not o.requires_grad
    _run_all(entry, samples, check)


def test_row_without_samples_fails_saying_where_to_add_them():
    from derivgen.table.loader import load_table_text
    (entry,) = load_table_text("- name: frobnicate(Tensor self, int[] dims) -> Tensor\n  self: grad\n",
                               "formulas.yaml")
    assert samples_for(entry, derivgen.float64) == []
    with pytest.raises(AssertionError) as info:
        test_gradcheck_row(entry)
    msg = str(info.value)
    assert "frobnicate" in msg and '@register("frobnicate")' in msg and "tests/support/samples.py" in msg
    assert "tests/support/samples_rows.py" in msg
