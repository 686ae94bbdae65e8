"""Numba loop of col2im, the adjoint of the im2col copy in ``conv.py``: the input gradient of a
convolution (and the forward of a transposed one).

Why a loop: numpy adds each kernel offset's (N, C, OH, OW) slab into a strided view of the padded
input, kh*kw calls whose innermost run is only OW elements long; on the LeNet-5 layer 64x6x14x14 with
a 5x5 kernel that took 7.2 ms against 0.6 ms here (float32, one thread). The unit-stride branch is a
contiguous inner loop that LLVM vectorises (0.70 -> 0.31 ms on 64x1x28x28, 5x5).
"""
from derivgen.kernels.jit import kernel


@kernel
def col2im_add(cols, sh, sw, dh, dw, out):
    """out (N, C, Hp, Wp) += each column cols (N, C, kh, kw, OH, OW) at its window position."""
    n, c, kh, kw, oh, ow = cols.shape
    for b in range(n):
        for ch in range(c):
            plane = out[b, ch]
            src = cols[b, ch]
            for u in range(kh):
                for i in range(oh):
                    row = plane[i * sh + u * dh]
                    for v in range(kw):
                        s = src[u, v, i]
                        if sw == 1:
                            dst = row[v * dw:v * dw + ow]
                            for j in range(ow):
                                dst[j] += s[j]
                        else:
                            for j in range(ow):
                                row[j * sw + v * dw] += s[j]


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
