"""``codegen/identifiers.py`` lists every name the generated modules use for themselves: checked against
the modules rendered from the shipped table, so a template that starts using a new name fails here
until the name is listed (and so refused as a row's name)."""
import ast
import builtins
import os

import pytest

from derivgen.codegen import identifiers
from derivgen.codegen.names import _module_names
from derivgen.codegen.render import render_all
from derivgen.table import load_table
from tests.support.paths import REPO

TABLE = os.path.join(REPO, "formulas.yaml")
BUILTINS = set(dir(builtins))


@pytest.fixture(scope="module")
def rendered():
    return render_all(TABLE), load_table(TABLE)


def _module_level_bound(tree):
    bound = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Assign):
            bound |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
    return bound


def _builtins_read(tree, module_bound):
    """Builtins a module reads at module level or in functions where no local of that name exists."""
    found = set()
    top = ast.Module([n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.ClassDef))], [])
    for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)] + [top]:
        local = set()
        if isinstance(fn, ast.FunctionDef):
            local = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
            local |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in BUILTINS \
                    and n.id not in local and n.id not in module_bound:
                found.add(n.id)
    return found


def test_module_level_names_are_listed_or_come_from_rows(rendered):
    files, entries = rendered
    from_rows = {name for e in entries for name, _ in _module_names(e)}
    from_rows |= {e.schema.py_name for e in entries}
    node_modules = sorted(rel for rel in files if rel.startswith("nodes/"))
    for rel in ("ops.py", "kernels/__init__.py", "__init__.py", "kernels/mul_Tensor.py", *node_modules):
        bound = _module_level_bound(ast.parse(files[rel]))
        unexplained = {n for n in bound - identifiers.MODULE_NAMES - from_rows
                       if not any(n.startswith(e.schema.py_name) for e in entries)}
        assert not unexplained, f"{rel} binds names neither listed in identifiers.py nor made from a row: {unexplained}"


def test_builtins_the_generated_code_reads_are_listed(rendered):
    files, _ = rendered
    ops = ast.parse(files["ops.py"])
    assert _builtins_read(ops, _module_level_bound(ops)) <= identifiers.MODULE_BUILTINS
    for rel, text in files.items():
        if rel.startswith("nodes/"):
            nodes = ast.parse(text)
            assert _builtins_read(nodes, _module_level_bound(nodes)) <= identifiers.FUNCTION_BUILTINS, rel
    # kernels call abs/max/min too; a parameter of that name is renamed there (test_kernel_parameter_...)
    kernel_builtins = set()
    for rel, text in files.items():
        if rel.startswith("kernels/"):
            tree = ast.parse(text)
            kernel_builtins |= _builtins_read(tree, _module_level_bound(tree))
    assert kernel_builtins <= identifiers.FUNCTION_BUILTINS | {"abs", "max", "min"}


@pytest.mark.parametrize("name, module_level, reason", [
    ("class", False, "is a Python keyword"),
    ("__init__", True, "is a '__dunder__' name (reserved by Python)"),
    ("len", True, "shadows the builtin of that name, which the generated code uses"),
    ("all", False, "shadows the builtin of that name, which the generated code uses"),
    ("_k", True, "is a name the generated modules use for themselves"),
    ("grad_fn", False, "is a name the generated functions use for themselves"),
])
def test_why_reserved(name, module_level, reason):
    assert identifiers.why_reserved(name, module_level=module_level) == reason


@pytest.mark.parametrize("name", ["all", "abs", "max", "min", "sum", "_to_copy", "pow"])
def test_torch_op_names_stay_allowed(name):
    assert identifiers.why_reserved(name, module_level=True) is None


@pytest.mark.parametrize("name", ["abs", "max", "min", "input", "ord", "sorted", "self", "other", "dim"])
def test_torch_argument_names_stay_allowed(name):
    """torch's argument names that are builtins the generated functions do not call stay allowed."""
    assert identifiers.why_reserved(name, module_level=False) is None
