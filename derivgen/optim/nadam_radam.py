"""``NAdam`` and ``RAdam`` (with ``decoupled_weight_decay``), updated as torch's single-tensor
implementations. NAdam's ``mu_product`` is a 0-dim tensor of the step dtype, multiplied in that dtype
each step as torch's is."""
import math

from derivgen.core.tensor import bump_version
from derivgen.optim import _kernels_more, differentiable
from derivgen.optim.adam import decay_and_moment_scalars
from derivgen.optim.optimizer import (Flat, Optimizer, advance, check_adam_args, check_nonnegative,
                                      new_mu_product, param_state, params_with_grad, typed)


def _per_dtype(scalars_of, group):
    """``scalars_of(param, group)`` computed once per parameter dtype of the group."""
    cache = {}

    def get(param):
        found = cache.get(param.dtype)
        if found is None:
            found = cache[param.dtype] = scalars_of(param, group)
        return found
    return get


class NAdam(Optimizer):
    _update_differentiable = differentiable.nadam
    _capturable_names = "params, mu_products and state_steps"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_adam_args(lr, eps, betas, weight_decay)
        check_nonnegative(momentum_decay=momentum_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, group):
        lr, (beta1, beta2) = group["lr"], group["betas"]
        momentum_decay = group["momentum_decay"]
        shared_scalars = _per_dtype(decay_and_moment_scalars, group)
        for p, grad in params_with_grad(group):
            state = param_state(self.state[p], p, "exp_avg", "exp_avg_sq", first=new_mu_product)
            step = advance(state["step"])
            bias_correction2 = 1 - beta2 ** step
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product_t = state["mu_product"]
            mu_product_t._array *= mu_product_t._array.dtype.type(mu)  # the step dtype's rounding, as torch
            bump_version(mu_product_t)
            mu_product = float(mu_product_t._array)
            mu_product_next = mu_product * mu_next
            flat = Flat()
            param = flat.out(p)
            t = lambda v: typed(param, v)  # noqa: E731
            _kernels_more.nadam_update(
                param, Flat.read(grad, param.dtype), flat.out(state["exp_avg"]), flat.out(state["exp_avg_sq"]),
                bool(group["maximize"]), *shared_scalars(param), t(bias_correction2),
                t(group["eps"]), t(-lr * (1.0 - mu) / (1.0 - mu_product)), t((-lr * mu_next) / (1.0 - mu_product_next)))
            flat.finish()


class RAdam(Optimizer):
    _update_differentiable = differentiable.radam

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, group):
        lr, (beta1, beta2) = group["lr"], group["betas"]
        shared_scalars = _per_dtype(decay_and_moment_scalars, group)
        for p, grad in params_with_grad(group):
            state = param_state(self.state[p], p, "exp_avg", "exp_avg_sq")
            step = advance(state["step"])
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            rectified = rho_t > 5.0
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) \
                if rectified else 0.0
            flat = Flat()
            param = flat.out(p)
            t = lambda v: typed(param, v)  # noqa: E731
            _kernels_more.radam_update(
                param, Flat.read(grad, param.dtype), flat.out(state["exp_avg"]), flat.out(state["exp_avg_sq"]),
                bool(group["maximize"]), *shared_scalars(param), t(bias_correction1), t(lr),
                bool(rectified), t(bias_correction2 ** 0.5), t(group["eps"]), t(rect))
            flat.finish()
