"""Everything of derivgen's kernels that needs Numba itself, imported by the first kernel that runs
(``jit.LazyKernel.dispatcher``): the dispatchers, their on-disk cache, and the compiled meaning of the
helpers kernels call (``loop_helpers``, ``operands._elem``, ``fma.fma``).

Loading a cached kernel. Numba's cache refreshes the whole target context before it loads a compiled
kernel from disk: it imports every implementation Numba has (its numpy, linalg, typed containers,
random and jitclass support; the linalg part imports SciPy's BLAS bindings when SciPy is installed),
about 0.4 s on the first kernel of a process, although a cached kernel is machine code that needs
none of them. ``_CachedKernels`` loads it with what the machine code does need: Numba's runtime (its
allocator symbols; the C helpers and math symbols are registered when the target context is made), and
the kernel's own re-initialisers (``reload_init``: the thread pool for parallel kernels). A cache miss
compiles as before, and the compiler refreshes the context then, so everything Numba compiles sees all
of its implementations. The loaded machine code is the same either way.
"""
import math
import os
import types as _pytypes

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core.caching import CacheImpl, FunctionCache, _CacheLocator, _SourceFileBackedLocatorMixin
from numba.core.runtime import rtsys
from numba.extending import intrinsic, overload

from derivgen.kernels import fma as _fma_module
from derivgen.kernels import kernel_cache
from derivgen.kernels import loop_helpers as _h
from derivgen.kernels import operands as _operands


class _UserCacheLocator(_SourceFileBackedLocatorMixin, _CacheLocator):
    """Numba's cache for every kernel whose source is a file of derivgen (the package, the generated
    library, fused kernels, built op libraries: ``kernel_cache.cache_dirs.sources``): one directory per source
    folder under ``kernel_cache.cache_dirs.root``, never ``__pycache__`` beside the installed package. Other
    libraries' and the user's own Numba functions keep Numba's usual locations.

    An entry is keyed by the source file's content hash and by the hash of derivgen's shared kernel
    helpers (``derivgen/kernels/*.py``): Numba freezes callees from other files into a cached kernel, so
    an edited helper must invalidate every kernel that may have inlined it."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(kernel_cache.cache_dirs.root, self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        return (super().get_source_stamp(), kernel_cache._helpers_stamp())

    @classmethod
    def from_function(cls, py_func, py_file):
        if kernel_cache.cache_dirs.root is None:
            return None
        path = os.path.abspath(py_file)
        if not any(path.startswith(src + os.sep) for src in kernel_cache.cache_dirs.sources):
            return None
        return super().from_function(py_func, py_file)


if kernel_cache.CACHE and _UserCacheLocator not in CacheImpl._locator_classes:
    CacheImpl._locator_classes.insert(0, _UserCacheLocator)


class _CachedKernels(FunctionCache):
    """Numba's function cache, loading a cached kernel without refreshing the target context (see the
    module's docstring); saving, keys and invalidation are Numba's."""

    def load_overload(self, sig, target_context):
        rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)


def _with_numba_prange(py_func):
    """``py_func`` reading Numba's ``prange`` where its module has ``loop_helpers.prange`` (a copy of the
    function over a copy of its module's globals; the code object, and so the cache key, is the same)."""
    if py_func.__globals__.get("prange") is not _h.prange:
        return py_func
    scope = dict(py_func.__globals__, prange=numba.prange)
    fn = _pytypes.FunctionType(py_func.__code__, scope, py_func.__name__, py_func.__defaults__,
                               py_func.__closure__)
    fn.__qualname__, fn.__module__, fn.__doc__ = py_func.__qualname__, py_func.__module__, py_func.__doc__
    return fn


def dispatcher(py_func, options):
    """Numba's dispatcher for a lazy kernel: ``numba.njit(**options)``, with a cache that loads compiled
    kernels cheaply when ``options`` asks for caching."""
    options = dict(options)
    cache = options.pop("cache", False)
    d = numba.njit(**options)(_with_numba_prange(py_func))
    if cache:
        d._cache = _CachedKernels(d.py_func)
    return d


# ---------------------------------------------------------------------------------------------
# The compiled meaning of the helpers in loop_helpers.py, operands.py and fma.py.

@overload(_h._l, inline="always")
def _ol_l(value, like):
    if isinstance(like, (types.Float, types.Integer)):
        ty = like

        def impl(value, like):
            return ty(value)
        return impl
    if isinstance(like, types.Boolean):
        return lambda value, like: value


@overload(_operands._elem)
def _elem_typed(a, i):
    if isinstance(a, types.Array):
        return lambda a, i: a[i]
    return lambda a, i: a


@intrinsic
def _fma(typingctx, a, b, c):
    if not (isinstance(a, types.Float) and a == b == c):
        return None
    sig = a(a, b, c)

    def codegen(context, builder, signature, args):
        ty = args[0].type
        fn = builder.module.declare_intrinsic("llvm.fma", [ty], ir.FunctionType(ty, [ty, ty, ty]))
        return builder.call(fn, args)
    return sig, codegen


@overload(_fma_module.fma, inline="always")
def _ol_fma(a, b, c):
    if isinstance(a, types.Float) and a == b == c:
        return lambda a, b, c: _fma(a, b, c)


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


def _is_f32(x):
    return isinstance(x, types.Float) and x.bitwidth == 32


@overload(_h._exp)
def _ol_exp(x):
    if _is_f32(x):
        return lambda x: _expf(x)
    return lambda x: math.exp(x)


@overload(_h._log)
def _ol_log(x):
    if _is_f32(x):
        return lambda x: _logf(x)
    return lambda x: math.log(x)


@overload(_h._tanh)
def _ol_tanh(x):
    if _is_f32(x):
        return lambda x: _tanhf(x)
    return lambda x: math.tanh(x)


@overload(_h._pow, inline="always")
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


@overload(_h._max, inline="always")
def _ol_max(a, b):
    """torch's maximum: a NaN in either operand is the result (Python's ``max`` drops it when first)."""
    return lambda a, b: a if (a != a or a >= b) else b


@overload(_h._min, inline="always")
def _ol_min(a, b):
    """torch's minimum: a NaN in either operand is the result."""
    return lambda a, b: a if (a != a or a <= b) else b
