"""Non-temporal ("streaming") stores for the fused kernels' large outputs: which arrays may take them,
and the stores as plain Python (their compiled meaning, one LLVM store with ``!nontemporal``, is in
numba_stream.py, which numba_backend imports with the first kernel).

A plain store first reads the cache line it writes (read-for-ownership), so a kernel writing a 16 MiB
output moves 32 MiB for it. A non-temporal store writes the line without reading it, and does not evict
the inputs from the caches: for outputs far larger than the caches that is a third less memory traffic
(a 4M-element float32 ``o[i] = 2 * x[i] + 1``: 1.0 ms against 1.4-2.5 ms with plain stores on the
benchmark machine). x86 only emits them for aligned vector stores, so each store states the alignment of
the vector stores the loop vectorizer makes from it: the caller guarantees that the output's data (and,
for a matrix, every row) starts on a 64-byte boundary, as ``buffers.empty`` gives, so the vector body
(which starts at index 0 and steps by whole vectors) only writes aligned vectors. The scalar remainder
carries the same attribute; x86 has no alignment requirement for scalar stores.
"""

ALIGN = 64


def stream_store(arr, i, v):
    """``arr[i] = v`` with a non-temporal store; ``arr`` 1-D contiguous and 64-byte aligned."""
    arr[i] = v


def stream_store2(arr, i, j, v):
    """``arr[i, j] = v`` with a non-temporal store; ``arr`` 2-D, rows contiguous, every row 64-byte
    aligned."""
    arr[i, j] = v


def stream_fence():
    """Order the non-temporal stores before every later memory access (they are weakly ordered), so
    another thread that reads the output after the kernel returns sees every value."""


def streamable(a):
    """Whether ``stream_store``/``stream_store2`` may write ``a``: data and rows 64-byte aligned, rows
    contiguous."""
    if a.ctypes.data % ALIGN:
        return False
    if a.ndim == 1:
        return a.strides[0] == a.itemsize
    return a.ndim == 2 and a.strides[1] == a.itemsize and a.strides[0] % ALIGN == 0
