"""Numba's on-disk kernel cache: it must never serve a stale kernel, and derivgen must still import and
compute when no cache directory is writable."""
import os
import re
import subprocess
import sys

from derivgen.codegen.render import render_all, runtime_helpers_hash

from tests.support.paths import REPO  # noqa: E402
TABLE = os.path.join(REPO, "formulas.yaml")


def test_import_and_compute_without_any_writable_cache_dir():
    # directories under /proc cannot be created, not even by root: the probe must fall back to a private
    # temp directory or turn caching off, instead of letting numba raise at decoration time.
    code = ("import tempfile, derivgen as torch, derivgen.kernels.kernel_cache as k\n"
            "assert k.CACHE is False or k.cache_dirs.root.startswith(tempfile.gettempdir())\n"
            "x = torch.tensor([0.5, 1.5], requires_grad=True)\n"
            "y = (x.sigmoid() * x).sum(); y.backward()\n"
            "print(round(float(y), 6), [round(v, 6) for v in x.grad.tolist()])\n")
    # (every kernel compiled, as in the tests below: not its array form first)
    env = dict(os.environ, DERIVGEN_INTERPRETED_CALLS="0", DERIVGEN_CACHE_DIR="/proc/derivgen-no-cache-here",
               TMPDIR="/proc/no-tmp-either")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    import math
    s = [1 / (1 + math.exp(-v)) for v in (0.5, 1.5)]
    expected_y = round(s[0] * 0.5 + s[1] * 1.5, 6)
    expected_g = [round(si + v * si * (1 - si), 6) for si, v in zip(s, (0.5, 1.5))]
    assert out.stdout.split() == [str(expected_y)] + [str(expected_g).split()[0], str(expected_g).split()[1]]


def test_probe_turns_caching_off_when_nothing_is_writable(monkeypatch):
    import derivgen.kernels.kernel_cache as k
    monkeypatch.setattr(k, "_writable", lambda path: False)
    assert k._choose_cache() is False


def _cache_files(root):
    found = set()
    for base, dirs, files in os.walk(root):
        found.update(os.path.join(base, f) for f in files if f.endswith((".nbi", ".nbc")))
    return found


def test_kernels_are_cached_in_the_user_cache_dir_and_never_in_the_package(tmp_path):
    package_dirs = [os.path.join(REPO, "derivgen"), os.path.join(REPO, "generated")]
    before = set().union(*(_cache_files(d) for d in package_dirs))
    code = ("import derivgen as torch\n"
            "x = torch.linspace(0.1, 2.0, 7, dtype=torch.float64, requires_grad=True)\n"
            "(x.log1p() * x.atan()).sum().backward()\n"
            "print(x.grad.sum().item())\n")
    env = dict(os.environ, DERIVGEN_INTERPRETED_CALLS="0", DERIVGEN_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    cached = _cache_files(str(tmp_path / "cache" / "numba"))
    assert any("log1p" in os.path.basename(f) for f in cached), sorted(cached)[:5]
    assert set().union(*(_cache_files(d) for d in package_dirs)) == before


def _stamps(files):
    out = {}
    for rel, text in files.items():
        if rel.startswith("kernels/") and rel != "kernels/__init__.py":
            row = re.search(r"# row sha256: (\w+)", text).group(1)
            helpers = re.search(r"# runtime helpers sha256: (\w+)", text).group(1)
            out[rel] = (row, helpers)
    return out


def test_every_kernel_file_is_stamped_with_its_row_and_the_runtime_helpers(tmp_path):
    stamps = _stamps(render_all(TABLE))
    assert stamps
    helpers = runtime_helpers_hash()
    assert all(h == helpers for _, h in stamps.values())


def test_editing_one_row_changes_only_that_rows_kernel_file(tmp_path):
    # numba keys its cache on the source file's content: a changed formula must change its kernel file
    # (so numba recompiles it), and only that file, so the rest of the cache stays valid
    with open(TABLE) as fh:
        text = fh.read()
    assert "  self: grad * result * (1 - result)\n" in text
    edited = text.replace("  self: grad * result * (1 - result)\n", "  self: grad * (result - result * result)\n", 1)
    table = tmp_path / "formulas.yaml"
    table.write_text(edited)
    before, after = render_all(TABLE), render_all(str(table))
    changed = sorted(rel for rel in before if rel.startswith("kernels/") and rel != "kernels/__init__.py"
                     and before[rel] != after[rel])
    assert changed == ["kernels/sigmoid.py"]
    assert _stamps(before)["kernels/sigmoid.py"][0] != _stamps(after)["kernels/sigmoid.py"][0]


def test_cache_folder_follows_a_files_content_not_its_location(tmp_path):
    # a fresh clone or a reinstall puts identical kernel files at another path: they must find the kernels
    # compiled from the first; a different version of the file gets a folder of its own
    from derivgen.kernels.numba_backend import _content_subpath
    source = "def f(x):\n    return x + 1\n"
    first, second, other = (tmp_path / d / "kernels" for d in ("clone1", "clone2", "clone3"))
    for folder, text in ((first, source), (second, source), (other, source.replace("+ 1", "+ 2"))):
        folder.mkdir(parents=True)
        (folder / "add_one.py").write_text(text)
    assert _content_subpath(str(first / "add_one.py")) == _content_subpath(str(second / "add_one.py"))
    assert _content_subpath(str(first / "add_one.py")) != _content_subpath(str(other / "add_one.py"))
    assert _content_subpath(str(first / "add_one.py")).startswith("kernels_add_one_")


def test_a_second_checkout_loads_the_kernels_the_first_compiled(tmp_path):
    # the same generated kernel module imported from two different folders, one cache directory: the
    # second process compiles nothing
    import shutil
    for name in ("a", "b"):
        (tmp_path / name / "kernels").mkdir(parents=True)
        shutil.copy(os.path.join(REPO, "generated", "kernels", "sin.py"), tmp_path / name / "kernels" / "sin_kernels.py")
    code = ("import sys, numpy as np, derivgen, derivgen.kernels.kernel_cache as kc\n"
            "kc.register_cache_source(sys.argv[1])\n"
            "sys.path.insert(0, sys.argv[1])\n"
            "import sin_kernels as m\n"
            "k = m.sin_forward\n"
            "out = k((np.linspace(0, 1, 5, dtype=np.float32),), ())\n"
            "print(len(k.k1d.stats.cache_hits), len(k.k1d.stats.cache_misses), out.sum())\n")
    env = dict(os.environ, DERIVGEN_INTERPRETED_CALLS="0", DERIVGEN_CACHE_DIR=str(tmp_path / "cache"))
    runs = []
    for name in ("a", "b"):
        out = subprocess.run([sys.executable, "-c", code, str(tmp_path / name / "kernels")], env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        runs.append(out.stdout.split())
    assert runs[0][:2] == ["0", "1"], runs   # compiled in the first checkout
    assert runs[1][:2] == ["1", "0"], runs   # loaded in the second
    assert runs[0][2] == runs[1][2]
