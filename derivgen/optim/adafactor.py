"""``Adafactor``: torch's variant (``beta2_decay``, ``eps=(eps1, eps2)``, the clipping threshold ``d``,
decoupled ``weight_decay``, ``maximize``), as its single-tensor implementation. A matrix's second
moment is kept factored: one running mean per row and per column, whose outer product (divided by
the mean row value) estimates it; vectors keep a full running mean. The ``lerp_`` updates round as
torch's (``_kernels.lerp_into``); the norms are NumPy's, whose summation order can differ from torch's
in the last bit, so results agree with torch's to rounding."""
import numpy as np

from derivgen.core.tensor import Tensor, bump_version
from derivgen.optim import _kernels
from derivgen.optim.optimizer import Flat, Optimizer, advance, check_tensor_lr, new_step, params_with_grad


def _lerp_(target, end, weight):
    """``target.lerp_(end, weight)`` on a state tensor (contiguous, made here)."""
    arr = target._array
    w = arr.dtype.type(weight)
    _kernels.lerp_into(arr.reshape(-1), np.ascontiguousarray(end, arr.dtype).reshape(-1), w, arr.dtype.type(1) - w)
    bump_version(target)


def _norm(arr, **axes):
    return np.sqrt(np.sum(arr * arr, **axes))


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _state(self, p, grad):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = new_step()
            shape = grad._array.shape
            if len(shape) > 1:
                state["row_var"] = Tensor._make(np.zeros(shape[:-1] + (1,), grad._array.dtype))
                state["col_var"] = Tensor._make(np.zeros(shape[:-2] + (1, shape[-1]), grad._array.dtype))
            else:
                state["variance"] = Tensor._make(np.zeros(shape, grad._array.dtype))
        return state

    def _update(self, group):
        lr, beta2_decay, d, weight_decay = group["lr"], group["beta2_decay"], group["d"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        for p, grad_t in params_with_grad(group):
            state = self._state(p, grad_t)
            grad = -grad_t._array if group["maximize"] else grad_t._array
            if eps1 is None:  # torch fixes it from the first parameter's dtype, for the whole group
                eps1 = float(np.finfo(p._array.dtype).eps)
            step = advance(state["step"])
            one_minus_beta2_t = step ** beta2_decay
            rho_t = min(lr, 1 / (step ** 0.5))
            alpha = max(eps2, float(_norm(p._array)) / (p._array.size ** 0.5)) * rho_t
            flat = Flat()
            param = flat.out(p)
            dtype = param.dtype.type
            if weight_decay != 0:
                param *= dtype(1 - lr * weight_decay)
            if grad.ndim > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                _lerp_(row_var, _norm(grad, axis=-1, keepdims=True) ** 2 / dtype(grad.shape[-1]), one_minus_beta2_t)
                _lerp_(col_var, _norm(grad, axis=-2, keepdims=True) ** 2 / dtype(grad.shape[-2]), one_minus_beta2_t)
                var_estimate = row_var._array @ col_var._array  # an outer product: no sums, exact as torch's
                var_estimate /= np.maximum(row_var._array.mean(axis=-2, keepdims=True), dtype(eps1))
            else:
                _lerp_(state["variance"], grad * grad, one_minus_beta2_t)
                var_estimate = state["variance"]._array.copy()
            update = dtype(1) / np.sqrt(np.maximum(var_estimate, dtype(eps1 * eps1)))
            update *= grad
            denom = max(1.0, float(_norm(update)) / ((update.size ** 0.5) * d))
            _kernels.add_scaled(param, np.ascontiguousarray(update, param.dtype).reshape(-1), dtype(-alpha / denom))
            flat.finish()
