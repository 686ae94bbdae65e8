"""What the generated Numba kernels call: the decorator (with a cache directory that is known to be
writable) and the dtype-preserving literal helper ``_l``.

The generated kernel files stamp a hash of this file in their header, so editing it invalidates the
Numba cache of every kernel (Numba freezes callees from other files into a cached kernel). Keep it to
what kernels call; the Python-side dispatcher lives in ``elementwise.py``.
"""
import functools
import os
import tempfile

import numba
import numpy as np
from numba import types
from numba.extending import overload

_GENERATED_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                              "generated")


def _writable(path):
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, f".derivgen-probe-{os.getpid()}")
        with open(probe, "w"):
            pass
        os.remove(probe)
        return True
    except OSError:
        return False


def _choose_cache():
    """Numba raises at decoration time when no cache locator can write; pick a place or turn caching off."""
    if os.environ.get("DERIVGEN_NO_CACHE"):
        return False
    if os.environ.get("NUMBA_CACHE_DIR"):
        return _writable(os.environ["NUMBA_CACHE_DIR"])
    try:
        import derivgen.generated as gen
        here = os.path.dirname(os.path.abspath(gen.__file__))
    except Exception:  # noqa: BLE001 - generated package missing during generation
        here = _GENERATED_DIR
    for sub in ("__pycache__", os.path.join("kernels", "__pycache__")):
        if not _writable(os.path.join(here, sub)):
            break
    else:
        return True
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if _writable(os.path.join(xdg, "numba")):
        return True
    tmp = os.path.join(tempfile.gettempdir(), "derivgen-numba-cache")
    if _writable(tmp):
        numba.config.CACHE_DIR = tmp
        return True
    return False


CACHE = _choose_cache()

# One decorator for every generated loop: numpy error model (no ZeroDivisionError checks that block
# SIMD), cached on disk, compiled lazily on first use for each dtype / layout.
kernel = functools.partial(numba.njit, cache=CACHE, error_model="numpy")


def _l(value, like):
    """A literal typed like ``like`` (so float32 kernels never compute in float64)."""
    return value


@overload(_l, inline="always")
def _ol_l(value, like):
    if isinstance(like, (types.Float, types.Integer)):
        ty = like

        def impl(value, like):
            return ty(value)
        return impl
    if isinstance(like, types.Boolean):
        return lambda value, like: value
