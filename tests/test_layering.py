"""The package's layers import only downward, and no hand-written module closes an import cycle.

Every import counts, at module level or inside a function: an import that runs later still ties the
two modules together. Imports are read with ``ast``; nothing is imported to check them.
"""
import ast
import os

import pytest

from tests.support.paths import REPO

PACKAGE = os.path.join(REPO, "derivgen")

# bottom to top; a module may import its own layer and the layers listed before it
RUNTIME_LAYERS = ["config", "kernels", "core", "engine", "ops", "generated", "api"]
SHARED = {"version", "progress", "launch", "cachedir"}  # importable by the generator and the runtime alike
GENERATOR = "generator"
GENERATOR_PACKAGES = {"table", "symbolic", "codegen"}
GENERATOR_MODULES = {"cli", "__main__", "explain"}


def layer_of(module):
    """The layer of a dotted module name under ``derivgen``."""
    parts = module.split(".")
    if parts == ["derivgen"]:
        return "facade"
    head = parts[1]
    if head in SHARED:
        return "config"
    if head in GENERATOR_PACKAGES or head in GENERATOR_MODULES:
        return GENERATOR
    if head in RUNTIME_LAYERS:
        return head
    return "api"


def allowed(src_layer, dst_layer):
    if dst_layer == "facade":
        return False  # derivgen/__init__.py assembles the public surface; nothing inside imports it
    if src_layer == GENERATOR:
        return dst_layer in (GENERATOR, "config")
    if dst_layer == GENERATOR:
        return False
    if src_layer == "facade":
        return True
    return RUNTIME_LAYERS.index(dst_layer) <= RUNTIME_LAYERS.index(src_layer)


def hand_written_modules():
    """{dotted name: path} for every module of the package (``generated/`` is installed as
    ``derivgen.generated`` but is the generator's output: its imports are checked for direction only)."""
    mods = {}
    for base, dotted in ((PACKAGE, "derivgen"), (os.path.join(REPO, "generated"), "derivgen.generated")):
        for root, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for f in files:
                if not f.endswith(".py"):
                    continue
                rel = os.path.relpath(os.path.join(root, f), base)[:-3].split(os.sep)
                if rel[-1] == "__init__":
                    rel = rel[:-1]
                mods[".".join([dotted] + rel)] = os.path.join(root, f)
    return mods


MODULES = hand_written_modules()


def _resolve(name):
    """The longest known module prefix of a dotted name (``from a.b import c`` may name a module c)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module, path):
    """[(line, imported module)] for every derivgen import in the file, function-level ones included."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    is_pkg = path.endswith("__init__.py")
    package = module if is_pkg else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "derivgen":
                    found.append((node.lineno, _resolve(alias.name)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "derivgen":
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((node.lineno, sub if sub in MODULES else _resolve(target)))
    # importing a.b.c runs the __init__ of a.b first: an edge to each enclosing package (but the root
    # package, which every import passes through and which is imported first)
    parents = [(line, ".".join(m.split(".")[:k])) for line, m in found if m
               for k in range(2, m.count(".") + 1)]
    found += [(line, p) for line, p in parents if p in MODULES]
    return [(line, m) for line, m in found if m and m != module and not module.startswith(m + ".")]


GRAPH = {m: imports_of(m, p) for m, p in MODULES.items()}


def test_the_package_has_the_layers():
    for layer in ("kernels", "core", "engine", "ops"):
        assert any(m.startswith(f"derivgen.{layer}.") for m in MODULES), layer


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    src = layer_of(module)
    bad = [f"{os.path.relpath(MODULES[module], REPO)}:{line}: {module} ({src}) imports {dst} ({layer_of(dst)})"
           for line, dst in GRAPH[module] if not allowed(src, layer_of(dst))]
    assert not bad, "\n".join(bad)


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_no_import_cycles():
    graph = {m: sorted({d for _, d in deps if d in MODULES}) for m, deps in GRAPH.items()}
    # a package's __init__ importing its own submodules is how a package exposes them, not a tie back
    for m in graph:
        graph[m] = [d for d in graph[m] if not (m + ".").startswith(d + ".") or d == m]
    # (a node's graph path calls ops and each op creates its node, yet there is no cycle: ops looks node
    # classes up in the nodes package, whose index imports its modules only on first use)
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_checker_sees_a_function_level_upward_import(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text("def f():\n    from derivgen.engine import execute\n")
    assert imports_of("derivgen.core.probe", str(path)) == [(2, "derivgen.engine.execute"), (2, "derivgen.engine")]
    assert not allowed("core", "engine") and allowed("engine", "core")
    assert not allowed(GENERATOR, "core") and not allowed("ops", "facade") and not allowed("api", GENERATOR)
    assert _cycles({"a": ["b"], "b": ["a"], "c": []}) == [["a", "b"]]
