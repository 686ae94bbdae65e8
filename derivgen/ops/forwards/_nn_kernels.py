"""Numba loops for the classification head (log_softmax over the last dim, nll_loss without class
weights), forward and backward.

Why: on a classifier's (N, C) logits with small C (an MLP's 10 classes) these ops are a handful of
microseconds of arithmetic, but their numpy spellings chain 5-8 small array ops (max, subtract, exp,
sum, log, fancy indexing, masks, bounds checks), each with its own allocation and dispatch: 20-30 us
per op on the benchmark machine, against 2-4 us for one pass here. Every loop computes exactly what
the numpy version it replaces computes (same special values: NaN and inf rows come out the same), and
the callers keep the numpy version for every other case (other dims, class weights, reductions).
"""
import numpy as np

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
