"""Shared pytest fixtures: the library under test (derivgen, then PyTorch as the oracle), repository
paths, a fresh-interpreter runner, and isolation of derivgen's global switches between tests."""
import importlib
import os

import pytest

import derivgen
from derivgen.kernels import interpreted
from tests.support import paths
from tests.support.runner import run_python

REPO = paths.REPO

# Every kernel runs compiled in the test processes, whatever the calls before a test were; the array
# forms that a fresh process's first calls run are compared with the loops in tests/kernels/test_interpreted.py.
interpreted.stop()


@pytest.fixture(params=["derivgen", "torch"])
def torch(request):
    """The module a test body runs against: derivgen, then real PyTorch (to prove the expectation is
    PyTorch's), skipped loudly when PyTorch is not installed."""
    if request.param == "torch":
        return pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed, so the PyTorch "
                                                   "oracle run of this test cannot prove the expectation")
    return importlib.import_module("derivgen")


@pytest.fixture(scope="session")
def repo_root():
    return REPO


@pytest.fixture(scope="session")
def seeds_dir():
    path = paths.seeds_dir()
    if not os.path.isdir(path):
        pytest.skip(f"SKIPPED LOUDLY: the seed documents are missing (looked for {path}; set DERIVGEN_SEEDS_DIR)")
    return path


@pytest.fixture(scope="session")
def table_path():
    return paths.TABLE


@pytest.fixture
def python_runner():
    return run_python


@pytest.fixture(autouse=True)
def _restore_derivgen_state():
    """A failing test must not leave the default dtype or grad mode changed for the next one."""
    from derivgen.core import grad_mode
    dtype = derivgen.get_default_dtype()
    enabled = grad_mode.is_grad_enabled()
    yield
    derivgen.set_default_dtype(dtype)
    grad_mode._set_enabled(enabled)
