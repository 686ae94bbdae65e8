"""Sample inputs for the numerical check of the rows without a ``forward:`` expression (mm, sum, conv,
index ops): their backward formulas cannot be proven against a symbolic forward, so the new package
computes each one's float64 VJP on sample inputs and compares it with finite differences of the forward
(``derivgen.formula_check``, run in the fresh interpreter that imports the new package before the swap).

A row's samples come from its schema: every Tensor a float64 ``[3, 4]`` array, every Tensor list two of
them, every other argument its default. Arguments without a default, and shapes that must fit together
(``mm``), are given in ``<table>.samples.yaml`` beside the table, by row name::

    mm: {self: [4, 5], mat2: [5, 3]}                      # a Tensor: its shape (float64, normal values)
    logit: {self: {shape: [3, 4], low: 0.1, high: 0.9}}   # uniform values in [low, high)
    gather: {dim: 1, index: {shape: [3, 2], index: 4}}     # int64 indices in [0, 4), distinct per last axis
    cat: {tensors: [[2, 3], [4, 3]]}                       # a Tensor list
    index.Tensor: {indices: [null, {shape: [2], index: 4}]}

The file is untrusted data like the table: it is read with YAML's safe loader and only these forms are
accepted. A row whose samples cannot be made (an argument without default or sample) is not checked
numerically; ``unchecked`` names it.
"""
import hashlib
import json
import os

import yaml

from ..config import user_cache_dir
from ..table import TableError
from ..version import __version__

DEFAULT_SHAPE = [3, 4]
MAX_FILE_BYTES = 1 << 20
MAX_ELEMENTS = 512          # per Tensor: finite differences run the forward twice per element
_TENSOR_KEYS = {"shape", "low", "high", "index"}


def samples_path(table_path):
    real = os.path.realpath(table_path)
    stem = real[:-5] if real.endswith(".yaml") else real
    return stem + ".samples.yaml"


class _Samples:
    """The parsed samples file: {row name: (line, {argument: raw value})}."""

    def __init__(self, path):
        self.path, self.rows = path, {}
        if not os.path.exists(path):
            return
        self.file = os.path.basename(path)
        with open(path, "rb") as fh:
            data = fh.read()
        if len(data) > MAX_FILE_BYTES:
            raise TableError(f"the samples file is larger than {MAX_FILE_BYTES} bytes", self.file, 1)
        try:
            text = data.decode("utf-8")
            for token in yaml.scan(text, Loader=yaml.SafeLoader):
                if isinstance(token, (yaml.AnchorToken, yaml.AliasToken)):  # no alias bombs
                    raise TableError("the samples must not use YAML anchors", self.file, token.start_mark.line + 1)
            root = yaml.compose(text, Loader=yaml.SafeLoader)
            values = yaml.safe_load(text)
        except (UnicodeDecodeError, yaml.YAMLError) as exc:
            raise TableError(f"cannot read the samples: {exc}".splitlines()[0], self.file, 1) from None
        if root is None:
            return
        if not isinstance(root, yaml.MappingNode) or not isinstance(values, dict):
            raise TableError("the samples must be a mapping of row names to {argument: sample}", self.file, 1)
        for key_node, value_node in root.value:
            name, line = key_node.value, key_node.start_mark.line + 1
            row = values.get(name)
            if not isinstance(row, dict) or not all(isinstance(k, str) for k in row):
                raise TableError("samples must be a mapping {argument: sample}", self.file, line, name)
            self.rows[name] = (line, row)

    def error(self, name, message):
        return TableError(message, self.file, self.rows[name][0], name)


def _shape(value):
    return isinstance(value, list) and all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 64
                                           for n in value) and len(value) <= 5


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _tensor(value, where):
    """A Tensor sample in its normal form, or a ValueError saying why ``value`` is not one."""
    spec = {"shape": value} if isinstance(value, list) else value
    if not isinstance(spec, dict) or set(spec) - _TENSOR_KEYS or "shape" not in spec or not _shape(spec["shape"]):
        raise ValueError(f"{where}: a Tensor sample is a shape [n, ...] (at most 5 sizes of at most 64) or "
                         f"{{shape: [...], low: x, high: y}} or {{shape: [...], index: n}}")
    n = 1
    for size in spec["shape"]:
        n *= size
    if n > MAX_ELEMENTS:
        raise ValueError(f"{where}: a Tensor sample has at most {MAX_ELEMENTS} elements, not {n}")
    out = {"shape": list(spec["shape"])}
    if "index" in spec:
        if not isinstance(spec["index"], int) or isinstance(spec["index"], bool) or not 1 <= spec["index"] <= 4096 \
                or "low" in spec or "high" in spec:
            raise ValueError(f"{where}: 'index' is the (positive) number of positions the indices address")
        out["index"] = spec["index"]
    else:
        low, high = spec.get("low"), spec.get("high")
        if (low is None) != (high is None) or (low is not None and not (_number(low) and _number(high) and low < high)):
            raise ValueError(f"{where}: 'low' and 'high' are two numbers, low < high")
        if low is not None:
            out["low"], out["high"] = float(low), float(high)
    return out


def _plain(value):
    """A non-Tensor argument: a number, bool, string, None, or a list of ints."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    return isinstance(value, list) and len(value) <= 8 and all(_number(v) for v in value)


def _argument(arg, value, where):
    if arg.is_tensor:
        return None if value is None and arg.is_optional else {"tensor": _tensor(value, where)}
    if arg.is_tensor_list:
        if not isinstance(value, list) or not 1 <= len(value) <= 4:
            raise ValueError(f"{where}: a Tensor list sample is a list of 1 to 4 Tensor samples")
        optional = "?" in arg.type
        return {"tensors": [None if v is None and optional else _tensor(v, where) for v in value]}
    if not _plain(value):
        raise ValueError(f"{where}: a sample is a number, true/false, a string, null or a list of numbers")
    return {"value": value}


def _default(arg):
    if arg.is_tensor:
        return {"tensor": {"shape": list(DEFAULT_SHAPE)}}
    if arg.is_tensor_list:
        return {"tensors": [{"shape": list(DEFAULT_SHAPE)}, {"shape": list(DEFAULT_SHAPE)}]}
    if arg.has_default:
        value = list(arg.default) if isinstance(arg.default, tuple) else arg.default
        return {"value": value} if _plain(value) else None
    return {"value": None} if arg.is_optional else None


def _formula_line(entry, name):
    for f in entry.formulas:
        if name in f.names:
            return f.line
    return entry.line


def check_specs(models, table_path):
    """The numerical checks of ``models``' rows without a forward expression, as JSON-able dicts, and the
    names of the rows that cannot be sampled. Raises TableError for a malformed samples file."""
    samples = _Samples(samples_path(table_path))
    by_name = {m.entry.name: m for m in models}
    for name in samples.rows:
        if name not in by_name:
            raise samples.error(name, "samples for a row that is not in the table")
        if by_name[name].entry.forward is not None:
            raise samples.error(name, "samples for a row with a 'forward:' expression, whose formulas are "
                                      "proven against it symbolically (samples are for rows without one)")
    specs, unchecked = [], []
    for row in models:
        entry = row.entry
        if entry.forward is not None or not row.class_name:
            continue  # elementwise rows are proven against their forward symbolically
        given = samples.rows.get(entry.name, (0, {}))[1]
        args = {a.name: a for a in entry.schema.args}
        for key in given:
            if key not in args:
                raise samples.error(entry.name, f"sample for '{key}', which is not an argument of the schema")
        values, missing = {}, []
        for a in entry.schema.args:
            try:
                v = _argument(a, given[a.name], f"sample for '{a.name}'") if a.name in given else _default(a)
            except ValueError as exc:
                raise samples.error(entry.name, str(exc)) from None
            if v is None and not (a.name in given and a.is_optional):
                missing.append(a.name)
            values[a.name] = v
        if missing:
            unchecked.append(entry.name)
            continue
        spec = {"row": entry.schema.row_name, "name": entry.name, "args": values,
                "diff": [a.name for a in entry.differentiable_args],
                "lines": {a.name: _formula_line(entry, a.name) for a in entry.differentiable_args},
                "outputs": "all" if row.outputs_list else list(row.diff_outputs),
                "given": entry.name in samples.rows}
        spec["key"] = _cache_key(row, spec)
        specs.append(spec)
    return specs, unchecked


def _cache_key(row, spec):
    """What the check's outcome depends on: the row (its hash covers its text and the generator version),
    its samples, and the hand-written forwards and helpers its node calls."""
    h = hashlib.sha256()
    h.update(row.row_hash.encode())
    h.update(json.dumps(spec, sort_keys=True).encode())
    h.update(__version__.encode())
    h.update(_runtime_sources_hash().encode())
    return h.hexdigest()


_RUNTIME_SOURCES = None


def _runtime_sources_hash():
    """The hand-written code a non-elementwise backward runs (forwards, formula functions, the array
    dispatcher): a change there re-checks every row."""
    global _RUNTIME_SOURCES
    if _RUNTIME_SOURCES is None:
        pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        h = hashlib.sha256()
        for folder in ("ops", "kernels"):
            for root, dirs, names in os.walk(os.path.join(pkg, folder)):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for n in sorted(names):
                    if n.endswith((".py", ".yaml")):
                        with open(os.path.join(root, n), "rb") as fh:
                            h.update(n.encode() + b"\0" + fh.read())
        _RUNTIME_SOURCES = h.hexdigest()
    return _RUNTIME_SOURCES


def _cache_dir():
    return os.path.join(user_cache_dir(), "vjpcheck")


def uncached(specs):
    """The checks that have not passed before (a passed check leaves an empty file named by its key)."""
    folder = _cache_dir()
    return [s for s in specs if not os.path.exists(os.path.join(folder, s["key"]))]


def remember(specs):
    """Record that ``specs`` passed; a cache that cannot be written only costs the next run time."""
    folder = _cache_dir()
    try:
        os.makedirs(folder, exist_ok=True)
        for s in specs:
            with open(os.path.join(folder, s["key"]), "wb"):
                pass
    except OSError:
        pass
