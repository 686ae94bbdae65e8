"""Matrix products on derivgen's threads: a large product is cut into blocks of rows (or columns) of its
result, and each block is one single-threaded call of numpy's OpenBLAS GEMM (blas.py), the blocks run by
a prange kernel on Numba's thread pool, the pool derivgen's other multi-threaded kernels run on.

Why not OpenBLAS's own threads: two pools on the same cores wait for each other. OpenBLAS's idle workers
spin for about 0.1 s after each multi-threaded call, and a prange kernel started in that time waited for
them: a 0.33 ms parallel loop took 3.8 ms after one two-thread product, on two cores. With every
parallel kernel on one pool (as PyTorch runs its kernels and MKL on one OpenMP pool), OpenBLAS runs on one
thread (``threads.own_blas_threads``) from the first parallel kernel on. Splitting also goes further
than OpenBLAS did on small products: 64x1000 by 1000x100 in float32 took 109 us on OpenBLAS's two threads
and 81 us as two blocks here (143 us on one thread).

Each element of a block is summed by the same GEMM over the same k as in one call of the whole product;
OpenBLAS picks its kernels by the block's shape, so a block may round differently from the whole product
in the last bits (as OpenBLAS's own threads and PyTorch's do: no result depends on the thread count
beyond that).

A product goes to numpy as it is when it is small (below ``MIN_WORK`` multiply-adds), when derivgen
computes on one thread now, before Numba is loaded (a short program's products), for dtypes other than
float32/float64, for operands that are neither C- nor Fortran-contiguous, and when no 64-bit-integer
OpenBLAS was found.
"""
import numpy as np

from derivgen.config import OFF as _OFF
from derivgen.config import settings as _cfg
from derivgen.kernels import blas as _blas
from derivgen.kernels import dispatch as _dispatch
from derivgen.kernels import interpreted as _interpreted
from derivgen.kernels.jit import kernel_parallel
from derivgen.kernels.loop_helpers import _gemm, prange

# products of fewer multiply-adds than this run as one call; a block gets at least half of it. Measured
# in float32 on two cores with the pool's workers awake, one call against two blocks: 64x64x64 (2^18)
# 5.7 against 4.9 us, 64x128x64 10.1 against 7.1 us, 128x128x128 43.9 against 25.9 us.
MIN_WORK = 1 << 18
_BLOCK_WORK = MIN_WORK >> 1

_ONE = {np.dtype(np.float32): (np.float32(1), np.float32(0)), np.dtype(np.float64): (np.float64(1), np.float64(0))}


@kernel_parallel
def gemm_blocks(fn, a, b, c, trans_a, trans_b, blocks, by_rows, one, zero):
    """``c = op(a) @ op(b)`` in ``blocks`` blocks of rows (``by_rows``) or columns of ``c``, one GEMM
    call each. ``a``, ``b`` are the operands as stored (C-contiguous), ``op`` their transpose where
    ``trans_a``/``trans_b``; ``c`` is C-contiguous (m, n)."""
    m, n = c.shape
    k = a.shape[0] if trans_a else a.shape[1]
    lda = a.shape[1]
    ldb = b.shape[1]
    item = c.itemsize
    pa = a.ctypes.data
    pb = b.ctypes.data
    pc = c.ctypes.data
    for t in prange(blocks):
        if by_rows:
            r0 = m * t // blocks
            r1 = m * (t + 1) // blocks
            if r1 > r0:
                at = r0 if trans_a else r0 * lda
                _gemm(fn, trans_a, trans_b, r1 - r0, n, k, one, pa + at * item, lda, pb, ldb, zero,
                      pc + r0 * n * item, n)
        else:
            c0 = n * t // blocks
            c1 = n * (t + 1) // blocks
            if c1 > c0:
                bt = c0 * ldb if trans_b else c0
                _gemm(fn, trans_a, trans_b, m, c1 - c0, k, one, pa, lda, pb + bt * item, ldb, zero,
                      pc + c0 * item, n)


@kernel_parallel
def gemm_batch_blocks(fn, a, b, c, trans_a, trans_b, blocks, one, zero):
    """``c[i] = op(a[i]) @ op(b[i])`` for every i, in ``blocks`` blocks of consecutive i, one GEMM call
    per i. ``a``, ``b`` are the stacks as stored (C-contiguous), ``op`` transposes where
    ``trans_a``/``trans_b``; ``c`` is C-contiguous (B, m, n)."""
    count, m, n = c.shape
    k = a.shape[1] if trans_a else a.shape[2]
    lda = a.shape[2]
    ldb = b.shape[2]
    item = c.itemsize
    step_a = a.shape[1] * lda * item
    step_b = b.shape[1] * ldb * item
    pa = a.ctypes.data
    pb = b.ctypes.data
    pc = c.ctypes.data
    for t in prange(blocks):
        for i in range(count * t // blocks, count * (t + 1) // blocks):
            _gemm(fn, trans_a, trans_b, m, n, k, one, pa + i * step_a, lda, pb + i * step_b, ldb, zero,
                  pc + i * m * n * item, n)


def _as_stored(x):
    """(C-contiguous array, transposed) holding ``x`` (a matrix, or a stack of them): ``x`` itself, or
    ``x`` with its last two dims swapped when that is C-contiguous; None for any other layout."""
    if x.flags.c_contiguous:
        return x, False
    t = x.swapaxes(-1, -2)
    if t.flags.c_contiguous:
        return t, True
    return None


def split_gemm(dt):
    """The address of the GEMM of dtype ``dt`` when products may be split now, else None: not before
    Numba is loaded, nor with parallel kernels off or without a 64-bit-integer OpenBLAS."""
    if _interpreted.state.active or _cfg.parallel_threshold >= _OFF:
        return None
    lib = _blas.find()
    return None if lib is None else lib.gemm.get(dt)


def plan(dt, parts, work):
    """(GEMM address, blocks) for ``work`` multiply-adds of dtype ``dt`` that can be cut into up to
    ``parts`` independent pieces (rows of a product, samples of a convolution): blocks >= 2 when they
    should run split over derivgen's threads now, else (None, 1)."""
    if work < MIN_WORK:
        return None, 1
    gemm = split_gemm(dt)
    if gemm is None:
        return None, 1
    blocks = min(_dispatch.parallel_threads(), parts, work // _BLOCK_WORK)
    return (gemm, blocks) if blocks >= 2 else (None, 1)


def matmul(a, b):
    """``a @ b`` of two 2-D arrays, as numpy computes it (a new C-contiguous array), split over derivgen's
    threads when it is large (see the module's docstring)."""
    dt = a.dtype
    m, k = a.shape
    n = b.shape[1]
    if b.dtype != dt or k != b.shape[0]:
        return a @ b
    by_rows = m >= n  # split the result's longer side
    gemm, blocks = plan(dt, m if by_rows else n, m * n * k)
    if gemm is None:
        return a @ b
    sa, sb = _as_stored(a), _as_stored(b)
    if sa is None or sb is None:
        return a @ b
    c = np.empty((m, n), dt)
    gemm_blocks(gemm, sa[0], sb[0], c, sa[1], sb[1], blocks, by_rows, *one_zero(dt))
    return c


def one_zero(dt):
    """1 and 0 of the float dtype ``dt``, as the GEMM kernels take alpha and beta."""
    return _ONE[dt]


def bmm(a, b):
    """``np.matmul(a, b)`` of two stacks of matrices (B, m, k) and (B, k, n), a new C-contiguous array,
    split over derivgen's threads by blocks of the stack when it is large."""
    dt = a.dtype
    count, m, k = a.shape
    n = b.shape[2]
    if b.dtype != dt or b.shape[0] != count or b.shape[1] != k:
        return np.matmul(a, b)
    gemm, blocks = plan(dt, count, count * m * n * k)
    if gemm is None:
        return np.matmul(a, b)
    sa, sb = _as_stored(a), _as_stored(b)
    if sa is None or sb is None:
        return np.matmul(a, b)
    c = np.empty((count, m, n), dt)
    gemm_batch_blocks(gemm, sa[0], sb[0], c, sa[1], sb[1], blocks, *one_zero(dt))
    return c
