"""The wheel holds every package of the tree: pyproject.toml lists packages by hand (generated/ is mapped
to derivgen.generated), so a new package missing from the list would be absent from an installed
derivgen while every test of the checkout passes."""
import os

import pytest

from tests.support.paths import REPO

tomllib = pytest.importorskip("tomllib", reason="SKIPPED LOUDLY: tomllib (Python 3.11+) reads pyproject.toml")


def _packages(folder, prefix):
    found = set()
    for root, dirs, files in os.walk(os.path.join(REPO, folder)):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        if "__init__.py" in files:
            rel = os.path.relpath(root, os.path.join(REPO, folder))
            found.add(prefix if rel == "." else prefix + "." + rel.replace(os.sep, "."))
    return found


def test_pyproject_lists_every_package():
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as fh:
        listed = set(tomllib.load(fh)["tool"]["setuptools"]["packages"])
    actual = _packages("derivgen", "derivgen") | _packages("generated", "derivgen.generated")
    assert actual - listed == set(), f"add to pyproject.toml's packages: {sorted(actual - listed)}"
    assert listed - actual == set(), f"listed but not in the tree: {sorted(listed - actual)}"
