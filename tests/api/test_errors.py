"""Errors with PyTorch's wording: autograd misuse, in-place/version-counter checks, runtime shape errors
(compared with torch where it is installed), and bad tables rejected by the generator with file, line
and entry, leaving the output folder untouched."""
import os
import re
import shutil

import numpy as np
import pytest

import derivgen as torch
from derivgen import cli
from derivgen.core.node import ERR_BACKWARD_TWICE

from tests.support.paths import REPO  # noqa: E402
TABLE = os.path.join(REPO, "formulas.yaml")

HINT = (r" Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
        r"derivgen\.autograd\.set_detect_anomaly\(True(, check_nan=False)?\)\.")


def _message(fn):
    with pytest.raises(RuntimeError) as info:
        fn()
    return str(info.value)


def _torch_message(fn):
    real = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as info:
        fn(real)
    return str(info.value).replace("torch.", "derivgen.")


# ---- autograd misuse ------------------------------------------------------------------------------

def test_backward_twice():
    x = torch.ones(3, requires_grad=True)
    y = (x.exp() * 2).sum()
    y.backward()
    assert _message(lambda: y.backward()) == ERR_BACKWARD_TWICE
    assert ERR_BACKWARD_TWICE.startswith("Trying to backward through the graph a second time (or directly access "
                                         "saved tensors after they have already been freed). Saved intermediate "
                                         "values of the graph are freed when you call .backward() or "
                                         "autograd.grad(). Specify retain_graph=True if you need to backward through "
                                         "the graph a second time or if you need to access saved tensors after "
                                         "calling backward.")


def test_implicit_grad_needs_a_scalar_output():
    x = torch.ones(3, requires_grad=True)
    assert _message(lambda: (x * 2).backward()) == "grad can be implicitly created only for scalar outputs"


def test_backward_on_a_tensor_that_does_not_require_grad():
    assert _message(lambda: torch.ones(3).sum().backward()) == \
        "element 0 of tensors does not require grad and does not have a grad_fn"
    x = torch.ones(3, requires_grad=True)
    msg = _message(lambda: torch.autograd.backward([(x * 2).sum(), torch.ones(1).sum()]))
    assert msg == "element 1 of tensors does not require grad and does not have a grad_fn"


def test_grad_output_shape_mismatch_matches_torch():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        (x * 2).backward(lib.ones(2))
    ours = _message(lambda: run(torch))
    assert ours == ("Mismatch in shape: grad_output[0] has a shape of derivgen.Size([2]) and output[0] has a "
                    "shape of derivgen.Size([3]).")
    assert ours == _torch_message(run)


# ---- version counter ------------------------------------------------------------------------------

def test_add_on_a_saved_non_leaf_input():
    a = torch.ones(3, requires_grad=True)
    b = a + 1
    c = b * b
    b.add_(1)
    assert b._version == 1
    msg = _message(lambda: c.sum().backward())
    assert re.fullmatch(r"one of the variables needed for gradient computation has been modified by an inplace "
                        r"operation: \[derivgen\.FloatTensor \[3\]\], which is output 0 of (Add|AddBackward0), is at "
                        r"version 1; expected version 0 instead\." + HINT, msg), msg


def test_mul_on_a_saved_output():
    a = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    b = a.sigmoid()
    b.mul_(2)
    msg = _message(lambda: b.sum().backward())
    assert re.fullmatch(r"one of the variables needed for gradient computation has been modified by an inplace "
                        r"operation: \[derivgen\.DoubleTensor \[2, 3\]\], which is output 0 of "
                        r"(Sigmoid|SigmoidBackward0), is at version 1; expected version 0 instead\." + HINT, msg), msg


def test_saved_leaf_modified_names_no_producer():
    x = torch.ones(3, requires_grad=True)
    w = torch.ones(3)
    y = x * w
    w.add_(1)
    msg = _message(lambda: y.sum().backward())
    assert re.fullmatch(r"one of the variables needed for gradient computation has been modified by an inplace "
                        r"operation: \[derivgen\.FloatTensor \[3\]\] is at version 1; expected version 0 "
                        r"instead\." + HINT, msg), msg


def test_version_messages_match_torch_up_to_the_node_name():
    def scenarios(lib):
        a = lib.ones(3, requires_grad=True)
        b = a + 1
        c = b * b
        b.add_(1)
        yield lambda: c.sum().backward()
        s = a.sigmoid()
        s.mul_(2)
        yield lambda: s.sum().backward()
        w = lib.ones(3)
        y = a * w
        w.add_(1)
        yield lambda: y.sum().backward()
        m = (a * 1).clone()
        m.mul_(m)  # the saved `other` is `self`, modified by this very op
        yield lambda: m.sum().backward()
    real = pytest.importorskip("torch")

    def norm(m):
        m = m.replace("torch.", "derivgen.")
        m = re.sub(r"of (\w+?)(Backward\d+)?,", r"of \1,", m)
        return m.split(" Hint:")[0]
    for ours, theirs in zip(scenarios(torch), scenarios(real)):
        with pytest.raises(RuntimeError) as ie:
            ours()
        with pytest.raises(RuntimeError) as it:
            theirs()
        assert norm(str(ie.value)) == norm(str(it.value))


# ---- in-place rules -------------------------------------------------------------------------------

def test_inplace_on_a_leaf_that_requires_grad():
    x = torch.ones(3, requires_grad=True)
    for op in (lambda: x.add_(1), lambda: x.mul_(2), lambda: x.sub_(1), lambda: x.div_(2)):
        assert _message(op) == "a leaf Variable that requires grad is being used in an in-place operation."
    assert x._version == 0
    np.testing.assert_array_equal(x._array, [1.0, 1.0, 1.0])
    with torch.no_grad():
        x.mul_(2)
    assert x._version == 1 and x.grad_fn is None


def test_inplace_on_a_non_leaf_rewrites_history():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y = x * 2
    first = y.grad_fn
    out = y.mul_(3)
    assert out is y and y._version == 1
    assert y.grad_fn is not first and y.grad_fn.name() == "MulBackward0"
    (prev, nr), (none, nr2) = y.grad_fn.next_functions
    assert prev is first and nr == 0 and none is None and nr2 == 0
    y.sum().backward()
    np.testing.assert_array_equal(x.grad._array, [6.0, 6.0, 6.0])


def _inplace_programs(lib):
    """Graphs with in-place ops on non-leaves; each returns (loss, leaves)."""
    def p1():
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = x * 2
        y.mul_(3)
        return y.sum(), [x]

    def p2():
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        z = lib.tensor([1.5, 2.0, -0.5], dtype=lib.float64, requires_grad=True)
        y = x.sin()
        y.add_(z * z)
        return (y * y).sum(), [x, z]

    def p3():
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([1.5, 2.0, -0.5], dtype=lib.float64, requires_grad=True)
        y = x.sin()
        y.div_(w)
        y.sub_(x, alpha=2)
        return (y * x).sum(), [x, w]

    def p4():
        x = lib.tensor([[0.5, -1.0], [2.0, 3.0]], dtype=lib.float64, requires_grad=True)
        y = x.clone()
        y.mul_(x)
        return y.sum(), [x]
    return [p1, p2, p3, p4]


def _walk_names(fn):
    out, seen, queue = [], set(), [fn]
    while queue:
        n = queue.pop(0)
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append((n.name().rsplit("::", 1)[-1],
                    tuple((m.name().rsplit("::", 1)[-1] if m else None, k) for m, k in n.next_functions)))
        queue.extend(m for m, _ in n.next_functions)
    return out


def test_inplace_on_non_leaves_matches_torch():
    real = pytest.importorskip("torch")
    for ours, theirs in zip(_inplace_programs(torch), _inplace_programs(real)):
        loss, leaves = ours()
        tloss, tleaves = theirs()
        assert _walk_names(loss.grad_fn) == _walk_names(tloss.grad_fn)
        np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-12)
        loss.backward()
        tloss.backward()
        for a, b in zip(leaves, tleaves):
            np.testing.assert_allclose(a.grad._array, b.grad.numpy(), rtol=1e-12, atol=1e-12)


# ---- runtime shape errors -------------------------------------------------------------------------

SHAPE_ERRORS = {
    "mm": (lambda lib: lib.ones(2, 3).mm(lib.ones(4, 5)), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    "add": (lambda lib: lib.ones(2, 3) + lib.ones(2, 4),
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"),
    "mul": (lambda lib: lib.ones(5, 1, 3) * lib.ones(2, 4, 1),
            "The size of tensor a (5) must match the size of tensor b (2) at non-singleton dimension 0"),
    "view": (lambda lib: lib.ones(2, 3).view(4), "shape '[4]' is invalid for input of size 6"),
}


@pytest.mark.parametrize("name", sorted(SHAPE_ERRORS))
def test_runtime_shape_errors(name):
    fn, expected = SHAPE_ERRORS[name]
    assert _message(lambda: fn(torch)) == expected


@pytest.mark.parametrize("name", sorted(SHAPE_ERRORS))
def test_runtime_shape_errors_match_torch(name):
    fn, _ = SHAPE_ERRORS[name]
    assert _message(lambda: fn(torch)) == _torch_message(fn)


# ---- bad tables -----------------------------------------------------------------------------------

def _snapshot(folder):
    snap = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                snap[os.path.relpath(p, folder)] = (fh.read(), os.stat(p).st_mtime_ns)
    return snap


@pytest.fixture
def out_copy(tmp_path):
    dst = tmp_path / "generated"
    shutil.copytree(os.path.join(REPO, "generated"), dst, ignore=shutil.ignore_patterns("__pycache__"))
    return str(dst)


def _table_text():
    with open(TABLE, encoding="utf-8") as fh:
        return fh.read()


def _sin_like(formula_lines):
    return "- name: mysin(Tensor self) -> Tensor\n  forward: sin(self)\n" + formula_lines + "\n"


BAD_TABLES = {
    # name: (text prepended to the table, line, entry, reason)
    "unknown_name": (_sin_like("  self: grad * cos(selff)\n"), 3, "mysin", "unknown name 'selff'"),
    "unknown_function": (_sin_like("  self: frobnicate(grad)\n"), 3, "mysin", "unknown function 'frobnicate'"),
    "argument_not_in_schema": (_sin_like("  self: grad * cos(self)\n  other: grad\n"), 4, "mysin",
                               "formula for 'other', which is not an argument of the schema"),
    "bad_schema_syntax": ("- name: mysin(Tensor self -> Tensor\n  self: grad\n\n", 1, "mysin", "bad schema syntax"),
    "unknown_type": ("- name: mysin(Tensr self) -> Tensor\n  self: grad\n\n", 1, "mysin", "unknown type 'Tensr'"),
    "duplicate_name": ("- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  forward: self * other\n"
                       "  self: grad * other\n  other: grad * self\n\n", None, "mul.Tensor",
                       "duplicate entry (first defined at line 1)"),
    "multi_output_tuple_with_grad": ("- name: two(Tensor self) -> (Tensor a, Tensor b)\n"
                                     "  output_differentiability: [True, True]\n  self: grad * 2\n\n", 3, "two",
                                     "must use grads[i]"),
    "yaml_syntax": ("- name: mysin(Tensor self) -> Tensor\n   forward: sin(self)\n  self: [grad\n\n", None, None,
                    "YAML syntax error"),
}


def _check_rejected(tmp_path, out_copy, capsys, text, line, entry, reason):
    table = tmp_path / "bad_formulas.yaml"
    table.write_text(text, encoding="utf-8")
    before = _snapshot(out_copy)
    rc = cli.main(["generate", "--table", str(table), "--out", out_copy])
    err = capsys.readouterr().err
    assert rc == 2, err
    where = f"bad_formulas.yaml:{line}:" if line else "bad_formulas.yaml:"
    assert f"derivgen: error: {where}" in err, err
    if entry:
        assert f"entry '{entry}':" in err, err
    assert reason in err, err
    assert _snapshot(out_copy) == before, "the generator changed files in the output folder on error"
    return err


@pytest.mark.parametrize("case", sorted(BAD_TABLES))
def test_bad_table_is_rejected_and_nothing_is_written(tmp_path, out_copy, capsys, case):
    prefix, line, entry, reason = BAD_TABLES[case]
    if case == "duplicate_name":
        text = _table_text()
        lines = text.splitlines()
        first = next(i for i, ln in enumerate(lines) if ln.startswith("- name: mul.Tensor("))
        line = first + 1 + prefix.count("\n")
    _check_rejected(tmp_path, out_copy, capsys, prefix + _table_text(), line, entry, reason)


def test_list_output_formula_must_use_grads(tmp_path, out_copy, capsys):
    """A Tensor[]-returning row (split) whose formula says ``grad`` instead of ``grads`` is rejected."""
    text = _table_text()
    lines = text.splitlines(keepends=True)
    idx = next(i for i, ln in enumerate(lines) if "split_backward(grads," in ln)
    lines[idx] = lines[idx].replace("split_backward(grads,", "split_backward(grad,")
    _check_rejected(tmp_path, out_copy, capsys, "".join(lines), idx + 1, "split.Tensor", "must use grads")


def test_wrong_formula_is_rejected_and_nothing_is_written(tmp_path, out_copy, capsys):
    err = _check_rejected(tmp_path, out_copy, capsys, _sin_like("  self: grad * sin(self)\n") + _table_text(), 3,
                          "mysin", "disagrees with the derivative of its forward")
    assert "nothing in generated/ was changed" in err
