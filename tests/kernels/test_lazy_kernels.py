"""Kernels make their Numba dispatcher on first use (derivgen.kernels.jit.LazyKernel): importing derivgen
builds none of the generated library's, and a lazy kernel behaves as its dispatcher does, called from
Python or from other jitted code."""
import json
import subprocess
import sys

import numba
import numpy as np

from derivgen.kernels.jit import LazyKernel, kernel, scalar


def test_import_makes_no_dispatcher_of_the_generated_library():
    code = ("import json, sys\n"
            "import derivgen\n"
            "from derivgen.kernels.jit import LazyKernel\n"
            "kernels = [v for name, m in list(sys.modules.items()) if name.startswith('derivgen.generated.kernels.')\n"
            "           for v in vars(m).values() if isinstance(v, LazyKernel)]\n"
            "print(json.dumps([len(kernels), sum(k._dispatcher is not None for k in kernels)]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    found, made = json.loads(out.stdout.strip().splitlines()[-1])
    assert found > 500
    assert made == 0


def _scaled_sum(a, k):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * k
    return s


def test_lazy_kernel_is_its_dispatcher_from_python_and_jitted_code():
    lazy = kernel(_scaled_sum)
    assert isinstance(lazy, LazyKernel) and lazy._dispatcher is None
    assert lazy.__name__ == "_scaled_sum" and lazy.py_func is _scaled_sum
    a = np.arange(5.0)
    assert lazy(a, 2.0) == 20.0
    assert lazy._dispatcher is not None
    assert len(lazy.signatures) == 1  # Numba's attributes come from the dispatcher

    twice = scalar(lambda v, _zero: v * 2 + _zero)

    @numba.njit
    def caller(a):
        return lazy(a, 3.0) + twice(1.5, 0.0)   # lazy kernels as globals of jitted code
    assert caller(a) == 33.0
