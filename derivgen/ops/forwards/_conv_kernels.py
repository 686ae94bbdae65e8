"""Numba loops of im2col (the columns a convolution's BLAS product reads) and of col2im, its adjoint:
the input gradient of a convolution (and the forward of a transposed one).

Why loops: numpy's copy of an ``as_strided`` window view, and col2im as one numpy add per kernel offset
into a strided view of the padded input, both run innermost over OW elements only (10 on LeNet-5's
second layer) and need a padded copy of the input. Measured (float32, one thread): im2col of
64x6x14x14, 5x5: 0.53 ms here against 0.62 ms for the view copy; the input gradient of the Conv3d layer
8x4x12x12x12 -> 8 3x3x3 with padding 1: 1.0-1.4 ms against 3.0-3.5 ms with numpy's slab adds.
"""
import numpy as np

from derivgen.kernels.jit import kernel, kernel_parallel
from derivgen.kernels.loop_helpers import _gemm, prange


@kernel
def col2im_add_wide(cols, kh, kw, out):
    """out (N, C, Hp, Wp) += cols (N, C*kh*kw, run) in the wide layout of a unit-stride, undilated
    convolution: column (c, u, v) is one run of the flattened plane c starting at u*Wp + v, so each
    column is one contiguous (vectorised) add instead of OH rows of OW elements."""
    n, c, hp, wp = out.shape
    run = cols.shape[2]
    for b in range(n):
        for ch in range(c):
            plane = out[b, ch].reshape(hp * wp)
            for u in range(kh):
                for v in range(kw):
                    src = cols[b, (ch * kh + u) * kw + v]
                    dst = plane[u * wp + v:u * wp + v + run]
                    for t in range(run):
                        dst[t] += src[t]


# The 3-D loops below serve 2-D convolutions too (a depth of 1). Their flat indices are unsigned: a
# signed index makes Numba test it for negative wrap-around on every access, which kept the short
# row copies from vectorising (im2col of 64x6x14x14, 5x5: 2.9 ms signed, 0.53 ms unsigned, against
# 0.62 ms for numpy's copy of the strided window view).

@kernel
def im2col_3d(x, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, od, oh, ow, cols):
    """cols (N, C*kd*kh*kw, OD*OH*OW) <- the windows of x (N, C, D, H, W), zero where a window reaches
    into the padding (the padded input is never built): row (c, a, u, v) of a sample holds plane c at
    kernel offset (a, u, v) of every window, each output row's in-range part one (strided) copy."""
    n, c, d, h, w = x.shape
    xf = x.reshape(x.size)
    cf = cols.reshape(cols.size)
    run = od * oh * ow
    for b in range(n):
        for ch in range(c):
            vol = (b * c + ch) * d * h * w
            for a in range(kd):
                for u in range(kh):
                    for v in range(kw):
                        row0 = (((b * c + ch) * kd + a) * kh + u) * kw + v
                        off = v * dw - pw
                        j0 = 0 if off >= 0 else min((-off + sw - 1) // sw, ow)
                        j1 = max(min((w - off + sw - 1) // sw, ow), j0)
                        for k in range(od):
                            z = k * sd + a * dd - pd
                            for i in range(oh):
                                r = i * sh + u * dh - ph
                                dst = np.uint64(row0 * run + (k * oh + i) * ow)
                                if z < 0 or z >= d or r < 0 or r >= h:
                                    for j in range(np.uint64(ow)):
                                        cf[dst + j] = 0
                                    continue
                                for j in range(np.uint64(j0)):
                                    cf[dst + j] = 0
                                src = np.uint64(vol + (z * h + r) * w + off + j0 * sw)
                                at = dst + np.uint64(j0)
                                m = np.uint64(j1 - j0)
                                if sw == 1:
                                    for j in range(m):
                                        cf[at + j] = xf[src + j]
                                else:
                                    step = np.uint64(sw)
                                    for j in range(m):
                                        cf[at + j] = xf[src + j * step]
                                for j in range(np.uint64(j1), np.uint64(ow)):
                                    cf[dst + j] = 0


@kernel
def col2im_3d(cols, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, od, oh, ow, out):
    """out (N, C, D, H, W) += each column of cols (N, C*kd*kh*kw, OD*OH*OW) at its window position
    (``im2col_3d``'s adjoint; terms falling into the padding are dropped, so no padded buffer and no
    crop). Each input position receives its terms in the order of the kernel offsets (a, u, v), then
    of the output positions, as numpy's slab-by-slab adds did."""
    n, c, d, h, w = out.shape
    of = out.reshape(out.size)
    cf = cols.reshape(cols.size)
    run = od * oh * ow
    for b in range(n):
        for ch in range(c):
            vol = (b * c + ch) * d * h * w
            for a in range(kd):
                for u in range(kh):
                    for v in range(kw):
                        row0 = (((b * c + ch) * kd + a) * kh + u) * kw + v
                        off = v * dw - pw
                        j0 = 0 if off >= 0 else min((-off + sw - 1) // sw, ow)
                        j1 = max(min((w - off + sw - 1) // sw, ow), j0)
                        m = np.uint64(j1 - j0)
                        for k in range(od):
                            z = k * sd + a * dd - pd
                            if z < 0 or z >= d:
                                continue
                            for i in range(oh):
                                r = i * sh + u * dh - ph
                                if r < 0 or r >= h:
                                    continue
                                src = np.uint64(row0 * run + (k * oh + i) * ow + j0)
                                at = np.uint64(vol + (z * h + r) * w + off + j0 * sw)
                                if sw == 1:
                                    for j in range(m):
                                        of[at + j] += cf[src + j]
                                else:
                                    step = np.uint64(sw)
                                    for j in range(m):
                                        of[at + j * step] += cf[src + j]


# ---- the same work split over derivgen's threads, sample by sample --------------------------------------
# Each block of samples runs on one thread of Numba's pool: per sample, its columns (im2col_3d) into the
# block's own scratch, then the GEMM calls numpy's matmul makes on the serial path (the same operands,
# shapes and transposes, one OpenBLAS call per sample and group, through loop_helpers._gemm), so every
# sample's result is the serial path's. ``fn`` is the GEMM's address (kernels/blas.py); ``cols`` holds
# one scratch matrix per block; ``one``/``zero`` are 1 and 0 in the arrays' dtype.

@kernel_parallel
def conv_forward_blocks(fn, x, w, bias, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, od, oh, ow, cols, out,
                        one, zero):
    """out (N, G, O/g, run) <- w (G, O/g, R) @ the columns of each sample of x (N, C, D, H, W), plus
    ``bias`` (G, O/g) when it has elements."""
    n = x.shape[0]
    blocks = cols.shape[0]
    groups, og, r = w.shape
    run = od * oh * ow
    item = out.itemsize
    pwt = w.ctypes.data
    add_bias = bias.size > 0
    one_sample = (1,) + x.shape[1:]
    for t in prange(blocks):
        part = cols[t].reshape((1,) + cols.shape[1:])
        pcols = part.ctypes.data
        for b in range(n * t // blocks, n * (t + 1) // blocks):
            im2col_3d(x[b].reshape(one_sample), kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, od, oh, ow, part)
            ob = out[b]
            for g in range(groups):
                _gemm(fn, False, False, og, run, r, one, pwt + g * og * r * item, r, pcols + g * r * run * item,
                      run, zero, ob.ctypes.data + g * og * run * item, run)
                if add_bias:
                    for o in range(og):
                        v = bias[g, o]
                        row = ob[g, o]
                        for j in range(run):
                            row[j] += v


@kernel_parallel
def conv_weight_grad_blocks(fn, x, grad, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, cols, prods, partial,
                            one, zero):
    """partial[t] (G, R, O/g) <- the sum, over block t's samples in order, of each sample's columns
    (R, run) times its gradient's transpose (run, O/g), per group; ``prods`` is one (G, R, O/g) scratch
    per block. The caller sums the blocks' partial sums."""
    n = x.shape[0]
    blocks = cols.shape[0]
    groups, r, og = partial.shape[1:]
    od, oh, ow = grad.shape[2:]
    run = od * oh * ow
    item = partial.itemsize
    one_sample = (1,) + x.shape[1:]
    for t in prange(blocks):
        part = cols[t].reshape((1,) + cols.shape[1:])
        pcols = part.ctypes.data
        pp = prods[t]
        acc = partial[t].reshape(partial[t].size)
        flat = pp.reshape(pp.size)
        acc[:] = zero
        for b in range(n * t // blocks, n * (t + 1) // blocks):
            im2col_3d(x[b].reshape(one_sample), kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, od, oh, ow, part)
            pg = grad[b].ctypes.data
            for g in range(groups):
                _gemm(fn, False, True, r, og, run, one, pcols + g * r * run * item, run, pg + g * og * run * item,
                      run, zero, pp.ctypes.data + g * r * og * item, og)
            for i in range(acc.size):
                acc[i] += flat[i]


@kernel_parallel
def conv_input_grad_blocks(fn, grad, w, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, od, oh, ow, cols, out, one,
                           zero):
    """out (N, C, D, H, W) <- col2im of w's transpose (G, R, O/g) times each sample's gradient
    (N, G, O/g, OD*OH*OW): the input gradient (``input_grad_nd``), sample by sample."""
    n = grad.shape[0]
    blocks = cols.shape[0]
    groups, og, r = w.shape
    run = od * oh * ow
    item = out.itemsize
    pwt = w.ctypes.data
    one_sample = (1,) + out.shape[1:]
    for t in prange(blocks):
        part = cols[t].reshape((1,) + cols.shape[1:])
        pcols = part.ctypes.data
        for b in range(n * t // blocks, n * (t + 1) // blocks):
            pg = grad[b].ctypes.data
            for g in range(groups):
                _gemm(fn, True, False, r, run, og, one, pwt + g * og * r * item, r, pg + g * og * run * item, run,
                      zero, pcols + g * r * run * item, run)
            ob = out[b].reshape(one_sample)
            ob[:] = zero
            col2im_3d(part, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, od, oh, ow, ob)
