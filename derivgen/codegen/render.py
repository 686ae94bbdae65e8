"""Render ``generated/`` from the table: collect the models, lay them out with jinja2, and write
(or, with ``check``, compare) the files. Nothing is written unless every row builds, the new package
imports, and the rows without a forward expression pass the numerical check of their backward."""
import hashlib
import os
from typing import NamedTuple

import jinja2

from ..version import __version__
from ..table import TableError, load_table
from .literals import python_literal
from .model import build_models
from .names import check_kernel_names, check_names
from .swap import FormulaCheckFailed, replace_tree
from .vjp_samples import check_specs, remember, uncached
from . import wrappers

_TEMPLATES = os.path.join(os.path.dirname(__file__), "templates")
_RUNTIME_HELPERS = ("jit.py", "loop_helpers.py", "numba_backend.py", "numba_vecmath.py", "numba_stream.py", "operands.py")


def _env():
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(_TEMPLATES), keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
                             autoescape=False)
    wrappers.install(env)
    return env


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def runtime_helpers_hash():
    here = os.path.join(os.path.dirname(os.path.dirname(__file__)), "kernels")
    h = hashlib.sha256()
    for name in _RUNTIME_HELPERS:
        with open(os.path.join(here, name), "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


def _param_code(a):
    code = f'"{a.name}", "{a.type}"'
    if a.has_default:
        code += f", {python_literal(a.default)}"
    if a.kwonly:
        code += ", kwonly=True"
    return code


class _Ov:
    def __init__(self, fn, schema, params):
        self.fn = fn
        self.schema = schema.text.replace("\\", "\\\\").replace('"', "'")
        self.full_name = schema.full_name
        self.params = params
        # How many plain required Tensors the schema starts with when every argument after them has a
        # default (``sin(self)``, ``mm(self, mat2)``, ``sub_(self, other, *, alpha=1)``), else 0: the
        # Python-facing function then calls the row directly when given exactly those Tensors (what
        # the argument parser would pick anyway, the row's own defaults filling in the rest).
        args = schema.args
        n = 0
        while n < len(args) and args[n].is_tensor and not (args[n].is_optional or args[n].has_default
                                                           or args[n].kwonly):
            n += 1
        self.tensor_arity = n if 1 <= n <= 3 and all(a.has_default for a in args[n:]) else 0
        self.required = sum(1 for a in args if not a.has_default)


class _Op:
    def __init__(self, name, inplace):
        self.name = name
        self.inplace = inplace
        self.overloads = []
        self.method = True
        self.function = not inplace
        self.variants_entry = None  # the row whose ``variants:`` decided these two, for errors
        # rows named like torch's in-place ops (``squeeze_.dim``, ``zero_``): the row function computes the
        # result out of place (with its node); the Python-facing function commits it into ``self``
        self.commit = name.endswith("_") and not inplace
        # such a row whose out-of-place op is a view row (``transpose_``, ``squeeze_``) changes self's
        # shape and strides, not its data: set in ``render_models``
        self.view_commit = False

    @property
    def direct(self):
        """``(overload, n)`` when a call with exactly ``n`` Tensors and no keywords can bind only to that
        overload, with its defaults for the rest (``x.sin()``, ``x.sum()``: of sum's two rows only
        ``sum(Tensor self, *, ScalarType? dtype=None)`` takes one argument), else None: the Python-facing
        function then calls its row directly, as the argument parser would."""
        if len(self.overloads) == 1:
            ov = self.overloads[0]
            return (ov, ov.tensor_arity) if ov.tensor_arity else None
        one = [ov for ov in self.overloads if ov.tensor_arity == 1]
        if len(one) == 1 and all(ov.required >= 2 for ov in self.overloads if ov is not one[0]):
            return one[0], 1
        return None


class Generation(NamedTuple):
    files: dict        # {relative path: file text} for everything under generated/
    checks: list       # the numerical checks of the backward of the rows without a forward expression
    unchecked: list    # names of such rows that have no samples (an argument without default or sample)
    table_file: str


def render_table(table_path, progress=None):
    """Render the table (a ``Generation``). ``progress(done, total, row)`` is called as each row is built."""
    entries = load_table(table_path)
    check_names(entries)
    models = build_models(entries, progress)
    check_kernel_names(models)
    checks, unchecked = check_specs(models, table_path)
    with open(table_path, "rb") as fh:
        table_sha = _sha(fh.read())
    table_file = os.path.basename(table_path)
    return Generation(render_models(models, table_file, table_sha), checks, unchecked, table_file)


def render_all(table_path, progress=None):
    """Return {relative path: file text} for everything under generated/."""
    return render_table(table_path, progress).files


def render_models(models, table_file, table_sha, library=None):
    """Lay out built row models as {relative path: file text}. ``library`` (namespace, extra import
    lines, graph-less helper stubs) renders a user op library instead of derivgen's own."""
    helpers_sha = runtime_helpers_hash()
    env = _env()
    common = dict(version=__version__, table_file=table_file, library=library)
    files = {}
    package_stamp = [f"table sha256: {table_sha}", f"runtime helpers sha256: {helpers_sha}"]

    ops, by_name = [], {}
    for row in models:
        row.inplace_fn = None
        row.source_literal = repr(row.entry.source)  # a Python literal: table text never becomes code
        row.origins_literal = repr(tuple(row.formula_origins))
        row.slots = ([f"_sv_{s.name}" for s in row.saved_tensors]
                     + [f"_svv_{s.name}" for s in row.saved_tensors
                        if not s.is_output or s.name == row.compact_output]
                     + [f"_v_{v.name}" for v in row.saved_values])
        for k in row.kernels:
            k.params_sig = "".join(p + ", " for p in k.params)
            k.rows_params_sig = "".join(p + ", " for p in k.rows_params)
            k.formula_comment = " ".join(f"{k.name}: {k.formula}".splitlines())  # one comment line
        for _, v in row.fusion_vjps:
            v.params_sig = "".join(p + ", " for p in v.params)
            v.formula_comment = " ".join(f"{v.name}: {v.formula}".splitlines())
        if row.kernels:
            stamp = [f"row sha256: {row.row_hash}", f"runtime helpers sha256: {helpers_sha}"]
            files[f"kernels/{row.py_name}.py"] = env.get_template("kernel_module.py.j2").render(
                row=row, stamp_lines=stamp, **common)
        if row.entry.writes_into_self:
            row.inplace_fn = row.entry.schema.row_name
            _add_overload(ops, by_name, row.entry.schema.base, row.inplace_fn, row.entry.schema, inplace=True,
                          entry=row.entry)
            continue
        _add_overload(ops, by_name, row.entry.schema.base, row.entry.schema.row_name, row.entry.schema,
                      inplace=False, entry=row.entry)
        if row.entry.inplace:
            fn_name = wrappers.inplace_fn_name(row.entry.schema)
            row.inplace_fn = fn_name
            _add_overload(ops, by_name, row.entry.schema.base + "_", fn_name, row.entry.schema, inplace=True,
                          entry=row.entry, inplace_form=True)
    registered = {}
    for op in ops:
        registered.setdefault(op.name, op.name)
        for ov in op.overloads:
            registered.setdefault(ov.fn, ov.fn)
    view_ops = {row.entry.schema.base for row in models if row.view}
    for op in ops:
        op.view_commit = op.commit and op.name[:-1] in view_ops
        first = op.overloads[0]
        if op.variants_entry is None:
            op.method = not first.params[0].startswith('"tensors"')
    files["kernels/__init__.py"] = env.get_template("kernels_init.py.j2").render(
        rows=models, stamp_lines=package_stamp, **common)
    if library is None:
        # one module per node class, imported when an op first records that node (nodes/__init__.py)
        files["nodes/__init__.py"] = env.get_template("nodes_init.py.j2").render(
            rows=models, stamp_lines=package_stamp, **common)
        for row in models:
            if row.class_name:
                files[f"nodes/{row.py_name}.py"] = env.get_template("node_module.py.j2").render(
                    row=row, stamp_lines=[f"row sha256: {row.row_hash}"], **common)
    else:
        # a user library's few nodes: one module
        files["nodes.py"] = env.get_template("nodes.py.j2").render(rows=models, stamp_lines=package_stamp, **common)
    files["ops.py"] = env.get_template("ops.py.j2").render(rows=models, ops=ops, registered=registered,
                                                           stamp_lines=package_stamp, **common)
    if library is None:
        files["jvp.py"] = env.get_template("jvp.py.j2").render(rows=models, stamp_lines=package_stamp, **common)
        files["__init__.py"] = env.get_template("package_init.py.j2").render(stamp_lines=package_stamp, **common)
    return files


def _public(entry, inplace_form):
    """(function, method) for an op made from ``entry``: its ``variants:`` (the in-place form of an
    ``inplace: true`` row is a method where the row is, and a function with ``inplace_function``), or
    None for the default."""
    if entry.variants is None:
        return None
    if inplace_form:
        return "inplace_function" in entry.variants, "method" in entry.variants
    return "function" in entry.variants, "method" in entry.variants


def _add_overload(ops, by_name, name, fn, schema, inplace, entry, inplace_form=False):
    op = by_name.get(name)
    if op is None:
        op = by_name[name] = _Op(name, inplace)
        ops.append(op)
    public = _public(entry, inplace_form)
    if op.overloads and (public is None) != (op.variants_entry is None):
        given = entry if public is not None else op.variants_entry
        raise given.error(f"variants given here but not on another overload of '{name}' (give them on every "
                          "overload of an op, or on none)")
    if public is not None:
        if op.variants_entry is not None and (op.function, op.method) != public:
            raise entry.error(f"variants differ from those of '{op.variants_entry.name}', another overload of "
                              f"'{name}' (every overload of an op is public in the same places)")
        op.function, op.method = public
        op.variants_entry = entry
    op.overloads.append(_Ov(fn, schema, [_param_code(a) for a in schema.args]))


def existing_files(out_dir):
    found = set()
    for root, dirs, names in os.walk(out_dir):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for n in names:
            if n.endswith(".py"):
                found.add(os.path.relpath(os.path.join(root, n), out_dir).replace(os.sep, "/"))
    return found


def stale_files(files, out_dir):
    """Paths whose content differs from ``files``, plus generated files that should not exist."""
    stale = []
    for rel, text in sorted(files.items()):
        path = os.path.join(out_dir, rel)
        try:
            with open(path, encoding="utf-8") as fh:
                if fh.read() != text:
                    stale.append(rel)
        except OSError:
            stale.append(rel)
    for rel in sorted(existing_files(out_dir) - set(files)):
        stale.append(rel + " (no longer generated)")
    return stale


def write_files(files, out_dir, import_check=True, generation=None):
    """Make ``out_dir`` match ``files`` as a whole (see swap.py): an unchanged table changes no byte and
    no modification time; a new tree that does not import replaces nothing, nor does one with a row of
    ``generation`` whose backward fails its numerical check (raised as the row's TableError). Checks
    that passed before (same row, samples and runtime sources) are not run again. A user op library is
    checked by running it instead (``derivgen library build``): it imports the user's own modules, which
    need not be importable from here, so it passes ``import_check=False``."""
    checks = uncached(generation.checks) if generation is not None and import_check else []
    try:
        changed = replace_tree(files, out_dir, existing_files(out_dir), import_check, checks)
    except FormulaCheckFailed as exc:
        name, line, reason = exc.problems[0]
        raise TableError(reason, generation.table_file, line, name) from None
    if changed:
        remember(checks)
    return changed
