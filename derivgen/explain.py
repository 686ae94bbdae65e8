"""``derivgen explain MulBackward0``: a node class's table row, how each formula was obtained (derived by
sympy, proven against the forward, or hand-written), and the kernel source generated for it.

Generator side: reads the node class's module (``generated/nodes/<row>.py``, or a user library's
``nodes.py``) as a syntax tree (the row is stored there as a literal, read with ``ast.literal_eval``) and
the kernel file as text; nothing of the runtime is imported."""
import ast
import os

ORIGIN_TEXT = {
    "derived": "derived: sympy wrote it from the forward expression",
    "proven": "proven: checked against sympy's derivative of the forward at random points",
    "hand-written": "hand-written: not elementwise, so not proven symbolically "
                    "(gradient-checked by the table-wide test)",
}


class ExplainError(LookupError):
    pass


def _parse(path):
    with open(path, encoding="utf-8") as fh:
        return ast.parse(fh.read(), filename=path)


def _module_index(init_path):
    """``_MODULE_OF`` of ``nodes/__init__.py``: node class -> its module's name."""
    for stmt in _parse(init_path).body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == "_MODULE_OF"):
            return ast.literal_eval(stmt.value)
    raise ExplainError(f"{init_path} has no _MODULE_OF (regenerate with `derivgen generate`)")


def _node_class(class_name, generated_dir):
    """(the class's syntax tree or None, the names of every node class, where they were looked for)."""
    where = os.path.join(generated_dir, "nodes")
    if os.path.isdir(where):
        index = _module_index(os.path.join(where, "__init__.py"))
        module = index.get(class_name)
        if module is None:
            return None, list(index), where
        tree = _parse(os.path.join(where, module + ".py"))
    else:
        where = os.path.join(generated_dir, "nodes.py")  # a user library's nodes: one module
        tree = _parse(where)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    return classes.get(class_name), list(classes), where


def _formula_row(cls):
    for stmt in cls.body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == "_formula_row" and isinstance(stmt.value, ast.Call)):
            return [ast.literal_eval(a) for a in stmt.value.args]
    raise ExplainError(f"{cls.name} has no _formula_row (regenerate with `derivgen generate`)")


def _kernel_module(cls):
    """The kernel module a class calls (``_k.<row>_...``): its row's function name."""
    names = {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute)
             and isinstance(n.value, ast.Name) and n.value.id == "_k"}
    return names


def explain(class_name, generated_dir):
    cls, classes, nodes_path = _node_class(class_name, generated_dir)
    if cls is None:
        close = sorted(n for n in classes if n.lower().startswith(class_name.lower()[:3]))[:8]
        hint = f"; similar: {', '.join(close)}" if close else ""
        raise ExplainError(f"no node class {class_name!r} in {nodes_path}{hint}")
    file, line, text, origins = _formula_row(cls)
    out = [f"{class_name}: {file}:{line}", "", text, "", "formulas:"]
    for names, origin in origins:
        out.append(f"  {', '.join(names)}: {ORIGIN_TEXT.get(origin, origin)}")
    kernels_dir = os.path.join(generated_dir, "kernels")
    used = _kernel_module(cls)
    files = sorted(f for f in os.listdir(kernels_dir) if f.endswith(".py") and f != "__init__.py"
                   and any(u.startswith(f[:-3] + "_") for u in used))
    if not files:
        out += ["", "kernels: none (every formula of this row calls non-elementwise ops or helpers)"]
    for f in files:
        with open(os.path.join(kernels_dir, f), encoding="utf-8") as fh:
            out += ["", f"kernels: {os.path.join('generated', 'kernels', f)}", "", fh.read().rstrip()]
    return "\n".join(out) + "\n"
