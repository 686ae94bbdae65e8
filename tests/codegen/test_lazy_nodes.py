"""Node classes live one per module under ``generated/nodes/`` and load on first use (the package's
``__getattr__``): importing derivgen reads no node module, an op that records a node loads that node's
module only, and ``derivgen generate`` still proves that every node module imports."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from derivgen.codegen.swap import ImportCheckFailed, check_import
from derivgen.generated import nodes
from tests.support.paths import GENERATED

_LOADED = "sorted(n for n in sys.modules if n.startswith('derivgen.generated.nodes.'))"


def _in_fresh_process(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_loads_no_node_module_and_recording_loads_only_its_own():
    code = ("import json, sys\n"
            "import derivgen\n"
            f"at_import = {_LOADED}\n"
            "x = derivgen.tensor([0.5, 1.0], dtype=derivgen.float64, requires_grad=True)\n"
            "with derivgen.no_grad():\n"
            "    x.cos()\n"
            f"unrecorded = {_LOADED}\n"
            "y = x.sin().sum()\n"
            "y.backward()\n"
            "from derivgen.generated import nodes\n"
            f"print(json.dumps([at_import, unrecorded, {_LOADED}, type(y.grad_fn) is nodes.SumBackward0,\n"
            "                  type(y.grad_fn).__name__, x.grad.tolist()]))\n")
    at_import, unrecorded, recorded, same_class, name, grad = _in_fresh_process(code)
    assert at_import == [] and unrecorded == []
    assert recorded == ["derivgen.generated.nodes.sin", "derivgen.generated.nodes.sum"]
    assert same_class and name == "SumBackward0"
    assert grad == pytest.approx([0.8775825618903728, 0.5403023058681398])


def test_every_indexed_class_is_listed_and_found_in_its_module():
    index = nodes._MODULE_OF
    assert len(index) > 200 and set(index) <= set(dir(nodes))
    for name in ("MulBackward0", "ConvolutionBackward0", "CopyBackwards"):
        cls = getattr(nodes, name)
        assert cls.__name__ == name and cls.__module__ == f"derivgen.generated.nodes.{index[name]}"
        assert vars(nodes)[name] is cls  # a plain attribute after the first lookup
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchBackward0'"):
        nodes.NoSuchBackward0


def test_generate_refuses_a_tree_with_a_node_module_that_does_not_import(tmp_path):
    tree = tmp_path / "generated"
    shutil.copytree(GENERATED, tree, ignore=shutil.ignore_patterns("__pycache__"))
    # nothing imports this module when derivgen is imported: only the import check's loop reaches it
    (tree / "nodes" / "tanh.py").write_text("raise ImportError('tanh node module is broken')\n", encoding="utf-8")
    with pytest.raises(ImportCheckFailed, match="tanh node module is broken"):
        check_import(str(tree))
    shutil.copy(os.path.join(GENERATED, "nodes", "tanh.py"), tree / "nodes" / "tanh.py")
    check_import(str(tree))
