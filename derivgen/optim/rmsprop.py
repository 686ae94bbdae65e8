"""``RMSprop`` (``centered``, ``momentum``, ``weight_decay``, ``maximize``), updated as torch's
single-tensor implementation (bit-for-bit in float64)."""
from derivgen.optim import _kernels
from derivgen.optim.optimizer import Flat, Optimizer, advance, check_grad, empty_like_flat, new_step, typed, \
    zeros_like_param


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        if capturable or differentiable:
            raise NotImplementedError("derivgen.optim.RMSprop: capturable and differentiable are not supported")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, group):
        momentum, centered = group["momentum"], group["centered"]
        for p in group["params"]:
            if p.grad is None:
                continue
            grad = check_grad(p)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["square_avg"] = zeros_like_param(p)
                if momentum > 0:
                    state["momentum_buffer"] = zeros_like_param(p)
                if centered:
                    state["grad_avg"] = zeros_like_param(p)
            advance(state["step"])
            flat = Flat()
            param = flat.out(p)
            t = lambda v: typed(param, v)  # noqa: E731
            one_minus_alpha = t(1 - group["alpha"])
            _kernels.rmsprop_update(
                param, Flat.read(grad, param.dtype), flat.out(state["square_avg"]),
                flat.out(state["grad_avg"]) if centered else empty_like_flat(param),
                flat.out(state["momentum_buffer"]) if momentum > 0 else empty_like_flat(param),
                t(group["lr"]), t(group["alpha"]), one_minus_alpha, t(1) - one_minus_alpha, t(group["eps"]),
                t(group["weight_decay"]), t(momentum), bool(centered), bool(group["maximize"]))
            flat.finish()
