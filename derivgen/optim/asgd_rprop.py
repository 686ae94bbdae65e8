"""``ASGD`` (averaged SGD) and ``Rprop`` (resilient backpropagation), updated as torch's single-tensor
implementations. ASGD's ``eta`` and ``mu`` are 0-dim tensors of the step dtype, rounded to it each
step as torch's are, and the update reads them back as Python floats, as torch's does."""
import numpy as np

from derivgen.core import dtypes as _dt
from derivgen.core.tensor import Tensor, bump_version
from derivgen.optim import _kernels_more, differentiable
from derivgen.optim.optimizer import (Flat, Optimizer, advance, check_nonnegative, param_state,
                                      params_with_grad, scalar_dtype, typed)


def _scalar_state(value):
    return Tensor._make(np.array(value, scalar_dtype().np))


def _set_scalar_state(tensor, value):
    """torch's ``tensor.copy_(torch.as_tensor(value))``: the value is rounded to the default dtype first
    (which matters once a float64 parameter's loaded state holds float64 ``eta`` / ``mu``)."""
    tensor._array[...] = _dt.get_default_dtype().np.type(value)
    bump_version(tensor)


class ASGD(Optimizer):
    _update_differentiable = differentiable.asgd
    _capturable_names = "params, mus, etas, and state_steps"

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_nonnegative(lr=lr, weight_decay=weight_decay)
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _state(self, p, group):
        return param_state(self.state[p], p, "ax", first=lambda: {"eta": _scalar_state(group["lr"]),
                                                                  "mu": _scalar_state(1.0)})

    def _update(self, group):
        lambd = group["lambd"]
        for p, grad in params_with_grad(group):
            state = self._state(p, group)
            step = advance(state["step"])
            eta = float(state["eta"]._array)
            mu = float(state["mu"]._array)
            flat = Flat()
            param = flat.out(p)
            _kernels_more.asgd_update(
                param, Flat.read(grad, param.dtype), flat.out(state["ax"]), bool(group["maximize"]),
                typed(param, group["weight_decay"]), typed(param, 1 - lambd * eta), typed(param, -eta),
                typed(param, mu), mu != 1)
            flat.finish()
            self._advance_averaging(state, group, step)

    @staticmethod
    def _advance_averaging(state, group, step):
        """The next step's ``eta`` (decayed learning rate) and ``mu`` (averaging weight)."""
        lr, lambd = group["lr"], group["lambd"]
        _set_scalar_state(state["eta"], lr / ((1 + lambd * lr * step) ** group["alpha"]))
        _set_scalar_state(state["mu"], 1 / max(1, step - group["t0"]))


class Rprop(Optimizer):
    _update_differentiable = differentiable.rprop

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        check_nonnegative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _state(self, p, group):
        state = param_state(self.state[p], p, "prev")
        if "step_size" not in state:
            state["step_size"] = Tensor._make(np.full(p._array.shape, group["lr"], p.grad._array.dtype))
        return state

    def _update(self, group):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        for p, grad in params_with_grad(group):
            state = self._state(p, group)
            advance(state["step"])
            flat = Flat()
            param = flat.out(p)
            t = lambda v: typed(param, v)  # noqa: E731
            _kernels_more.rprop_update(
                param, Flat.read(grad, param.dtype), flat.out(state["prev"]), flat.out(state["step_size"]),
                bool(group["maximize"]), t(etaminus), t(etaplus), t(step_size_min), t(step_size_max))
            flat.finish()
