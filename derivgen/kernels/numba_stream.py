"""The compiled meaning of stream.py's non-temporal stores (see there): each store is LLVM's ``store``
with ``!nontemporal`` metadata and the 64-byte alignment the caller guarantees. Imported by numba_backend
only, when the first kernel runs."""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from derivgen.kernels import stream as _stream


def _store(builder, value, ptr):
    st = builder.store(value, ptr, align=_stream.ALIGN)
    st.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))


@intrinsic
def _store1(typingctx, arr, i, v):
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
def _store2(typingctx, arr, i, j, v):
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
def _fence(typingctx):
    sig = types.none()

    def codegen(context, builder, signature, args):
        builder.fence("seq_cst")
        return context.get_dummy_value()
    return sig, codegen


@overload(_stream.stream_store, inline="always")
def _ol_stream_store(arr, i, v):
    return lambda arr, i, v: _store1(arr, i, v)


@overload(_stream.stream_store2, inline="always")
def _ol_stream_store2(arr, i, j, v):
    return lambda arr, i, j, v: _store2(arr, i, j, v)


@overload(_stream.stream_fence, inline="always")
def _ol_stream_fence():
    return lambda: _fence()
