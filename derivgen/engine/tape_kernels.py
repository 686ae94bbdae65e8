"""The kernels of the compiled backward tape (tape.py): one Numba loop per set of node kinds.

A kernel walks the tape entry by entry and calls, for each, the step of its node's row (generated in the
row's kernel module, derivgen/codegen/tape.py; inlined by Numba). Only the kinds a program has used are
in it, so it compiles in seconds where one over every row of the table would take minutes. Its source
names the steps it calls, sorted, and reads the kind of each entry through ``branch`` (kind -> the
position of its step, built in this process): kind numbers, which depend on import order, never reach
the source, so the file and Numba's cache of it serve every later process that uses the same rows.
"""
import threading

import numpy as np

from derivgen.core import tape_kinds
from derivgen.engine import kernel_files

_PREFIX = "derivgen_tape_"


class TapeKernel:
    """The compiled tape for the node kinds ``kinds``: ``run(code, grads, saved, numbers, zero)`` runs
    every entry of ``code`` and returns where it stopped (the end, unless an entry has another kind)."""

    def __init__(self, kinds, module):
        self.kinds = kinds
        steps = _steps(kinds)
        self.branch = np.full(max(kinds) + 1, -1, np.int64)
        for kind in kinds:
            self.branch[kind] = steps.index(_name(tape_kinds.step(kind)))
        self._run = module.run_tape

    def run(self, code, grads, saved, numbers, zero):
        return self._run(code, self.branch, grads, saved, numbers, zero)


_KERNELS = {}
_LOCK = threading.Lock()


def kernel_for(kinds):
    """The TapeKernel of a frozenset of kinds (compiled for a dtype on its first run with it)."""
    k = _KERNELS.get(kinds)
    if k is None:
        with _LOCK:
            k = _KERNELS.get(kinds)
            if k is None:
                k = _KERNELS[kinds] = TapeKernel(kinds, kernel_files.load(source(kinds), _PREFIX))
    return k


def written(kinds):
    """Whether the kernel of ``kinds`` has been written (and so, most likely, compiled) before."""
    return kinds in _KERNELS or kernel_files.written(source(kinds), _PREFIX)


def _name(step):
    return step.py_func.__module__, step.py_func.__name__


def _steps(kinds):
    return sorted({_name(tape_kinds.step(kind)) for kind in kinds})


def source(kinds):
    steps = _steps(kinds)
    head = ["# Written by derivgen.engine.tape_kernels: the compiled backward tape for nodes of these rows.",
            "# Printed from the rows' tape steps it calls (derivgen/engine/tape.py). Safe to delete."]
    imports = []
    for module, name in steps:
        head += [f"# {module}: {s.lstrip('# ')}" for s in kernel_files.stamps(module)]
        imports.append(f"from {module} import {name}")
    body = ["@kernel",
            "def run_tape(code, branch, grads, saved, numbers, _zero):",
            "    pc = 0",
            "    sp = 0",
            "    q = 0",
            "    row = 0  # the rows of the chain's gradients alternate",
            "    while pc < code.shape[0]:",
            "        b = branch[code[pc]]"]
    for k, (_, name) in enumerate(steps):
        body += [f"        {'elif' if k else 'if'} b == {k}:",
                 f"            pc, sp, q = {name}(code, pc, grads, row, saved, sp, numbers, q, _zero)"]
    body += ["        else:",
             "            break",
             "        row ^= 1",
             "    return pc"]
    return "\n".join(head) + "\n\nfrom derivgen.kernels.jit import kernel\n" + "\n".join(imports) + \
        "\n\n\n" + "\n".join(body) + "\n"
