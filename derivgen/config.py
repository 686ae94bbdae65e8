"""derivgen's settings: one object, read from the environment once, when derivgen is imported.

| variable | setting | default |
|---|---|---|
| ``DERIVGEN_FUSION=0`` | ``fusion_threshold`` off | on |
| ``DERIVGEN_FUSION_THRESHOLD`` | ``fusion_threshold``: float elements from which elementwise ops defer and fuse | 131072 |
| ``DERIVGEN_PARALLEL=0`` | ``parallel_threshold`` off (every kernel serial) | on |
| ``DERIVGEN_PARALLEL_THRESHOLD`` | ``parallel_threshold``: elements from which kernels run multi-threaded | 262144 |
| ``DERIVGEN_ADAPTIVE_THREADS=0`` | ``adaptive_threads`` off: always all threads, even while other processes hold cores | on |
| ``DERIVGEN_POOL_MB`` | ``pool_bytes``: free output buffers kept for reuse (0 turns the pool off) | 256 MiB |
| ``DERIVGEN_CACHE_DIR`` | ``cache_dir``: compiled kernels and fused kernels | the platform's user cache + ``/derivgen`` |
| ``DERIVGEN_FUSION_DIR`` | ``fusion_dir``: fused kernel sources | ``cache_dir/fused`` |
| ``DERIVGEN_NO_CACHE=1`` | ``kernel_cache`` off: compile every kernel in every process | on |
| ``DERIVGEN_TAPE=0`` | ``tape`` off: the compiled backward tape (engine/tape.py) never runs | on |
| ``DERIVGEN_TAPE_COMPILE_AFTER`` | ``tape_compile_after``: nodes the tape could have run before it compiles a kernel | 20000 |
| ``DERIVGEN_TAPE_MIN_RUN`` | ``tape_min_run``: nodes in a chain from which it counts toward that | 16 |
| ``DERIVGEN_INTERPRETED_CALLS`` | ``interpreted_calls``: small kernel calls run by numpy before Numba is loaded (0: none) | 2000 |
| ``DERIVGEN_INTERPRETED_ELEMENTS`` | ``interpreted_elements``: their output elements, all calls together | 1048576 |

Code reads ``settings.<name>`` at the moment it decides, so a change at run time (``set_fusion_threshold``)
is seen everywhere at once. Nothing else in derivgen reads these variables.
"""
import os
import sys

import numpy as np

OFF = 1 << 62  # a threshold no array reaches


def _int(environ, name, default):
    raw = environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(float(raw))
    except ValueError:
        raise ValueError(f"{name}={raw!r}: expected a number") from None


def user_cache_dir(environ=os.environ):
    """The platform's per-user cache directory for derivgen (never inside the installed package)."""
    if environ.get("DERIVGEN_CACHE_DIR"):
        return os.path.abspath(os.path.expanduser(environ["DERIVGEN_CACHE_DIR"]))
    if sys.platform == "win32":
        base = environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Local")
    elif sys.platform == "darwin":
        base = os.path.join(os.path.expanduser("~"), "Library", "Caches")
    else:
        base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "derivgen")


class Settings:
    __slots__ = ("fusion_threshold", "parallel_threshold", "small_array", "pool_bytes", "cache_dir",
                 "fusion_dir", "kernel_cache", "default_float", "adaptive_threads", "tape", "tape_compile_after",
                 "tape_min_run", "interpreted_calls", "interpreted_elements")

    def __init__(self, environ=os.environ):
        self.fusion_threshold = (_int(environ, "DERIVGEN_FUSION_THRESHOLD", 1 << 17)
                                 if environ.get("DERIVGEN_FUSION", "1") != "0" else OFF)
        self.parallel_threshold = (_int(environ, "DERIVGEN_PARALLEL_THRESHOLD", 1 << 18)
                                   if environ.get("DERIVGEN_PARALLEL", "1") != "0" else OFF)
        # multi-threaded kernels and OpenBLAS only on cores other processes leave free (kernels/threads.py)
        self.adaptive_threads = environ.get("DERIVGEN_ADAPTIVE_THREADS", "1") != "0"
        self.pool_bytes = int(float(environ.get("DERIVGEN_POOL_MB") or 256) * (1 << 20))
        self.cache_dir = user_cache_dir(environ)
        self.fusion_dir = environ.get("DERIVGEN_FUSION_DIR") or os.path.join(self.cache_dir, "fused")
        self.kernel_cache = not environ.get("DERIVGEN_NO_CACHE")
        # the compiled backward tape: on, and when it compiles its first kernel (see derivgen/engine/tape.py)
        self.tape = environ.get("DERIVGEN_TAPE", "1") != "0"
        self.tape_compile_after = _int(environ, "DERIVGEN_TAPE_COMPILE_AFTER", 20000)
        self.tape_min_run = _int(environ, "DERIVGEN_TAPE_MIN_RUN", 16)
        # the budget of kernel calls run as numpy expressions before Numba is loaded (kernels/interpreted.py)
        self.interpreted_calls = _int(environ, "DERIVGEN_INTERPRETED_CALLS", 2000)
        self.interpreted_elements = _int(environ, "DERIVGEN_INTERPRETED_ELEMENTS", 1 << 20)
        # torch.get_default_dtype() as a numpy dtype (set with derivgen.set_default_dtype): what integer
        # inputs of a float op compute in
        self.default_float = np.dtype(np.float32)
        self._derive()

    def _derive(self):
        # below this size an elementwise op neither fuses nor runs multi-threaded: the kernels' fixed-arity
        # fast paths take it without looking further
        self.small_array = min(self.parallel_threshold, self.fusion_threshold)

    @property
    def fusion_enabled(self):
        return self.fusion_threshold < OFF

    def __repr__(self):
        return "Settings(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"


settings = Settings()


def set_fusion_threshold(n):
    """Fuse elementwise ops from ``n`` float elements on; ``None`` turns fusion off."""
    if n is not None and (not isinstance(n, int) or n < 1):
        raise ValueError(f"fusion threshold must be a positive int or None, got {n!r}")
    settings.fusion_threshold = OFF if n is None else n
    settings._derive()


def fusion_threshold():
    """The current threshold, or None when fusion is off."""
    return settings.fusion_threshold if settings.fusion_enabled else None
