"""What the generated Numba kernels call: the decorator (with a cache directory that is known to be
writable), the dtype-preserving literal helper ``_l``, and ``_exp``/``_log``/``_tanh`` (from ``vecmath.py``).

The generated kernel files stamp a hash of this file in their header, so editing it invalidates the
Numba cache of every kernel (Numba freezes callees from other files into a cached kernel). Keep it to
what kernels call; the Python-side dispatcher lives in ``dispatch.py``.
"""
import functools
import hashlib
import importlib.util
import math
import os
import tempfile

import numba
from numba import types
from numba.core.caching import CacheImpl, _CacheLocator, _SourceFileBackedLocatorMixin
from numba.extending import overload

from derivgen.config import settings as _cfg
from derivgen.kernels.vecmath import _exp, _log, _tanh  # noqa: F401  (what generated kernels import from here)


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


class _UserCacheLocator(_SourceFileBackedLocatorMixin, _CacheLocator):
    """Numba's cache for every kernel whose source is a file of derivgen (the package, the generated
    library, fused kernels): one directory per source folder under ``<settings.cache_dir>/numba``, never
    ``__pycache__`` beside the installed package. Other libraries' and the user's own Numba functions
    keep Numba's usual locations.

    An entry is keyed by the source file's content hash and by the hash of derivgen's shared kernel
    helpers (``derivgen/kernels/*.py``): Numba freezes callees from other files into a cached kernel, so
    an edited helper must invalidate every kernel that may have inlined it."""
    root = None
    sources = ()   # folders whose files this locator serves

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(self.root, self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        return (super().get_source_stamp(), _helpers_stamp())

    @classmethod
    def from_function(cls, py_func, py_file):
        if cls.root is None:
            return None
        path = os.path.abspath(py_file)
        if not any(path.startswith(src + os.sep) for src in cls.sources):
            return None
        return super().from_function(py_func, py_file)


@functools.lru_cache(maxsize=None)
def _helpers_stamp():
    here = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256()
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            with open(os.path.join(here, name), "rb") as fh:
                h.update(name.encode() + b"\0" + fh.read())
    return h.hexdigest()


def _choose_cache():
    """Where compiled kernels are kept: the user cache directory, else a private temp directory; caching
    is off when neither is writable (Numba would raise at decoration time) or DERIVGEN_NO_CACHE is set."""
    if not _cfg.kernel_cache:
        return False
    for root in (os.path.join(_cfg.cache_dir, "numba"),
                 os.path.join(tempfile.gettempdir(), f"derivgen-numba-{os.getuid() if hasattr(os, 'getuid') else 0}")):
        if _writable(root):
            _UserCacheLocator.root = root
            package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            generated = importlib.util.find_spec("derivgen.generated")
            _UserCacheLocator.sources = tuple(os.path.abspath(p) for p in (
                package, _cfg.fusion_dir,
                os.path.dirname(generated.origin) if generated and generated.origin else package))
            if _UserCacheLocator not in CacheImpl._locator_classes:
                CacheImpl._locator_classes.insert(0, _UserCacheLocator)
            return True
    return False


CACHE = _choose_cache()


def register_cache_source(folder):
    """Serve the kernels of ``folder`` (a built op library) from the user cache directory too, never from
    a ``__pycache__`` beside the installed library. Call before the library's kernels are imported."""
    if CACHE:
        folder = os.path.abspath(folder)
        if folder not in _UserCacheLocator.sources:
            _UserCacheLocator.sources = _UserCacheLocator.sources + (folder,)

class LazyKernel:
    """A Numba kernel whose dispatcher is made on first use (a call, or any attribute of Numba's
    dispatcher). Making a dispatcher costs ~0.3 ms (signature inspection, the cache locator): for the
    ~1,200 loops of the generated library that was most of ``import derivgen``, although a program
    runs a few dozen of them. Numba types the object as its dispatcher (``_numba_type_``), so jitted
    code may call it as it would call the dispatcher."""
    def __init__(self, py_func, options):
        self.py_func = py_func
        self._options = options
        self._dispatcher = None
        self.__name__ = py_func.__name__
        self.__qualname__ = py_func.__qualname__
        self.__module__ = py_func.__module__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func

    @property
    def dispatcher(self):
        d = self._dispatcher
        if d is None:
            d = self._dispatcher = numba.njit(**self._options)(self.py_func)
        return d

    def __call__(self, *args):
        d = self._dispatcher
        if d is None:
            d = self.dispatcher
        return d(*args)

    @property
    def _numba_type_(self):
        return types.Dispatcher(self.dispatcher)

    def __getattr__(self, name):
        # everything else Numba's dispatcher has: overloads, signatures, targetoptions, ...
        return getattr(self.dispatcher, name)

    def __repr__(self):
        return f"<derivgen kernel {self.__module__}.{self.__qualname__}>"


def _lazy(**options):
    def decorate(py_func):
        return LazyKernel(py_func, options)
    return decorate


# One decorator for every generated loop: numpy error model (no ZeroDivisionError checks that block
# SIMD), cached on disk, compiled lazily on first use for each dtype / layout.
kernel = _lazy(cache=CACHE, error_model="numpy")


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


# Parallel (prange) variants of the loops, compiled lazily: only used when switched on (see
# derivgen/kernels/dispatch.py, DERIVGEN_PARALLEL) and only for arrays past a size threshold.
kernel_parallel = _lazy(cache=CACHE, error_model="numpy", parallel=True)

# One element of a forward or of a VJP, for the kernels derivgen.engine.fusion writes across nodes.
# Inlined into its caller (so the fused loop vectorizes) and cached as part of it, never on its own.
scalar = _lazy(inline="always", error_model="numpy")


def _pow(x, e):
    return x ** e


@overload(_pow, inline="always")
def _ol_pow(x, e):
    """``x ** e`` for a loop-invariant exponent: small integer and half exponents become multiplications
    and square roots (vectorizable, and exact where powf is not), the rest stays ``**``."""
    if isinstance(x, types.Float) and isinstance(e, (types.Float, types.Integer)):
        xt, et = x, e  # numba types are casts: every constant below is typed like its operand

        def impl(x, e):
            if e == et(2):
                return x * x
            if e == et(1):
                return x
            if e == et(3):
                return x * x * x
            if e == et(0):
                return x * xt(0) + xt(1)
            if e == et(0.5):
                return math.sqrt(x)
            if e == et(-1):
                return xt(1) / x
            return x ** xt(e)
        return impl
    return lambda x, e: x ** e


def _max(a, b):
    return a if (a != a or a >= b) else b


def _min(a, b):
    return a if (a != a or a <= b) else b


@overload(_max, inline="always")
def _ol_max(a, b):
    """torch's maximum: a NaN in either operand is the result (Python's ``max`` drops it when first)."""
    return lambda a, b: a if (a != a or a >= b) else b


@overload(_min, inline="always")
def _ol_min(a, b):
    """torch's minimum: a NaN in either operand is the result."""
    return lambda a, b: a if (a != a or a <= b) else b
