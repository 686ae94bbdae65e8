"""Exceptions escaping numpy or Numba, told apart from derivgen's own, and turned into torch's error.

An exception raised inside numpy or Numba (a kernel that does not compile for the arrays it was given,
a numpy call refusing its arguments) would surface as their own type with their own text. The points
where derivgen calls into them translate it here into torch's error type, RuntimeError, with a message
naming the op or kernel and its arrays' shapes and dtypes; derivgen's own errors (already torch's)
pass unchanged. Op forwards translate in derivgen.ops.errors, generated kernel calls (a node's backward)
in derivgen.kernels.dispatch; both use ``is_foreign`` and ``message`` from here.
"""
import functools
import importlib.util
import os

import numpy as np

_FOREIGN = ("numpy", "numba", "llvmlite")


@functools.lru_cache(maxsize=None)
def _foreign_dirs():
    """The install folders of numpy, Numba and llvmlite, found without importing them (Numba is imported
    by the first kernel that runs, which may come after the first error)."""
    dirs = []
    for name in _FOREIGN:
        spec = importlib.util.find_spec(name)
        for folder in (spec.submodule_search_locations or ()) if spec is not None else ():
            dirs.append(os.path.abspath(folder) + os.sep)
    return tuple(dirs)


# torch's name of a numpy dtype in error texts (Float, Double, Long): the dtype table is in core, above
# this layer, which registers its naming function here (derivgen.ops.errors does, on import)
_DTYPE_NAME = [lambda dtype: dtype.name]


def register_dtype_names(name_of):
    _DTYPE_NAME[0] = name_of


def is_foreign(exc):
    """True when ``exc`` was raised by numpy or Numba (its class is theirs, or its innermost frame is
    in their code) rather than by a check of derivgen's."""
    module = type(exc).__module__ or ""
    if module.split(".")[0] in _FOREIGN:
        return True
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    return last is not None and os.path.abspath(last.tb_frame.f_code.co_filename).startswith(_foreign_dirs())


def describe_array(data):
    """``[2, 3] Double``: an array's (or a deferred value's) shape and dtype, as the messages write them."""
    return f"[{', '.join(str(s) for s in data.shape)}] {_DTYPE_NAME[0](np.dtype(data.dtype))}"


def message(exc, op, descriptions):
    """The text of the RuntimeError that replaces numpy/Numba's ``exc`` in ``op``."""
    where = f"{op}(): tensors {', '.join(descriptions)}" if descriptions else f"{op}()"
    lines = str(exc).strip().splitlines()
    detail = lines[0] if lines else type(exc).__name__
    return f"{where}: {type(exc).__name__}: {detail}"


def translate_kernel_call(exc, name, arrays):
    """Raise torch's RuntimeError for a numpy/Numba exception ``exc`` in the generated kernel ``name``
    called on ``arrays``; return otherwise (the caller re-raises)."""
    if not is_foreign(exc):
        return
    descriptions = [describe_array(a) for a in arrays if hasattr(a, "shape") and hasattr(a, "dtype")]
    raise RuntimeError(message(exc, name, descriptions)) from None
