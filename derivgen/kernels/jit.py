"""What the generated Numba kernels call: the decorator (with a cache directory that is known to be
writable) and the dtype-preserving literal helper ``_l``.

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
import numpy as np
from llvmlite import ir
from numba import types
from numba.core.caching import CacheImpl, _CacheLocator, _SourceFileBackedLocatorMixin
from numba.extending import intrinsic, overload

from derivgen.config import settings as _cfg


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


# ---------------------------------------------------------------------------------------------
# Vectorizable float32 exp / log / tanh.
#
# PyPI's numba has no SVML, so math.exp on float32 is a scalar libm call per element and keeps a loop
# from vectorizing (11 ms for a 4M-element sigmoid backward, against 2 ms with these). These are the
# Cephes single-precision algorithms in branch-free arithmetic, exact to ~1e-7 relative; float64 keeps
# libm. Kernels call `_exp`, `_log`, `_tanh`, which pick by the argument's type at compile time.

@intrinsic
def _i32_as_f32(typingctx, i):
    sig = types.float32(types.int32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return sig, codegen


@intrinsic
def _f32_as_i32(typingctx, f):
    sig = types.int32(types.float32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return sig, codegen


_F = np.float32


@numba.njit(inline="always", error_model="numpy")
def _ldexpf(p, n):
    """p * 2**n for integer-valued float32 n in [-150, 128], in two in-range steps (2**128 alone
    overflows float32, 2**-150 alone underflows)."""
    n1 = np.int32(n) >> np.int32(1)
    n2 = np.int32(n) - n1
    return (p * _i32_as_f32((n1 + np.int32(127)) << np.int32(23))) * _i32_as_f32((n2 + np.int32(127)) << np.int32(23))


@numba.njit(inline="always", error_model="numpy")
def _expf(x):
    xc = min(max(x, _F(-104.0)), _F(88.72283))
    n = np.floor(xc * _F(1.44269504088896341) + _F(0.5))
    r = xc - n * _F(0.693359375) - n * _F(-2.12194440e-4)
    z = r * r
    p = _F(1.9875691500e-4)
    p = p * r + _F(1.3981999507e-3)
    p = p * r + _F(8.3334519073e-3)
    p = p * r + _F(4.1665795894e-2)
    p = p * r + _F(1.6666665459e-1)
    p = p * r + _F(5.0000001201e-1)
    p = p * z + r + _F(1.0)
    y = _ldexpf(p, n)
    y = _F(0.0) if x < _F(-104.0) else y
    y = _F(np.inf) if x > _F(88.72283) else y
    return x if x != x else y


@numba.njit(inline="always", error_model="numpy")
def _logf(x):
    tiny = x < _F(1.17549435e-38)
    xs = x * _F(8388608.0) if tiny else x
    bits = _f32_as_i32(xs)
    e = ((bits >> np.int32(23)) & np.int32(0xFF)) - np.int32(126)
    e = e - np.int32(23) if tiny else e
    m = _i32_as_f32((bits & np.int32(0x007FFFFF)) | np.int32(0x3F000000))
    low = m < _F(0.707106781186547524)
    e = e - np.int32(1) if low else e
    t = m + m - _F(1.0) if low else m - _F(1.0)
    fe = _F(e)
    z = t * t
    y = _F(7.0376836292e-2)
    y = y * t - _F(1.1514610310e-1)
    y = y * t + _F(1.1676998740e-1)
    y = y * t - _F(1.2420140846e-1)
    y = y * t + _F(1.4249322787e-1)
    y = y * t - _F(1.6668057665e-1)
    y = y * t + _F(2.0000714765e-1)
    y = y * t - _F(2.4999993993e-1)
    y = y * t + _F(3.3333331174e-1)
    y = y * t * z
    y = y + _F(-2.12194440e-4) * fe
    y = y - _F(0.5) * z
    r = t + y + _F(0.693359375) * fe
    r = _F(-np.inf) if x == _F(0.0) else r
    r = _F(np.nan) if x < _F(0.0) else r
    r = x if x == _F(np.inf) else r
    return x if x != x else r


@numba.njit(inline="always", error_model="numpy")
def _tanhf(x):
    ax = abs(x)
    e = _expf(_F(2.0) * ax)
    big = _F(1.0) - _F(2.0) / (e + _F(1.0))
    big = big if x >= _F(0.0) else -big
    z = x * x
    small = ((((_F(-5.70498872745e-3) * z + _F(2.06390887954e-2)) * z - _F(5.37397155531e-2)) * z
              + _F(1.33314422036e-1)) * z - _F(3.33332819422e-1)) * z * x + x
    return small if ax < _F(0.625) else big


def _exp(x):
    return math.exp(x)


def _log(x):
    return math.log(x)


def _tanh(x):
    return math.tanh(x)


def _is_f32(x):
    return isinstance(x, types.Float) and x.bitwidth == 32


@overload(_exp)
def _ol_exp(x):
    if _is_f32(x):
        return lambda x: _expf(x)
    return lambda x: math.exp(x)


@overload(_log)
def _ol_log(x):
    if _is_f32(x):
        return lambda x: _logf(x)
    return lambda x: math.log(x)


@overload(_tanh)
def _ol_tanh(x):
    if _is_f32(x):
        return lambda x: _tanhf(x)
    return lambda x: math.tanh(x)


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
