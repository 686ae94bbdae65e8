"""Numba loops for the classification head (log_softmax over the last dim, nll_loss without class
weights), forward and backward.

Why: on a classifier's (N, C) logits with small C (an MLP's 10 classes) these ops are a handful of
microseconds of arithmetic, but their numpy spellings chain 5-8 small array ops (max, subtract, exp,
sum, log, fancy indexing, masks, bounds checks), each with its own allocation and dispatch: 20-30 us
per op on the benchmark machine, against 2-4 us for one pass here. Every loop computes exactly what
the numpy version it replaces computes (same special values: NaN and inf rows come out the same), and
the callers keep the numpy version for every other case (other dims, class weights, reductions).

Each loop also has an array form (``*_array``): its numpy spelling in the same order of roundings
(sequential row sums as ``cumsum``), which a fresh process's first small calls run instead of loading
Numba (derivgen/kernels/interpreted.py).
"""
import numpy as np

from derivgen.kernels import interpreted
from derivgen.kernels.jit import kernel


@kernel
def log_softmax_rows(x, out):
    """``out[i] = (x[i] - max(x[i])) - log(sum(exp(x[i] - max(x[i]))))`` for each row of a 2-D array.

    The shifted values are formed in the input's dtype (as numpy's ``x - max`` is); the sum of their
    exponentials is accumulated in float64, which only makes it closer to the exact value."""
    rows, cols = x.shape
    for i in range(rows):
        m = x[i, 0]
        for j in range(1, cols):
            v = x[i, j]
            if v > m or v != v:  # NaN propagates like np.max (the row is NaN either way)
                m = v
        s = 0.0
        for j in range(cols):
            s += np.exp(np.float64(x[i, j] - m))
        lse = np.log(s)
        for j in range(cols):
            out[i, j] = np.float64(x[i, j] - m) - lse


def _log_softmax_rows_array(x, out):
    shifted = (x - np.max(x, axis=1, keepdims=True)).astype(np.float64)
    out[...] = shifted - np.log(np.cumsum(np.exp(shifted), axis=1)[:, -1:])


interpreted.attach_loop(log_softmax_rows, _log_softmax_rows_array, sized=0)


@kernel
def nll_sum_rows(x, target, ignore_index):
    """(sum over rows of -x[i, target[i]] skipping ignore_index, rows counted, first bad row or -1).

    Stops at the first target outside [0, C) that is not ignore_index, for the caller's IndexError."""
    rows, cols = x.shape
    s = 0.0
    count = 0
    for i in range(rows):
        t = target[i]
        if t == ignore_index:
            continue
        if t < 0 or t >= cols:
            return s, count, i
        s -= np.float64(x[i, t])
        count += 1
    return s, count, -1


def _counted_rows(target, ignore_index, cols):
    """The rows the nll loops visit (target not ignore_index) before the first out-of-range target,
    and that row (-1 if none)."""
    keep = target != ignore_index
    bad = np.flatnonzero(keep & ((target < 0) | (target >= cols)))
    first_bad = int(bad[0]) if bad.size else -1
    rows = np.flatnonzero(keep if first_bad < 0 else keep[:first_bad])
    return rows, first_bad


def _nll_sum_rows_array(x, target, ignore_index):
    rows, first_bad = _counted_rows(target, ignore_index, x.shape[1])
    picked = x[rows, target[rows]].astype(np.float64)
    # ((0 - x0) - x1) - ...: the loop's order, as a running sum of the negated values from 0
    s = float(np.cumsum(np.concatenate(([0.0], -picked)))[-1])
    return s, int(rows.size), first_bad


interpreted.attach_loop(nll_sum_rows, _nll_sum_rows_array, sized=0)


@kernel
def nll_scatter_rows(out, target, g, scale, ignore_index):
    """``out[i, target[i]] = g[i] * scale`` for rows whose target is not ignore_index (``out`` is zeros;
    ``g`` has one value per row, or one for all). Returns the first row with a target outside [0, C),
    or -1; nothing is written out of bounds."""
    rows, cols = out.shape
    per_row = g.shape[0] != 1
    for i in range(rows):
        t = target[i]
        if t == ignore_index:
            continue
        if t < 0 or t >= cols:
            return i
        out[i, t] = (g[i] if per_row else g[0]) * scale
    return -1


def _nll_scatter_rows_array(out, target, g, scale, ignore_index):
    rows, first_bad = _counted_rows(target, ignore_index, out.shape[1])
    out[rows, target[rows]] = (g[rows] if g.shape[0] != 1 else g[0]) * scale
    return first_bad


interpreted.attach_loop(nll_scatter_rows, _nll_scatter_rows_array, sized=0)


@kernel
def log_softmax_backward_rows(grad, output, out):
    """``out[i] = grad[i] - exp(output[i]) * sum(grad[i])`` for each row of 2-D arrays (the row sum
    accumulated in float64)."""
    rows, cols = grad.shape
    for i in range(rows):
        s = 0.0
        for j in range(cols):
            s += grad[i, j]
        for j in range(cols):
            out[i, j] = grad[i, j] - np.exp(output[i, j]) * s


def _log_softmax_backward_rows_array(grad, output, out):
    out[...] = grad - np.exp(output) * np.cumsum(grad, axis=1, dtype=np.float64)[:, -1:]


interpreted.attach_loop(log_softmax_backward_rows, _log_softmax_backward_rows_array, sized=0)
