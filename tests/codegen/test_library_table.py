"""User op libraries on the generator side: a user table resolves against the shipped one, its rows
are proven or refused with ``file:line: entry 'NAME': reason``, and no user code is imported."""
import os
import sys
import textwrap

import pytest

from derivgen.codegen.library import SHIPPED_TABLE, build_library, load_user_table
from derivgen.table import TableError
from tests.support.paths import REPO, TABLE


def _table(tmp_path, text):
    path = tmp_path / "ops.yaml"
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_shipped_table_is_the_one_table():
    # the wheel ships derivgen/formulas.yaml; the checkout's formulas.yaml, which `derivgen generate` reads
    # by default, is a link to it, so there is one table
    assert SHIPPED_TABLE == os.path.join(REPO, "derivgen", "formulas.yaml")
    assert os.path.islink(TABLE) and os.path.realpath(TABLE) == os.path.realpath(SHIPPED_TABLE)


def test_library_keys_are_read_aside_and_lines_kept(tmp_path):
    path = _table(tmp_path, """\
        namespace: myproj
        methods: true
        ops:
          - name: rownorm(Tensor self) -> Tensor
            forward_fn: myproj.fwd:rownorm
            helpers:
              rownorm_back: {array: myproj.fwd:back, graph: myproj.fwd:back_graph}
            samples:
              - self: [3, 4]
            self: rownorm_back(grad, self, result)
        """)
    table = load_user_table(path, "myproj_ops")
    assert (table.namespace, table.methods) == ("myproj", True)
    (entry,) = table.entries
    assert entry.line == 4 and entry.formulas[0].line == 10
    x = table.extras[entry.name]
    assert x.forward_fn == "myproj.fwd:rownorm"
    assert x.helpers == {"rownorm_back": ("myproj.fwd:back", "myproj.fwd:back_graph")}
    assert x.samples == [{"self": [3, 4]}]


def test_build_resolves_shipped_ops_without_importing_user_code(tmp_path):
    path = _table(tmp_path, """\
        - name: rownorm(Tensor self) -> Tensor
          forward_fn: not_installed_anywhere.fwd:rownorm
          self: grad.unsqueeze(-1) * self / result.unsqueeze(-1)
          samples:
            - self: [3, 4]
        - name: softsign(Tensor self) -> Tensor
          forward: self / (1 + abs(self))
          self: derived
        """)
    files, manifest = build_library(path, "mylib")
    assert "not_installed_anywhere" not in sys.modules
    assert "from not_installed_anywhere.fwd import rownorm as _ufw_rownorm" in files["ops.py"]
    assert "class RownormBackward0(_Node)" in files["nodes.py"] and "class SoftsignBackward0" in files["nodes.py"]
    # derivgen's own ops: numpy forwards on the fast path, the op registry on the graph path
    assert "_fw.unsqueeze(" in files["nodes.py"] and "_ops.unsqueeze_default(" in files["nodes.py"]
    assert "return getattr(_registry.aten, name)" in files["ops.py"]
    assert '_registry.namespace("mylib").register_all' in files["ops.py"]
    assert "_registry.aten.register_all" not in files["ops.py"]
    assert "_observe.call_op('mylib::rownorm'" in files["ops.py"]  # the profiler names the library's op
    # no shipped row is copied: only the two user rows have kernels, nodes and functions
    assert sorted(f for f in files if f.startswith("kernels/")) == [
        "kernels/__init__.py", "kernels/rownorm.py", "kernels/softsign.py"]
    assert files["nodes.py"].count("(_Node):") == 2
    assert manifest["namespace"] == "mylib" and len(manifest["shipped_table_sha256"]) == 64
    assert [r["check"] for r in manifest["rows"]] == [True, False]


def _refused(tmp_path, text):
    path = _table(tmp_path, text)
    with pytest.raises(TableError) as info:
        build_library(path, "mylib")
    return str(info.value)


def test_wrong_elementwise_formula_is_refused_with_file_line_entry(tmp_path):
    msg = _refused(tmp_path, """\
        - name: softsign(Tensor self) -> Tensor
          forward: self / (1 + abs(self))
          self: grad / (1 + abs(self))
        """)
    assert msg.startswith("ops.yaml:3: entry 'softsign': formula for 'self' disagrees with the derivative")


def test_shadowing_a_shipped_op_needs_override(tmp_path):
    msg = _refused(tmp_path, """\
        - name: sin(Tensor self) -> Tensor
          forward: sin(self)
          self: derived
        """)
    assert msg.startswith("ops.yaml:1: entry 'sin': 'sin' is an op of derivgen's own table")
    path = _table(tmp_path, """\
        - name: sin(Tensor self) -> Tensor
          forward: sin(self)
          self: derived
          override: true
        """)
    files, manifest = build_library(path, "mylib")
    assert manifest["rows"][0]["override"] is True


@pytest.mark.parametrize("rows, reason", [
    ("- name: f(Tensor self) -> Tensor\n  self: grad\n  samples:\n    - self: [2]\n",
     "ops.yaml:1: entry 'f': no forward: give the row an elementwise 'forward:' expression or 'forward_fn:"),
    ("- name: f(Tensor self) -> Tensor\n  forward_fn: m.fwd:f\n  self: grad\n",
     "ops.yaml:1: entry 'f': a non-elementwise row is checked numerically at build time: give it 'samples:'"),
    ("- name: f(Tensor self) -> Tensor\n  forward_fn: os.system('x')\n  self: grad\n",
     "ops.yaml:2: entry 'f': forward_fn must be a dotted path 'package.module:function'"),
    ("- name: f(Tensor self) -> Tensor\n  forward: self * 2\n  self: grad * frobnicate(self)\n",
     "ops.yaml:3: entry 'f': in formula for 'self': unknown function 'frobnicate'"),
    ("- name: f(Tensor self) -> Tensor\n  forward_fn: m.fwd:f\n  helpers:\n    h: {array: m.fwd:h}\n"
     "  self: h(grad, self)\n  samples:\n    - self: [2]\n  self2: grad\n",
     "ops.yaml:8: entry 'f': formula for 'self2', which is not an argument of the schema"),
])
def test_bad_rows_are_refused(tmp_path, rows, reason):
    assert _refused(tmp_path, rows).startswith(reason)


def test_overloads_bind_by_arity_and_keywords(tmp_path):
    # sum(grad * result, [-1], True) is sum.dim_IntList; sum(x) alone is sum(Tensor, *, dtype)
    path = _table(tmp_path, """\
        - name: softmax_last(Tensor self) -> Tensor
          forward_fn: m.fwd:softmax_last
          self: result * (grad - sum(grad * result, [-1], True))
          samples:
            - self: [2, 3]
        - name: total(Tensor self) -> Tensor
          forward_fn: m.fwd:total
          self: grad.expand(self.sym_sizes()) * sum(self)
          samples:
            - self: [3]
        """)
    files, _ = build_library(path, "mylib")
    nodes = files["nodes.py"]
    assert "_fw.sum_dim_IntList(" in nodes and "_ops.sum_dim_IntList(" in nodes
    assert "_fw.sum(self)" in nodes and "_ops.sum_default(self)" in nodes
    msg = _refused(tmp_path, """\
        - name: g(Tensor self) -> Tensor
          forward_fn: m.fwd:g
          self: sum(grad, [0], True, bogus=1)
          samples:
            - self: [2]
        """)
    assert msg.startswith("ops.yaml:3: entry 'g': in formula for 'self': no overload of sum() takes 3 positional")


def test_helper_without_graph_version_becomes_a_clear_error(tmp_path):
    path = _table(tmp_path, """\
        - name: f(Tensor self) -> Tensor
          forward_fn: m.fwd:f
          helpers:
            f_back: m.fwd:f_back
          self: f_back(grad, self)
          samples:
            - self: [2]
        """)
    files, manifest = build_library(path, "mylib")
    assert "from m.fwd import f_back as _uh_f_back" in files["nodes.py"]
    assert "def _uhg_f_back(*args, **kwargs):" in files["nodes.py"]
    assert "needs its Tensor version: give 'graph: package.module:function'" in files["nodes.py"]
    assert manifest["rows"][0]["graph_check"] is False
