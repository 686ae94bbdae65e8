"""Build the code model of every table row: its op wrapper, its node class and its kernels.

This is where the symbolic layer and the code printers meet: formulas are parsed (allow-list), checked
against sympy's derivative of the forward, and lowered to the fast (numpy + Numba) and graph (Tensor
ops) paths. Templates in ``templates/`` then only lay the model out as Python source.
"""
import hashlib
import re
from dataclasses import dataclass, field

import sympy as sp

from . import manifest
from ..symbolic import budget
from ..symbolic.derive import GRAD, derive_vjp, light_simplify
from ..symbolic.prove import RowProof
from ..symbolic.functions import ELEMENTWISE
from ..symbolic.parse import FormulaError, parse_formula, schema_scope
from .wrappers import docstring_safe
from .kernel_types import BOOL, kernel_problem, kind_or_float
from .jvp import build_jvp
from .tape import build_tape
from .lower import KernelSpec, Lowering, is_boolean, is_int_closed

# Ops every table must have, because the runtime itself calls them (reductions in validate_outputs,
# dtype casts, the graph path of helper functions).
RUNTIME_OPS = ("sum", "view", "to")


@dataclass
class SavedTensor:
    name: str             # formula name: self, other, result
    is_output: bool
    guard: str = ""       # condition under which the forward saves it (empty: always)


@dataclass
class SavedValue:
    name: str             # exposed as _saved_<name>
    code: str             # how the forward computes it
    tensor_list: bool = False  # a Tensor?[] argument: released with the node, like torch's SavedVariable lists


@dataclass
class RowModel:
    entry: object
    py_name: str
    class_name: str
    doc: str
    args: list
    kernels: list = field(default_factory=list)
    forward_kernel: object = None
    forward_code: str = ""
    saved_tensors: list = field(default_factory=list)
    saved_values: list = field(default_factory=list)
    diff_args: list = field(default_factory=list)
    fast_body: list = field(default_factory=list)
    graph_body: list = field(default_factory=list)
    n_outputs_expr: str = "1"
    outputs_list: bool = False
    tuple_return: bool = False
    diff_outputs: list = field(default_factory=list)
    view: bool = False
    row_hash: str = ""
    inplace_saves_original_self: bool = False
    fusion_vjps: list = field(default_factory=list)   # [(input name, KernelSpec of one element)]
    # per differentiable input: how its fast path computes its gradient (Lowering.plans), and the
    # compiled backward tape's code made from them (codegen/tape.py; None when the row is not on it)
    tape_plans: dict = field(default_factory=dict)
    tape: object = None
    # bit i set: _apply_fast's output i is always a new array from one kernel call, which the engine
    # may then sum into in place or hand to a leaf as its .grad without a copy
    fresh_outputs: int = 0
    # per formula: (input names, "derived" | "proven" | "hand-written"), what `derivgen explain` shows
    formula_origins: list = field(default_factory=list)

    @property
    def compact_output(self):
        """The name of the one saved output of a row returning one fresh Tensor (not a view), which the
        node keeps compactly as its array and version counter (derivgen.core.node); else None."""
        names = [s.name for s in self.saved_tensors if s.is_output]
        if len(names) == 1 and not self.view and not self.tuple_return and not self.outputs_list:
            return names[0]
        return None
    jvp: object = None    # forward mode: a JvpModel (derivgen/codegen/jvp.py), or None
    # the node's one output has the (shape, dtype) of its inputs: "always" (one input), "when_equal" (several,
    # when theirs agree), or "" (recorded from the result); see _out_like_inputs
    out_like_inputs: str = ""


def _available_ops(entries):
    names = set()
    for e in entries:
        names.add(e.schema.base)
    names |= {"where", "maximum", "minimum", "abs", "logical_and", "logical_not"} & names
    return names


def _unique_bases(entries):
    count = {}
    for e in entries:
        count[e.schema.base] = count.get(e.schema.base, 0) + 1
    return {b for b, n in count.items() if n == 1}


def build_models(entries, progress=None, only=None):
    """Return the model of every row; raise TableError on the first bad row. ``progress(done, total,
    row name)`` is called after each row (parsing and proving formulas is the slow part). With ``only``
    (a subset of ``entries``: a user library's rows), every row resolves names but only those are built."""
    forwards = {}
    for e in entries:
        if e.forward is not None:
            forwards[e.name] = _bounded(e, _parse_forward, e)
    unique = _unique_bases(entries)
    inline_ops = {}
    for e in entries:
        if e.forward is not None and e.schema.base in unique:
            params = [a.name for a in e.schema.args if a.is_tensor or a.is_number]
            inline_ops[e.schema.base] = (params, _inliner(forwards[e.name], e, params))
    # Non-elementwise rows a formula may call: by base name when it names one row (``mm``), and always
    # by the row's function name (``squeeze_dim``).
    opaque_ops = {e.schema.py_name: e for e in entries if e.forward is None and not e.schema.base.endswith("_")}
    opaque_ops.update({e.schema.base: e for e in entries if e.forward is None and e.schema.base in unique
                       and not e.schema.base.endswith("_")})
    # Elementwise rows that are helpers of other rows' formulas (``threshold_backward``), not builtin
    # functions: the fast path inlines them into its kernel, the create_graph path calls their row.
    row_ops = {e.schema.base: e for e in entries if e.schema.base in inline_ops and e.schema.base not in ELEMENTWISE}
    overloaded = _overloaded_ops(entries, opaque_ops)
    available = _available_ops(entries)
    models = []
    build = entries if only is None else only
    for e in build:
        models.append(_bounded(e, _build_row, e, forwards.get(e.name), inline_ops, opaque_ops, available,
                               overloaded, row_ops))
        if progress is not None:
            progress(len(models), len(build), e.name)
    return models


def _bounded(entry, work, *args):
    """``work(*args)`` within the row's sympy time budget; running out of time, stack or memory is the
    row's table error."""
    seconds = budget.ROW_BUDGET_S
    try:
        with budget.time_budget(seconds):
            return work(*args)
    except budget.BudgetExceeded:
        raise entry.error(f"sympy work on this row took longer than its budget of {seconds:g} s") from None
    except RecursionError:
        raise entry.error("a formula of this row is nested too deeply for sympy (RecursionError)") from None
    except MemoryError:
        raise entry.error("sympy ran out of memory on a formula of this row") from None
    except (KeyError, ValueError, TypeError) as exc:   # a printer or sympy refusing what it was given
        raise entry.error(f"cannot generate code for this row: {exc}") from None


def _overloaded_ops(entries, opaque_ops):
    """{base name: [rows]} of non-elementwise ops with several rows (``sum``, ``sum.dim_IntList``): a
    formula's call of the base name is bound to one of them by its arguments (``_bind_overloads``)."""
    rows = {}
    for e in entries:
        if e.forward is None and e.schema.py_name in opaque_ops:
            rows.setdefault(e.schema.base, []).append(e)
    return {b: r for b, r in rows.items() if len(r) > 1}


def _accepts(schema, n_positional, keywords):
    """Whether a call with ``n_positional`` arguments and these keyword names binds to ``schema``."""
    positional = [a for a in schema.args if not a.kwonly]
    if n_positional > len(positional):
        return False
    names = {a.name for a in schema.args}
    given = {a.name for a in positional[:n_positional]}
    if any(k not in names or k in given for k in keywords):
        return False
    return all(a.has_default or a.name in given or a.name in keywords for a in schema.args)


def _bind_overloads(expr, overloaded, helpers, entry, formula):
    """Rename each call of an overloaded op to the one row its arity and keyword names select, as torch's
    argument parser does (``sum(g, [-1], True)`` is ``sum.dim_IntList``, never ``sum(Tensor, *, dtype)``)."""
    from ..symbolic.parse import is_opaque
    from .lower import is_kw
    subs = {}
    for node in sp.preorder_traversal(expr):
        if not is_opaque(node):
            continue
        name = type(node).__name__
        if name not in overloaded or name in helpers:
            continue
        keywords = [a.args[0].name[3:] for a in node.args if is_kw(a)]
        n_pos = len(node.args) - len(keywords)
        fits = [e for e in overloaded[name] if _accepts(e.schema, n_pos, keywords)]
        if not fits:
            sigs = "; ".join(e.schema.text for e in overloaded[name])
            raise entry.error(f"in formula for '{', '.join(formula.names)}': no overload of {name}() takes "
                              f"{n_pos} positional argument(s) and keywords {keywords} (overloads: {sigs})",
                              formula.line)
        if len(fits) > 1:
            # the fewest parameters wins; between equals (types decide, which a formula does not spell),
            # the row named exactly like the call (``clamp`` over ``clamp.Tensor``)
            fits.sort(key=lambda e: (len(e.schema.args), e.schema.py_name != name))
            if len(fits[0].schema.args) == len(fits[1].schema.args) and fits[0].schema.py_name != name:
                raise entry.error(f"in formula for '{', '.join(formula.names)}': the call of {name}() matches "
                                  f"several overloads ({', '.join(e.name for e in fits)}): call one by its "
                                  f"row name, e.g. {fits[0].schema.py_name}()", formula.line)
        target = fits[0].schema.py_name
        if target != name:
            subs[node] = sp.Function(target)(*node.args)
    return expr.xreplace(subs) if subs else expr


def _inliner(fwd, entry, params):
    def build(*args):
        subs = {sp.Symbol(p, real=True): a for p, a in zip(params, args)}
        for a in entry.schema.args[len(args):]:
            if a.name in params and a.has_default:
                subs[sp.Symbol(a.name, real=True)] = sp.sympify(a.default)
        return fwd.xreplace(subs)
    return build


def _forward_scope(entry):
    return schema_scope(entry.schema)


def _parse_forward(entry):
    try:
        return parse_formula(entry.forward, _forward_scope(entry))
    except FormulaError as exc:
        raise entry.error(f"in forward: {exc}", entry.forward_line) from None


def _formula_scope(entry, inline_ops, opaque_ops):
    s = _forward_scope(entry)
    for a in entry.schema.args:
        if a.is_tensor_list:
            s.lists.add(a.name)
    s.tensors.add("grad")
    s.lists.add("grads")
    s.values.add("grad_input_mask")  # torch's name: which differentiable inputs need a gradient
    for r in entry.schema.returns:
        if r.is_tensor_list:
            s.lists.add(r.name)
        else:
            s.tensors.add(r.name)
            s.tensors.add(f"grad_{r.name}")
    s.inline_ops = {k: v for k, v in inline_ops.items() if k != entry.schema.base}
    s.tensor_fns = set(manifest.load().tensor_helpers) | set(opaque_ops)
    s.meta_fns = set(manifest.load().meta_helpers)
    return s


def _fast_fn(opaque_ops):
    def ref(name):
        m = manifest.load()
        if name in m.tensor_helpers:
            return m.helper_code(name)
        return m.forward_code(opaque_ops[name].schema.py_name)
    return ref


def _graph_fn(opaque_ops, row_ops):
    def ref(name):
        m = manifest.load()
        if name in m.tensor_helpers:
            return m.helper_code(name, graph=True)
        return f"_ops.{(opaque_ops.get(name) or row_ops[name]).schema.row_name}"
    return ref


def row_hash(entry):
    return hashlib.sha256(entry.source.encode()).hexdigest()[:16]


def _build_row(entry, fwd, inline_ops, opaque_ops, available, overloaded=None, row_ops=None):
    schema = entry.schema
    model = RowModel(entry=entry, py_name=schema.py_name, class_name=entry.class_name or "",
                     doc=docstring_safe(entry.source), args=schema.args, row_hash=row_hash(entry))
    model.view = any(r.is_view for r in schema.returns)
    model.outputs_list = len(schema.returns) == 1 and schema.returns[0].is_tensor_list
    model.tuple_return = len(schema.returns) > 1
    model.diff_outputs = entry.differentiable_outputs
    scope = _formula_scope(entry, inline_ops, opaque_ops)
    row_ops = {k: v for k, v in (row_ops or {}).items() if k in scope.inline_ops}
    scope.tensor_fns |= set(row_ops)   # only graph-path expressions (see _graph_expr) contain these calls
    local_names = {}
    low = Lowering(scope, schema.py_name, _fast_fn(opaque_ops), _graph_fn(opaque_ops, row_ops), available,
                   local_names)

    # ---- forward
    if fwd is not None:
        spec = _forward_kernel(entry, fwd)
        model.forward_kernel = spec
        model.kernels.append(spec)
    elif not _has_forward_fn(schema.py_name):
        raise entry.error(f"no forward: give the row an elementwise 'forward:' expression, or add "
                          f"'def {schema.py_name}(...)' to a module of derivgen/ops/forwards/, export it from the "
                          "package's __init__ and list it in derivgen/ops/manifest.yaml")

    if not entry.formulas:
        if entry.jvp is not None:
            raise entry.error("a forward-mode formula ('result:') needs the row's backward formulas: the row "
                              "has none, so it records no node", entry.jvp_line)
        return model

    # ---- formulas
    parsed = []
    proof = _row_proof(entry, fwd, scope)
    for f in entry.formulas:
        if f.derived:
            x = sp.Symbol(f.names[0], real=True)
            if kind_or_float(fwd) == BOOL:
                raise entry.error("'derived' needs a forward with a numeric result: this one is a comparison "
                                  "(bool), which has no derivative; list the arguments under non_differentiable "
                                  "instead", f.line)
            expr = derive_vjp(fwd, x, GRAD)
            left = next((d for d in sp.preorder_traversal(expr) if isinstance(d, sp.Derivative)), None)
            if left is not None:
                raise entry.error(f"'derived': sympy cannot differentiate {sp.sstr(left.expr)} (it stays an "
                                  f"unevaluated derivative); write the formula for '{f.names[0]}'", f.line)
            expr = light_simplify(expr)
            model.formula_origins.append((tuple(f.names), "derived"))
        else:
            try:
                expr = parse_formula(f.text, scope)
            except FormulaError as exc:
                raise entry.error(f"in formula for '{', '.join(f.names)}': {exc}", f.line) from None
            if overloaded:
                expr = _bind_overloads(expr, overloaded, manifest.load().tensor_helpers, entry, f)
            proven = proof is not None and len(f.names) == 1
            model.formula_origins.append((tuple(f.names), "proven" if proven else "hand-written"))
        if proof is not None and len(f.names) == 1:
            proof.add(f.names[0], expr)
        parsed.append((f, expr))
    if proof is not None:
        _prove(entry, proof)
    graph_exprs = {}
    for i, (f, expr) in enumerate(parsed):
        if not _mentions_tensor(expr, scope):
            # a constant gradient (``grad * 0`` simplifies to 0): keep grad's shape and dtype
            parsed[i] = (f, sp.Function("full_like")(GRAD, expr))
        elif not f.derived:
            graph = _graph_expr(entry, f, scope, row_ops, overloaded)
            # (a helper argument its forward ignores would be a name the node never saved)
            if graph is not None and graph.free_symbols <= expr.free_symbols:
                graph_exprs[i] = graph

    model.diff_args = [a.name for a in entry.differentiable_args]
    used = set()
    for _, expr in parsed:
        used |= {s.name for s in expr.free_symbols}
    ret_names = [r.name for r in schema.returns]
    for a in schema.args:
        if a.name in used and a.is_tensor:
            users = [f.names for f, expr in parsed if a.name in {s.name for s in expr.free_symbols}]
            users = sorted({n for names in users for n in names}, key=model.diff_args.index)
            # (`t.grad_fn is not None or t._requires_grad` is Tensor.requires_grad without the property call)
            guard = " or ".join(f"({u} is not None and {u}.requires_grad)" if entry.schema.arg(u).is_optional
                                else f"{u}.grad_fn is not None or {u}._requires_grad" for u in users) \
                if len(model.diff_args) > 1 else ""
            model.saved_tensors.append(SavedTensor(a.name, False, guard))
        elif a.name in used and a.is_tensor_list and a.name not in model.diff_args:
            model.saved_values.append(SavedValue(a.name, a.name, True))  # e.g. index's indices: kept as given
        elif a.name in used and a.is_tensor_list:
            raise entry.error(f"formulas may use the Tensor[] argument '{a.name}' only through "
                              f"to_args_sizes({a.name}) / to_args_scalartypes({a.name})")
        elif a.name in used:
            model.saved_values.append(SavedValue(a.name, a.name))
    for r in ret_names:
        if r in used:
            if model.outputs_list:
                raise entry.error("formulas of list-returning ops cannot use their outputs")
            model.saved_tensors.append(SavedTensor(r, True))
    for m in sorted(scope.metadata):
        base, _, kind = _split_meta(m, entry)
        model.saved_values.append(SavedValue(m, _meta_code(base, kind, entry)))

    _lower_bodies(model, entry, parsed, low, scope, graph_exprs)
    model.fusion_vjps = _fusion_vjps(model, entry, parsed, scope)
    model.tape = build_tape(model)
    model.out_like_inputs = _out_like_inputs(model, entry)
    model.kernels.extend(k for k in low.kernels)
    missing = {op for op in low.needed_ops if op not in available}
    if missing:
        raise entry.error(f"the create_graph path of this row needs the op(s) {sorted(missing)}, which the "
                          "table lacks: add their rows")
    if (entry.inplace or entry.writes_into_self) and any(s.name == "self" and not s.is_output for s in model.saved_tensors):
        model.inplace_saves_original_self = True
    model.jvp = build_jvp(entry, fwd, scope, low)
    if model.jvp is not None and model.jvp.kernel is not None:
        model.kernels.append(model.jvp.kernel)
    return model


def _graph_expr(entry, f, scope, row_ops, overloaded):
    """The formula parsed again with its helper rows kept as calls, for the create_graph path; None when
    it calls none (then both paths lower the one parsed expression)."""
    called = {n for n in row_ops if re.search(rf"(?<![\w.]){n}\s*\(", f.text)}
    if not called:
        return None
    scope.row_calls = called
    try:
        expr = parse_formula(f.text, scope)
    finally:
        scope.row_calls = set()
    if overloaded:
        expr = _bind_overloads(expr, overloaded, manifest.load().tensor_helpers, entry, f)
    return expr


def _fusion_vjps(model, entry, parsed, scope):
    """One-element forms of the row's formulas, for whole-graph fusion (derivgen/engine/fusion.py).

    A node can be fused with its neighbours when its forward is an elementwise kernel and every
    differentiable input's formula is elementwise in ``grad``, the saved tensors and the row's numbers:
    no reductions, shape functions or metadata. Then its backward is, per element, one call of a
    scalar function per input. Returns [] for every other row."""
    schema = entry.schema
    fwd = model.forward_kernel
    if (fwd is None or fwd.returns_bool or len(schema.returns) != 1 or model.view
            or any(a.is_tensor_list or (a.is_tensor and a.is_optional) for a in schema.args)):
        return []
    numbers = {a.name for a in schema.args if a.is_number}
    tensors = {a.name for a in schema.args if a.is_tensor} | {"grad", schema.returns[0].name}
    by_name = {}
    for f, expr in parsed:
        if len(f.names) != 1 or schema.arg(f.names[0]) is None or not schema.arg(f.names[0]).is_tensor:
            return []
        if any(isinstance(a, sp.core.function.AppliedUndef) for a in sp.preorder_traversal(expr)):
            return []
        names = {s.name for s in expr.free_symbols}
        if not names <= tensors | numbers or "grad" not in names:
            return []
        by_name[f.names[0]] = expr
    if set(model.diff_args) != set(by_name):
        return []
    vjps = []
    for arg in model.diff_args:
        expr = by_name[arg]
        syms = sorted(expr.free_symbols, key=lambda s: (s.name != "grad", s.name))
        spec = KernelSpec(name=f"{schema.py_name}_vjp_{arg}", arrays=[s.name for s in syms if s.name in tensors],
                          scalars=[s.name for s in syms if s.name in numbers], expr=expr,
                          formula=f"{arg}: {_formula_text(entry, arg)}")
        spec.render()
        vjps.append((arg, spec))
    return vjps


def _formula_text(entry, arg):
    for f in entry.formulas:
        if arg in f.names:
            return "(derived)" if f.derived else f.text
    return ""


def _mentions_tensor(expr, scope):
    if any(s.name in scope.tensors or s.name in scope.lists for s in expr.free_symbols):
        return True
    return any(type(a).__name__ in scope.tensor_fns for a in sp.preorder_traversal(expr)
               if isinstance(a, sp.core.function.AppliedUndef))


def _has_forward_fn(py_name):
    return manifest.load().has_forward(py_name)


def _split_meta(name, entry):
    for kind in ("sym_sizes", "scalar_type", "sym_numel", "dim", "args_sizes", "args_scalartypes"):
        if name.endswith("_" + kind):
            return name[: -len(kind) - 1], None, kind
    raise entry.error(f"unknown metadata '{name}'")


def _meta_code(base, kind, entry):
    arg = entry.schema.arg(base)
    src = f"_value({base})" if arg is not None else None  # shape and dtype known without computing
    if arg is None:
        # metadata of an output: computed from the result array
        src = "_result_data"
    return {
        "sym_sizes": f"{src}.shape",
        "scalar_type": f"{src}.dtype",
        "sym_numel": f"{src}.size",
        "dim": f"{src}.ndim",
        "args_sizes": f"[t._array.shape for t in {base}]",
        "args_scalartypes": f"[t._array.dtype for t in {base}]",
    }[kind]


def _out_like_inputs(model, entry):
    """When a node's output metadata need not be recorded per node: an elementwise forward of float
    tensors gives a result of their broadcast shape in their dtype (numbers never lift a float dtype), so
    when every tensor argument is a differentiable input (all are in the node's input metadata) and they
    agree, the output's metadata is theirs."""
    spec = model.forward_kernel
    schema = entry.schema
    if spec is None or spec.returns_bool or len(schema.returns) != 1 or model.outputs_list or model.tuple_return:
        return ""
    if any(a.name == "dtype" or a.type.rstrip("?") == "ScalarType" for a in schema.args):
        return ""
    tensors = [a for a in schema.args if a.type.startswith("Tensor")]
    diff = {a.name for a in entry.differentiable_args}
    if any(not a.is_tensor or a.is_optional or a.name not in diff for a in tensors):
        return ""
    return "always" if len(tensors) == 1 else "when_equal"


def _forward_kernel(entry, fwd):
    tensors = [a.name for a in entry.schema.args if a.is_tensor]
    scalars = [a.name for a in entry.schema.args if a.is_number]
    used = {s.name for s in fwd.free_symbols}
    spec = KernelSpec(name=f"{entry.schema.py_name}_forward", arrays=[t for t in tensors],
                      scalars=[s for s in scalars], expr=fwd, formula=entry.forward,
                      returns_bool=is_boolean(fwd), int_closed=is_int_closed(fwd))
    problem = kernel_problem(fwd, set(tensors) | set(scalars))
    if problem:
        raise entry.error(f"in forward: cannot be compiled into an elementwise kernel: {problem}",
                          entry.forward_line)
    unused = [a for a in tensors + scalars if a not in used]
    if unused and any(a in tensors for a in unused):
        raise entry.error(f"forward expression does not use tensor argument(s) {unused}", entry.forward_line)
    spec.render()
    return spec


def _row_proof(entry, fwd, scope):
    """The proof of the row's formulas against its forward (rows with a forward and one output)."""
    if fwd is None or len(entry.schema.returns) != 1:
        return None
    args = entry.schema.args
    ints = [a.name for a in args if a.is_number and a.type.rstrip("?") in ("int", "SymInt")]
    tensors = [a.name for a in args if a.is_tensor]
    return RowProof(fwd, [a.name for a in args], tensors, ints, entry.schema.returns[0].name, scope.metadata)


def _prove(entry, proof):
    """Refuse the row if a hand-written formula disagrees with grad * d(forward)/d(arg) (prove.py)."""
    bad = proof.check()
    if bad:
        arg, msg = bad
        formula = next(f for f in entry.formulas if arg in f.names)
        raise entry.error(f"formula for '{arg}' disagrees with the derivative of its forward "
                          f"({entry.forward}): {msg}", formula.line)


def _returns_new_array(code):
    """``code`` is one call that always makes a new array: an elementwise kernel (``_k.<name>(...)``,
    ``_k.<name>.call2(...)``) or a forward the manifest lists under ``new_arrays`` (``_fw.mm(...)``)."""
    m = re.match(r"_(k|fw)\.(\w+)(\.call\d)?\(", code)
    if m is None or not code.endswith(")"):
        return False
    depth = 0
    for i in range(m.end() - 1, len(code)):  # the call's own parentheses must close at the very end
        depth += {"(": 1, ")": -1}.get(code[i], 0)
        if depth == 0:
            if i != len(code) - 1:
                return False
            break
    return m.group(1) == "k" or (m.group(3) is None and manifest.load().forward_returns_new_array(m.group(2)))


def _lower_bodies(model, entry, parsed, low, scope, graph_exprs=None):
    """Fill model.fast_body / model.graph_body with the statements of _apply_fast / _apply_graph."""
    returns = entry.schema.returns
    slots = model.diff_outputs
    multi = model.outputs_list or len(slots) > 1
    for path in ("fast", "graph"):
        head = []
        used = set()
        for _, expr in parsed:
            used |= {s.name for s in expr.free_symbols}
        if "grad_input_mask" in used:
            head.append("grad_input_mask = needs")
        if not multi:
            head += ["grad = grads[0]", "if grad is None:", "    return [None] * len(node._next_fns)"]
            if f"grad_{returns[slots[0]].name}" in used:
                head.append(f"grad_{returns[slots[0]].name} = grad")
        else:
            head += ["if all(g is None for g in grads):", "    return [None] * len(node._next_fns)"]
            if not model.outputs_list:
                for slot_index, ret_index in enumerate(slots):
                    zero = f"_zeros_like_output(node, {slot_index}, {path == 'graph'})"
                    if f"grads_{ret_index}" in used or f"grad_{returns[ret_index].name}" in used:
                        head.append(f"grads_{ret_index} = grads[{slot_index}] if grads[{slot_index}] is not None "
                                    f"else {zero}")
                    if f"grad_{returns[ret_index].name}" in used:
                        head.append(f"grad_{returns[ret_index].name} = grads_{ret_index}")
        unpack = "unpack_data" if path == "fast" else "unpack"
        for s in model.saved_tensors:
            if s.is_output and s.name == model.compact_output:
                n, code = s.name, f"node._svv_{s.name}"
                head.append(f"{n} = node._sv_{n}")
                if path == "fast":  # the common case inline: the array kept compactly, at its version 0
                    head.append(f"{n} = {n} if {n}.__class__ is np.ndarray and {code}[0] == 0 "
                                f"else _saved_data(node, {n}, {code})")
                else:
                    head.append(f"{n} = _unpack_saved(node, {n}, {code})")
            elif s.is_output:
                head.append(f"{s.name} = node._sv_{s.name}.{unpack}(node) if node._sv_{s.name} is not None else None")
            elif path == "fast":  # an input may be kept compactly (derivgen.core.node.saved_data)
                # the common case inline (a Tensor saved at the version it still has): two calls fewer
                head.append(f"{s.name} = node._sv_{s.name}")
                # (derivgen.core.node._compact_intact: a version code below zero is a non-leaf's)
                n, code = s.name, f"node._svv_{s.name}"
                head.append(f"{n} = {n}._array if isinstance({n}, _Tensor) and ({n}._vc[0] == {code} or ("
                            f"{n}._vc[0] == ~{code} and {n}.grad_fn is not None)) else _saved_data(node, {n}, {code})")
            else:
                head.append(f"{s.name} = _unpack_saved(node, node._sv_{s.name}, node._svv_{s.name})")
        for v in model.saved_values:
            head.append(f"{v.name} = _saved_list(node, node._v_{v.name})" if v.tensor_list
                        else f"{v.name} = node._v_{v.name}")

        def emit(expr, kernel_name):
            lines = []
            code = low.fast(expr, lines, kernel_name) if path == "fast" else low.graph(expr)
            plan = low.plan_of(code) if path == "fast" else None
            fresh = False
            if lines and lines[-1].startswith(f"{code} = "):
                code = lines.pop()[len(code) + 3:]  # `_t1 = k(...)` then `out = _t1` -> `out = k(...)`
                fresh = path == "fast" and _returns_new_array(code)
            elif path == "fast" and isinstance(expr, sp.Symbol) and not expr.name.startswith("grad"):
                code = f"{code}.copy()"  # the engine may write into gradients it is handed: never a saved array
            return lines, code, fresh, plan

        blocks, results = [], {a: "None" for a in model.diff_args}
        fresh_outputs = 0
        for i, (f, expr) in enumerate(parsed):
            if path == "graph":
                expr = (graph_exprs or {}).get(i, expr)
            kernel_name = f"{model.py_name}_backward_{'_'.join(f.names)}"
            lines, code, fresh, plan = emit(expr, kernel_name)
            if path == "fast" and len(f.names) == 1:
                model.tape_plans[f.names[0]] = plan
            if fresh and len(f.names) == 1 and not entry.schema.arg(f.names[0]).is_tensor_list:
                fresh_outputs |= 1 << model.diff_args.index(f.names[0])
            if entry.schema.arg(f.names[0]).is_tensor_list:
                # one Tensor[] input: one gradient per list element, in list order
                blocks += ["if not any(needs):", "    return [None] * len(node._next_fns)"]
                blocks += lines + [f"return list({code})"]
                break
            names = [f"grad_input_{n}" for n in f.names]
            for n, v in zip(f.names, names):
                results[n] = v
                head.append(f"{v} = None")
            cond = " or ".join(f"needs[{model.diff_args.index(n)}]" for n in f.names)
            blocks.append(f"if {cond}:")
            blocks += ["    " + ln for ln in lines]
            blocks.append(f"    {', '.join(names)} = {code}")
        else:
            blocks.append("return [" + ", ".join(results[a] for a in model.diff_args) + "]")
        if path == "fast":
            model.fast_body = head + blocks
            model.fresh_outputs = fresh_outputs
        else:
            model.graph_body = head + blocks
