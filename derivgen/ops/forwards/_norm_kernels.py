"""Numba loops of training-mode batch normalisation over a C-contiguous (N, C, S) view: per-channel
statistics, the affine output, and the backward's per-channel sums and input gradient.

Why loops: the numpy spelling reduces over axes (0, 2) of (N, C, S), which numpy does as strided
passes with temporaries (centered input, its square, the normalised input, products for each sum);
here each step is one pass over memory. Sums accumulate in float64.
"""
from derivgen.kernels.jit import kernel


@kernel
def channel_stats(x, mean, var):
    """Per-channel mean and biased variance (two passes: the variance of the centered values)."""
    n, c, s = x.shape
    count = n * s
    for ch in range(c):
        acc = 0.0
        for b in range(n):
            for k in range(s):
                acc += x[b, ch, k]
        m = acc / count
        acc2 = 0.0
        for b in range(n):
            for k in range(s):
                d = x[b, ch, k] - m
                acc2 += d * d
        mean[ch] = m
        var[ch] = acc2 / count


@kernel
def channel_affine(x, alpha, beta, out):
    """out = x * alpha[c] + beta[c] (torch's batch norm transform: alpha = invstd * weight,
    beta = bias - mean * alpha)."""
    n, c, s = x.shape
    for b in range(n):
        for ch in range(c):
            a = alpha[ch]
            z = beta[ch]
            for k in range(s):
                out[b, ch, k] = x[b, ch, k] * a + z


@kernel
def channel_grad_sums(g, x, mean, sum_g, sum_gx):
    """Per channel: sum of g and sum of g * (x - mean)."""
    n, c, s = g.shape
    for ch in range(c):
        a = 0.0
        d = 0.0
        m = mean[ch]
        for b in range(n):
            for k in range(s):
                gv = g[b, ch, k]
                a += gv
                d += gv * (x[b, ch, k] - m)
        sum_g[ch] = a
        sum_gx[ch] = d


@kernel
def batch_norm_input_grad(g, x, mean, invstd, weight_scale, sum_g, sum_gx, out):
    """Training batch norm's input gradient: (g - mean(g) - (x - mean) * k) * invstd * w with
    k = sum(g * (x - mean)) * invstd**2 / count."""
    n, c, s = g.shape
    count = n * s
    for ch in range(c):
        m = mean[ch]
        inv = invstd[ch]
        k = sum_gx[ch] * inv * inv / count
        mg = sum_g[ch] / count
        scale = inv * weight_scale[ch]
        for b in range(n):
            for q in range(s):
                out[b, ch, q] = (g[b, ch, q] - mg - (x[b, ch, q] - m) * k) * scale

