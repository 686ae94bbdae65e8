"""Forward-mode AD from the table: each row's Jacobian-vector product (JVP).

A row's output tangent is built in one of three ways, as in torch's derivatives.yaml:

- elementwise rows (a ``forward:`` expression): sympy writes ``sum(d forward / d x * x_t)`` over the
  differentiable inputs ``x``, and the sum becomes one fused Numba kernel ``<row>_jvp`` in the row's
  kernel module, over the primals and their tangents;
- a ``result:`` key overrides it with a formula in ``<input>_t`` (tangent), ``<input>_p`` / ``<input>``
  (primal) and ``result``; elementwise formulas become the same kind of kernel, others are lowered to
  Tensor ops (the graph path of the backward formulas);
- ``result: auto_linear`` (the op is linear in its differentiable inputs: views, sums, cat) applies the
  op itself to the tangents, and ``result: auto_element_wise`` takes the derivative of the forward, as
  for an elementwise row without ``result:``.

Rows with neither give no JVP: forward AD through them raises torch's error at run time.
"""
from dataclasses import dataclass, field

import sympy as sp

from ..symbolic.parse import FormulaError, parse_formula
from .lower import KernelSpec, is_boolean

AUTO_ELEMENT_WISE = "auto_element_wise"
AUTO_LINEAR = "auto_linear"


@dataclass
class JvpModel:
    kind: str                   # "kernel" | "function" | "linear"
    tangents: list              # the differentiable inputs, in schema order
    kernel: object = None       # KernelSpec (kind "kernel")
    body: list = field(default_factory=list)   # statements of <row>_jvp (kinds "function", "linear")
    formula: str = ""


def tangent_name(arg):
    return f"{arg}_t"


def primal_name(arg):
    return f"{arg}_p"


def build_jvp(entry, fwd, scope, low):
    """The JvpModel of one row, or None when the row has no forward-mode formula."""
    schema = entry.schema
    diff = [a.name for a in entry.differentiable_args]
    if not diff or len(schema.returns) != 1 or schema.returns[0].is_tensor_list:
        return None
    text = (entry.jvp or "").strip()
    if text == AUTO_LINEAR:
        return _linear(entry, diff)
    if fwd is not None and not is_boolean(fwd) and text in ("", AUTO_ELEMENT_WISE):
        expr = sum((sp.diff(fwd, sp.Symbol(a, real=True)) * sp.Symbol(tangent_name(a), real=True) for a in diff),
                   sp.Integer(0))
        return _kernel(entry, expr, diff, f"derived from forward {entry.forward}")
    if not text or text == AUTO_ELEMENT_WISE:
        if text:
            raise entry.error("'result: auto_element_wise' needs an elementwise 'forward:' expression",
                              entry.jvp_line)
        return None
    jscope = _jvp_scope(scope, schema, diff)
    try:
        expr = parse_formula(text, jscope)
    except FormulaError as exc:
        raise entry.error(f"in forward-mode formula 'result': {exc}", entry.jvp_line) from None
    prim = {sp.Symbol(primal_name(a), real=True): sp.Symbol(a, real=True) for a in diff}
    expr = expr.xreplace(prim)
    if fwd is not None and not any(isinstance(n, sp.core.function.AppliedUndef) for n in sp.preorder_traversal(expr)):
        expr = expr.xreplace({sp.Symbol(schema.returns[0].name, real=True): fwd})
        return _kernel(entry, expr, diff, text)
    saved = low.scope
    low.scope = jscope
    try:
        code = low.graph(expr)
    finally:
        low.scope = saved
    return JvpModel(kind="function", tangents=diff, body=[f"return {code}"], formula=text)


def _jvp_scope(scope, schema, diff):
    import copy
    s = copy.copy(scope)
    s.tensors = set(scope.tensors) | {tangent_name(a) for a in diff} | {primal_name(a) for a in diff}
    s.lists = set(scope.lists)
    s.metadata = set()
    return s


def _kernel(entry, expr, diff, formula):
    schema = entry.schema
    tensors = [a.name for a in schema.args if a.is_tensor]
    numbers = [a.name for a in schema.args if a.is_number]
    used = {s.name for s in expr.free_symbols}
    if not any(tangent_name(a) in used for a in diff):
        expr = expr + sp.Symbol(tangent_name(diff[0]), real=True) * 0  # a constant JVP still has the tangent's shape
        used.add(tangent_name(diff[0]))
    arrays = [t for t in tensors if t in used] + [tangent_name(a) for a in diff if tangent_name(a) in used]
    extra = used - set(arrays) - set(numbers)
    if extra:
        raise entry.error(f"forward-mode formula uses {sorted(extra)}, which an elementwise kernel cannot take",
                          entry.jvp_line or entry.forward_line)
    spec = KernelSpec(name=f"{schema.py_name}_jvp", arrays=arrays, scalars=[n for n in numbers if n in used],
                      expr=expr, formula=f"result: {formula}")
    spec.render()
    return JvpModel(kind="kernel", tangents=[a for a in diff if tangent_name(a) in used], kernel=spec,
                    formula=formula)


def _linear(entry, diff):
    """``auto_linear``: the op applied to its inputs' tangents (other arguments as given)."""
    args = []
    for a in entry.schema.args:
        args.append(f"{a.name}={tangent_name(a.name) if a.name in diff else a.name}")
    return JvpModel(kind="linear", tangents=diff, body=[f"return _ops.{entry.schema.row_name}({', '.join(args)})"],
                    formula=AUTO_LINEAR)
