"""``RMSprop`` (``centered``, ``momentum``, ``weight_decay``, ``maximize``), updated as torch's
single-tensor implementation (bit-for-bit in float64)."""
from derivgen.optim import _kernels, differentiable
from derivgen.optim.optimizer import Flat, Optimizer, advance, check_nonnegative, empty_like_flat, \
    param_state, params_with_grad, typed


class RMSprop(Optimizer):
    _update_differentiable = differentiable.rmsprop

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_nonnegative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, group):
        momentum, centered = group["momentum"], group["centered"]
        for p, grad in params_with_grad(group):
            state = param_state(self.state[p], p, "square_avg", "momentum_buffer" if momentum > 0 else None,
                                "grad_avg" if centered else None)
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
