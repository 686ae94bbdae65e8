"""``derivgen explain`` prints a node's row, how each formula was made and its kernel source, from the
generated files as data; ``derivgen generate`` shows progress only when asked or on a terminal."""
import io
import os

from derivgen import explain as explain_mod
from derivgen.cli import main
from derivgen.progress import ProgressBar, wanted
from tests.support.paths import REPO


def test_explain_mul(capsys):
    assert main(["explain", "MulBackward0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("MulBackward0: formulas.yaml:")
    assert "  self: grad * other\n  other: grad * self" in out
    assert "  self: proven:" in out and "  other: proven:" in out
    with open(os.path.join(REPO, "generated", "kernels", "mul_Tensor.py")) as fh:
        assert fh.read().rstrip() in out


def test_explain_hand_written_row_has_no_kernels(capsys):
    assert main(["explain", "MmBackward0"]) == 0
    out = capsys.readouterr().out
    assert "self: hand-written" in out and "mat2: hand-written" in out
    assert "kernels: none" in out


def test_explain_unknown_class(capsys):
    assert main(["explain", "MulBackward9"]) == 2
    err = capsys.readouterr().err
    assert "no node class 'MulBackward9'" in err and "MulBackward0" in err


def test_explain_imports_no_runtime():
    import ast
    with open(explain_mod.__file__) as fh:
        tree = ast.parse(fh.read())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert imported <= {"ast", "os"}


def test_progress_only_when_asked_or_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True
    assert not wanted(False, io.StringIO())
    assert wanted(True, io.StringIO())
    assert wanted(False, Tty())


def test_generate_check_prints_no_progress_when_piped(capsys):
    assert main(["generate", "--check"]) == 0
    captured = capsys.readouterr()
    assert "[" not in captured.err and "is current" in captured.out


def test_generate_progress_counts_every_row(capsys):
    assert main(["generate", "--check", "--progress"]) == 0
    err = capsys.readouterr().err
    with open(os.path.join(REPO, "formulas.yaml")) as fh:
        rows = sum(1 for line in fh if line.startswith("- name:"))
    assert f"] {rows}/{rows} " in err and err.endswith("\n")


def test_progress_bar_text():
    s = io.StringIO()
    bar = ProgressBar("t", stream=s, width=4)
    bar(1, 2, "abs")
    bar.close()
    assert s.getvalue() == "\rt [##..] 1/2 " + "abs".ljust(40) + "\n"
