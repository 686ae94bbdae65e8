"""Kinds of the nodes the compiled backward tape can run (derivgen/engine/tape.py).

A generated node class whose row is on the tape (derivgen/codegen/tape.py) takes a kind when the class
is made: a small int, written into the tape for each such node, and the name of its step function in
its kernel module, which the tape's kernel calls for that kind. Kinds number the classes in the order
they are made in this process; the tape's kernels do not depend on them (engine/tape_kernels.py).
"""
import threading

_steps = []  # kind -> (kernels package, step function name)
_lock = threading.Lock()


def register(kernels, step_name):
    """A new kind for a node class whose step is ``kernels.<step_name>`` (read when a kernel needs it)."""
    with _lock:
        _steps.append((kernels, step_name))
        return len(_steps) - 1


def step(kind):
    """The step function (a ``@scalar`` LazyKernel) of ``kind``."""
    kernels, name = _steps[kind]
    return getattr(kernels, name)
