"""A program's first small kernel calls run as numpy expressions, so that a short program never loads Numba.

Loading Numba costs about 0.2 s (the import, then a few ms for each cached kernel): more than a short
program's whole run (a notebook cell, a unit test, ``loss.backward()`` on a toy model). Each generated
elementwise kernel has, besides its compiled loops, an ``_array`` form: its expression over whole
numpy arrays (printed by codegen's ArrayPrinter, helpers in array_helpers.py). Until Numba is loaded,
``jit.LazyKernel`` runs a call through that form when ``admit`` lets it: a float kernel (float32 or
float64; bool operands and results allowed), an output below ``settings.small_array`` elements, within
a budget of ``settings.interpreted_calls`` calls and ``settings.interpreted_elements`` output elements
for the whole process. The first call refused (over the budget, too large, another dtype, or a kernel
with no array form) loads Numba, and from then on every kernel runs compiled: a program that keeps
going pays Numba's load once, as it would have on its first call, plus at most a few milliseconds for
the budget's calls (numpy's several passes over memory against one compiled loop). A program that ends
within the budget never pays it.

The runtime's own hand-written loops that a first program meets (clamp and its gradient, gelu's erf, the
bias gradient's column sums, the classifier head's log_softmax and nll_loss, SGD's and Adam's updates of
a float32 parameter) have array forms too (``LoopForm``, written next to each loop), admitted by the
same budget on the size of the array they produce or read. The optimizers round through fused
multiply-adds; numpy has none, and ``array_helpers._fma32`` reproduces one exactly for float32 only, so
a float64 parameter's update, and the other optimizers' updates, load Numba.

The array forms compute what the loops compute, element by element: literals and numbers in the
kernel's dtype, the helpers' NaN rules, floating-point errors silent (the loops raise none). They may
differ from the compiled loop in the last bit where numpy's and Numba's ``exp``/``log``/``tanh`` round
differently.
"""
import numpy as np

from derivgen.config import settings as _cfg

_ARRAY_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.bool_))
_FLOAT_ZEROS = (np.float32, np.float64)


class _Budget:
    """What is left of the process's budget; ``active`` is False once Numba runs the kernels."""
    __slots__ = ("active", "calls", "elements")

    def __init__(self):
        self.calls = _cfg.interpreted_calls
        self.elements = _cfg.interpreted_elements
        self.active = self.calls > 0


state = _Budget()


def admit(args):
    """Whether a kernel's call with ``args`` (its output or in-place operand first, its zero last) runs
    through the kernel's array form; counts it against the budget."""
    if not state.active:
        return False
    out = args[0]
    if type(args[-1]) not in _FLOAT_ZEROS or type(out) is not np.ndarray or out.dtype not in _ARRAY_DTYPES:
        return False
    for a in args[1:-1]:
        if type(a) is np.ndarray and a.dtype not in _ARRAY_DTYPES:
            return False
    return _spend(out.size)


def _spend(size):
    """Count a call producing ``size`` elements against the budget; False (and compiled from now on)
    once the budget is spent."""
    if size >= _cfg.small_array:
        return False
    state.calls -= 1
    state.elements -= size
    if state.calls < 0 or state.elements < 0:
        stop()
        return False
    return True


def stop():
    """Run every kernel compiled from now on (called when the first kernel loads Numba, and by
    ``derivgen warmup``, which compiles them all)."""
    state.active = False


class OutForm:
    """A loop variant that writes its output (``_1d``, ``_2d``, their parallel versions):
    ``(out, *operands, zero)``."""
    __slots__ = ("fn",)
    admits = staticmethod(admit)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, out, *args):
        with np.errstate(all="ignore"):
            out[...] = self.fn(*args)


class InplaceForm(OutForm):
    """The ``_inplace`` variant: ``(first, *operands, zero)``, writing into its first operand."""
    __slots__ = ()

    def __call__(self, first, *args):
        with np.errstate(all="ignore"):
            first[...] = self.fn(first, *args)


class RowsForm(OutForm):
    """The ``_rows`` variant: ``(out, a, a_step, b, b_step, ..., *numbers, zero)``, each array a full matrix
    (step 1) or a (1, C) row (step 0), which broadcasts as the loop reads it."""
    __slots__ = ("n",)

    def __init__(self, fn, n_arrays):
        super().__init__(fn)
        self.n = 2 * n_arrays

    def __call__(self, out, *args):
        n = self.n
        with np.errstate(all="ignore"):
            out[...] = self.fn(*args[0:n:2], *args[n:])


def attach(array, variants, rows=None, inplace=None, n_arrays=0):
    """Give a kernel's loop variants (``variants``: those writing an output; ``rows``; ``inplace``) the
    array form ``array`` of their expression, for ``jit.LazyKernel`` to run while ``admit`` allows.
    Other callables (Numba's own dispatchers, where the generator checks a table's samples) have no
    ``interpreted`` attribute and keep running compiled."""
    form = OutForm(array)
    for k, k_form in [(k, form) for k in variants] + [(rows, RowsForm(array, n_arrays)),
                                                       (inplace, InplaceForm(array))]:
        if k is not None and hasattr(type(k), "interpreted"):
            k.interpreted = k_form


FLOAT_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64))


class LoopForm:
    """A hand-written loop's array form: ``fn`` takes the loop's own arguments, writes what the loop
    writes and returns what it returns. ``sized`` is the position of the array the call is sized by
    (its output, or the input it reduces); a call is admitted while the budget lasts, that array is
    small and its dtype is one of ``dtypes`` (those the form reproduces)."""
    __slots__ = ("fn", "sized", "dtypes")

    def __init__(self, fn, sized, dtypes):
        self.fn = fn
        self.sized = sized
        self.dtypes = dtypes

    def admits(self, args):
        if not state.active:
            return False
        a = args[self.sized]
        if type(a) is not np.ndarray or a.dtype not in self.dtypes:
            return False
        return _spend(a.size)

    def __call__(self, *args):
        with np.errstate(all="ignore"):
            return self.fn(*args)


def attach_loop(loop, fn, sized, dtypes=FLOAT_DTYPES):
    """Give the hand-written ``loop`` (a ``jit.LazyKernel``) the array form ``fn`` (see ``LoopForm``)."""
    loop.interpreted = LoopForm(fn, sized, frozenset(np.dtype(t) for t in dtypes))
