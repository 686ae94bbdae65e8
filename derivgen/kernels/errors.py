"""Exceptions escaping numpy or Numba, told apart from derivgen's own, and turned into torch's error.

An exception raised inside numpy or Numba (a kernel that does not compile for the arrays it was given,
a numpy call refusing its arguments) would surface as their own type with their own text. The points
where derivgen calls into them translate it here into torch's error type, RuntimeError, with a message
naming the op or kernel and its arrays' shapes and dtypes; derivgen's own errors (already torch's)
pass unchanged. Op forwards translate in derivgen.ops.errors, generated kernel calls (a node's backward)
in derivgen.kernels.dispatch; both use ``is_foreign`` and ``message`` from here.
"""
import os
import sys

import numpy as np

_FOREIGN_DIRS = []
for _mod in ("numpy", "numba", "llvmlite"):
    _m = sys.modules.get(_mod)
    if _m is None:
        try:
            _m = __import__(_mod)
        except ImportError:  # pragma: no cover - numpy and numba are dependencies
            continue
    _FOREIGN_DIRS.append(os.path.dirname(os.path.abspath(_m.__file__)) + os.sep)
_FOREIGN_DIRS = tuple(_FOREIGN_DIRS)

# torch's name of a numpy dtype in error texts (Float, Double, Long): the dtype table is in core, above
# this layer, which registers its naming function here (derivgen.ops.errors does, on import)
_DTYPE_NAME = [lambda dtype: dtype.name]


def register_dtype_names(name_of):
    _DTYPE_NAME[0] = name_of


def is_foreign(exc):
    """True when ``exc`` was raised by numpy or Numba (its class is theirs, or its innermost frame is
    in their code) rather than by a check of derivgen's."""
    module = type(exc).__module__ or ""
    if module.split(".")[0] in ("numpy", "numba", "llvmlite"):
        return True
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    return last is not None and os.path.abspath(last.tb_frame.f_code.co_filename).startswith(_FOREIGN_DIRS)


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
