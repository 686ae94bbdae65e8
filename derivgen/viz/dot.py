"""``make_dot``: torchviz's picture of an autograd graph, drawn from derivgen's graph.

Same signature, node shapes, colours and labels as torchviz: grey boxes for backward nodes, light blue
for leaves (named from ``params``, with their shape), dark olive green for the outputs drawn, orange for
saved tensors (``show_saved``), saved values listed under the node name (``show_attrs``).

derivgen's additions, on by default because they only add text (``annotate=False`` draws exactly what
torchviz draws): each node's sequence number under its name and, as an SVG tooltip, its table row and
``formulas.yaml:LINE``; each edge labelled with its slot (the input number of the node it enters);
saved tensors with dtype and whether backward released them. With ``execution=`` (an
``ExecutionRecord`` from ``record_execution()``) each node that ran is numbered by when it ran, and
regions the engine fused into one kernel are outlined."""
import numpy as np
from graphviz import Digraph

from derivgen.core.node import RELEASED, UINT64_MAX, SavedVariable
from derivgen.core.tensor import Tensor

SAVED_PREFIX = "_saved_"
NODE_ATTR = dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1", height="0.2",
                 fontname="monospace")


def size_to_str(size):
    return "(" + ", ".join("%d" % v for v in size) + ")"


def _saved_names(fn):
    """The ``_saved_<name>`` attributes of a node (properties of its class; not ``_saved_tensor_slots``)."""
    names = []
    for klass in type(fn).__mro__:
        for attr, value in vars(klass).items():
            if attr.startswith(SAVED_PREFIX) and isinstance(value, property) and attr not in names:
                names.append(attr)
    return sorted(names)


def _saved_state(fn, attr):
    """(kind, value) for one saved attribute without unpacking it (unpacking checks versions and fails
    after release): kind is "tensor" (value: (shape, dtype name, released)), "tensors" (a list of
    those) or "value" (a plain saved value)."""
    slot = "_sv_" + attr[len(SAVED_PREFIX):]
    if slot in getattr(type(fn), "_saved_tensor_slots", ()):
        sv = getattr(fn, slot, None)
        if sv is None:
            return None
        if isinstance(sv, list):
            return "tensors", [_saved_meta(s) for s in sv]
        return "tensor", _saved_meta(sv)
    try:
        value = getattr(fn, attr)
    except RuntimeError as exc:  # released
        return "value", f"[{exc.__class__.__name__}: released]"
    if isinstance(value, Tensor):
        return "tensor", (tuple(value.shape), str(value.dtype).replace("derivgen.", ""), False)
    if isinstance(value, tuple) and any(isinstance(t, Tensor) for t in value):
        return "tensors", [(tuple(t.shape), str(t.dtype).replace("derivgen.", ""), False) if isinstance(t, Tensor)
                           else None for t in value]
    return "value", value


def _saved_meta(sv):
    if isinstance(sv, Tensor):  # an input a generated node keeps compactly, without a SavedVariable
        return tuple(sv._array.shape), str(sv._array.dtype), False
    if isinstance(sv, np.ndarray):  # an output kept compactly
        return tuple(sv.shape), str(sv.dtype), False
    if sv is RELEASED or not isinstance(sv, SavedVariable) or sv.released:
        return None, None, True
    data = sv.tensor._array if sv.tensor is not None else sv._array
    if data is None:  # packed by a saved_tensors_hooks pack hook: only the hook knows
        return None, None, False
    return tuple(data.shape), str(data.dtype), False


def get_fn_name(fn, show_attrs, max_attr_chars):
    """torchviz's node label: the class name, then (``show_attrs``) a table of saved attributes."""
    name = str(type(fn).__name__)
    if not show_attrs:
        return name
    attrs = {}
    for attr in _saved_names(fn):
        state = _saved_state(fn, attr)
        if state is None:
            continue
        kind, value = state
        key = attr[len(SAVED_PREFIX):]
        attrs[key] = {"tensor": "[saved tensor]", "tensors": "[saved tensors]"}.get(kind, None) or str(value)
    if not attrs:
        return name
    max_attr_chars = max(max_attr_chars, 3)
    col1width = max(len(k) for k in attrs)
    col2width = min(max(len(str(v)) for v in attrs.values()), max_attr_chars)
    sep = "-" * max(col1width + col2width + 2, len(name))
    attrstr = "%-" + str(col1width) + "s: %" + str(col2width) + "s"

    def truncate(s):
        return s[:col2width - 3] + "..." if len(s) > col2width else s
    params = "\n".join(attrstr % (k, truncate(str(v))) for k, v in attrs.items())
    return name + "\n" + sep + "\n" + params


def _escape(text):
    return text.replace("\\", "\\\\")


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50, *, annotate=True,
             execution=None):
    """The graph that produced ``var`` (a Tensor or a tuple of Tensors) as a ``graphviz.Digraph``.

    ``params``: a dict name -> Tensor naming the leaves (``dict(model.named_parameters())``)."""
    if params is not None:
        if not all(isinstance(p, Tensor) for p in params.values()):
            raise TypeError("make_dot: every value of params must be a Tensor")
        param_map = {id(v): k for k, v in params.items()}
    else:
        param_map = {}

    dot = Digraph(node_attr=dict(NODE_ATTR), graph_attr=dict(size="12,12"),
                  edge_attr=dict(fontsize="9", fontname="monospace") if annotate else None)
    seen = set()

    def get_var_name(v, name=None, extra=""):
        if not name:
            name = param_map.get(id(v), "")
        return "%s\n %s%s" % (name, size_to_str(v.size()), extra)

    def fn_label(fn):
        label = get_fn_name(fn, show_attrs, max_attr_chars)
        if annotate:
            seq = fn._sequence_nr()
            if seq != UINT64_MAX:
                label += f"\nseq {seq}"
        if execution is not None:
            pos = execution.position(fn)
            if pos is not None:
                label += f"\nran {pos}"
        return label

    def fn_attrs(fn):
        if not annotate:
            return {}
        row = fn.formula() if hasattr(fn, "formula") else None
        if row is None:
            return {"tooltip": _escape(fn.name())}
        return {"tooltip": _escape(f"{row.text}\n({row.location})")}

    def add_saved(fn):
        for attr in _saved_names(fn):
            state = _saved_state(fn, attr)
            if state is None or state[0] == "value":
                continue
            kind, value = state
            key = attr[len(SAVED_PREFIX):]
            metas = [value] if kind == "tensor" else list(value)
            for i, meta in enumerate(metas):
                if meta is None:
                    continue
                shape, dtype, released = meta
                node_id = f"{id(fn)}{attr}" + (f"[{i}]" if kind == "tensors" else "")
                name = key if kind == "tensor" else f"{key}[{i}]"
                if released:
                    label = f"{name}\n (released)"
                elif shape is None:
                    label = f"{name}\n (packed by a hook)"
                else:
                    label = f"{name}\n {size_to_str(shape)}" + (f"\n {dtype}" if annotate else "")
                dot.edge(str(id(fn)), node_id, dir="none")
                dot.node(node_id, label, fillcolor="orange")
        saved = None
        if hasattr(type(fn), "saved_tensors"):
            try:
                saved = fn.saved_tensors
            except RuntimeError:
                saved = None
        for t in saved or ():
            if isinstance(t, Tensor):
                dot.edge(str(id(t)), str(id(fn)), dir="none")
                dot.node(str(id(t)), get_var_name(t), fillcolor="orange")

    def add_nodes(fn):
        stack = [fn]
        while stack:
            fn = stack.pop()
            if fn in seen:
                continue
            seen.add(fn)
            if show_saved:
                add_saved(fn)
            variable = getattr(fn, "variable", None)
            if isinstance(variable, Tensor):  # an accumulator: the leaf it writes into
                seen.add(id(variable))
                dot.node(str(id(variable)), get_var_name(variable), fillcolor="lightblue")
                dot.edge(str(id(variable)), str(id(fn)))
            dot.node(str(id(fn)), fn_label(fn), **fn_attrs(fn))
            for nxt, nr in reversed(fn.next_functions):
                if nxt is not None:
                    stack.append(nxt)
            for nxt, nr in fn.next_functions:
                if nxt is not None:
                    dot.edge(str(id(nxt)), str(id(fn)), **({"label": f" {nr}"} if annotate else {}))

    def add_base_tensor(v, color="darkolivegreen1"):
        if id(v) in seen:
            return
        seen.add(id(v))
        dot.node(str(id(v)), get_var_name(v), fillcolor=color)
        if v.grad_fn is not None:
            add_nodes(v.grad_fn)
            dot.edge(str(id(v.grad_fn)), str(id(v)))
        base = getattr(v, "_base", None)
        if base is not None:
            add_base_tensor(base, color="darkolivegreen3")
            dot.edge(str(id(base)), str(id(v)), style="dotted")

    if isinstance(var, (tuple, list)):
        for v in var:
            add_base_tensor(v)
    else:
        add_base_tensor(var)

    if execution is not None:
        drawn = {n for n in seen if not isinstance(n, int)}
        by_id = {id(n): n for n in drawn}
        for k, region in enumerate(execution.regions):
            members = [i for i in region if i in by_id and execution.position(by_id[i]) is not None]
            if len(members) < 2:
                continue
            with dot.subgraph(name=f"cluster_fused_{k}") as sub:
                sub.attr(label=f"fused kernel {k + 1}", style="dashed", color="purple", fontsize="10")
                for i in members:
                    sub.node(str(i))

    resize_graph(dot)
    return dot


def resize_graph(dot, size_per_element=0.15, min_size=12):
    """torchviz's sizing: the drawing grows with the number of DOT statements."""
    num_rows = len(dot.body)
    content_size = num_rows * size_per_element
    size = max(min_size, content_size)
    dot.graph_attr.update(size=f"{size},{size}")
