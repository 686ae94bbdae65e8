"""No generated float32 kernel computes in float64.

Every ``Elementwise`` kernel of ``derivgen.generated.kernels`` has its 1-D variant compiled for float32
arrays (out, each array input, each scalar and ``_zero`` all float32; a bool ``out`` for comparisons), and
the optimized LLVM IR of the kernel must have no ``fpext``, no double arithmetic, comparison or call, and
no int-to-double conversion. Numba disables IR inspection for cache-loaded code, so each kernel's Python
function is compiled afresh with the generated dispatcher's options (minus caching) and without Python
wrappers (only the loop's own IR is inspected), split over two worker interpreters to use both cores.
"""
import inspect
import json
import re
import subprocess
import sys
import warnings

import numba
from numba import types

from derivgen.generated import kernels as K
from derivgen.kernels.dispatch import Elementwise

from tests.support.paths import REPO  # noqa: E402

# what a float32 kernel must not contain (constants folded into a float literal are fine)
BAD = re.compile(r"\bfpext\b|\b(fadd|fsub|fmul|fdiv|frem|fneg)( \w+)* double\b|\bfcmp( \w+)* \w+ double\b"
                 r"|call( \w+)* double @|<\d+ x double>|\b[su]itofp [^,]* to double\b|fptrunc double %")


def kernel_names():
    return sorted(n for n in dir(K) if isinstance(getattr(K, n), Elementwise))


def float32_ir(py_func, n_arrays, n_scalars, returns_bool, options=None):
    f32 = types.float32
    opts = {k: v for k, v in (options or {"error_model": "numpy"}).items() if k not in ("cache", "nopython")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = numba.njit(no_cpython_wrapper=True, no_cfunc_wrapper=True, **opts)(py_func)
    out = types.boolean[::1] if returns_bool else f32[::1]
    sig = (out,) + (f32[::1],) * n_arrays + (f32,) * n_scalars + (f32,)
    d.compile(sig)
    return d.inspect_llvm(sig)


def offending_lines(ir):
    return [ln.strip() for ln in ir.splitlines() if BAD.search(ln)]


def check_kernels(names):
    """{kernel name: offending IR lines} for the kernels ``names`` (empty lists are clean)."""
    result = {}
    for n in names:
        k = getattr(K, n)
        ir = float32_ir(k.k1d.py_func, k.n_arrays, k.n_scalars, k.returns_bool, k.k1d.targetoptions)
        result[n] = offending_lines(ir)[:5]
    return result


_WORKER = ("import sys, json; from tests.kernels import test_kernels_float32 as t; "
           "print(json.dumps(t.check_kernels(sys.argv[1:])))")


def test_checker_flags_a_kernel_that_computes_in_float64():
    def bad_kernel(out, x, _zero):
        for i in range(out.shape[0]):
            out[i] = x[i] * 0.1 + 1
    assert offending_lines(float32_ir(bad_kernel, 1, 0, False))

    def good_kernel(out, x, _zero):
        for i in range(out.shape[0]):
            out[i] = x[i] * x[i] + _zero
    assert not offending_lines(float32_ir(good_kernel, 1, 0, False))


def _groups(names):
    """Kernels with the same loop up to parameter names compile to the same code (every kernel module
    imports the same helpers): check one of each."""
    groups = {}
    for n in names:
        k = getattr(K, n)
        f = k.k1d.py_func
        body = inspect.getsource(f).split(":", 1)[1]
        for j, p in enumerate(f.__code__.co_varnames[:f.__code__.co_argcount]):
            body = re.sub(rf"\b{re.escape(p)}\b", f"_p{j}", body)
        groups.setdefault((body, k.n_arrays, k.n_scalars, k.returns_bool), []).append(n)
    return list(groups.values())


def test_no_float32_kernel_computes_in_float64():
    names = kernel_names()
    assert len(names) >= 40
    groups = _groups(names)
    reps = [g[0] for g in groups]
    halves = [reps[0::2], reps[1::2]]
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, *h], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, cwd=REPO) for h in halves]
    results = {}
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        results.update(json.loads(out.strip().splitlines()[-1]))
    assert sorted(results) == sorted(reps)
    results = {n: results[g[0]] for g in groups for n in g}
    assert sorted(results) == names, "every kernel must be checked"
    bad = {n: lines for n, lines in results.items() if lines}
    assert not bad, "float32 kernels computing in float64:\n" + "\n".join(f"{n}: {ls}" for n, ls in sorted(bad.items()))
