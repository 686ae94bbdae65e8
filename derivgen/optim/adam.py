"""``Adam`` (with ``amsgrad``, ``weight_decay``, ``maximize``; ``decoupled_weight_decay=True`` is AdamW),
updated as torch's single-tensor implementation (bit-for-bit in float64)."""
from derivgen.core.tensor import Tensor
from derivgen.optim import _kernels, differentiable
from derivgen.optim.optimizer import Flat, Optimizer, advance, check_adam_args, check_options, empty_like_flat, \
    param_state, params_with_grad, typed


def decay_and_moment_scalars(param, group):
    """The Adam family kernels' shared scalars, typed like ``param``: ``weight_decay, decoupled,
    1 - lr * weight_decay, w1 = 1 - beta1, 1 - w1, beta2, 1 - beta2`` (see ``_kernels._adam_grad`` and
    ``_adam_moments``)."""
    lr, (beta1, beta2), weight_decay = group["lr"], group["betas"], group["weight_decay"]
    t = lambda v: typed(param, v)  # noqa: E731
    w1 = t(1 - beta1)
    return (t(weight_decay), bool(group["decoupled_weight_decay"]), t(1 - lr * weight_decay), w1, t(1) - w1,
            t(beta2), t(1 - beta2))


class Adam(Optimizer):
    _update_differentiable = differentiable.adam

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        check_options(foreach, fused, differentiable)

    def _update(self, group):
        lr, (beta1, beta2) = group["lr"], group["betas"]
        amsgrad = group["amsgrad"]
        flags = (bool(amsgrad), bool(group["maximize"]))
        scalars = {}  # (dtype, step) -> the loop's typed scalars: the same for most parameters of a group
        for p, grad in params_with_grad(group):
            state = param_state(self.state[p], p, "exp_avg", "exp_avg_sq", "max_exp_avg_sq" if amsgrad else None,
                                fused=bool(group["fused"]))
            step = advance(state["step"])
            flat = Flat()
            param = flat.out(p)
            key = (param.dtype, step)
            typed_scalars = scalars.get(key)
            if typed_scalars is None:
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr / bias_correction1
                typed_scalars = scalars[key] = (
                    *decay_and_moment_scalars(param, group), typed(param, bias_correction2 ** 0.5),
                    typed(param, group["eps"]), typed(param, -step_size))
            _kernels.adam_update(
                param, Flat.read(grad, param.dtype), flat.out(state["exp_avg"]), flat.out(state["exp_avg_sq"]),
                flat.out(state["max_exp_avg_sq"]) if amsgrad else empty_like_flat(param), *flags, *typed_scalars)
            flat.finish()
