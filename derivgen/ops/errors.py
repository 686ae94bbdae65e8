"""The one translation point for exceptions escaping numpy or Numba during an op's forward.

Every generated op function runs its forward inside ``try``; on an exception it calls
``translate``, which raises torch's error type (RuntimeError) with a message naming the op, its
tensor arguments' shapes and dtypes when the exception came from numpy or Numba, and otherwise
returns so that the caller re-raises the original (derivgen's own errors already are torch's)."""
import os
import sys

import numpy as np
from derivgen.core.dtypes import scalar_type_name

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


def _describe(value):
    data = getattr(value, "_pending", None) if getattr(value, "_lazy", False) else getattr(value, "_array", None)
    if data is None:
        return None
    dtype = np.dtype(data.dtype)
    return f"[{', '.join(str(s) for s in data.shape)}] {scalar_type_name(dtype)}"


def describe(op, tensors):
    """``op`` with the shapes and dtypes of its tensor arguments, for an error message."""
    parts = []
    for t in tensors:
        if isinstance(t, (list, tuple)):
            parts += [d for d in (_describe(x) for x in t) if d]
        else:
            d = _describe(t)
            if d:
                parts.append(d)
    return f"{op}(): tensors {', '.join(parts)}" if parts else f"{op}()"


def translate(exc, op, tensors):
    """Raise torch's RuntimeError for a numpy/Numba exception ``exc`` in ``op``; return otherwise."""
    if not is_foreign(exc):
        return
    lines = str(exc).strip().splitlines()
    detail = lines[0] if lines else type(exc).__name__
    raise RuntimeError(f"{describe(op, tensors)}: {type(exc).__name__}: {detail}") from None
