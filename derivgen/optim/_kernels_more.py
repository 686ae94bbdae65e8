"""Update rules of ``Adamax``, ``Adadelta``, ``NAdam`` and ``RAdam``: one Numba loop per rule over one
parameter's flat array, in place, with the roundings of torch's single-tensor implementation (see
``derivgen.optim._kernels`` for the rules: ``add_(b, alpha=s)`` and ``addcmul_`` are fused
multiply-adds, ``addcdiv_(b, c, value=s)`` is ``a + (s * b) / c``, ``lerp_`` fuses by the weight).
Scalars arrive typed like the parameter."""
import numpy as np

from derivgen.kernels.fma import fma
from derivgen.kernels.jit import kernel
from derivgen.optim._kernels import _adam_grad, _adam_moments, _lerp, _transformed_grad


@kernel
def adamax_update(param, grad, exp_avg, exp_inf, maximize, weight_decay, w1, one_minus_w1, beta2, eps, neg_clr):
    """``exp_inf = max(exp_inf * beta2, |g| + eps)`` (NaN wins, as torch.maximum);
    ``param += (-clr * exp_avg) / exp_inf``."""
    for i in range(param.size):
        g = _transformed_grad(grad[i], param[i], maximize, weight_decay)
        m = _lerp(exp_avg[i], g, w1, one_minus_w1)
        exp_avg[i] = m
        a = exp_inf[i] * beta2
        b = abs(g) + eps
        e = a if (a > b or a != a) else b
        exp_inf[i] = e
        param[i] = param[i] + (neg_clr * m) / e


@kernel
def adadelta_update(param, grad, square_avg, acc_delta, maximize, weight_decay, rho, one_minus_rho, eps, neg_lr):
    for i in range(param.size):
        g = _transformed_grad(grad[i], param[i], maximize, weight_decay)
        s = fma(one_minus_rho * g, g, square_avg[i] * rho)
        square_avg[i] = s
        std = np.sqrt(s + eps)
        delta = np.sqrt(acc_delta[i] + eps)
        delta = delta / std
        delta = delta * g
        acc_delta[i] = fma(one_minus_rho * delta, delta, acc_delta[i] * rho)
        param[i] = fma(delta, neg_lr, param[i])


@kernel
def nadam_update(param, grad, exp_avg, exp_avg_sq, maximize, weight_decay, decoupled, decay, w1, one_minus_w1,
                 beta2, one_minus_beta2, bias_correction2, eps, grad_coef, avg_coef):
    """``decay`` is ``1 - lr * weight_decay``; ``grad_coef`` / ``avg_coef`` are torch's
    ``-lr * (1 - mu) / (1 - mu_product)`` and ``-lr * mu_next / (1 - mu_product_next)``."""
    for i in range(param.size):
        g, p = _adam_grad(grad[i], param[i], maximize, weight_decay, decoupled, decay)
        m, v = _adam_moments(exp_avg, exp_avg_sq, i, g, w1, one_minus_w1, beta2, one_minus_beta2)
        denom = np.sqrt(v / bias_correction2) + eps
        p = p + (grad_coef * g) / denom
        param[i] = p + (avg_coef * m) / denom


@kernel
def radam_update(param, grad, exp_avg, exp_avg_sq, maximize, weight_decay, decoupled, decay, w1, one_minus_w1,
                 beta2, one_minus_beta2, bias_correction1, lr, rectified, bias_correction2_sqrt, eps, rect):
    """``rectified``: torch's ``rho_t > 5`` branch, ``((m / bc1) * lr) * ((1 / (sqrt(v) + eps)) * sqrt(bc2))
    * rect`` (a Python scalar over a tensor is ``reciprocal() * scalar`` in torch); else ``(m / bc1) * lr``."""
    for i in range(param.size):
        g, p = _adam_grad(grad[i], param[i], maximize, weight_decay, decoupled, decay)
        m, v = _adam_moments(exp_avg, exp_avg_sq, i, g, w1, one_minus_w1, beta2, one_minus_beta2)
        update = (m / bias_correction1) * lr
        if rectified:
            adaptive = (1 / (np.sqrt(v) + eps)) * bias_correction2_sqrt
            update = (update * adaptive) * rect
        param[i] = p - update


@kernel
def asgd_update(param, grad, ax, maximize, weight_decay, decay, neg_eta, mu, average):
    """``decay`` is ``1 - lambd * eta``; ``average``: ``mu != 1``, so ``ax += (param - ax) * mu``
    (otherwise ``ax`` copies the parameter)."""
    for i in range(param.size):
        g = _transformed_grad(grad[i], param[i], maximize, weight_decay)
        p = fma(g, neg_eta, param[i] * decay)
        param[i] = p
        if average:
            ax[i] = ax[i] + (p - ax[i]) * mu
        else:
            ax[i] = p


@kernel
def rprop_update(param, grad, prev, step_size, maximize, etaminus, etaplus, step_size_min, step_size_max):
    """Each element's step size grows by ``etaplus`` while its gradient keeps its sign and shrinks by
    ``etaminus`` when it flips (then that gradient counts as zero), clamped to the bounds (NaN stays
    NaN, as torch's ``clamp_``); the parameter moves by the step size against the gradient's sign."""
    for i in range(param.size):
        g = -grad[i] if maximize else grad[i]
        s = g * prev[i]
        if s > 0:
            factor = etaplus
        elif s < 0:
            factor = etaminus
        elif s == 0:
            factor = etaplus / etaplus  # a one of the parameter's type
        else:
            factor = s  # NaN
        size = step_size[i] * factor
        if size < step_size_min:
            size = step_size_min
        if size > step_size_max:
            size = step_size_max
        step_size[i] = size
        if factor == etaminus:
            g = etaminus - etaminus  # a zero of the parameter's type
        param[i] = fma(-np.sign(g), size, param[i])
        prev[i] = g
