"""make_dot draws exactly the graph the engine walks: the same nodes, edges and slots, one box per
shared accumulator, the graph torch builds for the same program (torchviz is not a dependency, so the
PyTorch side is a walk of torch's graph), labels and tooltips from the table, and the execution order
of a backward as torch's engine runs it."""
import re
import shutil
import xml.etree.ElementTree as ET

import pytest

import derivgen
from derivgen.viz import make_dot, record_execution, render
from tests.viz.graphs import PROGRAMS, node_name, walk

# a node's attributes run to the first ] outside a quoted string (a tooltip's table row may hold "[...]")
NODE_RE = re.compile(r'^\t("?[^\s"]+"?) \[label=(?:"((?:[^"\\]|\\.)*)"|([^\s\]]+))((?:[^\]"]|"(?:[^"\\]|\\.)*")*)\]',
                     re.M | re.S)
EDGE_RE = re.compile(r'^\t("?[^\s"]+"?) -> ("?[^\s"]+"?)(?: \[([^\]]*)\])?$', re.M)


def parse_dot(source):
    nodes = {m.group(1).strip('"'): (m.group(2) if m.group(2) is not None else m.group(3), m.group(4))
             for m in NODE_RE.finditer(source)}
    edges = [(m.group(1).strip('"'), m.group(2).strip('"'), m.group(3) or "") for m in EDGE_RE.finditer(source)]
    return nodes, edges


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_dot_holds_exactly_the_graph_walk(program):
    out, params = program(derivgen)
    nodes, edges = parse_dot(make_dot(out, params=params).source)
    _, walk_edges, index = walk(out)
    by_id = {str(id(fn)): fn for fn in index}
    # every backward node once, named by its class, with its sequence number
    drawn_fns = {k: v for k, v in nodes.items() if k in by_id}
    assert set(drawn_fns) == set(by_id)
    for k, (label, _) in drawn_fns.items():
        fn = by_id[k]
        assert label.split("\n")[0] == type(fn).__name__
        if not hasattr(fn, "variable"):
            assert f"seq {fn._sequence_nr()}" in label
    accs = [fn for fn in index if hasattr(fn, "variable")]
    assert sum(1 for label, _ in nodes.values() if label.startswith("AccumulateGrad")) == len(accs)
    # every edge between nodes, once per next_functions entry, labelled with its slot
    fn_edges = sorted((a, b, re.search(r'label=" (\d+)"', attrs).group(1))
                      for a, b, attrs in edges if a in by_id and b in by_id)
    expected = sorted((str(id(fn)), str(id(dst)), str(nr))
                      for dst in index for fn, nr in dst.next_functions if fn is not None)
    assert fn_edges == expected
    # leaves: light blue, named from params, edge into their accumulator; the output: dark olive green
    for acc in accs:
        label, attrs = nodes[str(id(acc.variable))]
        assert "fillcolor=lightblue" in attrs
        name = next((n for n, p in params.items() if p is acc.variable), "")
        assert label == f"{name}\n ({', '.join(str(s) for s in acc.variable.shape)})"
        assert (str(id(acc.variable)), str(id(acc)), "") in edges
    assert "fillcolor=darkolivegreen1" in nodes[str(id(out))][1]
    assert (str(id(out.grad_fn)), str(id(out)), "") in edges
    assert len(walk_edges) == len({(a, b, s) for a, b, s in fn_edges})


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_graph_is_the_one_torch_builds(program):
    torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed; cannot compare graphs")
    ours, _ = program(derivgen)
    theirs, _ = program(torch)
    assert walk(ours)[:2] == walk(theirs)[:2]


def test_plain_mode_draws_torchviz_labels_only():
    out, params = PROGRAMS[0](derivgen)
    source = make_dot(out, params=params, annotate=False).source
    assert "seq " not in source and "tooltip" not in source and "label=\" " not in source
    nodes, _ = parse_dot(source)
    assert sorted(label for label, _ in nodes.values()) == sorted(
        ["\n ()", "SumBackward0", "MulBackward0", "AccumulateGrad", "x\n (3)"])


def test_tooltip_is_the_table_row_and_its_line():
    x = derivgen.ones(3, requires_grad=True)
    y = x.sin()
    nodes, _ = parse_dot(make_dot(y).source)
    label, attrs = nodes[str(id(y.grad_fn))]
    row = y.grad_fn.formula()
    assert f"({row.location})" in attrs and "self: grad * cos(self)" in attrs


def test_saved_tensors_show_shape_dtype_and_release():
    x = derivgen.ones(2, 3, dtype=derivgen.float64, requires_grad=True)
    y = x.exp().sum()
    before, _ = parse_dot(make_dot(y, show_saved=True, show_attrs=True).source)
    saved = [label for label, attrs in before.values() if "fillcolor=orange" in attrs]
    assert saved == ["result\n (2, 3)\n float64"]
    y.backward()
    after, _ = parse_dot(make_dot(y, show_saved=True, show_attrs=True).source)
    assert [label for label, attrs in after.values() if "fillcolor=orange" in attrs] == ["result\n (released)"]


def test_show_attrs_lists_saved_values_like_torchviz():
    x = derivgen.ones(3, requires_grad=True)
    y = x.sum()
    label = parse_dot(make_dot(y, show_attrs=True, annotate=False).source)[0][str(id(y.grad_fn))][0]
    assert label == "SumBackward0\n--------------------\nself_sym_sizes: (3,)"


def _order_by_prehooks(out):
    order = []
    _, _, index = walk(out)
    for fn in index:
        fn.register_prehook(lambda g, fn=fn: order.append(node_name(fn)))
    return order


def test_execution_order_is_the_engines(torch):
    out, _ = PROGRAMS[2](torch)  # sequence: two muls, an add, a sum
    order = _order_by_prehooks(out)
    if torch is derivgen:
        with record_execution() as rec:
            out.backward()
        _, _, index = walk(out)
        ran = sorted((rec.position(fn), node_name(fn)) for fn in index)
        assert [name for _, name in ran] == order
        label = parse_dot(make_dot(out, execution=rec).source)[0][str(id(out.grad_fn))][0]
        assert label.endswith("ran 1")
    else:
        out.backward()
    assert order == ["SumBackward0", "AddBackward0", "MulBackward0", "MulBackward0", "AccumulateGrad"]


def test_recording_stops_with_the_block():
    from derivgen.core import observe
    with record_execution():
        assert observe.ACTIVE
    assert not observe.ACTIVE


    from derivgen.engine import fusion
    from derivgen.config import settings
    if not settings.fusion_enabled:
        pytest.skip("SKIPPED LOUDLY: fusion is switched off (DERIVGEN_FUSION=0)")
    x = derivgen.ones(settings.fusion_threshold, dtype=derivgen.float64, requires_grad=True)
    y = (x * x).sin().exp().sum()
    region = [y.grad_fn.next_functions[0][0]]
    while region[-1].next_functions[0][0].name() != "derivgen::autograd::AccumulateGrad":
        region.append(region[-1].next_functions[0][0])
    with record_execution() as rec:
        y.backward()
    source = make_dot(y, execution=rec).source
    cluster = re.search(r"subgraph cluster_fused_0 \{(.*?)\}", source, re.S)
    assert cluster is not None
    assert sorted(cluster.group(1).split()[-len(region):]) == sorted(str(id(n)) for n in region)


@pytest.mark.skipif(shutil.which("dot") is None, reason="SKIPPED LOUDLY: Graphviz 'dot' is not installed")
def test_svg_parses_with_the_labels(tmp_path):
    out, params = PROGRAMS[3](derivgen)
    path, msg = render(make_dot(out, params=params), str(tmp_path / "g.svg"))
    assert msg is None
    root = ET.parse(path).getroot()
    texts = [(t.text or "").strip() for t in root.iter("{http://www.w3.org/2000/svg}text")]
    for want in ("SumBackward0", "MulBackward0", "AccumulateGrad", "x", "y", "(4, 4)", "()",
                 f"seq {out.grad_fn._sequence_nr()}"):
        assert want in texts
    titles = [a.get("{http://www.w3.org/1999/xlink}title") for a in root.iter("{http://www.w3.org/2000/svg}a")]
    assert any(t and "formulas.yaml:" in t and "mul.Tensor" in t for t in titles)


def test_without_graphviz_the_dot_source_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    out, _ = PROGRAMS[0](derivgen)
    dot = make_dot(out)
    path, msg = render(dot, str(tmp_path / "g.svg"))
    assert path.endswith("g.svg.dot") and "Graphviz" in msg
    with open(path) as fh:
        assert fh.read() == dot.source


def test_params_must_be_tensors():
    out, _ = PROGRAMS[0](derivgen)
    with pytest.raises(TypeError, match="params"):
        make_dot(out, params={"x": 1.0})
