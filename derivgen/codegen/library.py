"""Build a user op library: a user table (``ops.yaml``, the row format of ``formulas.yaml``, new rows
only) compiled against the table derivgen ships, into an importable package of nodes, ops and kernels.

The user table may be a list of rows, or a mapping with ``namespace:``, ``methods:`` and ``ops:`` (the
rows). A row may add, beyond the shipped format:

- ``forward_fn: pkg.module:function`` -- the numpy forward of a non-elementwise row;
- ``helpers: {name: {array: pkg.module:fn, graph: pkg.module:fn}}`` -- backward helpers its formulas
  call (the array version over numpy arrays, the optional graph version over Tensors, for double backward);
- ``samples:`` -- inputs on which a non-elementwise row's formulas are checked numerically at build time;
- ``override: true`` -- the row may shadow an op of derivgen's own table.

Every name a formula uses resolves against the shipped table plus the user's rows; no shipped row is
copied. Dotted paths are only recorded here (never imported): the generated modules import them.
"""
import hashlib
import json
import os
import re
from dataclasses import dataclass, field

import yaml

from ..table import TableError, load_table
from ..table.loader import load_table_text
from ..version import __version__
from . import manifest
from .model import build_models
from .render import render_models

SHIPPED_TABLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "formulas.yaml")
MANIFEST_FILE = "library.json"
ROW_KEYS = ("forward_fn", "helpers", "samples", "override")
TABLE_KEYS = ("namespace", "methods", "ops")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")


@dataclass
class RowExtras:
    forward_fn: str = None
    helpers: dict = field(default_factory=dict)      # {name: (array path, graph path or None)}
    samples: list = field(default_factory=list)
    override: bool = False


@dataclass
class UserTable:
    path: str
    file: str
    sha256: str
    namespace: str
    methods: bool
    entries: list
    extras: dict                                     # {entry full name: RowExtras}


def file_sha256(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def shipped_table_sha256():
    return file_sha256(SHIPPED_TABLE)


def _blank(lines, key_node, value_node):
    """Blank the lines of one ``key: value`` pair, keeping every other line where it was."""
    last = value_node.end_mark.line
    if last >= len(lines) or (last > key_node.start_mark.line and
                              not lines[last][:value_node.end_mark.column].strip()):
        last -= 1  # a block value ends where the next key starts: that line is not the value's
    for i in range(key_node.start_mark.line, last + 1):
        lines[i] = ""


def load_user_table(path, package):
    """Read a user table: the rows as ``Entry`` objects (via the shipped loader), the library keys aside."""
    file = os.path.basename(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise TableError(f"cannot read table: {exc}", file) from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise TableError(f"YAML syntax error: {getattr(exc, 'problem', exc)}", file,
                         mark.line + 1 if mark else None) from None
    lines = text.splitlines()
    original = list(lines)
    namespace, methods = package, False
    rows = root
    if isinstance(root, yaml.MappingNode):
        keys = {}
        for k, v in root.value:
            if k.value not in TABLE_KEYS:
                raise TableError(f"unknown table key '{k.value}' (expected one of {', '.join(TABLE_KEYS)})",
                                 file, k.start_mark.line + 1)
            keys[k.value] = (k, v)
        if "ops" not in keys or not isinstance(keys["ops"][1], yaml.SequenceNode):
            raise TableError("a table given as a mapping needs 'ops:' with a list of rows", file,
                             root.start_mark.line + 1)
        for name in ("namespace", "methods"):
            if name in keys:
                k, v = keys[name]
                if not isinstance(v, yaml.ScalarNode):
                    raise TableError(f"'{name}' takes a plain value", file, k.start_mark.line + 1)
                _blank(lines, k, v)
        if "namespace" in keys:
            namespace = keys["namespace"][1].value
        if "methods" in keys:
            methods = keys["methods"][1].value.lower() == "true"
        k = keys["ops"][0]
        lines[k.start_mark.line] = ""
        rows = keys["ops"][1]
    if not _IDENT.match(namespace or "") or namespace == "aten":
        raise TableError(f"namespace {namespace!r} must be a Python identifier other than 'aten'", file)
    pending = {}
    if isinstance(rows, yaml.SequenceNode):
        for item in rows.value:
            if not isinstance(item, yaml.MappingNode):
                continue  # the shipped loader reports it
            found, name_line = {}, None
            for k, v in item.value:
                if isinstance(k, yaml.ScalarNode) and k.value in ROW_KEYS:
                    found[k.value] = (k, v)
                if isinstance(k, yaml.ScalarNode) and k.value == "name":
                    name_line = v.start_mark.line + 1  # the line the loader gives the entry
            pending[name_line] = (found, item)
            for k, v in found.values():
                _blank(lines, k, v)
    entries = load_table_text("\n".join(lines) + "\n", file)
    extras = {}
    for e in entries:
        found, item = pending.get(e.line, ({}, None))
        if item is not None:
            e.source = "\n".join(original[item.start_mark.line:item.end_mark.line]).rstrip()
        extras[e.name] = _row_extras(e, found, file)
    sha = hashlib.sha256(text.encode()).hexdigest()
    return UserTable(path=path, file=file, sha256=sha, namespace=namespace, methods=methods,
                     entries=entries, extras=extras)


def _construct(node):
    """The plain data of one YAML node (safe loader: no tags, no objects)."""
    return yaml.safe_load(yaml.serialize(node))


def _dotted(entry, value, what, line):
    if not isinstance(value, str) or not _DOTTED.match(value):
        raise entry.error(f"{what} must be a dotted path 'package.module:function', got {value!r}", line)
    return value


def _row_extras(entry, found, file):
    x = RowExtras()
    if "forward_fn" in found:
        k, v = found["forward_fn"]
        x.forward_fn = _dotted(entry, _construct(v), "forward_fn", k.start_mark.line + 1)
    if "override" in found:
        x.override = _construct(found["override"][1]) is True
    if "helpers" in found:
        k, v = found["helpers"]
        data = _construct(v)
        if not isinstance(data, dict):
            raise entry.error("helpers: takes a mapping {name: {array: pkg.module:fn, graph: pkg.module:fn}}",
                              k.start_mark.line + 1)
        for name, spec in data.items():
            line = k.start_mark.line + 1
            if not isinstance(name, str) or not _IDENT.match(name) or name.startswith("_"):
                raise entry.error(f"helper name {name!r} must be a Python identifier", line)
            if isinstance(spec, str):
                spec = {"array": spec}
            if not isinstance(spec, dict) or "array" not in spec or set(spec) - {"array", "graph"}:
                raise entry.error(f"helper '{name}' needs 'array: pkg.module:fn' (and optionally "
                                  "'graph: pkg.module:fn')", line)
            graph = spec.get("graph")
            x.helpers[name] = (_dotted(entry, spec["array"], f"helper '{name}' array", line),
                               None if graph is None else _dotted(entry, graph, f"helper '{name}' graph", line))
    if "samples" in found:
        k, v = found["samples"]
        data = _construct(v)
        if not isinstance(data, list) or not all(isinstance(s, dict) for s in data):
            raise entry.error("samples: takes a list of {argument: shape list | {values: nested list} | value}",
                              k.start_mark.line + 1)
        x.samples = data
        x.samples_line = k.start_mark.line + 1
    return x


def _import_line(path, alias):
    module, fn = path.split(":")
    return f"from {module} import {fn} as {alias}"


@dataclass
class LibraryInfo:
    """What the templates need to render a library instead of derivgen's own modules."""
    namespace: str
    imports: list
    stubs: list


def _check_rows(table, shipped):
    shipped_bases = {e.schema.base for e in shipped}
    shipped_names = {e.name for e in shipped}
    shipped_helpers = manifest.load().tensor_helpers | manifest.load().meta_helpers
    helper_owner = {}
    for e in table.entries:
        x = table.extras[e.name]
        if (e.schema.base in shipped_bases or e.name in shipped_names) and not x.override:
            raise e.error(f"'{e.schema.base}' is an op of derivgen's own table: a library row may shadow it "
                          "only with 'override: true'")
        if e.forward is not None and x.forward_fn:
            raise e.error("give either an elementwise 'forward:' or a 'forward_fn:', not both")
        if e.forward is None and not x.forward_fn:
            raise e.error("no forward: give the row an elementwise 'forward:' expression or "
                          "'forward_fn: package.module:function' (a numpy function)")
        if e.forward is None and e.formulas and not x.samples:
            raise e.error("a non-elementwise row is checked numerically at build time: give it 'samples:' "
                          "(e.g. '- self: [3, 4]')")
        for name in x.helpers:
            if name in shipped_helpers:
                raise e.error(f"helper '{name}' shadows derivgen's own backward helper of that name")
            if name in helper_owner and helper_owner[name] != x.helpers[name]:
                raise e.error(f"helper '{name}' is defined differently by another row")
            helper_owner[name] = x.helpers[name]


def build_library(table_path, package, progress=None):
    """Return ({relative path: text} of the package, the library manifest dict). Raises TableError."""
    if not _IDENT.match(package):
        raise TableError(f"package name {package!r} must be a Python identifier", os.path.basename(table_path))
    shipped = load_table(SHIPPED_TABLE)
    table = load_user_table(table_path, package)
    _check_rows(table, shipped)
    forwards, helpers, graph_helpers, imports, stubs = {}, {}, {}, [], []
    for e in table.entries:
        x = table.extras[e.name]
        if x.forward_fn:
            alias = f"_ufw_{e.schema.py_name}"
            forwards[e.schema.py_name] = alias
            imports.append(_import_line(x.forward_fn, alias))
        for name, (array, graph) in x.helpers.items():
            if name in helpers:
                continue
            helpers[name] = f"_uh_{name}"
            graph_helpers[name] = f"_uhg_{name}"
            imports.append(_import_line(array, f"_uh_{name}"))
            if graph:
                imports.append(_import_line(graph, f"_uhg_{name}"))
            else:
                stubs.append(_graph_stub(name, e, table.file))
    user_bases = {e.schema.base for e in table.entries}
    kept = [e for e in shipped if e.schema.base not in user_bases]  # an overridden op resolves to the user's row
    with manifest.extended(forwards, helpers, graph_helpers, table.namespace):
        models = build_models(kept + table.entries, progress, only=table.entries)
        files = render_models(models, table.file, table.sha256,
                              LibraryInfo(namespace=table.namespace, imports=imports, stubs=stubs))
    lib_manifest = _library_manifest(table, package, models)
    files["__init__.py"] = _init_text(table, package)
    files[MANIFEST_FILE] = json.dumps(lib_manifest, indent=1, sort_keys=True) + "\n"
    return files, lib_manifest


def _graph_stub(helper, entry, file):
    message = (f"double backward through the helper '{helper}' of '{entry.name}' ({file}, line {entry.line}) "
               f"needs its Tensor version: give 'graph: package.module:function' under 'helpers: {helper}:' "
               f"and rebuild with `derivgen library build`")
    return (f"def _uhg_{helper}(*args, **kwargs):\n"
            f"    raise RuntimeError({message!r})")


def _init_text(table, package):
    return (f"# Generated by derivgen {__version__} from {table.file} -- DO NOT EDIT.\n"
            f"# Rebuild with `derivgen library build {table.file} --package {package}`.\n"
            f'"""derivgen op library `{package}` (namespace `{table.namespace}`). Load it with\n'
            f'`derivgen.load_library("{package}")`, which checks it against the installed derivgen first."""\n')


def _library_manifest(table, package, models):
    rows = []
    for m in models:
        e = m.entry
        x = table.extras[e.name]
        uses_helpers = [h for h in x.helpers]
        rows.append({
            "name": e.name, "base": e.schema.base, "row": e.schema.row_name, "line": e.line,
            "node": e.class_name, "override": x.override,
            "check": bool(e.formulas) and e.forward is None,
            "graph_check": all(x.helpers[h][1] is not None for h in uses_helpers),
            "samples": x.samples, "samples_line": getattr(x, "samples_line", e.line),
            "tensor_args": [a.name for a in e.schema.args if a.is_tensor],
        })
    return {"package": package, "namespace": table.namespace, "methods": table.methods,
            "derivgen_version": __version__, "shipped_table_sha256": shipped_table_sha256(),
            "table_file": table.file, "table_sha256": table.sha256, "rows": rows}
