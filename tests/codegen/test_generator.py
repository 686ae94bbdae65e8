"""``derivgen generate``: deterministic output, ``--check``, the committed generated/ is current, the table
can be extended with new rows (which then import and gradcheck), and formula strings are untrusted."""
import ast
import os
import shutil
import textwrap

import pytest

from tests.support.runner import run_python
from derivgen import cli
from derivgen.codegen.render import render_all
from derivgen.table import TableError

from tests.support.paths import REPO  # noqa: E402
TABLE = os.path.join(REPO, "formulas.yaml")
GENERATED = os.path.join(REPO, "generated")


def _files(folder):
    out = {}
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for n in names:
            if n.endswith(".py"):
                p = os.path.join(root, n)
                with open(p, "rb") as fh:
                    out[os.path.relpath(p, folder).replace(os.sep, "/")] = (fh.read(), os.stat(p).st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def rendered():
    return render_all(TABLE)


def test_generate_twice_changes_no_byte(tmp_path, capsys):
    out = str(tmp_path / "gen")
    assert cli.main(["generate", "--table", TABLE, "--out", out]) == 0
    first = _files(out)
    assert "nodes/__init__.py" in first and "nodes/mul_Tensor.py" in first and "ops.py" in first
    assert "kernels/__init__.py" in first
    capsys.readouterr()
    assert cli.main(["generate", "--table", TABLE, "--out", out]) == 0
    assert "nothing changed" in capsys.readouterr().out
    assert _files(out) == first  # same bytes, same modification times: nothing was rewritten


def test_committed_generated_folder_is_current(rendered):
    """Regenerating from the committed table gives the committed generated/ exactly."""
    ours = {rel: text.encode("utf-8") for rel, text in rendered.items()}
    committed = {rel: data for rel, (data, _) in _files(GENERATED).items()}
    assert set(ours) == set(committed), f"extra: {set(committed) - set(ours)}, missing: {set(ours) - set(committed)}"
    stale = sorted(rel for rel in ours if ours[rel] != committed[rel])
    assert not stale, f"generated/ is stale, run `derivgen generate`: {stale}"


def test_check_reports_a_modified_and_an_extra_file(tmp_path, capsys):
    out = tmp_path / "gen"
    shutil.copytree(GENERATED, out, ignore=shutil.ignore_patterns("__pycache__"))
    assert cli.main(["generate", "--check", "--table", TABLE, "--out", str(out)]) == 0
    node_file = out / "nodes" / "mul_Tensor.py"
    node_file.write_text(node_file.read_text(encoding="utf-8") + "\n# hand edit\n", encoding="utf-8")
    (out / "kernels" / "leftover.py").write_text("x = 1\n", encoding="utf-8")
    before = _files(str(out))
    capsys.readouterr()
    rc = cli.main(["generate", "--check", "--table", TABLE, "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 1
    assert "  nodes/mul_Tensor.py\n" in err and "kernels/leftover.py (no longer generated)" in err
    assert "ops.py" not in err
    assert _files(str(out)) == before, "--check must not write"
    # and a plain generate repairs both
    assert cli.main(["generate", "--table", TABLE, "--out", str(out)]) == 0
    assert cli.main(["generate", "--check", "--table", TABLE, "--out", str(out)]) == 0
    assert not (out / "kernels" / "leftover.py").exists()


def test_check_cli_exit_status(tmp_path):
    out = tmp_path / "gen"
    shutil.copytree(GENERATED, out, ignore=shutil.ignore_patterns("__pycache__"))
    (out / "ops.py").write_text("# stale\n", encoding="utf-8")
    proc = run_python(f"import sys; from derivgen.cli import main; "
                      f"sys.exit(main(['generate', '--check', '--table', {TABLE!r}, '--out', {str(out)!r}]))")
    assert proc.returncode == 1 and "ops.py" in proc.stderr


# ---- extending the table ------------------------------------------------------------------------

NEW_ROWS = """
- name: softsign(Tensor self) -> Tensor
  forward: self / (1 + abs(self))
  self: derived

- name: cube(Tensor self, Scalar scale=1) -> Tensor
  forward: scale * self * self * self
  self: grad * 3 * scale * self * self
"""


def test_new_rows_generate_nodes_and_ops(tmp_path):
    table = tmp_path / "formulas.yaml"
    table.write_text(open(TABLE, encoding="utf-8").read() + NEW_ROWS, encoding="utf-8")
    files = render_all(str(table))
    assert "class SoftsignBackward0(_Node):" in files["nodes/softsign.py"]
    assert "class CubeBackward0(_Node):" in files["nodes/cube.py"]
    assert '"SoftsignBackward0": "softsign",' in files["nodes/__init__.py"]
    assert "def softsign_default(self):" in files["ops.py"] and "def cube_default(self, scale=1):" in files["ops.py"]
    assert "kernels/softsign.py" in files and "kernels/cube.py" in files
    # sympy derived softsign's gradient: a fused kernel, with no opaque helper
    assert "def softsign_backward_self_1d(" in files["kernels/softsign.py"]
    # the other files are unchanged by adding rows at the end, except the shared indexes
    base = render_all(TABLE)
    changed = {rel for rel in base if files[rel] != base[rel]}
    assert changed == {"nodes/__init__.py", "ops.py", "jvp.py", "kernels/__init__.py", "__init__.py"}


def test_new_rows_import_and_gradcheck_in_a_fresh_interpreter(tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(os.path.join(REPO, "derivgen"), root / "derivgen",
                    ignore=shutil.ignore_patterns("__pycache__", "generated"))
    table = root / "formulas.yaml"
    table.write_text(open(TABLE, encoding="utf-8").read() + NEW_ROWS, encoding="utf-8")
    out = root / "derivgen" / "generated"  # where the package finds its generated/ without the editable mapping
    assert cli.main(["generate", "--table", str(table), "--out", str(out)]) == 0
    code = textwrap.dedent("""
        import numpy as np
        import derivgen as torch
        import derivgen.generated.nodes as nodes
        assert nodes.__file__.startswith(%r), nodes.__file__
        rng = np.random.default_rng(0)
        def check(fn, x, expected_name):
            x = torch.tensor(x, dtype=torch.float64, requires_grad=True)
            y = fn(x)
            assert y.grad_fn.name() == expected_name, y.grad_fn.name()
            g = torch.tensor(rng.standard_normal(y.shape), dtype=torch.float64)
            (analytic,) = torch.autograd.grad(y, x, g)
            numeric = np.zeros(x.shape)
            for i in range(x.numel()):
                d = np.zeros(x.shape); d.reshape(-1)[i] = 1e-6
                with torch.no_grad():
                    hi = fn(torch.tensor(x._array + d))._array
                    lo = fn(torch.tensor(x._array - d))._array
                numeric.reshape(-1)[i] = ((hi - lo) / 2e-6 * g._array).sum()
            assert np.allclose(analytic._array, numeric, rtol=1e-5, atol=1e-6), (analytic, numeric)
            (graph,) = torch.autograd.grad(fn(x), x, g, create_graph=True)
            assert np.allclose(graph._array, analytic._array, rtol=1e-9)
            print(expected_name, "ok")
        x = rng.uniform(-2, 2, (3, 4))
        check(torch.softsign, x, "SoftsignBackward0")
        check(lambda t: t.softsign(), x, "SoftsignBackward0")
        check(lambda t: torch.cube(t, 1.5), x, "CubeBackward0")
        y = torch.softsign(torch.tensor([-1.0, 0.0, 3.0]))
        print(y)
    """ % str(root))
    proc = run_python(code, env={"PYTHONPATH": str(root)}, cwd=str(root), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["SoftsignBackward0 ok", "SoftsignBackward0 ok", "CubeBackward0 ok",
                                        "tensor([-0.5000,  0.0000,  0.7500])"]


# ---- untrusted formula strings ------------------------------------------------------------------

INJECTIONS = [
    "__import__('os').system('touch {marker}')",
    "grad * ().__class__",
    "grad.__class__",
    "(lambda: grad)()",
    "sum([g for g in grads])",
    "grad * {{1: 2}}[1]",
    "grad._version",
    "grad * 'abc'",
    "getattr(grad, 'data')",
    "open('/etc/passwd')",
    "eval('grad')",
    "grad if (x := 1) else grad",
    "grad; import os",
]


@pytest.mark.parametrize("formula", INJECTIONS)
def test_injection_in_a_formula_is_rejected(tmp_path, formula):
    marker = tmp_path / "PWNED"
    f = formula.format(marker=marker)
    row = f"- name: mysin(Tensor self) -> Tensor\n  forward: sin(self)\n  self: \"{f}\"\n\n"
    table = tmp_path / "formulas.yaml"
    table.write_text(row + open(TABLE, encoding="utf-8").read(), encoding="utf-8")
    with pytest.raises(TableError) as info:
        render_all(str(table))
    assert info.value.line == 3 and info.value.entry == "mysin"
    assert not marker.exists()


@pytest.mark.parametrize("forward", ["__import__('os').getcwd()", "self.__class__", "'abc'", "[s for s in self]"])
def test_injection_in_a_forward_is_rejected(tmp_path, forward):
    row = f"- name: mysin(Tensor self) -> Tensor\n  forward: \"{forward}\"\n  self: grad\n\n"
    table = tmp_path / "formulas.yaml"
    table.write_text(row + open(TABLE, encoding="utf-8").read(), encoding="utf-8")
    with pytest.raises(TableError) as info:
        render_all(str(table))
    assert info.value.line == 2 and info.value.entry == "mysin"


def _calls_in_code(files, names):
    """Calls of ``names`` in the generated modules' code (not inside strings)."""
    found = []
    for rel, text in files.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if name in names:
                    found.append((rel, node.lineno, name))
    return found


def test_table_text_cannot_escape_generated_docstrings(tmp_path):
    """Comments and schema text are copied into generated docstrings: quotes must not end them."""
    row = ('- name: mysin(Tensor self) -> Tensor\n'
           '  # """; __import__("os").system("touch x"); """ \' \\\n'
           '  forward: sin(self)\n  self: grad * cos(self)\n\n')
    table = tmp_path / "formulas.yaml"
    table.write_text(row + open(TABLE, encoding="utf-8").read(), encoding="utf-8")
    files = render_all(str(table))
    assert "class MysinBackward0" in files["nodes/mysin.py"]
    assert not _calls_in_code(files, {"system", "__import__"})


def test_string_defaults_in_a_schema_are_restricted(tmp_path):
    row = ("- name: mysin(Tensor self, str x=\"\"\"+__import__('os').system('touch x')+\"\"\") -> Tensor\n"
           "  forward: sin(self)\n  self: grad * cos(self)\n\n")
    table = tmp_path / "formulas.yaml"
    table.write_text(row + open(TABLE, encoding="utf-8").read(), encoding="utf-8")
    with pytest.raises(TableError) as info:
        render_all(str(table))
    assert info.value.line == 1 and "string default" in str(info.value)
