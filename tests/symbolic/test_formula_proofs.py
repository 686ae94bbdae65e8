"""Hand-written formulas of elementwise rows agree with sympy's derivative of their ``forward:``.

Each formula is parsed with derivgen's allow-list parser, ``result`` is replaced by the forward, and the
expression is compared with ``grad * d forward / d arg`` (``derive_vjp``) by numeric probing at random
points of the op's domain (``probe_equal``), also with every Scalar argument pinned to small integers
(0, 1, 2, -1), which reaches special cases such as ``exponent != 0``. The generator runs the same proof
at build time: a wrong formula in a temporary table must fail the build with a TableError naming the
file, the formula's line and the entry.
"""
import itertools
import os
import re

import pytest
import sympy as sp

from derivgen.codegen.render import render_all
from derivgen.ops import formula_fns
from derivgen.symbolic.derive import GRAD, derive_vjp, probe_equal
from derivgen.symbolic.parse import parse_formula, schema_scope
from derivgen.table import TableError, load_table
from tests.support.samples import input_domains

from tests.support.paths import REPO  # noqa: E402
TABLE = os.path.join(REPO, "formulas.yaml")
ENTRIES = load_table(TABLE)
ELEMENTWISE = [e for e in ENTRIES if e.forward is not None]
PROVABLE = [(e, f) for e in ELEMENTWISE for f in e.formulas if not f.derived and len(f.names) == 1]

_DOMAIN_RANGES = {"pos": (0.3, 3.0), "nonzero": (0.3, 3.0), "unit": (-0.9, 0.9), "gt1": (1.1, 3.0),
                  "gtm1": (-0.9, 3.0)}


def _sym(name):
    return sp.Symbol(name, real=True)


def _base_scope(entry):
    return schema_scope(entry.schema)


def _inline_ops():
    """Other elementwise rows, callable by base name inside a formula (as the generator allows)."""
    counts = {}
    for e in ENTRIES:
        counts[e.schema.base] = counts.get(e.schema.base, 0) + 1
    ops = {}
    for e in ELEMENTWISE:
        if counts[e.schema.base] != 1:
            continue
        params = [a.name for a in e.schema.args if a.is_tensor or a.is_number]
        fwd = parse_formula(e.forward, _base_scope(e))

        def build(*args, fwd=fwd, params=params, entry=e):
            subs = {_sym(p): a for p, a in zip(params, args)}
            for a in entry.schema.args[len(args):]:
                if a.name in params and a.has_default:
                    subs[_sym(a.name)] = sp.sympify(a.default)
            return fwd.xreplace(subs)
        ops[e.schema.base] = (params, build)
    return ops


INLINE = _inline_ops()


def _formula_scope(entry):
    s = _base_scope(entry)
    s.tensors.add("grad")
    s.lists.add("grads")
    for r in entry.schema.returns:
        s.tensors.add(r.name)
        s.tensors.add(f"grad_{r.name}")
    s.inline_ops = {k: v for k, v in INLINE.items() if k != entry.schema.base}
    s.tensor_fns = set(formula_fns.TENSOR_FUNCTIONS)
    s.meta_fns = set(formula_fns.META_FUNCTIONS)
    return s


# The backward helpers of in-place activations (``elu_``, ``leaky_relu_``) are elementwise: a ``where`` over
# the result, plus torch's refusal of a negative slope. Their math, as sympy, so that their rows are proved
# too (``test_result_helpers_match_their_math`` checks the helpers against it).
RESULT_HELPERS = {
    "elu_result_backward": lambda g, r, alpha, scale, iscale: sp.Piecewise((g * iscale * (r + alpha * scale), r <= 0),
                                                                          (g * scale, True)),
    "leaky_relu_result_backward": lambda g, r, slope: sp.Piecewise((g, r > 0), (g * slope, True)),
}


def _strip_fill_helpers(expr):
    """``zeros_like(x)`` is 0 and ``full_like(x, v)`` is v, elementwise; the result helpers are their math."""
    def repl(node):
        name = type(node).__name__
        if name == "zeros_like":
            return sp.S.Zero
        if name == "full_like" and len(node.args) == 2:
            return node.args[1]
        if name in RESULT_HELPERS:
            return RESULT_HELPERS[name](*node.args)
        return node
    return expr.replace(lambda n: isinstance(n, sp.core.function.AppliedUndef), repl)


def hand_and_derived(entry, formula):
    fwd = parse_formula(entry.forward, _base_scope(entry))
    hand = parse_formula(formula.text, _formula_scope(entry))
    ret = entry.schema.returns[0].name
    hand = _strip_fill_helpers(hand.xreplace({_sym(ret): fwd}))
    derived = derive_vjp(fwd, _sym(formula.names[0]), GRAD)
    return hand, derived


# A backward that reads the result tells the input's sign from the result's, which holds for positive slopes
# and scales only: torch refuses the backward for a negative slope, and so do the helpers.
_RESULT_FORM_DOMAINS = {"elu_": {"alpha": "pos", "scale": "pos", "input_scale": "pos"},
                        "leaky_relu_": {"negative_slope": "pos"}}


def _kinds(entry):
    return {**input_domains(entry), **_RESULT_FORM_DOMAINS.get(entry.name, {})}


def _domains(entry):
    doms = {}
    for name, kind in _kinds(entry).items():
        doms[name] = _DOMAIN_RANGES[kind]
    for a in entry.schema.args:
        if a.is_number and a.type.rstrip("?") in ("int", "SymInt"):
            doms.setdefault(a.name, (1.0, 4.0))
    return doms


def test_there_are_formulas_to_prove():
    assert len(PROVABLE) >= 10


@pytest.mark.parametrize("entry,formula", PROVABLE, ids=[f"{e.name}:{','.join(f.names)}" for e, f in PROVABLE])
def test_formula_matches_derivative_of_forward(entry, formula):
    hand, derived = hand_and_derived(entry, formula)
    # a bool argument (elu_backward's is_result) selects a branch: prove each branch
    flags = [a.name for a in entry.schema.args if a.type.rstrip("?") == "bool"
             and _sym(a.name) in hand.free_symbols | derived.free_symbols]
    if flags:
        for values in itertools.product((sp.true, sp.false), repeat=len(flags)):
            pin = {_sym(n): v for n, v in zip(flags, values)}
            _prove(entry, formula, sp.sympify(hand.xreplace(pin)), sp.sympify(derived.xreplace(pin)))
        return
    _prove(entry, formula, hand, derived)


def _prove(entry, formula, hand, derived):
    opaque = {type(n).__name__ for n in sp.preorder_traversal(hand) if isinstance(n, sp.core.function.AppliedUndef)}
    assert not opaque, f"{entry.name}: formula for {formula.names[0]} uses {sorted(opaque)}, which cannot be probed"
    symbols = sorted(hand.free_symbols | derived.free_symbols, key=lambda s: s.name)
    known = {a.name for a in entry.schema.args} | {"grad"}
    assert {s.name for s in symbols} <= known, f"unexpected symbols {symbols}"
    domains = _domains(entry)
    ok, msg, n = probe_equal(hand, derived, symbols, domains, n_points=48, seed=1)
    assert ok, f"{entry.name} ({entry.file}:{formula.line}): formula for {formula.names[0]} `{formula.text}` " \
               f"disagrees with d({entry.forward}): {msg}"
    assert n >= 16
    # Scalar arguments pinned to small integers reach the special cases (``exponent != 0``)
    numbers = [a.name for a in entry.schema.args if a.is_number and _sym(a.name) in symbols]
    kinds = _kinds(entry)
    for name in numbers:
        for k in (0, 1, 2, -1):
            kind = kinds.get(name)
            if kind == "nonzero" and k == 0 or kind not in (None, "nonzero") and \
                    not _DOMAIN_RANGES[kind][0] <= k <= _DOMAIN_RANGES[kind][1]:
                continue  # outside the op's domain
            h, d = hand.xreplace({_sym(name): sp.Integer(k)}), derived.xreplace({_sym(name): sp.Integer(k)})
            h, d = sp.sympify(h), sp.sympify(d)
            rest = [s for s in symbols if s.name != name]
            if not rest or (h.free_symbols | d.free_symbols) == set():
                assert sp.simplify(h - d) == 0, f"{entry.name} with {name}={k}: {h} != {d}"
                continue
            ok, msg, _ = probe_equal(h, d, rest, domains, n_points=24, seed=2)
            assert ok, f"{entry.name} with {name}={k}: formula for {formula.names[0]} disagrees: {msg}"


def test_result_helpers_match_their_math():
    import numpy as np
    rng = np.random.default_rng(0)
    g, r = rng.standard_normal(64), rng.standard_normal(64) * 2
    for name, params in (("elu_result_backward", (0.7, 1.3, 0.8)), ("leaky_relu_result_backward", (0.2,))):
        got = getattr(formula_fns, name)(g, r, *params)
        syms = sp.symbols("g r a b c")[:2 + len(params)]
        expr = sp.lambdify(syms, RESULT_HELPERS[name](*syms), "numpy")
        np.testing.assert_allclose(got, expr(g, r, *params), rtol=1e-14)


def test_probe_equal_catches_a_wrong_formula():
    x = _sym("self")
    ok, msg, _ = probe_equal(GRAD * sp.sin(x), derive_vjp(sp.sin(x), x, GRAD), [GRAD, x])
    assert not ok and "d(forward)" in msg
    ok, _, _ = probe_equal(GRAD * sp.cos(x), derive_vjp(sp.sin(x), x, GRAD), [GRAD, x])
    assert ok


# ---- the generator rejects wrong formulas ---------------------------------------------------------

def _table_text():
    with open(TABLE, encoding="utf-8") as fh:
        return fh.read()


def _replace_formula(text, entry_name, arg, new_formula):
    """Replace the formula line ``  <arg>: ...`` of the entry ``entry_name``; return (text, line number)."""
    lines = text.splitlines(keepends=True)
    entry = next(e for e in ENTRIES if e.name == entry_name)
    formula = next(f for f in entry.formulas if f.names == (arg,))
    idx = formula.line - 1
    assert re.match(rf"\s+{re.escape(arg)}:", lines[idx]), lines[idx]
    indent = lines[idx][: len(lines[idx]) - len(lines[idx].lstrip())]
    lines[idx] = f"{indent}{arg}: {new_formula}\n"
    return "".join(lines), formula.line


WRONG = [
    ("sin", "self", "grad * sin(self)"),
    ("exp", "self", "grad * result * 2"),
    ("div.Tensor", "other", "grad * self / (other * other)"),
    ("tanh", "self", "grad * (1 + result * result)"),
    ("mul.Tensor", "other", "grad * other"),
]


@pytest.mark.parametrize("entry_name,arg,formula", WRONG, ids=[w[0] for w in WRONG])
def test_wrong_formula_fails_the_build(tmp_path, entry_name, arg, formula):
    if not any(e.name == entry_name for e in ENTRIES):
        pytest.skip(f"row {entry_name} is not in the table")
    text, line = _replace_formula(_table_text(), entry_name, arg, formula)
    path = tmp_path / "formulas.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TableError) as info:
        render_all(str(path))
    err = info.value
    assert err.file == "formulas.yaml"
    assert err.line == line
    assert err.entry == entry_name
    assert str(err).startswith(f"formulas.yaml:{line}: entry '{entry_name}':")
    assert "disagrees with the derivative of its forward" in str(err)


def test_correct_rewrite_of_a_formula_still_builds(tmp_path):
    """The proof is numeric, not textual: an equivalent spelling of a formula is accepted."""
    text, _ = _replace_formula(_table_text(), "tanh", "self", "grad - grad * result ** 2")
    path = tmp_path / "formulas.yaml"
    path.write_text(text, encoding="utf-8")
    files = render_all(str(path))
    assert "class TanhBackward0" in files["nodes/tanh.py"]


def test_derived_formulas_are_lightly_simplified_without_changing_their_value():
    from derivgen.symbolic.derive import light_simplify
    x = sp.Symbol("self", real=True)
    softsign = x / (1 + sp.Abs(x))
    raw = derive_vjp(softsign, x, GRAD)
    simple = light_simplify(raw)
    assert sp.count_ops(simple) < sp.count_ops(raw)
    ok, msg, _ = probe_equal(simple, raw, sorted(raw.free_symbols, key=lambda s: s.name))
    assert ok, msg
    # never worse than what it was given
    mish = x * sp.tanh(sp.log(1 + sp.exp(x)))
    raw = derive_vjp(mish, x, GRAD)
    assert sp.count_ops(light_simplify(raw)) <= sp.count_ops(raw)
