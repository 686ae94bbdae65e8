"""Source of the per-row op functions in ``generated/ops.py`` (forward + node creation)."""
import textwrap

from . import manifest
from .literals import python_literal


def docstring_safe(text):
    """Table text placed inside a generated docstring: the table is untrusted, so backslashes and quotes
    are escaped and the text can never close the docstring (and become code)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _sig(args):
    parts, star = [], False
    for a in args:
        if a.kwonly and not star:
            parts.append("*")
            star = True
        parts.append(a.name + (f"={python_literal(a.default)}" if a.has_default else ""))
    return ", ".join(parts)


def _forward_call(row, out=None):
    e = row.entry
    if row.forward_kernel is not None:
        tensors = [a.name for a in e.schema.args if a.is_tensor]
        scalars = [a.name for a in e.schema.args if a.is_number]
        t = ", ".join(tensors) + ("," if len(tensors) == 1 else "")
        s = ", ".join(scalars) + ("," if len(scalars) == 1 else "")
        extra = f", out={out}" if out else ""
        if not out and len(tensors) <= 2:
            # the fixed-arity fast path (same as forward((...), (...))): the common small-op case is cheap
            sc = f", ({s})" if scalars else ""
            return f"_k.{row.forward_kernel.name}.forward{len(tensors)}({', '.join(tensors)}{sc})"
        return f"_k.{row.forward_kernel.name}.forward(({t}), ({s}){extra})"
    args = []
    # a forward that can reduce a deferred elementwise value itself (fusion) is given it undeferred
    pending_ok = manifest.load().forward_accepts_pending(e.schema.py_name)
    for a in e.schema.args:
        if a.is_tensor and pending_ok and not a.is_optional:
            v = f"_value({a.name})"
        elif a.is_tensor:
            v = f"{a.name}._array" if not a.is_optional else f"(None if {a.name} is None else {a.name}._array)"
        elif a.is_tensor_list and "?" in a.type:
            v = f"[None if t is None else t._array for t in {a.name}]"
        elif a.is_tensor_list:
            v = f"[t._array for t in {a.name}]"
        else:
            v = a.name
        args.append(f"{a.name}={v}" if a.kwonly else v)
    return f"{manifest.load().forward_code(e.schema.py_name)}({', '.join(args)})"


def _edges(row):
    e = row.entry
    diff = e.differentiable_args
    if len(diff) == 1 and diff[0].is_tensor_list:
        n = diff[0].name
        return f"tuple(_edge(t) for t in {n})", f"tuple(_meta(t) for t in {n})", f"*{n}"
    # an optional Tensor argument given as None is an undefined input: a (None, 0) edge, as in torch
    edges = "(" + "".join(f"_edge_opt({a.name}), " if a.is_optional else f"_edge({a.name}), " for a in diff) + ")"
    metas = "(" + "".join(f"_meta_opt({a.name}), " if a.is_optional else f"_meta({a.name}), " for a in diff) + ")"
    return edges, metas, ", ".join(a.name for a in diff)


def _needs_grad_test(row, needs):
    """The condition under which the op records a node: grad mode on and an input requiring grad. For
    one or two plain Tensor inputs it is spelled out (a call per op costs more than the test itself)."""
    diff = row.entry.differentiable_args
    # an op that can change the dtype (a `dtype` argument) records nothing when its result is not floating
    # point: as torch, an integer or bool output never has a grad_fn
    dtype_test = " and result.dtype.kind in 'fc'" if any(a.name == "dtype" for a in row.entry.schema.args) else ""
    if 1 <= len(diff) <= 2 and all(a.is_tensor and not a.is_optional for a in diff):
        inputs = " or ".join(f"{a.name}.grad_fn is not None or {a.name}._requires_grad" for a in diff)
        return f"_grad_mode._state.enabled and ({inputs}){dtype_test}"
    return f"_needs_grad({needs}){dtype_test}"


def _save_lines(row, inplace=False):
    lines = []
    for s in row.saved_tensors:
        if s.is_output:
            continue
        value = s.name
        if inplace and s.name == "self":
            value = "_original_self(self)"  # the original self, before it is overwritten
        stmt = f"grad_fn._sv_{s.name} = _Saved({value})"
        arg = row.entry.schema.arg(s.name)
        if arg is not None and arg.is_optional:
            stmt = f"grad_fn._sv_{s.name} = None if {s.name} is None else _Saved({value})"
        if s.guard:
            lines += [f"if {s.guard}:", "    " + stmt]
        else:
            lines.append(stmt)
    for v in row.saved_values:
        if "_result_data" in v.code:
            continue
        lines.append(f"grad_fn._v_{v.name} = {v.code}")
    return lines


def _output_save_lines(row, result_var):
    lines = []
    for s in row.saved_tensors:
        if s.is_output:
            lines.append(f"grad_fn._sv_{s.name} = _Saved({result_var}, is_output=True)")
    for v in row.saved_values:
        if "_result_data" in v.code:
            lines.append(f"grad_fn._v_{v.name} = {v.code.replace('_result_data', result_var + '._array')}")
    return lines


def _observe_lines(op_name, fn_name, args):
    """The prologue every op function starts with: one flag test when no one watches; when the profiler
    (or another observer) does, the call is made again through ``call_op``, which records it."""
    kwargs = ", ".join(f"{a.name!r}: {a.name}" for a in args)
    return [f"if _observe.ACTIVE and _observe.wanted({fn_name}):",
            f"    return _observe.call_op({op_name!r}, {fn_name}, {{{kwargs}}})"]


def _guarded(row, statement, suffix=""):
    """``statement`` (the forward call) inside the one translation point of numpy/Numba exceptions
    (derivgen.ops.errors): a try costs nothing when nothing is raised."""
    schema = row.entry.schema
    tensors = "".join(f"{a.name}, " for a in schema.args if a.type.rstrip("?").startswith("Tensor"))
    return ["try:", f"    {statement}", "except Exception as _exc:",
            f"    _translate(_exc, {schema.base + suffix!r}, ({tensors}))", "    raise"]


def render_wrapper(row):
    e = row.entry
    schema = e.schema
    name = schema.row_name
    body = _observe_lines(f"{manifest.load().namespace}::{schema.base}", name, schema.args)
    view_args = ", self._vc" if row.view else ""
    body += _guarded(row, f"result = {_forward_call(row)}")
    if row.outputs_list:
        make = f"_Tensor._make(r, grad_fn, i{view_args})"
        plain = f"tuple(_Tensor._make(r, None, 0{view_args}) for r in result)"
    elif row.tuple_return:
        plain = None
    else:
        plain = f"_Tensor._make(result, None, 0{view_args})"
    if row.class_name:
        edges, metas, needs = _edges(row)
        body.append(f"if {_needs_grad_test(row, needs)}:")
        inner = []
        n_inputs = "len(result)" if row.outputs_list else str(len(row.diff_outputs))
        inner.append(f"grad_fn = {row.class_name}({edges}, {metas}, {n_inputs})")
        inner += _save_lines(row)
        if row.outputs_list:
            inner.append(f"outputs = tuple({make} for i, r in enumerate(result))")
            if row.view:
                inner.append(f"_record_multi_output_views(outputs, self, {row.class_name!r})")
            inner.append("return outputs")
        elif row.tuple_return:
            inner.append("grad_fn._out_meta = [(r.shape, r.dtype) for r in result]")
            outs = []
            for i, r in enumerate(schema.returns):
                if i in row.diff_outputs:
                    outs.append(f"_Tensor._make(result[{i}], grad_fn, {row.diff_outputs.index(i)})")
                else:
                    outs.append(f"_Tensor._make(result[{i}])")
            inner.append(f"outputs = {_return_type(row)}({', '.join(outs)})")
            for i, r in enumerate(schema.returns):
                lines = [ln for ln in _output_save_lines(row, r.name) if f"_sv_{r.name} " in ln or f"_v_{r.name}" in ln
                         or f"{r.name}._array" in ln]
                lines = [ln.replace(f"{r.name}._array", f"outputs[{i}]._array") for ln in lines]
                if i in row.diff_outputs:
                    inner += [ln.replace(f"_Saved({r.name},", f"_Saved(outputs[{i}],") for ln in lines]
                else:  # not an output of the node (no grad_fn): saved like an input
                    inner += [ln.replace(f"_Saved({r.name}, is_output=True)", f"_Saved(outputs[{i}])")
                              for ln in lines]
            inner.append("return outputs")
        else:
            inner.append(f"result = _Tensor._make(result, grad_fn, 0{view_args})")
            if row.view:
                inner.append("result._base = self")
                inner.append(_record_view_line(row))
            inner += _output_save_lines(row, "result")
            inner.append("return result")
        body += ["    " + ln for ln in inner]
    if row.tuple_return:
        body.append(f"return {_return_type(row)}(*(_Tensor._make(r) for r in result))")
    else:
        if row.view and not row.outputs_list:
            body.append(f"result = {plain}")
            body.append("result._base = self")
            body.append(_record_view_line(row))
            body.append("return result")
        elif row.view and row.class_name:
            body.append(f"outputs = {plain}")
            body.append(f"_record_multi_output_views(outputs, self, {row.class_name!r})")
            body.append("return outputs")
        else:
            body.append(f"return {plain}")
    text = f"def {name}({_sig(schema.args)}):\n"
    text += f'    """{docstring_safe(schema.text)}"""\n'
    text += textwrap.indent("\n".join(body), "    ")
    if row.tuple_return:
        names = [r.name for r in schema.returns]
        text = (f"{_return_type(row)} = collections.namedtuple(\"{schema.base}\", {names!r})\n\n\n" + text)
    return text


def _record_view_line(row):
    """A view remembers how to replay itself from its base (an in-place op on it rewrites the base's
    history with CopySlices, and the view's grad_fn is regenerated by replaying the view op)."""
    schema = row.entry.schema
    args = [a for a in schema.args if a.name != "self"]
    pos = "".join(f"{a.name}, " for a in args if not a.kwonly)
    kw = ", ".join(f"{a.name!r}: {a.name}" for a in args if a.kwonly)
    return f"_record_view(result, self, {schema.row_name}, ({pos}), {{{kw}}})"


def _return_type(row):
    return f"_{row.entry.schema.row_name}_return"


def render_inplace_wrapper(row):
    """``<op>_``: the row's forward written into ``self``, history rewritten to the row's node."""
    e = row.entry
    schema = e.schema
    name = f"{schema.base}__{schema.overload or 'default'}"
    body = _observe_lines(f"{manifest.load().namespace}::{schema.base}_", name, schema.args) + ["_check_inplace(self)"]
    if row.class_name:
        edges, metas, needs = _edges(row)
        body.append("grad_fn = None")
        body.append(f"if _needs_grad({needs}):")
        inner = [f"grad_fn = {row.class_name}({edges}, {metas}, 1)"]
        inner += _save_lines(row, inplace=True)
        body += ["    " + ln for ln in inner]
    if row.forward_kernel is not None:
        body += _guarded(row, _forward_call(row, out="self._array"), "_")
    else:  # a hand-written forward computes out of place; its result is written into self
        body += _guarded(row, f"_write_inplace(self, {_forward_call(row)})", "_")
    body.append("self._vc[0] += 1")
    if row.class_name:
        body.append("if grad_fn is not None:")
        inner = ["_set_inplace_history(self, grad_fn)  # rebase_history, or CopySlices on a view's base"]
        inner += _output_save_lines(row, "self")
        body += ["    " + ln for ln in inner]
    body.append("return self")
    text = f"def {name}({_sig(schema.args)}):\n"
    text += f'    """In-place {schema.text.split("(")[0]}: writes the result into self (version bumped)."""\n'
    text += textwrap.indent("\n".join(body), "    ")
    return name, text
