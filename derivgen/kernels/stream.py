"""Non-temporal ("streaming") stores for the fused kernels' large outputs.

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
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

ALIGN = 64


def _store(builder, value, ptr):
    st = builder.store(value, ptr, align=ALIGN)
    st.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))


@intrinsic
def stream_store(typingctx, arr, i, v):
    """``arr[i] = v`` with a non-temporal store; ``arr`` 1-D contiguous and 64-byte aligned."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.layout == "C"):
        return None
    sig = types.none(arr, types.intp, arr.dtype)

    def codegen(context, builder, signature, args):
        aty = signature.args[0]
        a = context.make_array(aty)(context, builder, args[0])
        _store(builder, args[2], cgutils.get_item_pointer(context, builder, aty, a, [args[1]]))
        return context.get_dummy_value()
    return sig, codegen


@intrinsic
def stream_store2(typingctx, arr, i, j, v):
    """``arr[i, j] = v`` with a non-temporal store; ``arr`` 2-D, rows contiguous, every row 64-byte
    aligned."""
    if not (isinstance(arr, types.Array) and arr.ndim == 2):
        return None
    sig = types.none(arr, types.intp, types.intp, arr.dtype)

    def codegen(context, builder, signature, args):
        aty = signature.args[0]
        a = context.make_array(aty)(context, builder, args[0])
        _store(builder, args[3], cgutils.get_item_pointer(context, builder, aty, a, [args[1], args[2]]))
        return context.get_dummy_value()
    return sig, codegen


@intrinsic
def stream_fence(typingctx):
    """Order the non-temporal stores before every later memory access (they are weakly ordered), so
    another thread that reads the output after the kernel returns sees every value."""
    sig = types.none()

    def codegen(context, builder, signature, args):
        builder.fence("seq_cst")
        return context.get_dummy_value()
    return sig, codegen


def streamable(a):
    """Whether ``stream_store``/``stream_store2`` may write ``a``: data and rows 64-byte aligned, rows
    contiguous."""
    if a.ctypes.data % ALIGN:
        return False
    if a.ndim == 1:
        return a.strides[0] == a.itemsize
    return a.ndim == 2 and a.strides[1] == a.itemsize and a.strides[0] % ALIGN == 0
