"""``fma(a, b, c)``: ``a * b + c`` rounded once, as LLVM's ``llvm.fma`` intrinsic, for Numba loops.

PyTorch's CPU kernels compute ``x.add_(y, alpha=a)``, ``addcmul_``, ``addcdiv_`` and ``lerp_`` with
fused multiply-adds (its vectorized paths call ``vec::fmadd``), so a loop that wants the same bits as
those ops has to fuse the same products; Numba never contracts ``a * b + c`` on its own. The compiled
version (an overload calling the intrinsic) is in numba_backend.py, so that importing kernels does not
import Numba; this Python version is for reading only and rounds twice.
"""


def fma(a, b, c):
    return a * b + c
