"""Every malformed or hostile table of ``corpus.py`` stops ``derivgen generate`` with exactly its
``formulas.yaml:LINE: entry 'NAME': reason`` message, and leaves the output folder untouched."""
import os

import pytest

from derivgen import cli
from tests.table.corpus import CATEGORIES

CASES = [pytest.param(data, line, entry, reason, id=f"{category}/{name}")
         for category, cases in CATEGORIES.items() for name, data, line, entry, reason in cases]


def _snapshot(folder):
    out = {}
    for root, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, folder)] = (fh.read(), os.stat(p).st_mtime_ns)
    return out


@pytest.fixture
def scratch(tmp_path):
    """A table path and an output folder holding a previous generation's files."""
    out = tmp_path / "generated"
    (out / "kernels").mkdir(parents=True)
    (out / "ops.py").write_text("# previous ops\n", encoding="utf-8")
    (out / "kernels" / "mysin.py").write_text("# previous kernel\n", encoding="utf-8")
    return tmp_path / "formulas.yaml", out


def generate(table, out):
    return cli.main(["generate", "--table", str(table), "--out", str(out)])


def test_the_corpus_has_sixty_cases_in_every_category():
    assert len(CASES) >= 60
    assert all(len(cases) >= 5 for cases in CATEGORIES.values())


@pytest.mark.parametrize("data, line, entry, reason", CASES)
def test_hostile_table_is_a_table_error(scratch, capsys, data, line, entry, reason):
    table, out = scratch
    table.write_bytes(data)
    before = _snapshot(out)
    assert generate(table, out) == 2
    err = capsys.readouterr().err.splitlines()
    where = f"formulas.yaml:{line}:" + (f" entry '{entry}':" if entry else "")
    assert err[0] == f"derivgen: error: {where} {reason}"
    assert err[1] == "derivgen: nothing in generated/ was changed"
    assert _snapshot(out) == before
    assert sorted(os.listdir(out.parent)) == ["formulas.yaml", "generated"]  # no temporary folder left
