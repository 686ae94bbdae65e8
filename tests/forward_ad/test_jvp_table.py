"""Forward-mode JVP of every table row that has a forward-mode rule, against central finite differences.

For each sample of ``tests.support.samples`` (float64), every differentiable input gets a random tangent
(dual tensors inside a dual level); the output tangent must equal ``(f(x + eps v) - f(x - eps v)) / 2 eps``.
Elementwise rows get their JVP kernel from sympy, the other rows from their ``result:`` formula, so a
row listed here is checked without writing a test. Rows with a backward formula but no forward rule
must refuse tangents with torch's error.
"""
import os

import numpy as np
import pytest

import derivgen
from derivgen.autograd import forward_ad as fwAD
from derivgen.core.tensor import Tensor
from derivgen.generated import jvp as generated_jvp
from derivgen.table import load_table
from tests.support.gradcheck import flat_outputs
from tests.support.paths import REPO
from tests.support.samples import row_function, samples_for, suits_inplace

EPS = 1e-6
ENTRIES = load_table(os.path.join(REPO, "formulas.yaml"))
JVP_ROWS = [e for e in ENTRIES if e.formulas and e.schema.row_name in generated_jvp.RULES]
NO_JVP_ROWS = [e for e in ENTRIES if e.formulas and e.schema.row_name not in generated_jvp.RULES]


def _perturbed(s, leaves_arrays, direction, sign):
    args, kwargs, leaves = s.leaves(requires_grad=False)
    for leaf, a, v in zip(leaves, leaves_arrays, direction):
        leaf._array[...] = a + sign * EPS * v
    return args, kwargs


# rows that may have a backward formula but no forward-mode rule, each with the reason (none today)
WITHOUT_JVP = {
    # torch 2.13 has no forward derivative for it either and raises; tests/nn/test_lstm_fused.py checks the error
    "mkldnn_rnn_layer": "torch defines no forward-mode formula",
    "_embedding_bag": "torch defines no forward-mode formula",
}


def test_every_row_has_a_forward_rule():
    """Every row with a backward formula has forward mode, except those listed with a reason."""
    assert len(JVP_ROWS) > 100 and len(JVP_ROWS) + len(NO_JVP_ROWS) == sum(1 for e in ENTRIES if e.formulas)
    assert sorted(e.name for e in NO_JVP_ROWS) == sorted(WITHOUT_JVP)
    for name in ("mm_default", "addmm_default", "_softmax_default", "_log_softmax_default", "cat_default",
                 "stack_default", "view_default", "sum_dim_IntList", "mean_default", "select_int",
                 "slice_Tensor", "index_Tensor", "permute_default", "expand_default", "unsqueeze_default",
                 "squeeze_dim", "transpose_int", "mul_Tensor", "sigmoid_default", "clamp_Tensor",
                 "cumprod_default", "convolution_default", "native_batch_norm_default"):
        assert name in generated_jvp.RULES, name


@pytest.mark.parametrize("entry", JVP_ROWS, ids=lambda e: e.name)
def test_jvp_row(entry):
    fn = row_function(entry)
    samples = [s for s in samples_for(entry, derivgen.float64) if s.diff_index]
    assert samples
    failures = []
    for k, s in enumerate(samples):
        rng = np.random.default_rng(k)
        args, kwargs, leaves = s.leaves(requires_grad=False)
        if not leaves:
            continue
        base = [leaf._array.copy() for leaf in leaves]
        direction = [rng.standard_normal(a.shape) for a in base]
        with fwAD.dual_level():
            duals = iter([fwAD.make_dual(leaf, Tensor._make(v.copy())) for leaf, v in zip(leaves, direction)])
            args2 = list(args)
            kwargs2 = dict(kwargs)
            for pos in s.diff_index:
                cont = kwargs2 if isinstance(pos, str) else args2
                v = cont[pos]
                cont[pos] = [next(duals) for _ in v] if isinstance(v, (list, tuple)) else next(duals)
            outs = flat_outputs(fn(*args2, **kwargs2))
            tangents = [fwAD.unpack_dual(o).tangent for o in outs]
        plus = flat_outputs(fn(*_perturbed(s, base, direction, +1)[0], **_perturbed(s, base, direction, +1)[1]))
        minus = flat_outputs(fn(*_perturbed(s, base, direction, -1)[0], **_perturbed(s, base, direction, -1)[1]))
        for i, (out, tangent, p, m) in enumerate(zip(outs, tangents, plus, minus)):
            if not out.dtype.is_floating_point or (len(entry.schema.returns) > 1
                                                   and i not in entry.differentiable_outputs):
                assert tangent is None, f"output {i} ({out.dtype}, not differentiable) has a tangent"
                continue
            numeric = (p._array.astype(np.float64) - m._array.astype(np.float64)) / (2 * EPS)
            try:
                assert tangent is not None, f"no tangent on output {i}"
                assert tangent.shape == out.shape, (i, tangent.shape, out.shape)
                np.testing.assert_allclose(tangent._array, numeric, rtol=1e-4, atol=1e-5)
            except AssertionError as exc:
                failures.append(f"{s!r}: {exc}")
    assert not failures, f"row '{entry.name}':\n" + "\n".join(failures)
    with fwAD.dual_level():
        pass
    out = fn(*samples[0].args, **samples[0].kwargs)
    assert getattr(flat_outputs(out)[0], "_fw_grads", None) is None  # no level: no tangent work


@pytest.mark.parametrize("row", ["cumprod_default", "mm_default", "sin_default"])
def test_row_without_rule_refuses_tangents(row, monkeypatch):
    """An op with a differentiable input but no forward rule raises torch's error naming the op."""
    entry = next(e for e in ENTRIES if e.schema.row_name == row)
    monkeypatch.delitem(generated_jvp.RULES, row)
    fn = row_function(entry)
    s = [s for s in samples_for(entry, derivgen.float64) if s.diff_index][0]
    args, kwargs, leaves = s.leaves(requires_grad=False)
    with fwAD.dual_level():
        args2, kwargs2 = list(args), dict(kwargs)
        pos = s.diff_index[0]
        cont = kwargs2 if isinstance(pos, str) else args2
        v = cont[pos]
        make = lambda t: fwAD.make_dual(t, Tensor._make(np.ones_like(t._array)))  # noqa: E731
        cont[pos] = [make(t) for t in v] if isinstance(v, (list, tuple)) else make(v)
        with pytest.raises(NotImplementedError, match=f"Trying to use forward AD with {entry.schema.base} that "
                                                      "does not support it"):
            fn(*args2, **kwargs2)


INPLACE_ROWS = [e for e in JVP_ROWS if e.inplace]


@pytest.mark.parametrize("entry", INPLACE_ROWS, ids=lambda e: e.name)
def test_jvp_inplace_variant(entry):
    """``op_`` on a dual tensor: the tangent is the row's JVP at self as it was before the write."""
    from derivgen.generated import ops
    inplace = getattr(ops, f"{entry.schema.base}__{entry.schema.overload or 'default'}")
    fn = row_function(entry)
    for s in samples_for(entry, derivgen.float64):
        if not suits_inplace(entry, s):
            continue
        args, kwargs, leaves = s.leaves(requires_grad=False)
        rng = np.random.default_rng(0)
        direction = [rng.standard_normal(leaf._array.shape) for leaf in leaves]
        with fwAD.dual_level():
            duals = [fwAD.make_dual(leaf, Tensor._make(v)) for leaf, v in zip(leaves, direction)]
            it = iter(duals)
            call = [next(it) if k in s.diff_index else a for k, a in enumerate(args)]
            expected = fwAD.unpack_dual(fn(*call, **kwargs)).tangent
            target = call[0].clone()  # a dual non-leaf: clone carries the tangent
            assert fwAD.unpack_dual(target).tangent is not None
            out = inplace(target, *call[1:], **kwargs)
            assert out is target
            np.testing.assert_allclose(fwAD.unpack_dual(target).tangent._array, expected._array, rtol=1e-12,
                                       atol=1e-12)
        return
    pytest.skip(f"no sample of {entry.name} suits its in-place variant")
