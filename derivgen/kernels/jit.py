"""The decorators of derivgen's Numba kernels: ``kernel`` (cached on disk), ``kernel_parallel``
(prange variants) and ``scalar`` (one element, inlined into its callers), each making a
``LazyKernel``.

Nothing here imports Numba: ``import derivgen`` does not pay for it (about a quarter of a second)
until the first kernel runs, when ``derivgen.kernels.numba_backend`` makes its dispatcher. The helpers
kernels call are in loop_helpers.py, the cache directory in kernel_cache.py; their compiled meaning
is in numba_backend.py and the ``numba_*.py`` modules it imports (the only modules here that import
Numba).

The generated kernel files stamp a hash of this file, loop_helpers.py, operands.py and the
``numba_*.py`` modules in their header, and Numba's cache key includes every file of this folder, so
editing one invalidates the cached kernels (Numba freezes callees from other files into a cached kernel). Keep it
to what kernels call; the Python-side dispatcher lives in ``dispatch.py``.
"""
from derivgen.kernels import interpreted as _interpreted
from derivgen.kernels.kernel_cache import CACHE
# op libraries built before the helpers moved to loop_helpers import them from here
from derivgen.kernels.loop_helpers import _exp, _l, _log, _max, _min, _pow, _tanh  # noqa: F401


class LazyKernel:
    """A Numba kernel whose dispatcher is made on first use (a call, or any attribute of Numba's
    dispatcher). Making a dispatcher costs ~0.3 ms (signature inspection, the cache locator): for the
    ~1,200 loops of the generated library that was most of ``import derivgen``, although a program
    runs a few dozen of them. Numba types the object as its dispatcher (``_numba_type_``), so jitted
    code may call it as it would call the dispatcher.

    Until Numba is loaded, a call that interpreted.py's budget admits runs the kernel's array form
    (``interpreted``, set by ``interpreted.attach`` or ``attach_loop``) instead; making the first
    dispatcher ends that."""
    interpreted = None

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
            _interpreted.stop()  # Numba is loaded now: every kernel runs compiled from here on
            from derivgen.kernels import numba_backend  # Numba itself: imported when the first kernel runs
            d = self._dispatcher = numba_backend.dispatcher(self.py_func, self._options)
        return d

    @property
    def compiled(self):
        """Whether calls go to Numba's dispatcher (made on the first call that is not interpreted)."""
        return self._dispatcher is not None

    def __call__(self, *args):
        d = self._dispatcher
        if d is None:
            form = self.interpreted
            if form is not None and form.admits(args):
                return form(*args)
            d = self.dispatcher
        return d(*args)

    @property
    def _numba_type_(self):
        from numba import types  # only asked by Numba, which is imported by then
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


# Parallel (prange) variants of the loops, compiled lazily: only used when switched on (see
# derivgen/kernels/dispatch.py, DERIVGEN_PARALLEL) and only for arrays past a size threshold.
kernel_parallel = _lazy(cache=CACHE, error_model="numpy", parallel=True)

# One element of a forward or of a VJP, for the kernels derivgen.engine.fusion writes across nodes.
# Inlined into its caller (so the fused loop vectorizes) and cached as part of it, never on its own.
scalar = _lazy(inline="always", error_model="numpy")
