"""Shared pytest setup: the tests folder on sys.path (for ``op_samples`` and friends), repository paths,
a fresh-interpreter runner, and isolation of derivgen's global switches between tests."""
import importlib
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import derivgen  # noqa: E402


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
    path = os.path.normpath(os.path.join(REPO, "..", "shared", "seeds"))
    if not os.path.isdir(path):
        pytest.skip(f"SKIPPED LOUDLY: the seed documents are missing (looked for {path})")
    return path


@pytest.fixture(scope="session")
def table_path():
    return os.path.join(REPO, "formulas.yaml")


def run_python(code, env=None, cwd=None, timeout=120):
    """Run ``code`` in a fresh interpreter; return the CompletedProcess (text mode)."""
    full_env = dict(os.environ)
    full_env.pop("PYTHONWARNINGS", None)
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env,
                          cwd=cwd or REPO, timeout=timeout)


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
