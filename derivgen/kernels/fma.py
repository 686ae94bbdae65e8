"""``fma(a, b, c)``: ``a * b + c`` rounded once, as LLVM's ``llvm.fma`` intrinsic, for Numba loops.

PyTorch's CPU kernels compute ``x.add_(y, alpha=a)``, ``addcmul_``, ``addcdiv_`` and ``lerp_`` with
fused multiply-adds (its vectorized paths call ``vec::fmadd``), so a loop that wants the same bits as
those ops has to fuse the same products; Numba never contracts ``a * b + c`` on its own.
"""
from llvmlite import ir
from numba import types
from numba.extending import intrinsic


@intrinsic
def fma(typingctx, a, b, c):
    if not (isinstance(a, types.Float) and a == b == c):
        return None
    sig = a(a, b, c)

    def codegen(context, builder, signature, args):
        ty = args[0].type
        fn = builder.module.declare_intrinsic("llvm.fma", [ty], ir.FunctionType(ty, [ty, ty, ty]))
        return builder.call(fn, args)
    return sig, codegen
