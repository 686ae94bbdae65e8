"""Numba loops of 2-D max pooling, forward (values and flat indices) and backward (scatter by index).

Why a loop: a window's max with its index is one pass over the input here, where numpy needs the
windows copied out of an ``as_strided`` view, an argmax and a gather: on the LeNet-5 pool, 64x6x24x24
with a 2x2 kernel, 0.67 ms here against 3.5 ms (float32, one thread). The loop follows torch's CPU
kernel: padded positions are never picked, NaN wins, the first of equal maxima wins.
"""
import numpy as np

from derivgen.kernels.jit import kernel


@kernel
def max_pool2d_planes(x, kh, kw, sh, sw, ph, pw, dh, dw, out, idx):
    """x (P, H, W) planes -> out, idx (P, OH, OW): each window's max and its flat index in H*W."""
    planes, h, w = x.shape
    oh, ow = out.shape[1], out.shape[2]
    for p in range(planes):
        for i in range(oh):
            h0 = i * sh - ph
            u0 = 0
            while h0 + u0 * dh < 0:
                u0 += 1
            for j in range(ow):
                w0 = j * sw - pw
                v0 = 0
                while w0 + v0 * dw < 0:
                    v0 += 1
                best = -np.inf
                best_i = (h0 + u0 * dh) * w + (w0 + v0 * dw)
                for u in range(u0, kh):
                    r = h0 + u * dh
                    if r >= h:
                        break
                    for v in range(v0, kw):
                        c = w0 + v * dw
                        if c >= w:
                            break
                        val = x[p, r, c]
                        if val > best or val != val:
                            best = val
                            best_i = r * w + c
                out[p, i, j] = best
                idx[p, i, j] = best_i


@kernel
def max_pool2d_planes_2x2(x, out, idx):
    """``max_pool2d_planes`` for the common window (2x2, stride 2, no padding, no dilation, every window
    inside the input): the same picks in the same order (NaN wins, a later NaN over an earlier one, the
    first of equal maxima), unrolled without the general loop's bounds tests."""
    planes, w = x.shape[0], x.shape[2]
    oh, ow = out.shape[1], out.shape[2]
    for p in range(planes):
        for i in range(oh):
            r = 2 * i
            for j in range(ow):
                c = 2 * j
                best = x[p, r, c]
                best_i = r * w + c
                val = x[p, r, c + 1]
                if val > best or val != val:
                    best = val
                    best_i = r * w + c + 1
                val = x[p, r + 1, c]
                if val > best or val != val:
                    best = val
                    best_i = (r + 1) * w + c
                val = x[p, r + 1, c + 1]
                if val > best or val != val:
                    best = val
                    best_i = (r + 1) * w + c + 1
                out[p, i, j] = best
                idx[p, i, j] = best_i


@kernel
def max_pool2d_scatter(grad, idx, out):
    """out (P, H*W) += grad (P, OH*OW) at idx (P, OH*OW)."""
    planes, n = grad.shape
    for p in range(planes):
        for k in range(n):
            out[p, idx[p, k]] += grad[p, k]
