"""The numerical check of the backward of rows without a ``forward:`` expression: samples from the
schema and ``formulas.samples.yaml``, the float64 VJP against finite differences, and its cache."""
import os
import shutil

import pytest

from derivgen import cli
from derivgen.codegen import vjp_samples
from derivgen.codegen.render import render_table
from derivgen.table import TableError
from tests.support.paths import REPO, TABLE
from tests.table.corpus import shipped_with

SAMPLES = os.path.join(REPO, "derivgen", "formulas.samples.yaml")


@pytest.fixture(scope="module")
def shipped():
    return render_table(TABLE)


def test_every_row_without_a_forward_is_checked(shipped):
    assert shipped.unchecked == []
    names = {c["name"] for c in shipped.checks}
    assert {"mm", "sum", "convolution", "index.Tensor", "gather", "native_batch_norm"} <= names
    assert all(c["diff"] for c in shipped.checks)


def test_the_shipped_backward_formulas_match_finite_differences(shipped):
    from derivgen.formula_check import check_rows   # the runtime side, in this test's interpreter
    assert check_rows(shipped.checks) == []


def _table_dir(tmp_path, data, samples=None):
    (tmp_path / "formulas.yaml").write_bytes(data)
    if samples is not None:
        (tmp_path / "formulas.samples.yaml").write_text(samples, encoding="utf-8")
    return tmp_path / "formulas.yaml"


def _generate(table, capsys):
    out = table.parent / "generated"
    rc = cli.main(["generate", "--table", str(table), "--out", str(out)])
    return rc, capsys.readouterr().err.splitlines(), out


def test_a_wrong_matrix_product_formula_is_refused_on_the_samples_given(tmp_path, capsys):
    data, line = shipped_with("  self: grad.mm(mat2.t())", "  self: grad.mm(mat2.t()) * 0.5")
    with open(SAMPLES, encoding="utf-8") as fh:
        table = _table_dir(tmp_path, data, fh.read())
    rc, err, out = _generate(table, capsys)
    assert rc == 2
    assert err[0] == (f"derivgen: error: formulas.yaml:{line}: entry 'mm': backward formula for 'self' does not "
                      "match finite differences at self[0, 0]: formula gives 0.04002433 but finite differences "
                      "give 0.08004865 (sample: self [3, 4] float64, mat2 [4, 5] float64)")
    assert err[1] == "derivgen: nothing in generated/ was changed"
    assert not out.exists()


def test_given_samples_that_do_not_fit_the_forward_are_an_error(tmp_path, capsys):
    with open(SAMPLES, encoding="utf-8") as fh:
        samples = fh.read().replace("mm: {self: [3, 4], mat2: [4, 5]}", "mm: {self: [3, 4], mat2: [5, 2]}")
    with open(TABLE, "rb") as fh:
        table = _table_dir(tmp_path, fh.read(), samples)
    rc, err, out = _generate(table, capsys)
    assert rc == 2
    with open(TABLE, encoding="utf-8") as fh:
        line = next(i for i, text in enumerate(fh, 1) if text.rstrip() == "  self: grad.mm(mat2.t())")
    assert err[0].startswith(f"derivgen: error: formulas.yaml:{line}: entry 'mm': the samples do not fit the "
                             "forward: RuntimeError: mat1 and mat2 shapes cannot be multiplied (3x4 and 5x2)")
    assert not out.exists()


@pytest.mark.parametrize("samples, line, entry, reason", [
    ("mm: {self: [3, 4]}\nnot_a_row: {self: [2]}\n", 2, "not_a_row", "samples for a row that is not in the table"),
    ("\nmm: {self: [3, 4], other: [4]}\n", 2, "mm", "sample for 'other', which is not an argument of the schema"),
    ("sin: {self: [3]}\n", 1, "sin", "samples for a row with a 'forward:' expression, whose formulas are proven "
     "against it symbolically (samples are for rows without one)"),
    ("mm: {self: [3, -4]}\n", 1, "mm", "sample for 'self': a Tensor sample is a shape [n, ...] (at most 5 sizes of "
     "at most 64) or {shape: [...], low: x, high: y} or {shape: [...], index: n}"),
    ("mm: {self: [64, 64]}\n", 1, "mm", "sample for 'self': a Tensor sample has at most 512 elements, not 4096"),
    ("mm: {self: {shape: [3], low: 2, high: 1}}\n", 1, "mm", "sample for 'self': 'low' and 'high' are two numbers, "
     "low < high"),
    ("gather: {index: {shape: [3], index: 0}}\n", 1, "gather",
     "sample for 'index': 'index' is the (positive) number of positions the indices address"),
    ("cat: {tensors: []}\n", 1, "cat",
     "sample for 'tensors': a Tensor list sample is a list of 1 to 4 Tensor samples"),
    ("sum.dim_IntList: {dim: {a: 1}}\n", 1, "sum.dim_IntList",
     "sample for 'dim': a sample is a number, true/false, a string, null or a list of numbers"),
    ("mm: [1, 2]\n", 1, "mm", "samples must be a mapping {argument: sample}"),
    ("mm: &a {self: [3, 4]}\n", 1, None, "the samples must not use YAML anchors"),
])
def test_a_malformed_samples_file_is_a_table_error_at_its_line(tmp_path, samples, line, entry, reason):
    shutil.copy(TABLE, tmp_path / "formulas.yaml")
    (tmp_path / "formulas.samples.yaml").write_text(samples, encoding="utf-8")
    with pytest.raises(TableError) as info:
        render_table(str(tmp_path / "formulas.yaml"))
    where = f"formulas.samples.yaml:{line}:" + (f" entry '{entry}':" if entry else "")
    assert str(info.value) == f"{where} {reason}"


def test_only_changed_rows_are_checked_again(tmp_path, monkeypatch, shipped):
    monkeypatch.setenv("DERIVGEN_CACHE_DIR", str(tmp_path / "cache"))
    vjp_samples.remember(shipped.checks)
    assert vjp_samples.uncached(shipped.checks) == []
    data, _ = shipped_with("  self: grad.mm(mat2.t())", "  self: grad.mm(mat2.transpose(0, 1))")
    with open(SAMPLES, encoding="utf-8") as fh:
        table = _table_dir(tmp_path, data, fh.read())
    changed = render_table(str(table))
    assert [c["name"] for c in vjp_samples.uncached(changed.checks)] == ["mm"]
