"""Hand-written Numba loops of the runtime itself (not of a table row).

``column_sums``: the reduction of a broadcast gradient back to a bias row, ``(R, C) -> (C,)``, which
the engine does for every ``x @ W + b`` in a backward. Rows are added in order into one output row,
which is what numpy's ``np.add.reduce(g, axis=0)`` does on a C-contiguous matrix (bit-for-bit the
same results, except that a column of negative zeros sums to -0.0 here, +0.0 there), at 2-4x its
speed on the matrices of an MLP (no reduction machinery, one vectorized pass).

``clamp``: ``x.clamp(min, max)`` of a float array with number bounds in one vectorized pass, the
same selection as ``np.where(x < min, min, x)`` then ``np.where(x > max, max, x)`` (NaN stays NaN);
``clamp_inplace`` the same written into ``x``.

``clamp_grad``: its gradient for ``x``, ``grad`` where ``min <= x <= max`` and 0 elsewhere (NaN
included), as ``np.where(mask, grad, 0)`` gives it.

``erf``: the error function of an array, for the hand-written forwards and backward helpers that need
it (gelu); numpy has none.

Each loop has an array form, its numpy spelling (``*_array``; for ``erf``, Python's ``math.erf`` on
each element), which a fresh process's first small calls run instead of loading Numba
(interpreted.py).
"""
import math

import numpy as np

from derivgen.kernels import interpreted
from derivgen.kernels.dispatch import call_cached
from derivgen.kernels.jit import kernel, scalar


@kernel
def column_sums(g, out):
    rows, cols = g.shape
    for j in range(cols):
        out[j] = g[0, j]
    for i in range(1, rows):
        for j in range(cols):
            out[j] += g[i, j]


def _column_sums_array(g, out):
    # row after row from the first, as the loop adds them (np.add.reduce starts from +0.0, so a column
    # of -0.0 would sum to +0.0)
    out[...] = np.add.accumulate(g, axis=0)[-1]


interpreted.attach_loop(column_sums, _column_sums_array, sized=0)


@scalar
def _clamp_one(v, lo, hi, has_lo, has_hi):
    if has_lo and v < lo:
        v = lo
    if has_hi and v > hi:
        v = hi
    return v


@kernel
def _clamp_flat(x, lo, hi, has_lo, has_hi, out):
    for i in range(x.shape[0]):
        out[i] = _clamp_one(x[i], lo, hi, has_lo, has_hi)


def _clamped_array(x, lo, hi, has_lo, has_hi):
    # the comparisons of _clamp_one: False for NaN, so NaN stays; a bound replaces only what is past it
    if has_lo:
        x = np.where(x < lo, lo, x)
    if has_hi:
        x = np.where(x > hi, hi, x)
    return x


def _clamp_flat_array(x, lo, hi, has_lo, has_hi, out):
    out[...] = _clamped_array(x, lo, hi, has_lo, has_hi)


interpreted.attach_loop(_clamp_flat, _clamp_flat_array, sized=5)


# The compiled clamp loops by dtype, called without Numba's dispatcher (which types their six or eight
# arguments on every call, as long again as the loop on a few thousand elements). A read-only input
# types differently (see compiled_entry) and goes through the dispatcher.
_CLAMP_ENTRIES = {}
_CLAMP_GRAD_ENTRIES = {}


def _run(entries, dt, writeable, loop, args):
    if writeable:
        call_cached(entries, dt, loop, args)
    else:
        loop(*args)


def clamp(a, lo, hi):
    """``a`` clamped to [lo, hi] (either bound None), for a float32/float64 array and bounds of its dtype."""
    a = np.ascontiguousarray(a)
    dt = a.dtype
    out = np.empty(a.shape, dt)
    zero = dt.type(0)
    _run(_CLAMP_ENTRIES, dt, a.flags.writeable, _clamp_flat,
         (a.reshape(-1), zero if lo is None else lo, zero if hi is None else hi, lo is not None, hi is not None,
          out.reshape(-1)))
    return out


@kernel
def _clamp_flat_inplace(x, lo, hi, has_lo, has_hi):
    # its own loop rather than _clamp_flat with out=x: with two arrays that are one, LLVM's run-time
    # alias check fails and the loop runs unvectorized
    for i in range(x.shape[0]):
        x[i] = _clamp_one(x[i], lo, hi, has_lo, has_hi)


def _clamp_flat_inplace_array(x, lo, hi, has_lo, has_hi):
    x[...] = _clamped_array(x, lo, hi, has_lo, has_hi)


interpreted.attach_loop(_clamp_flat_inplace, _clamp_flat_inplace_array, sized=0)


_CLAMP_INPLACE_ENTRIES = {}


def clamp_inplace(a, lo, hi):
    """``a`` clamped to [lo, hi] in place (either bound None), for a writable C-contiguous float32/float64
    array and bounds of its dtype."""
    dt = a.dtype
    zero = dt.type(0)
    call_cached(_CLAMP_INPLACE_ENTRIES, dt, _clamp_flat_inplace,
                (a.reshape(-1), zero if lo is None else lo, zero if hi is None else hi, lo is not None, hi is not None))


@kernel
def _clamp_grad_flat(g, x, lo, hi, has_lo, has_hi, zero, out):
    for i in range(x.shape[0]):
        v = x[i]
        inside = True
        if has_lo:
            inside = v >= lo
        if has_hi:
            inside = inside and v <= hi
        out[i] = g[i] if inside else zero


def _clamp_grad_flat_array(g, x, lo, hi, has_lo, has_hi, zero, out):
    inside = np.ones(x.shape, np.bool_)
    if has_lo:
        inside = x >= lo
    if has_hi:
        inside &= x <= hi
    out[...] = np.where(inside, g, zero)


interpreted.attach_loop(_clamp_grad_flat, _clamp_grad_flat_array, sized=7)


def clamp_grad(g, a, lo, hi):
    """The gradient of ``a.clamp(lo, hi)`` for ``a`` (either bound None): C-contiguous float arrays
    ``g`` and ``a`` of one shape and dtype, bounds of that dtype."""
    dt = g.dtype
    out = np.empty(g.shape, dt)
    zero = dt.type(0)
    _run(_CLAMP_GRAD_ENTRIES, dt, g.flags.writeable and a.flags.writeable, _clamp_grad_flat,
         (g.reshape(-1), a.reshape(-1), zero if lo is None else lo, zero if hi is None else hi, lo is not None,
          hi is not None, zero, out.reshape(-1)))
    return out


@kernel
def _erf_flat(x, out):
    for i in range(x.shape[0]):
        out[i] = math.erf(x[i])


_erf_each = np.frompyfunc(math.erf, 1, 1)


def _erf_flat_array(x, out):
    # numpy has no erf: Python's, element by element (the budget admits only small arrays); in float64,
    # rounded to float32 after for a float32 array, within an ulp of Numba's float32 erf
    out[...] = _erf_each(x.astype(np.float64)).astype(np.float64)


interpreted.attach_loop(_erf_flat, _erf_flat_array, sized=1)


def erf(a):
    """``erf`` of every element of a float array (same shape and dtype)."""
    a = np.ascontiguousarray(a)
    out = np.empty_like(a)
    _erf_flat(a.reshape(-1), out.reshape(-1))
    return out
