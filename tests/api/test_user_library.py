"""User op libraries end to end: the example library (examples/user_library) built from an unrelated
directory by `derivgen library build`, loaded with `derivgen.load_library`, its nodes, gradients and
double backward checked against finite differences and PyTorch; wrong formulas refused; stale builds
and builds for another derivgen reported; `@derivgen.library.op`; `derivgen cache`."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import derivgen
from derivgen.autograd import gradcheck, gradgradcheck
from derivgen.library import LibraryError, load_library
from tests.support.paths import REPO

EXAMPLE = os.path.join(REPO, "examples", "user_library")


def _derivgen(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "derivgen", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600)


def _copy_example(dest):
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("__pycache__", "myproj_ops", "build", "*.egg-info"))
    return dest


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The example copied to a temp folder and built from another, unrelated one."""
    root = tmp_path_factory.mktemp("userlib")
    src = _copy_example(root / "src")
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    out = root / "out"
    proc = _derivgen("library", "build", str(src / "ops.yaml"), "--package", "myproj_ops", "--out", str(out),
                     cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    sys.path[:0] = [str(out), str(src)]
    return dict(root=root, src=src, out=out, elsewhere=elsewhere, stdout=proc.stdout)


@pytest.fixture(scope="module")
def myproj(built):
    return load_library("myproj_ops")


def test_build_checks_and_writes_the_package(built):
    assert "1 non-elementwise row(s) of ops.yaml pass the numeric check" in built["stdout"]
    pkg = built["out"] / "myproj_ops"
    assert sorted(p.name for p in pkg.iterdir() if p.name != "__pycache__") == [
        "__init__.py", "kernels", "library.json", "nodes.py", "ops.py"]
    manifest = json.loads((pkg / "library.json").read_text())
    assert manifest["derivgen_version"] == derivgen.__version__
    with open(os.path.join(REPO, "derivgen", "formulas.yaml"), "rb") as fh:
        import hashlib
        assert manifest["shipped_table_sha256"] == hashlib.sha256(fh.read()).hexdigest()
    assert not list(built["elsewhere"].iterdir()), "the build wrote into the directory it ran in"


def test_ops_are_registered_in_their_namespace_and_as_methods(myproj):
    assert derivgen.ops.myproj is myproj
    x = derivgen.tensor([[3.0, -4.0], [0.5, 1.0]], dtype=derivgen.float64, requires_grad=True)
    assert myproj.softsign(x).grad_fn.name() == "SoftsignBackward0"
    assert x.softsign().grad_fn.name() == "SoftsignBackward0"
    r = x.rownorm()
    assert r.grad_fn.name() == "RownormBackward0"
    assert r.grad_fn.next_functions[0][0].name() == "derivgen::autograd::AccumulateGrad"
    np.testing.assert_allclose(r.detach().numpy(), [5.0, np.hypot(0.5, 1.0)])


def test_gradients_and_double_backward(myproj):
    x = derivgen.randn(3, 4, dtype=derivgen.float64, requires_grad=True)
    for op in (myproj.softsign, myproj.rownorm, lambda t: myproj.rownorm(myproj.softsign(t) * 3)):
        assert gradcheck(op, (x,))
        assert gradgradcheck(op, (x,))


def test_library_kernels_are_cached_in_the_user_cache_dir(built, myproj):
    from derivgen.kernels import kernel_cache
    x = derivgen.randn(5, dtype=derivgen.float32, requires_grad=True)
    myproj.softsign(x).sum().backward()
    package = str(built["out"] / "myproj_ops")
    if kernel_cache.CACHE:
        assert package in kernel_cache.cache_dirs.sources
    assert not [p for p in (built["out"] / "myproj_ops").rglob("*") if p.suffix in (".nbi", ".nbc")]


def test_values_and_gradients_match_pytorch(myproj):
    torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")
    data = np.random.default_rng(3).standard_normal((4, 5))
    x = derivgen.tensor(data, requires_grad=True)
    t = torch.tensor(data, requires_grad=True)
    (myproj.softsign(x).sum() + myproj.rownorm(x).sum()).backward()
    (torch.nn.functional.softsign(t).sum() + torch.linalg.vector_norm(t, dim=-1).sum()).backward()
    np.testing.assert_allclose(myproj.rownorm(x).detach().numpy(),
                               torch.linalg.vector_norm(t, dim=-1).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_library_check_passes_then_reports_a_stale_build(built):
    table = built["src"] / "ops.yaml"
    ok = _derivgen("library", "check", str(table), "--out", str(built["out"]), cwd=built["elsewhere"])
    assert ok.returncode == 0, ok.stderr
    assert "is current" in ok.stdout
    edited = built["root"] / "edited"
    shutil.copytree(built["src"], edited)
    text = (edited / "ops.yaml").read_text().replace("self: derived", "self: grad / ((1 + abs(self)) * (1 + abs(self)))")
    (edited / "ops.yaml").write_text(text)
    stale = _derivgen("library", "check", str(edited / "ops.yaml"), "--package", "myproj_ops",
                      "--out", str(built["out"]), cwd=built["elsewhere"])
    assert stale.returncode == 1
    assert "is stale" in stale.stderr and "nodes.py" in stale.stderr and "derivgen library build" in stale.stderr


def test_wrong_hand_formula_is_refused_and_nothing_written(built):
    bad = built["root"] / "bad"
    shutil.copytree(built["src"], bad)
    table = bad / "ops.yaml"
    text = table.read_text()
    formula = "self: grad.unsqueeze(-1) * self / result.unsqueeze(-1)"
    assert formula in text
    table.write_text(text.replace(formula, "self: grad.unsqueeze(-1) * self / (2 * result.unsqueeze(-1))"))
    out = built["root"] / "bad_out"
    proc = _derivgen("library", "build", str(table), "--package", "bad_ops", "--out", str(out), cwd=built["elsewhere"])
    assert proc.returncode == 1
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip() == "samples:")
    assert f"ops.yaml:{line}: entry 'rownorm': the gradient of the formula disagrees with finite differences" \
        in proc.stderr
    assert "nothing was written" in proc.stderr
    assert not out.exists()


def _variant(built, name, edit):
    """A copy of the built package under another name, its manifest edited."""
    dest = built["out"] / name
    shutil.copytree(built["out"] / "myproj_ops", dest, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = json.loads((dest / "library.json").read_text())
    edit(manifest)
    (dest / "library.json").write_text(json.dumps(manifest))


def test_library_built_for_another_derivgen_says_rebuild(built):
    _variant(built, "old_ops", lambda m: m.update(derivgen_version="0.0.1"))
    with pytest.raises(LibraryError, match=r"built by derivgen 0\.0\.1 .* rebuild with `derivgen library build "
                                           r"ops\.yaml --package old_ops`"):
        load_library("old_ops")
    _variant(built, "moved_ops", lambda m: m.update(shipped_table_sha256="0" * 64))
    with pytest.raises(LibraryError, match="rebuild with `derivgen library build"):
        load_library("moved_ops")


def test_shadowing_an_existing_op_is_refused_at_load(built):
    def shadow(m):
        m["rows"][0]["base"] = "sin"
        m["namespace"] = "shadowing"
    _variant(built, "shadow_ops", shadow)
    with pytest.raises(LibraryError, match="'sin' shadows an existing op; mark its row 'override: true'"):
        load_library("shadow_ops")
    _variant(built, "clash_ops", lambda m: m.update(namespace="binding", methods=False))  # derivgen.ops.binding is a module
    with pytest.raises(LibraryError, match="namespace 'binding' clashes with derivgen.ops.binding"):
        load_library("clash_ops")
    with pytest.raises(ModuleNotFoundError, match="no op library named 'absent_ops'"):
        load_library("absent_ops")


HELPER_TABLE = """\
- name: rnorm(Tensor self) -> Tensor
  forward_fn: helperproj.fwd:rnorm
  helpers:
    rnorm_back: helperproj.fwd:rnorm_back
  self: rnorm_back(grad, self, result)
  samples:
    - self: [3, 2]
- name: rnorm2(Tensor self) -> Tensor
  forward_fn: helperproj.fwd:rnorm
  helpers:
    rnorm2_back: {array: helperproj.fwd:rnorm_back, graph: helperproj.fwd:rnorm_back_graph}
  self: rnorm2_back(grad, self, result)
  samples:
    - self: [3, 2]
"""

HELPER_CODE = '''\
import numpy as np


def rnorm(self):
    return np.sqrt(np.sum(self * self, axis=-1))


def rnorm_back(grad, self, result):
    return grad[..., None] * self / result[..., None]


def rnorm_back_graph(grad, self, result):
    return grad.unsqueeze(-1) * self / result.unsqueeze(-1)
'''


def test_helpers_array_and_graph_versions(built):
    src = built["root"] / "helper_src"
    (src / "helperproj").mkdir(parents=True)
    (src / "helperproj" / "__init__.py").write_text("")
    (src / "helperproj" / "fwd.py").write_text(HELPER_CODE)
    (src / "ops.yaml").write_text(HELPER_TABLE)
    out = built["root"] / "helper_out"
    proc = _derivgen("library", "build", str(src / "ops.yaml"), "--package", "helper_ops", "--out", str(out),
                     cwd=built["elsewhere"])
    assert proc.returncode == 0, proc.stderr
    sys.path[:0] = [str(out), str(src)]
    ns = load_library("helper_ops")
    x = derivgen.randn(3, 2, dtype=derivgen.float64, requires_grad=True)
    assert gradcheck(ns.rnorm, (x,))
    # a differentiable gradient (create_graph) needs the helper's Tensor version, which the row lacks
    with pytest.raises(RuntimeError, match="double backward through the helper 'rnorm_back' of 'rnorm' "
                                           r"\(ops.yaml, line 1\) needs its Tensor version"):
        derivgen.autograd.grad(ns.rnorm(x).sum(), x, create_graph=True)
    # with a graph version, double backward runs it (and the build ran gradgradcheck on the samples)
    assert "2 non-elementwise row(s) of ops.yaml pass the numeric check" in proc.stdout
    assert gradcheck(ns.rnorm2, (x,)) and gradgradcheck(ns.rnorm2, (x,))


def test_op_decorator_compiles_into_the_cache_dir_on_first_use(tmp_path, monkeypatch):
    from derivgen.config import settings
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path / "cache"))

    @derivgen.library.op("softsign(Tensor self) -> Tensor", forward="self / (1 + abs(self))", self="derived")
    def softsign(self):
        """softsign, as torch.nn.functional.softsign"""

    assert not (tmp_path / "cache").exists()  # nothing is compiled before the first call
    x = derivgen.tensor([-2.0, 0.5, 3.0], dtype=derivgen.float64, requires_grad=True)
    y = softsign(x)
    assert y.grad_fn.name() == "SoftsignBackward0"
    np.testing.assert_allclose(y.detach().numpy(), [-2 / 3, 0.5 / 1.5, 0.75])
    assert gradcheck(softsign, (x,)) and gradgradcheck(softsign, (x,))
    (folder,) = (tmp_path / "cache" / "libraries").iterdir()
    assert (folder / "ops.yaml").exists() and list(folder.glob("derivgen_user_*/library.json"))
    assert softsign.__doc__ == "softsign, as torch.nn.functional.softsign"

    @derivgen.library.op("badsign(Tensor self) -> Tensor", forward="self / (1 + abs(self))",
                         self="grad / (1 + abs(self))")
    def badsign(self):
        pass
    with pytest.raises(LibraryError, match="entry 'badsign': formula for 'self' disagrees with the derivative"):
        badsign(x)


def test_cache_info_and_clear(tmp_path):
    cache = tmp_path / "derivgen"
    (cache / "numba").mkdir(parents=True)
    (cache / "numba" / "k.nbi").write_bytes(b"x" * 2048)
    env = dict(os.environ, DERIVGEN_CACHE_DIR=str(cache))
    info = _derivgen("cache", "info", cwd=tmp_path, env=env)
    assert info.returncode == 0, info.stderr
    assert info.stdout.startswith(f"{cache}: 1 files") and "numba/: 1 files" in info.stdout
    (cache / "mine.txt").write_text("not derivgen's")
    clear = _derivgen("cache", "clear", cwd=tmp_path, env=env)
    assert clear.returncode == 0, clear.stderr
    assert f"removed numba/ from {cache}" in clear.stdout
    assert sorted(p.name for p in cache.iterdir()) == ["mine.txt"]  # never a file derivgen did not write


OVERRIDE_TABLE = """\
namespace: over
methods: true
ops:
  - name: sin(Tensor self) -> Tensor
    forward: sin(self)
    self: grad * cos(self)
    override: true
"""


def test_override_replaces_a_shipped_op_as_method(built):
    # in a fresh interpreter: replacing Tensor.sin here would change every later test
    src = built["root"] / "override_src"
    src.mkdir()
    (src / "ops.yaml").write_text(OVERRIDE_TABLE)
    out = built["root"] / "override_out"
    proc = _derivgen("library", "build", str(src / "ops.yaml"), "--package", "over_ops", "--out", str(out),
                     cwd=built["elsewhere"])
    assert proc.returncode == 0, proc.stderr
    code = ("import derivgen; ns = derivgen.load_library('over_ops'); "
            "x = derivgen.tensor([0.5], requires_grad=True); y = x.sin(); y.backward(); "
            "print(type(y.grad_fn).__module__, y.grad_fn.name(), round(x.grad.item(), 6), ns.sin is x.sin.__func__)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=str(out))
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["over_ops.nodes", "SinBackward0", str(round(float(np.cos(np.float32(0.5))), 6)),
                                  "True"]
