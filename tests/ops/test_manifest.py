"""The manifest the generator reads (derivgen/ops/manifest.yaml) says exactly what the ops layer has."""
import yaml

from derivgen.codegen import manifest
from derivgen.ops import formula_fns, forwards
from derivgen.table import load_table
from tests.support.paths import TABLE


def _expected():
    rows = {e.schema.py_name for e in load_table(TABLE) if e.forward is None}
    fw = sorted(n for n in rows if callable(getattr(forwards, n, None)))
    pending = sorted(n for n in fw if getattr(getattr(forwards, n), "accepts_pending", False))
    new_arrays = sorted(n for n in fw if getattr(getattr(forwards, n), "returns_new_array", False))
    return {"helpers": {"tensor": sorted(formula_fns.TENSOR_FUNCTIONS), "meta": sorted(formula_fns.META_FUNCTIONS)},
            "forwards": {"plain": [n for n in fw if n not in pending], "accepts_pending": pending,
                         "new_arrays": new_arrays}}


HEADER_END = "\nhelpers:"


def write():
    """Rewrite the manifest's data from the ops layer, keeping its header comment."""
    with open(manifest.PATH, encoding="utf-8") as fh:
        text = fh.read()
    header = text[: text.index(HEADER_END) + 1]
    body = yaml.safe_dump(_expected(), default_flow_style=None, width=110, sort_keys=False)
    with open(manifest.PATH, "w", encoding="utf-8") as fh:
        fh.write(header + body)


def test_manifest_matches_the_ops_layer():
    with open(manifest.PATH, encoding="utf-8") as fh:
        actual = yaml.safe_load(fh)
    expected = _expected()
    assert actual == expected, ("derivgen/ops/manifest.yaml is out of date: rewrite it with "
                                "`python -m tests.ops.test_manifest`; its data should read:\n"
                                + yaml.safe_dump(expected, default_flow_style=None, width=110, sort_keys=False))


def test_every_tensor_helper_has_an_array_and_a_graph_version():
    for name, pair in formula_fns.TENSOR_FUNCTIONS.items():
        fast, graph = pair
        assert callable(fast) and callable(graph), name
        assert getattr(formula_fns, name) is fast and getattr(formula_fns, f"{name}_graph") is graph, name


if __name__ == "__main__":
    write()
