"""gradcheck's forward-mode check: the Jacobian built from JVPs (one dual call per input element with
a basis tangent) against central differences."""
import numpy as np

from derivgen.autograd import forward_ad as fwAD
from derivgen.core.tensor import Tensor


def forward_jacobian(func, inputs, positions, diff_inputs):
    """``jac[j][i]``: the (numel(input j), numel(output i)) Jacobian from forward-mode JVPs."""
    jac = []
    for t in diff_inputs:
        n = t._array.size
        cols = None
        for k in range(n):
            basis = np.zeros(n, t._array.dtype)
            basis[k] = 1
            with fwAD.dual_level():
                call = [fwAD.make_dual(Tensor._make(a._array), Tensor._make(basis.reshape(a._array.shape)))
                        if isinstance(a, Tensor) and a is t else a for a in inputs]
                outs = func(*call)
                outs = outs if isinstance(outs, tuple) else (outs,)
                outs = [outs[p] for p in positions]
                tangents = [fwAD.unpack_dual(o).tangent for o in outs]
                if cols is None:
                    cols = [np.zeros((n, o._array.size)) for o in outs]
                for i, (o, tg) in enumerate(zip(outs, tangents)):
                    if tg is not None:
                        cols[i][k] = tg._array.reshape(-1)
        if cols is None:
            cols = [np.zeros((0, 1)) for _ in positions]
        jac.append(cols)
    return jac


def mismatch(analytical, numerical, i, j):
    return (f"Jacobian computed with forward mode mismatch for output {i} with respect to input {j},\n"
            f"numerical:{Tensor._make(numerical)}\nanalytical:{Tensor._make(analytical)}\n")
