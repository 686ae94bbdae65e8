"""``Adamax`` and ``Adadelta``, updated as torch's single-tensor implementations."""
from derivgen.optim import _kernels_more, differentiable
from derivgen.optim.optimizer import (Flat, Optimizer, advance, check_adam_args, check_nonnegative,
                                      param_state, params_with_grad, typed)


class Adamax(Optimizer):
    _update_differentiable = differentiable.adamax

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _update(self, group):
        lr, (beta1, beta2) = group["lr"], group["betas"]
        for p, grad in params_with_grad(group):
            state = param_state(self.state[p], p, "exp_avg", "exp_inf")
            step = advance(state["step"])
            clr = lr / (1 - beta1 ** step)
            flat = Flat()
            param = flat.out(p)
            w1 = typed(param, 1 - beta1)
            _kernels_more.adamax_update(
                param, Flat.read(grad, param.dtype), flat.out(state["exp_avg"]), flat.out(state["exp_inf"]),
                bool(group["maximize"]), typed(param, group["weight_decay"]), w1, typed(param, 1) - w1,
                typed(param, beta2), typed(param, group["eps"]), typed(param, -clr))
            flat.finish()


class Adadelta(Optimizer):
    _update_differentiable = differentiable.adadelta
    _capturable_devices = ("cuda", "xpu", "hpu", "privateuseone")

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_nonnegative(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonnegative(eps=eps, weight_decay=weight_decay)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, group):
        rho = group["rho"]
        for p, grad in params_with_grad(group):
            state = param_state(self.state[p], p, "square_avg", "acc_delta")
            advance(state["step"])
            flat = Flat()
            param = flat.out(p)
            _kernels_more.adadelta_update(
                param, Flat.read(grad, param.dtype), flat.out(state["square_avg"]), flat.out(state["acc_delta"]),
                bool(group["maximize"]), typed(param, group["weight_decay"]), typed(param, rho),
                typed(param, 1 - rho), typed(param, group["eps"]), typed(param, -group["lr"]))
            flat.finish()
