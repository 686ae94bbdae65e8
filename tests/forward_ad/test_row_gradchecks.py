"""gradcheck with forward mode and gradgradcheck forward-over-reverse for every table row with a forward rule.

For each row that has a forward-mode rule (``derivgen.generated.jvp.RULES``), the smallest float64 sample(s)
of ``tests.support.samples`` go through ``gradcheck(fn, inputs, check_forward_ad=True)`` (the Jacobian from
JVPs and the one from backward, each against central differences) and ``gradgradcheck(fn, inputs,
check_fwd_over_rev=True)``: the backward pass built with ``create_graph=True`` is differentiated in forward
mode (dual inputs and grad_outputs) and in reverse mode, both against central differences of the
first derivative. Rows with ``inplace: true`` get the same checks through ``op_`` applied to a clone of the
input (the saved output of ``exp_`` must carry the tangent written into self). Rows that fail either check
are listed in ``KNOWN_FAILURES`` with the reason; the list is asserted both ways (a listed row that passes
fails the test too, so the list stays true).
"""
import os

import numpy as np
import pytest

import derivgen
from derivgen.autograd import gradcheck, gradgradcheck
from derivgen.generated import jvp as generated_jvp
from derivgen.table import load_table
from tests.support.paths import REPO
from tests.support.samples import row_function, samples_for, suits_inplace

ENTRIES = load_table(os.path.join(REPO, "formulas.yaml"))
ROWS = [e for e in ENTRIES if e.formulas and e.schema.row_name in generated_jvp.RULES]
SAMPLES_PER_ROW = 2
INPLACE_ROWS = [e for e in ROWS if e.inplace or e.writes_into_self]  # those with an in-place form
OUT_OF_PLACE_ROWS = [e for e in ROWS if not e.writes_into_self]  # the others are checked as INPLACE_ROWS
# rows failing one of the two checks, each with the reason (none today: every row passes both)
KNOWN_FAILURES = {}


def _as_positional(fn, sample):
    """``(f, leaves)``: ``f(*leaves)`` calls the row with fresh leaves (requiring grad) at the
    differentiable positions, the other arguments as in the sample."""
    args, kwargs, leaves = sample.leaves(requires_grad=True)
    index = {id(t): i for i, t in enumerate(leaves)}

    def sub(v, new):
        if isinstance(v, derivgen.Tensor) and id(v) in index:
            return new[index[id(v)]]
        if isinstance(v, list):
            return [sub(e, new) for e in v]
        return v

    def f(*new):
        return fn(*[sub(a, new) for a in args], **{k: sub(v, new) for k, v in kwargs.items()})
    return f, leaves


def _smallest_samples(entry, keep=None):
    """The samples with a differentiable input (and passing ``keep``), fewest perturbed elements first."""
    samples = [s for s in samples_for(entry, derivgen.float64) if s.diff_index and (keep is None or keep(s))]
    sized = []
    for s in samples:
        _, _, leaves = s.leaves(requires_grad=False)
        if leaves:
            sized.append((sum(t._array.size for t in leaves), len(sized), s))
    return [s for _, _, s in sorted(sized, key=lambda t: t[:2])][:SAMPLES_PER_ROW]


def _inplace_function(entry):
    from derivgen.generated import ops
    inplace = getattr(ops, entry.schema.row_name if entry.writes_into_self else
                      f"{entry.schema.base}__{entry.schema.overload or 'default'}")

    def fn(self, *rest, **kwargs):
        target = self.clone()
        out = inplace(target, *rest, **kwargs)
        assert out is target
        return out
    return fn



def row_failures(entry, inplace=False):
    """The failure messages of the row's checked samples (empty when both checks pass on all); with
    ``inplace``, of its ``op_`` variant on the samples that suit it (self not broadcast)."""
    fn = _inplace_function(entry) if inplace else row_function(entry)
    failures = []
    samples = _smallest_samples(entry, (lambda s: suits_inplace(entry, s)) if inplace else None)
    assert samples, f"no sample of '{entry.name}' has a differentiable input" + (" and suits op_" if inplace else "")
    for s in samples:
        f, leaves = _as_positional(fn, s)
        for name, check in (("gradcheck(check_forward_ad=True)",
                             lambda: gradcheck(f, tuple(leaves), check_forward_ad=True)),
                            ("gradgradcheck(check_fwd_over_rev=True)",
                             lambda: gradgradcheck(f, tuple(leaves), check_fwd_over_rev=True))):
            try:
                check()
            except Exception as exc:  # noqa: BLE001 - collect every failing check of the row
                failures.append(f"{s!r}: {name}: {type(exc).__name__}: {exc}")
    return failures


def test_known_failures_are_rows_with_forward_rules():
    names = {e.name for e in ROWS}
    assert len(ROWS) > 100
    assert set(KNOWN_FAILURES) <= names, set(KNOWN_FAILURES) - names


@pytest.mark.parametrize("entry", OUT_OF_PLACE_ROWS, ids=lambda e: e.name)
def test_row_forward_and_forward_over_reverse_gradchecks(entry):
    failures = row_failures(entry)
    if entry.name in KNOWN_FAILURES:
        assert failures, f"row '{entry.name}' now passes: remove it from KNOWN_FAILURES"
        return
    assert not failures, f"row '{entry.name}' ({entry.file}:{entry.line}):\n" + "\n".join(failures)


@pytest.mark.parametrize("entry", INPLACE_ROWS, ids=lambda e: e.name)
def test_inplace_variant_forward_and_forward_over_reverse_gradchecks(entry):
    failures = row_failures(entry, inplace=True)
    assert not failures, f"row '{entry.name}' ({entry.file}:{entry.line}), in place:\n" + "\n".join(failures)
