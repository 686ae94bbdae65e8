"""``derivgen generate`` replaces the output folder as a whole, after the new package imported in a
fresh interpreter; any failure leaves the folder exactly as it was."""
import os

from derivgen import cli
from derivgen.codegen import render, swap
from tests.support.paths import REPO

TABLE = os.path.join(REPO, "formulas.yaml")


def _state(folder):
    out = {}
    for root, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(root, n)
            st = os.stat(p)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, folder)] = (fh.read(), st.st_mtime_ns)
    return out


def test_a_package_that_does_not_import_replaces_nothing(tmp_path, monkeypatch, capsys):
    out = tmp_path / "generated"
    out.mkdir()
    (out / "ops.py").write_text("x = 1\n", encoding="utf-8")
    before = _state(out)
    broken = {"__init__.py": "from . import ops\n", "ops.py": "def broken(:\n", "nodes/__init__.py": "",
              "kernels/__init__.py": ""}
    monkeypatch.setattr(render, "render_table",
                        lambda table, progress=None: render.Generation(dict(broken), [], [], "formulas.yaml"))
    assert cli.main(["generate", "--table", TABLE, "--out", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("derivgen: error: the generated package does not import: SyntaxError")
    assert err[1] == "derivgen: nothing in generated/ was changed"
    assert _state(out) == before
    assert os.listdir(tmp_path) == ["generated"]   # the temporary tree is gone


def test_changed_files_are_swapped_in_and_unchanged_ones_keep_their_bytes_and_times(tmp_path, capsys):
    out = tmp_path / "generated"
    assert cli.main(["generate", "--table", TABLE, "--out", str(out)]) == 0
    (out / "nodes" / "mul_Tensor.py").write_text("# stale\n", encoding="utf-8")
    (out / "kernels" / "leftover.py").write_text("x = 1\n", encoding="utf-8")
    (out / "kernels" / "__pycache__").mkdir(exist_ok=True)
    (out / "kernels" / "__pycache__" / "cache.nbi").write_bytes(b"numba cache")
    os.chmod(out, 0o755)
    before = _state(out)
    capsys.readouterr()
    assert cli.main(["generate", "--table", TABLE, "--out", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == ["  nodes/mul_Tensor.py", "  kernels/leftover.py (removed)"]
    after = _state(out)
    stale_module = os.path.join("nodes", "mul_Tensor.py")
    assert after[stale_module][0] != b"# stale\n"
    assert os.path.join("kernels", "leftover.py") not in after
    # the node module changed, so the import check may rewrite its bytecode (it does when the two renders
    # fall in different seconds, the resolution of a .pyc's source stamp); every other file keeps bytes and
    # times
    changed = {stale_module, os.path.join("kernels", "leftover.py")}
    changed |= {rel for rel in before if rel.startswith(os.path.join("nodes", "__pycache__", "mul_Tensor."))}
    unchanged = set(before) - changed
    assert {rel: after[rel] for rel in unchanged} == {rel: before[rel] for rel in unchanged}
    assert os.stat(out).st_mode & 0o777 == 0o755
    assert sorted(os.listdir(tmp_path)) == ["generated"]


def test_nothing_to_change_creates_no_temporary_folder(tmp_path, monkeypatch):
    out = tmp_path / "generated"
    assert cli.main(["generate", "--table", TABLE, "--out", str(out)]) == 0
    calls = []
    monkeypatch.setattr(swap, "check_import", lambda path, checks=(): calls.append(path))
    assert cli.main(["generate", "--table", TABLE, "--out", str(out)]) == 0
    assert calls == [] and os.listdir(tmp_path) == ["generated"]
