"""Numba loop of col2im, the adjoint of the im2col copy in ``conv.py``: the input gradient of a
convolution (and the forward of a transposed one).

Why a loop: numpy adds each kernel offset's (N, C, OH, OW) slab into a strided view of the padded
input, kh*kw calls whose innermost run is only OW elements long; on the LeNet-5 layer 64x6x14x14 with
a 5x5 kernel that took 7.2 ms against 0.9 ms here (float32, one thread).
"""
from derivgen.kernels.jit import kernel


@kernel
def col2im_add(cols, sh, sw, dh, dw, out):
    """out (N, C, Hp, Wp) += each column cols (N, C, kh, kw, OH, OW) at its window position."""
    n, c, kh, kw, oh, ow = cols.shape
    for b in range(n):
        for ch in range(c):
            for u in range(kh):
                for v in range(kw):
                    for i in range(oh):
                        r = i * sh + u * dh
                        for j in range(ow):
                            out[b, ch, r, j * sw + v * dw] += cols[b, ch, u, v, i, j]
