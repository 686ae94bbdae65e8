"""What a fresh process pays before its first result: ``import derivgen`` imports neither Numba nor
anything of the generator, and a kernel found in the on-disk cache is loaded without Numba's full
target context (derivgen.kernels.numba_backend), with the same bits as the process that compiled it."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

_IMPORT_ONLY = ("import sys, json\n"
                "import derivgen\n"
                "print(json.dumps(sorted(m for m in ('numba', 'llvmlite', 'scipy', 'yaml', 'jinja2', 'sympy')\n"
                "                        if m in sys.modules)))\n")


def test_import_derivgen_imports_neither_numba_nor_the_generator():
    out = subprocess.run([sys.executable, "-c", _IMPORT_ONLY], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


# A small program touching each kind of kernel: generated elementwise loops (forward and backward),
# the runtime's own loops (bias column sums, clamp), a fused region and parallel (prange) variants
# (thresholds lowered by the environment below), and an optimizer kernel using fma.
_PROGRAM = """
import json, sys
import numpy as np
import derivgen as torch
numba_at_import = "numba" in sys.modules
rng = np.random.default_rng(0)
x = torch.tensor(rng.standard_normal((16, 8)).astype(np.float32), requires_grad=True)
w = torch.tensor(rng.standard_normal((8, 8)).astype(np.float32), requires_grad=True)
b = torch.tensor(rng.standard_normal(8).astype(np.float32), requires_grad=True)
small = torch.tensor(np.linspace(-2, 2, 8).astype(np.float32), requires_grad=True)
loss = ((x @ w + b).clamp(min=0) * x.tanh()).sum() + (small.sigmoid() * (-(small * small)).exp()).sum()
loss.backward()
opt = torch.optim.SGD([w, b], lr=0.1, momentum=0.9, weight_decay=0.01)
opt.step()
opt.step()
from derivgen.kernels.jit import LazyKernel
kernels = [v for m in list(sys.modules.values()) if getattr(m, "__name__", "").startswith("derivgen")
           for v in list(vars(m).values()) if isinstance(v, LazyKernel) and v._dispatcher is not None]
stats = [k._dispatcher.stats for k in kernels]
print(json.dumps({
    "numba_at_import": numba_at_import,
    "numba_implementations_imported": "numba.np.arraymath" in sys.modules,
    "hits": sum(sum(s.cache_hits.values()) for s in stats),
    "misses": sum(sum(s.cache_misses.values()) for s in stats),
    "values": [t.detach().numpy().tobytes().hex() for t in (loss, x.grad, w, b, small.grad)],
}))
"""


@pytest.mark.parametrize("forced", [False, True], ids=["defaults", "fused-and-parallel"])
def test_cached_kernels_load_without_numbas_target_context_and_give_the_same_bits(tmp_path, forced):
    # every kernel compiled (not its array form first): the cache is what this test is about
    env = dict(os.environ, DERIVGEN_INTERPRETED_CALLS="0", DERIVGEN_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("DERIVGEN_NO_CACHE", None)
    if forced:
        env.update(DERIVGEN_FUSION_THRESHOLD="64", DERIVGEN_PARALLEL_THRESHOLD="64",
                   DERIVGEN_ADAPTIVE_THREADS="0")

    def run():
        out = subprocess.run([sys.executable, "-c", _PROGRAM], capture_output=True, text=True, env=env,
                             timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    compiled, loaded = run(), run()
    assert not compiled["numba_at_import"] and not loaded["numba_at_import"]
    assert compiled["misses"] > 0 and compiled["numba_implementations_imported"]
    assert loaded["misses"] == 0 and loaded["hits"] > 0
    assert not loaded["numba_implementations_imported"]
    assert loaded["values"] == compiled["values"]


def test_kernel_modules_do_not_import_numba():
    # the generated kernel files and the runtime's hand-written kernels take prange and the helpers
    # from derivgen.kernels.loop_helpers; only numba_backend and the numba_*.py modules it imports
    # import Numba
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    offenders = []
    for folder in ("derivgen", "generated"):
        for base, _, files in os.walk(os.path.join(root, folder)):
            if any(part in base for part in ("codegen", "symbolic", "table", "__pycache__")):
                continue
            for name in files:
                path = os.path.join(base, name)
                if not name.endswith(".py") or (base.endswith(os.path.join("derivgen", "kernels"))
                                                and name.startswith("numba_")):
                    continue
                with open(path) as fh:
                    for line in fh:
                        if line.startswith(("import numba", "from numba", "import llvmlite", "from llvmlite")):
                            offenders.append(os.path.relpath(path, root))
    assert offenders == ["derivgen/profiler/compile_events.py"]


def test_fma_keeps_one_rounding_in_compiled_code():
    import numba
    from derivgen.kernels import numba_backend  # noqa: F401 - gives fma its compiled meaning
    from derivgen.kernels.fma import fma

    @numba.njit
    def fused(a, b, c, out):
        for i in range(a.shape[0]):
            out[i] = fma(a[i], b[i], c[i])
    a = np.array([1 + 2.0 ** -30], np.float64)
    c = np.array([-(1 + 2.0 ** -29)], np.float64)
    out = np.empty(1)
    fused(a, a, c, out)
    assert out[0] == 2.0 ** -60  # (1+e)^2 - (1+2e) = e^2, lost when a*a is rounded first
    assert numba.njit(lambda a, c: a * a + c)(a[0], c[0]) == 0.0
