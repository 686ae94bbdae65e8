"""Everything of derivgen's kernels that needs Numba itself, imported by the first kernel that runs
(``jit.LazyKernel.dispatcher``): the dispatchers, their on-disk cache, and the compiled meaning of the
helpers kernels call (``loop_helpers``, ``operands._elem``, ``fma.fma``; ``loop_helpers._gemm`` in numba_blas.py).

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
from llvmlite import ir
from numba import types
from numba.core.caching import CacheImpl, FunctionCache, _CacheLocator, _hash_source_file, _SourceFileBackedLocatorMixin
from numba.core.runtime import rtsys
from numba.extending import intrinsic, overload

from derivgen.kernels import fma as _fma_module
from derivgen.kernels import kernel_cache
from derivgen.kernels import loop_helpers as _h
from derivgen.kernels import numba_blas  # noqa: F401 - gives loop_helpers._gemm its compiled meaning
from derivgen.kernels import numba_stream  # noqa: F401 - gives stream.py's stores their compiled meaning
from derivgen.kernels import numba_vecmath  # noqa: F401 - gives loop_helpers' _exp/_log/_tanh theirs
from derivgen.kernels import operands as _operands


def _content_subpath(py_file):
    """``<folder>_<file>_<hash of its content>``: the cache folder of one source file's kernels."""
    path = os.path.abspath(py_file)
    st = os.stat(path)
    digest = _hash_source_file(path, st.st_mtime, st.st_size).hex()[:24]
    folder = os.path.basename(os.path.dirname(path))
    return f"{folder}_{os.path.splitext(os.path.basename(path))[0]}_{digest}"


class _UserCacheLocator(_SourceFileBackedLocatorMixin, _CacheLocator):
    """Numba's cache for every kernel whose source is a file of derivgen (the package, the generated
    library, fused kernels, built op libraries: ``kernel_cache.cache_dirs.sources``): one directory per source
    folder under ``kernel_cache.cache_dirs.root``, never ``__pycache__`` beside the installed package. Other
    libraries' and the user's own Numba functions keep Numba's usual locations.

    An entry is keyed by the source file's content hash and by the hash of derivgen's shared kernel
    helpers (``derivgen/kernels/*.py``): Numba freezes callees from other files into a cached kernel, so
    an edited helper must invalidate every kernel that may have inlined it. Its directory is named by the
    file's name and content, not by where the file lies (Numba's default): a reinstalled package, a fresh
    clone or a second checkout with the same generated kernels finds them compiled, and checkouts with
    different versions of a file keep one entry each instead of overwriting each other's."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(kernel_cache.cache_dirs.root, _content_subpath(py_file))

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


# float32 exp / log / tanh: derivgen.kernels.numba_vecmath (imported above for its overloads).


@overload(_h._pow, inline="always")
def _ol_pow(x, e):
    """``x ** e`` for a loop-invariant exponent: small integer and half exponents become multiplications
    and square roots (vectorizable, exact where powf is not, and rounded as torch's CPU kernel rounds
    them: ``1 / (x * x)`` for -2, ``1 / sqrt(x)`` for -0.5), the rest stays ``**``."""
    if isinstance(x, types.Float) and isinstance(e, (types.Float, types.Integer)):
        xt, et = x, e  # numba types are casts: every constant below is typed like its operand

        def impl(x, e):
            if e == et(2):
                return x * x
            if e == et(1):
                return x
            if e == et(3):
                return x * x * x
            if e == et(0.5):
                return math.sqrt(x)
            if e == et(-1):
                return xt(1) / x
            # torch's CPU kernel computes these two as written here (its rounding, not powf's)
            if e == et(-2):
                return xt(1) / (x * x)
            if e == et(-0.5):
                return xt(1) / math.sqrt(x)
            # x ** 0 needs no case of its own: pow returns 1 for every x, NaN and infinities included, as
            # torch does. Every case is a loop-invariant branch that LLVM must unswitch before it can
            # vectorize the loop around it, and in a fused loop one more case than these stops it doing so
            # (a fused W4 backward: 3 ms vectorized, 11 ms not).
            return x ** xt(e)
        return impl
    return lambda x, e: x ** e


@overload(_h._max, inline="always")
def _ol_max(a, b):
    """torch's maximum: a NaN in either operand is the result (Python's ``max`` drops it when first)."""
    return lambda a, b: a if (a != a or a >= b) else b


@overload(_h._sign, inline="always")
def _ol_sign(x):
    """torch's sign: NaN gives 0 (``(x > 0) - (x < 0)``, as torch's CPU kernel computes it)."""
    xt = x
    return lambda x: xt(x > 0) - xt(x < 0)


@overload(_h._min, inline="always")
def _ol_min(a, b):
    """torch's minimum: a NaN in either operand is the result."""
    return lambda a, b: a if (a != a or a <= b) else b
