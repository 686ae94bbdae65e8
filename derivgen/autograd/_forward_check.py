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
                # as torch's: every differentiable input is dual (a zero tangent but for the one being varied)
                # and no Tensor goes in requiring grad, so the function sees a forward-only call
                call = [_dual(a, basis if a is t else np.zeros(a._array.size, a._array.dtype), diff_inputs)
                        if isinstance(a, Tensor) else a for a in inputs]
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


def _dual(a, flat_tangent, diff_inputs):
    if not any(a is d for d in diff_inputs):
        return a.detach()
    return fwAD.make_dual(Tensor._make(a._array), Tensor._make(flat_tangent.reshape(a._array.shape)))


def mismatch(analytical, numerical, i, j):
    return (f"Jacobian computed with forward mode mismatch for output {i} with respect to input {j},\n"
            f"numerical:{Tensor._make(numerical)}\nanalytical:{Tensor._make(analytical)}\n")


def undefined_tangent_mismatch(func, inputs):
    """torch's ``_test_undefined_forward_mode``: with every differentiable input dual (random tangents),
    giving one input a zero tangent must give the same output tangents as giving it none. Returns the
    mismatch message, or None."""
    rng = np.random.default_rng(0)
    diff = [i for i, a in enumerate(inputs) if isinstance(a, Tensor) and a.requires_grad]
    with fwAD.dual_level():
        duals = [a.detach() if isinstance(a, Tensor) else a for a in inputs]
        for i in diff:
            a = inputs[i]._array
            duals[i] = fwAD.make_dual(Tensor._make(a), Tensor._make(rng.uniform(-1, 1, a.shape).astype(a.dtype)))
        for i in diff:
            dual = duals[i]
            a = inputs[i]._array
            duals[i] = fwAD.make_dual(Tensor._make(a), Tensor._make(np.zeros_like(a)))
            with_zeros = _float_outputs(func(*duals))
            duals[i] = Tensor._make(a)
            without = _float_outputs(func(*duals))
            duals[i] = dual
            for k, (o1, o2) in enumerate(zip(with_zeros, without)):
                t1, t2 = fwAD.unpack_dual(o1).tangent, fwAD.unpack_dual(o2).tangent
                if t1 is not None and t2 is not None and not np.allclose(t1._array, t2._array):
                    return (f"Mismatch in tangent values for output with index: {k} when input: {inputs[i]} has an "
                            f"undefined tangent value.  Got: {t1} but expected: {t2}")
    return None


def _float_outputs(outs):
    outs = outs if isinstance(outs, tuple) else (outs,)
    return [o for o in outs if isinstance(o, Tensor) and o.dtype.is_floating_point]
