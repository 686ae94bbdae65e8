"""Load ``formulas.yaml`` into validated ``Entry`` objects, with a file/line/entry for every error."""
import os
import re
from dataclasses import dataclass, field

import yaml

from .errors import TableError
from .text import compose_table, decode_table, entry_at
from .schema import SchemaError, node_prefix, parse_schema

ENTRY_KEYS = {"name", "forward", "inplace", "output_differentiability", "doc", "node_class", "variants"}

# Where an op is public, as native_functions.yaml's ``variants:``: ``function`` (derivgen.<op>), ``method``
# (Tensor.<op>) and, for an ``inplace: true`` row, ``inplace_function`` (derivgen.<op>_, as torch.exp_).
VARIANTS = ("function", "method", "inplace_function")


@dataclass
class Formula:
    names: tuple          # the argument names this formula's key covers (``self, other`` -> two)
    text: str             # the formula, or "derived" to let sympy derive it from ``forward``
    line: int

    @property
    def derived(self):
        return self.text.strip() == "derived"


@dataclass
class Entry:
    schema: object
    file: str
    line: int
    forward: str = None
    forward_line: int = None
    formulas: list = field(default_factory=list)
    non_differentiable: list = field(default_factory=list)
    output_differentiability: list = None
    inplace: bool = False
    doc: str = ""
    jvp: str = None                  # the forward-mode formula (torch's `result:` key), or None
    jvp_line: int = None
    jvp_outputs: dict = field(default_factory=dict)  # several outputs: {output name: (formula, line)}
    source: str = ""                 # the row's text, as written in the table
    class_name: str = None           # *Backward<N>, or None when nothing is differentiable
    node_class: str = None           # a node torch names by hand (CopyBackwards), instead of the counter
    variants: tuple = None           # ``variants:`` (a subset of VARIANTS), or None: function and method

    @property
    def name(self):
        return self.schema.full_name

    @property
    def writes_into_self(self):
        """A row named like torch's in-place op (``elu_``) with a ``forward:`` expression: its kernel
        writes into ``self`` and its node is its own (torch's ``EluBackward1``, whose formula reads the
        result), where ``inplace: true`` gives a row's in-place form the out-of-place row's node."""
        return self.forward is not None and self.schema.base.endswith("_")

    @property
    def differentiable_args(self):
        """Arguments with a formula, in schema order: this fixes the edge order (next_functions)."""
        covered = {n for f in self.formulas for n in f.names}
        return [a for a in self.schema.args if a.name in covered]

    @property
    def differentiable_outputs(self):
        """Indices of the returns that get a grad_fn."""
        rets = self.schema.returns
        if self.output_differentiability is not None:
            return [i for i, flag in enumerate(self.output_differentiability) if flag]
        if not self.formulas:
            return []
        uses_plain_grad = any(_mentions(f.text, "grad") for f in self.formulas)
        if uses_plain_grad and not any(r.is_tensor_list for r in rets):
            return [0]
        return list(range(len(rets)))

    def error(self, message, line=None):
        return TableError(message, self.file, line or self.line, self.name)


def _mentions(text, name):
    import re
    return re.search(rf"(^|\W){name}($|\W)", text) is not None


def _line(node):
    return node.start_mark.line + 1


def _scalar(node, file, entry=None):
    if not isinstance(node, yaml.ScalarNode):
        raise TableError("expected a plain value here", file, _line(node), entry)
    return node.value


def load_table(path):
    """Parse and validate the table at ``path``; raise TableError naming file, line and entry."""
    file = os.path.basename(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise TableError(f"cannot read table: {exc}", file) from None
    return load_table_text(decode_table(data, file), file)


def load_table_text(text, file="formulas.yaml"):
    lines = text.splitlines()
    root = compose_table(text, file)
    if root is None or (isinstance(root, yaml.SequenceNode) and not root.value):
        raise TableError("the table has no entries (a table needs at least one '- name: ...' row)", file,
                         _line(root) if root is not None else 1)
    if not isinstance(root, yaml.SequenceNode):
        raise TableError("the table must be a list of entries ('- name: ...')", file, _line(root))
    entries, seen = [], {}
    for item in root.value:
        try:
            entries.append(_load_entry(item, file, lines, seen))
        except TableError as exc:
            if exc.entry is None and exc.line:
                raise TableError(exc.reason, exc.file, exc.line, entry_at(lines, exc.line)) from None
            raise
    _assign_class_names(entries)
    return entries


def _load_entry(item, file, lines, seen):
    if not isinstance(item, yaml.MappingNode):
        raise TableError("each entry must be a mapping starting with 'name:'", file, _line(item))
    keys = {}
    for k, v in item.value:
        key = _scalar(k, file)
        if key in keys:
            raise TableError(f"key '{key}' appears twice", file, _line(k))
        keys[key] = (k, v)
    if "name" not in keys:
        raise TableError("entry has no 'name:'", file, _line(item))
    name_node = keys["name"][1]
    try:
        schema = parse_schema(_scalar(name_node, file))
    except SchemaError as exc:
        raise TableError(str(exc), file, _line(name_node), _scalar(name_node, file).split("(")[0]) from None
    entry = Entry(schema=schema, file=file, line=_line(name_node))
    entry.source = "\n".join(lines[item.start_mark.line:item.end_mark.line]).rstrip()
    if schema.full_name in seen:
        raise entry.error(f"duplicate entry (first defined at line {seen[schema.full_name]})")
    seen[schema.full_name] = entry.line
    arg_names = {a.name for a in schema.args}
    for key, (knode, vnode) in keys.items():
        kline = _line(knode)
        if key == "name":
            continue
        if key == "forward":
            entry.forward, entry.forward_line = _scalar(vnode, file, entry.name), _line(vnode)
        elif key == "inplace":
            value = _scalar(vnode, file, entry.name)
            if value not in ("true", "false", "True", "False"):
                raise entry.error(f"inplace takes true or false, not '{value}'", kline)
            entry.inplace = value.lower() == "true"
        elif key == "doc":
            entry.doc = _scalar(vnode, file, entry.name)
        elif key == "variants":
            entry.variants = _variants(vnode, entry, kline)
        elif key == "node_class":
            value = _scalar(vnode, file, entry.name)
            # torch names a few nodes by hand: CopyBackwards, and the *_copy ops' DiagonalBackward0_copy
            if not re.fullmatch(r"[A-Z][A-Za-z0-9]*Backwards?[0-9]*(_copy)?", value):
                raise entry.error(f"node_class takes a class name like CopyBackwards, not '{value}'", kline)
            entry.node_class = value
        elif key in schema.return_names and len(schema.returns) > 1:
            entry.jvp_outputs[key] = (_scalar(vnode, file, entry.name), kline)
        elif key in schema.return_names and len(schema.returns) == 1:
            # torch's forward-mode formula: the tangent of the output (``self_t``, ``self_p``, ``result``,
            # or auto_element_wise / auto_linear)
            entry.jvp, entry.jvp_line = _scalar(vnode, file, entry.name), kline
        elif key == "output_differentiability":
            if not isinstance(vnode, yaml.SequenceNode):
                raise entry.error("output_differentiability must be a list like [True, False]", kline)
            flags = [_scalar(v, file, entry.name) for v in vnode.value]
            if any(f not in ("True", "False", "true", "false") for f in flags):
                raise entry.error("output_differentiability takes True/False values", kline)
            if len(flags) != len(schema.returns):
                raise entry.error(f"The length of output_differentiability ({len(flags)}), does not match the "
                                  f"number of outputs ({len(schema.returns)}).", kline)
            entry.output_differentiability = [f.lower() == "true" for f in flags]
        else:
            names = tuple(n.strip() for n in key.split(","))
            value = _scalar(vnode, file, entry.name)
            for n in names:
                if n not in arg_names:
                    if n in schema.return_names or n.startswith("result"):
                        raise entry.error(f"'{n}' is an output: forward-mode formulas ('{n}:') are not supported; "
                                          "give elementwise forwards as 'forward:'", kline)
                    known = ", ".join(sorted(arg_names)) or "none"
                    raise entry.error(f"formula for '{n}', which is not an argument of the schema "
                                      f"(arguments: {known})", kline)
            if value.strip().lower() == "non_differentiable":
                entry.non_differentiable.extend(names)
                continue
            for n in names:
                arg = schema.arg(n)
                if not (arg.is_tensor or arg.is_tensor_list):
                    raise entry.error(f"'{n}' has type {arg.type}: only Tensor arguments can have a formula", kline)
            if len(names) > 1 and value.strip() == "derived":
                raise entry.error("'derived' needs one argument per key", kline)
            entry.formulas.append(_make_formula(names, value, kline))
    if entry.variants and "inplace_function" in entry.variants and not entry.inplace:
        raise entry.error("variants: inplace_function needs 'inplace: true' (it names the in-place form)",
                          _line(keys["variants"][0]))
    overlap = {n for f in entry.formulas for n in f.names} & set(entry.non_differentiable)
    if overlap:
        raise entry.error(f"{sorted(overlap)} have overlapped non_differentiable and differentiable variables")
    if any(f.derived for f in entry.formulas) and entry.forward is None:
        raise entry.error("'derived' formulas need an elementwise 'forward:' expression to derive from")
    _check_grad_usage(entry)
    return entry


def _variants(node, entry, line):
    """``variants: [function, method]``: a list of VARIANTS without repeats (``[]``: neither; the op is
    then reached through derivgen.nn.functional or the op registry only)."""
    if not isinstance(node, yaml.SequenceNode):
        raise entry.error("variants must be a list like [function, method]", line)
    values = [_scalar(v, entry.file, entry.name) for v in node.value]
    for v in values:
        if v not in VARIANTS:
            raise entry.error(f"variants takes {', '.join(VARIANTS)}, not '{v}'", line)
    if len(set(values)) != len(values):
        raise entry.error("variants lists a value twice", line)
    return tuple(values)


def _make_formula(names, value, line):
    return Formula(names=names, text=value, line=line)


def _check_grad_usage(entry):
    import re
    n_out = len(entry.schema.returns)
    multi = len(entry.differentiable_outputs) > 1
    for f in entry.formulas:
        uses_grad = _mentions(f.text, "grad")
        uses_grads = "grads" in re.findall(r"\b(grads)\b", f.text)
        if uses_grad and uses_grads:
            raise entry.error("Derivative definition illegally mixes use of 'grad' and 'grads'. Consider replacing "
                              "occurrences of 'grad' with 'grads[0]'", f.line)
        for m in re.finditer(r"\bgrads\[(\d+)\]", f.text):
            i = int(m.group(1))
            if i >= n_out:
                raise entry.error(f"Out of bounds grads access: derivative formula used grads[{m.group(1)}], but "
                                  f"the forward only returns {n_out} outputs.", f.line)
            flags = entry.output_differentiability
            if flags is not None and not flags[i]:
                raise entry.error(f"formula uses grads[{i}], but output {i} ('{entry.schema.returns[i].name}') is "
                                  "marked non-differentiable in output_differentiability", f.line)
        flags = entry.output_differentiability or []
        for i, (r, flag) in enumerate(zip(entry.schema.returns, flags)):
            if not flag and _mentions(f.text, f"grad_{r.name}"):
                raise entry.error(f"formula uses grad_{r.name}, but output {i} ('{r.name}') is marked "
                                  "non-differentiable in output_differentiability", f.line)
        if uses_grad and any(r.is_tensor_list for r in entry.schema.returns):
            raise entry.error("this op returns a list of tensors (Tensor[]): its formulas must use grads (one "
                              "gradient per output), not grad", f.line)
        if multi and uses_grad and entry.output_differentiability is not None:
            raise entry.error("this op has several differentiable outputs: its formulas must use grads[i] "
                              "(or grads for a list), not grad", f.line)


def _assign_class_names(entries):
    """PyTorch's counter: per class-name prefix, in table order, only rows with a differentiable input."""
    counters = {}
    for e in entries:
        if not e.formulas:
            continue
        if e.node_class is not None:  # named by hand in torch: not counted with the generated names
            e.class_name = e.node_class
            continue
        prefix = node_prefix(e.schema.base.rstrip("_") if e.schema.base.endswith("_") else e.schema.base)
        n = counters.get(prefix, 0)
        e.class_name = f"{prefix}{n}"
        counters[prefix] = n + 1
