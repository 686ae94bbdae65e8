"""Kernel modules load on first use (the generated ``kernels`` package's ``__getattr__``) and kernels make
their Numba dispatcher on first call (derivgen.kernels.jit.LazyKernel): importing derivgen reads no kernel
module and builds no dispatcher, and a lazy kernel behaves as its dispatcher does, called from
Python or from other jitted code."""
import json
import subprocess
import sys

import numba
import numpy as np

from derivgen.kernels.jit import LazyKernel, kernel, scalar


def _in_fresh_process(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


_LOADED = ("[n for n in sys.modules if n.startswith('derivgen.generated.kernels.')]")


def test_import_reads_no_kernel_module_and_first_use_loads_only_its_own():
    code = ("import json, sys\n"
            "import derivgen\n"
            f"at_import = {_LOADED}\n"
            "x = derivgen.tensor([0.5, 1.0], dtype=derivgen.float64, requires_grad=True)\n"
            "x.sin().sum().backward()\n"
            f"after = sorted({_LOADED})\n"
            "print(json.dumps([at_import, after, x.grad.tolist()]))\n")
    at_import, after, grad = _in_fresh_process(code)
    assert at_import == []
    assert "derivgen.generated.kernels.sin" in after
    assert len(after) < 10  # sin and the few kernels sum and its backward use, not the library
    assert np.allclose(grad, np.cos([0.5, 1.0]))


def test_first_use_makes_no_dispatcher_beyond_what_runs():
    code = ("import json, sys\n"
            "import derivgen\n"
            "from derivgen.generated import kernels\n"
            "from derivgen.kernels.jit import LazyKernel\n"
            "names = [n for n in dir(kernels) if not n.startswith('__')]\n"
            "for n in names:\n"
            "    getattr(kernels, n)\n"
            f"loaded = {_LOADED}\n"
            "lazy = [v for name in loaded for v in vars(sys.modules[name]).values() if isinstance(v, LazyKernel)]\n"
            "print(json.dumps([len(loaded), len(kernels._MODULES), len(lazy),\n"
            "                  sum(k._dispatcher is not None for k in lazy)]))\n")
    modules, listed, found, made = _in_fresh_process(code)
    assert modules == listed >= 100  # every kernel module is reachable by name through the package
    assert found > 500
    assert made == 0


def test_kernel_loaded_on_first_use_has_its_dtype_rule():
    # sub refuses bool operands through the rule that dtype_rules attaches when sub's module loads
    code = ("import json, derivgen\n"
            "try:\n"
            "    derivgen.tensor([1, 2]) - derivgen.tensor([True, False])\n"
            "except RuntimeError as e:\n"
            "    print(json.dumps(str(e)))\n")
    msg = _in_fresh_process(code)
    assert msg.startswith("Subtraction, the `-` operator, with a bool tensor is not supported")


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
