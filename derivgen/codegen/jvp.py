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
    # statements of <row>_jvp (kinds "function", "linear"); for kind "kernel", of <row>_jvp_graph: the same
    # expression as Tensor ops, used when the tangent itself must be differentiable (create_graph=True)
    body: list = field(default_factory=list)
    formula: str = ""


def tangent_name(arg):
    return f"{arg}_t"


def primal_name(arg):
    return f"{arg}_p"


def build_jvp(entry, fwd, scope, low):
    """The JvpModel of one row, or None when the row has no forward-mode formula."""
    schema = entry.schema
    diff = [a.name for a in entry.differentiable_args]
    text = (entry.jvp or "").strip()
    if diff and entry.jvp_outputs:
        return _several_outputs(entry, scope, low, diff)
    if not diff or len(schema.returns) != 1:
        return None
    if text == AUTO_LINEAR:
        return _linear(entry, diff)  # also for a list of outputs (split, unbind): one tangent each
    if schema.returns[0].is_tensor_list:
        return None
    if fwd is not None and not is_boolean(fwd) and text in ("", AUTO_ELEMENT_WISE):
        expr = sum((sp.diff(fwd, sp.Symbol(a, real=True)) * sp.Symbol(tangent_name(a), real=True) for a in diff),
                   sp.Integer(0))
        return _kernel(entry, expr, diff, f"derived from forward {entry.forward}",
                       _graph(low, _jvp_scope(scope, schema, diff), expr))
    if not text:
        return None
    jscope = _jvp_scope(scope, schema, diff)
    if text == AUTO_ELEMENT_WISE:
        return _element_wise(entry, jscope, low, diff)
    try:
        expr = parse_formula(text, jscope)
    except FormulaError as exc:
        raise entry.error(f"in forward-mode formula 'result': {exc}", entry.jvp_line) from None
    prim = {sp.Symbol(primal_name(a), real=True): sp.Symbol(a, real=True) for a in diff}
    expr = expr.xreplace(prim)
    if fwd is not None and not any(isinstance(n, sp.core.function.AppliedUndef) for n in sp.preorder_traversal(expr)):
        graph = _graph(low, jscope, expr)
        expr = expr.xreplace({sp.Symbol(schema.returns[0].name, real=True): fwd})
        return _kernel(entry, expr, diff, text, graph)
    code = _graph(low, jscope, expr)
    return JvpModel(kind="function", tangents=diff, body=_metadata_lines(jscope) + [f"return {code}"],
                    formula=text)


def _several_outputs(entry, scope, low, diff):
    """A row with several outputs (``max.dim``: values, indices): one formula per differentiable output,
    keyed by its name; the others get no tangent."""
    jscope = _jvp_scope(scope, entry.schema, diff)
    prim = {sp.Symbol(primal_name(a), real=True): sp.Symbol(a, real=True) for a in diff}
    codes = []
    for r in entry.schema.returns:
        text, line = entry.jvp_outputs.get(r.name, (None, None))
        if text is None:
            codes.append("None")
            continue
        try:
            expr = parse_formula(text, jscope).xreplace(prim)
        except FormulaError as exc:
            raise entry.error(f"in forward-mode formula '{r.name}': {exc}", line) from None
        codes.append(_graph(low, jscope, expr))
    formula = "; ".join(f"{n}: {t}" for n, (t, _) in entry.jvp_outputs.items())
    unpack = f"{', '.join(r.name for r in entry.schema.returns)} = result"
    return JvpModel(kind="function", tangents=diff,
                    body=[unpack] + _metadata_lines(jscope) + [f"return ({', '.join(codes)}, )"], formula=formula)


def _graph(low, jscope, expr):
    saved = low.scope
    low.scope = jscope
    try:
        return low.graph(expr)
    finally:
        low.scope = saved


def _element_wise(entry, jscope, low, diff):
    """``auto_element_wise`` on a row without a ``forward:`` expression: as torch, each input's backward
    formula with ``grad`` replaced by that input's tangent (the Jacobian of an elementwise op is
    diagonal, so its vector-Jacobian and Jacobian-vector products agree), summed over the inputs that
    have one."""
    terms = []
    for f in entry.formulas:
        if len(f.names) != 1 or f.derived:
            raise entry.error("'result: auto_element_wise' needs one backward formula per input", entry.jvp_line)
        try:
            expr = parse_formula(f.text, _with_grad(jscope))
        except FormulaError as exc:
            raise entry.error(f"in formula for '{f.names[0]}': {exc}", f.line) from None
        if any(s.name.startswith("grad") and s.name != "grad" for s in expr.free_symbols):
            raise entry.error("'result: auto_element_wise' needs formulas in 'grad'", entry.jvp_line)
        expr = expr.xreplace({sp.Symbol("grad", real=True): sp.Symbol(tangent_name(f.names[0]), real=True)})
        terms.append((f.names[0], _graph(low, jscope, expr)))
    body = ["_jvp = None"]
    for k, (arg, code) in enumerate(terms):
        body += [f"if {tangent_name(arg)} is not None:",
                 f"    _jvp = {code}" if k == 0 else f"    _jvp = {code} if _jvp is None else _jvp + {code}"]
    return JvpModel(kind="function", tangents=diff, body=_metadata_lines(jscope) + body + ["return _jvp"],
                    formula=AUTO_ELEMENT_WISE)


_META_CODE = {"sym_sizes": "{}._array.shape", "scalar_type": "{}._array.dtype", "sym_numel": "{}._array.size",
              "dim": "{}._array.ndim", "args_sizes": "[t._array.shape for t in {}]",
              "args_scalartypes": "[t._array.dtype for t in {}]"}


def _metadata_lines(jscope):
    """Tensor metadata a formula reads (``self.sym_sizes()`` parses to the name ``self_sym_sizes``)."""
    lines = []
    for name in sorted(jscope.metadata):
        for kind, code in _META_CODE.items():
            if name.endswith("_" + kind):
                lines.append(f"{name} = {code.format(name[: -len(kind) - 1])}")
                break
    return lines


def _with_grad(jscope):
    """The scope of a backward formula read as a JVP (auto_element_wise): ``grad`` stands for a tangent."""
    import copy
    s = copy.copy(jscope)
    s.tensors = set(jscope.tensors) | {"grad"}
    return s


def _jvp_scope(scope, schema, diff):
    import copy
    s = copy.copy(scope)
    # a forward-mode formula sees primals, tangents, inputs and results; the backward's incoming
    # gradients (grad, grads, grad_<output>) do not exist there; an input of the row named like one
    # (the grad_output of a *_backward row) stays a tensor
    inputs = {a.name for a in schema.args}
    incoming = {n for n in scope.tensors if (n == "grad" or n.startswith("grad_")) and n not in inputs}
    s.tensors = (set(scope.tensors) - incoming) | {tangent_name(a) for a in diff} | {primal_name(a) for a in diff}
    s.lists = set(scope.lists) - {"grads"}
    s.metadata = set()
    return s


def _kernel(entry, expr, diff, formula, graph):
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
                    formula=formula, body=[f"return {graph}"])


def _linear(entry, diff):
    """``auto_linear``: the op applied to its inputs' tangents (other arguments as given)."""
    args = []
    for a in entry.schema.args:
        args.append(f"{a.name}={tangent_name(a.name) if a.name in diff else a.name}")
    return JvpModel(kind="linear", tangents=diff, body=[f"return _ops.{entry.schema.row_name}({', '.join(args)})"],
                    formula=AUTO_LINEAR)
