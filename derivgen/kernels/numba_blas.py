"""The compiled meaning of ``loop_helpers._gemm``: a call of numpy's cblas GEMM (blas.py) from compiled
code, through its address. Imported by numba_backend only, when the first kernel runs.

The address is an argument, not a constant of the compiled code, so kernels that call it stay
cacheable (the library lies at another address in the next process). Every size goes out as a 64-bit
integer: blas.py gives addresses of 64-bit-integer builds only.
"""
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from derivgen.kernels import loop_helpers as _h

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


@intrinsic
def _call_gemm(typingctx, fn, order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    if not (isinstance(alpha, types.Float) and alpha == beta):
        return None
    i64, i32 = types.int64, types.int32
    sig = types.void(i64, i32, i32, i32, i64, i64, i64, alpha, i64, i64, i64, i64, alpha, i64, i64)

    def codegen(context, builder, signature, args):
        li32, li64, ptr = ir.IntType(32), ir.IntType(64), ir.IntType(8).as_pointer()
        real = ir.FloatType() if alpha.bitwidth == 32 else ir.DoubleType()
        fnty = ir.FunctionType(ir.VoidType(), [li32, li32, li32, li64, li64, li64, real, ptr, li64, ptr, li64,
                                               real, ptr, li64])
        values = list(args[1:])
        for i in (7, 9, 12):  # the matrices' addresses
            values[i] = builder.inttoptr(values[i], ptr)
        builder.call(builder.inttoptr(args[0], fnty.as_pointer()), values)
        return context.get_dummy_value()
    return sig, codegen


@overload(_h._gemm)
def _ol_gemm(fn, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    if not isinstance(alpha, types.Float):
        return None
    real = alpha

    def impl(fn, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        _call_gemm(np.int64(fn), np.int32(_ROW_MAJOR), np.int32(_TRANS if trans_a else _NO_TRANS),
                   np.int32(_TRANS if trans_b else _NO_TRANS), np.int64(m), np.int64(n), np.int64(k), real(alpha),
                   np.int64(a), np.int64(lda), np.int64(b), np.int64(ldb), real(beta), np.int64(c), np.int64(ldc))
    return impl
