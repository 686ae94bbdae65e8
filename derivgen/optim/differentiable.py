"""The update rules as autograd-recorded tensor operations, for ``differentiable=True``.

Each function is the optimizer's ``_update_differentiable(group)``: torch's single-tensor code with
``differentiable=True``, operation for operation, so a program can differentiate through
``opt.step()`` (meta-learning: the parameters are non-leaf tensors and ``p.grad`` is a gradient made
with ``create_graph=True``). ``Optimizer.step`` runs it with grad mode on, as torch does. The state
is torch's (same keys, ``step`` a 0-dim counter), so the state's buffers carry history too.

In-place ops that derivgen's Tensor does not have (``lerp_``, ``addcmul_``) are written as
``buf.copy_(buf.lerp(...))``; the values agree with torch's to rounding (derivgen's ``add(alpha=)``,
``addcmul`` and ``lerp`` round each product, where torch's CPU kernels fuse them), not bit for bit.
"""
import numpy as np

from derivgen.core.tensor import Tensor, bump_version
from derivgen.optim.optimizer import advance, new_mu_product, param_state, params_with_grad


def _learned(hyperparameter):
    """A hyperparameter given as a tensor that requires grad (meta-learning a learning rate)."""
    return isinstance(hyperparameter, Tensor) and hyperparameter.requires_grad


def _signed_grad(p, group):
    grad = p.grad
    return -grad if group["maximize"] else grad


def _with_weight_decay(grad, p, weight_decay):
    """L2 weight decay added to the gradient. A learned ``weight_decay`` goes in as torch's
    ``grad.addcmul_(p.clone(), weight_decay)``: written into ``grad`` (``p.grad`` itself unless negated by
    ``maximize``), with the gradient reaching ``weight_decay``."""
    if _learned(weight_decay):
        return grad.copy_(grad.addcmul(p.clone(), weight_decay))
    return grad.add(p, alpha=weight_decay)


def _over(numerator, tensor):
    """``numerator / tensor`` as torch computes it: a Python number over a tensor is
    ``tensor.reciprocal() * number``."""
    return numerator / tensor if isinstance(numerator, Tensor) else tensor.reciprocal() * numerator


def sgd(optimizer, group):
    momentum, lr = group["momentum"], group["lr"]
    for p, _ in params_with_grad(group):
        grad = _signed_grad(p, group)
        if group["weight_decay"] != 0:
            grad = _with_weight_decay(grad, p, group["weight_decay"])
        if momentum != 0:
            state = optimizer.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        if _learned(lr):
            p.add_(grad * lr * -1)  # torch's ``addcmul_(grad, lr, value=-1)``: the gradient reaches lr
        else:
            p.add_(grad, alpha=-lr)


def adam(optimizer, group):
    lr, (beta1, beta2), eps, weight_decay = group["lr"], group["betas"], group["eps"], group["weight_decay"]
    amsgrad = group["amsgrad"]
    for p, _ in params_with_grad(group):
        state = param_state(optimizer.state[p], p, "exp_avg", "exp_avg_sq", "max_exp_avg_sq" if amsgrad else None,
                            fused=bool(group["fused"]))
        if state["step"].requires_grad:
            raise RuntimeError("`requires_grad` is not supported for `step` in differentiable mode")
        grad = _signed_grad(p, group)
        advance(state["step"])
        step = state["step"]._array[()]  # a NumPy scalar of the step dtype: the corrections round in it
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * weight_decay)
            else:
                grad = _with_weight_decay(grad, p, weight_decay)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        # a learned weight's gradient reads the buffer's old values, which copy_ then overwrites: lerp a
        # clone (torch's lerp_ saves the original self the same way)
        exp_avg.copy_((exp_avg.clone() if _learned(beta1) else exp_avg).lerp(grad, 1 - beta1))
        if _learned(beta2):
            exp_avg_sq.copy_(exp_avg_sq.clone().lerp(grad.square(), 1 - beta2))
        else:
            exp_avg_sq.copy_(exp_avg_sq.mul(beta2).addcmul(grad, grad, value=1 - beta2))
        # torch's differentiable branch computes the bias corrections as 0-dim tensors of the step
        # dtype; with plain betas they hold no history, so NumPy scalars of that dtype give the same
        # numbers; a learned beta's correction is ``1 - beta ** step.clone()``, with history
        bias_correction1 = 1 - beta1 ** state["step"].clone() if _learned(beta1) else 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** state["step"].clone() if _learned(beta2) else 1 - beta2 ** step
        second = exp_avg_sq
        if amsgrad:
            max_exp_avg_sq = state["max_exp_avg_sq"]
            max_exp_avg_sq.copy_(max_exp_avg_sq.clone().maximum(exp_avg_sq))
            second = max_exp_avg_sq
        if _learned(lr) or _learned(beta1) or _learned(beta2) or _learned(eps):
            # the step size is a tensor with history: torch's expression, as tensor ops
            bias_correction1, bias_correction2 = (b if isinstance(b, Tensor) else Tensor._make(np.array(b))
                                                  for b in (bias_correction1, bias_correction2))
            step_size_neg = _over(lr, bias_correction1).neg()
            denom = (second.sqrt() / (bias_correction2.sqrt() * step_size_neg)).add(_over(eps, step_size_neg))
        else:
            step_size_neg = -((1 / bias_correction1) * lr)
            denom = (second.sqrt() / float(np.sqrt(bias_correction2) * step_size_neg)).add(
                float((1 / step_size_neg) * eps))
        p.add_(exp_avg.clone() / denom)


def adagrad(optimizer, group):
    for p, _ in params_with_grad(group):
        state = optimizer.state[p]
        step = advance(state["step"])
        grad = _signed_grad(p, group)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        state_sum = state["sum"]
        state_sum.copy_(state_sum.addcmul(grad, grad, value=1))
        std = state_sum.sqrt() + group["eps"]
        p.add_((grad * -clr) / std)


def rmsprop(optimizer, group):
    momentum, centered, alpha = group["momentum"], group["centered"], group["alpha"]
    for p, _ in params_with_grad(group):
        state = param_state(optimizer.state[p], p, "square_avg", "momentum_buffer" if momentum > 0 else None,
                            "grad_avg" if centered else None)
        advance(state["step"])
        grad = _signed_grad(p, group)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        square_avg = state["square_avg"]
        square_avg.copy_(square_avg.mul(alpha).addcmul(grad, grad, value=1 - alpha))
        if centered:
            grad_avg = state["grad_avg"]
            grad_avg.copy_(grad_avg.lerp(grad, 1 - alpha))
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt()
        else:
            avg = square_avg.sqrt()
        avg = avg.add(group["eps"])
        if momentum > 0:
            buf = state["momentum_buffer"]
            buf.copy_(buf.mul(momentum).addcdiv(grad, avg))
            p.add_(buf, alpha=-group["lr"])
        else:
            p.add_((grad * -group["lr"]) / avg)




def adamax(optimizer, group):
    lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
    for p, _ in params_with_grad(group):
        state = param_state(optimizer.state[p], p, "exp_avg", "exp_inf")
        step = advance(state["step"])
        grad = _signed_grad(p, group)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.copy_(exp_avg.lerp(grad, 1 - beta1))
        # torch takes the amax over the two stacked candidates; ``maximum`` gives the same values and
        # splits the gradient of ties the same way
        exp_inf.copy_(exp_inf.mul(beta2).maximum(grad.abs().add(eps)))
        clr = lr / (1 - beta1 ** step)
        p.add_((exp_avg * -clr) / exp_inf)


def adadelta(optimizer, group):
    rho, eps = group["rho"], group["eps"]
    for p, _ in params_with_grad(group):
        state = param_state(optimizer.state[p], p, "square_avg", "acc_delta")
        advance(state["step"])
        grad = _signed_grad(p, group)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.copy_(square_avg.mul(rho).addcmul(grad, grad, value=1 - rho))
        std = square_avg.add(eps).sqrt()
        delta = acc_delta.add(eps).sqrt().clone().div(std).mul(grad)
        acc_delta.copy_(acc_delta.mul(rho).addcmul(delta, delta, value=1 - rho))
        p.add_(delta, alpha=-group["lr"])


def nadam(optimizer, group):
    lr, (beta1, beta2), eps, weight_decay = group["lr"], group["betas"], group["eps"], group["weight_decay"]
    momentum_decay = group["momentum_decay"]
    for p, _ in params_with_grad(group):
        state = param_state(optimizer.state[p], p, "exp_avg", "exp_avg_sq", first=new_mu_product)
        step = advance(state["step"])
        grad = _signed_grad(p, group)
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(p, alpha=weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product_t = state["mu_product"]
        mu_product_t._array *= mu_product_t._array.dtype.type(mu)
        bump_version(mu_product_t)
        mu_product = mu_product_t._array[()]  # torch's 0-dim tensor: the coefficients round in its dtype
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.copy_(exp_avg.lerp(grad, 1 - beta1))
        exp_avg_sq.copy_(exp_avg_sq.mul(beta2).addcmul(grad, grad, value=1 - beta2))
        denom = exp_avg_sq.div(bias_correction2).sqrt().add(eps)
        grad_coef = (1 / (1.0 - mu_product)) * (-lr * (1.0 - mu))
        avg_coef = (1 / (1.0 - mu_product * mu_next)) * (-lr * mu_next)
        p.add_((grad * float(grad_coef)) / denom)
        p.add_((exp_avg * float(avg_coef)) / denom)


def radam(optimizer, group):
    lr, (beta1, beta2), eps, weight_decay = group["lr"], group["betas"], group["eps"], group["weight_decay"]
    for p, _ in params_with_grad(group):
        state = param_state(optimizer.state[p], p, "exp_avg", "exp_avg_sq")
        step = advance(state["step"])
        grad = _signed_grad(p, group)
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(p, alpha=weight_decay)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.copy_(exp_avg.lerp(grad, 1 - beta1))
        exp_avg_sq.copy_(exp_avg_sq.mul(beta2).addcmul(grad, grad, value=1 - beta2))
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        update = (exp_avg / bias_correction1) * lr
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = (1 / exp_avg_sq.sqrt().add(eps)) * bias_correction2 ** 0.5
            update = (update * adaptive) * rect
        p.add_(update, alpha=-1.0)


def asgd(optimizer, group):
    lambd = group["lambd"]
    for p, _ in params_with_grad(group):
        state = optimizer._state(p, group)
        step = advance(state["step"])
        grad = _signed_grad(p, group)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        eta = float(state["eta"]._array)
        p.mul_(1 - lambd * eta)
        p.add_(grad, alpha=-eta)
        ax, mu = state["ax"], float(state["mu"]._array)
        if mu != 1:
            ax.add_(p.sub(ax).mul(mu))
        else:
            ax.copy_(p)
        optimizer._advance_averaging(state, group, step)


def rprop(optimizer, group):
    etaminus, etaplus = group["etas"]
    step_size_min, step_size_max = group["step_sizes"]
    for p, _ in params_with_grad(group):
        state = optimizer._state(p, group)
        advance(state["step"])
        grad = _signed_grad(p, group)
        prev, step_size = state["prev"], state["step_size"]
        # the sign of the gradient's agreement with the previous one carries no gradient (``sign``'s
        # derivative is zero), so the factors are computed as constants
        sign = grad.detach().mul(prev.detach()).sign()._array
        factor = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, np.where(sign == 0, 1, sign)))
        factor = Tensor._make(factor.astype(sign.dtype))
        step_size.copy_(step_size.mul(factor).clamp(step_size_min, step_size_max))
        grad = grad.clone().masked_fill(factor.eq(etaminus), 0)
        p.add_(grad.sign().mul(step_size).neg())
        prev.copy_(grad)
