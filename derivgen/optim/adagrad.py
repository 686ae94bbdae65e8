"""``Adagrad`` (``lr_decay``, ``initial_accumulator_value``, ``weight_decay``, ``maximize``), updated as
torch's single-tensor implementation (bit-for-bit in float64). As in torch, the state is created when
the optimizer is."""
from derivgen.optim import _kernels, differentiable
from derivgen.optim.optimizer import Flat, Optimizer, advance, check_options, check_tensor_lr, new_step, \
    params_with_grad, typed, zeros_like_param


class Adagrad(Optimizer):
    _update_differentiable = differentiable.adagrad

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        check_options(foreach, fused, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = new_step(bool(group["fused"]))
                state["sum"] = zeros_like_param(p, group["initial_accumulator_value"])

    def _update(self, group):
        for p, grad in params_with_grad(group):
            state = self.state[p]
            step = advance(state["step"])
            clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
            flat = Flat()
            param = flat.out(p)
            _kernels.adagrad_update(param, Flat.read(grad, param.dtype), flat.out(state["sum"]), typed(param, clr),
                                    typed(param, group["eps"]), typed(param, group["weight_decay"]),
                                    bool(group["maximize"]))
            flat.finish()
