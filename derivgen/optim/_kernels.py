"""The optimizers' update rules: one Numba loop per rule over one parameter's flat array, in place.

Each loop reproduces, element by element and in the same order of roundings, what torch's
single-tensor (``foreach=False``) implementation does with a chain of tensor ops, so float64 results
are bit-for-bit torch's. The roundings that matter: ``a.add_(b, alpha=s)`` is ``fma(b, s, a)``;
``a.addcmul_(b, c, value=s)`` is ``fma(s * b, c, a)``; ``a.addcdiv_(b, c, value=s)`` is
``a + (s * b) / c``; ``a.lerp_(b, w)`` is ``fma(w, b - a, a)`` for ``|w| < 0.5`` and
``fma(-(b - a), 1 - w, b)`` otherwise (torch's CPU kernels fuse those products).

Every scalar argument arrives already typed like the parameter (see ``derivgen.optim.optimizer``), so
a float32 parameter is updated in float32 arithmetic throughout, as torch does.

SGD's and Adam's loops also have an array form for float32 parameters (``*_array``, the same
operations over whole arrays with ``_fma32`` for each fused product), which a fresh process's first
small steps run instead of loading Numba (derivgen/kernels/interpreted.py).
"""
import numpy as np

from derivgen.kernels import interpreted
from derivgen.kernels.array_helpers import _fma32
from derivgen.kernels.fma import fma
from derivgen.kernels.jit import kernel


@kernel
def _transformed_grad(g, p, maximize, weight_decay):
    """The gradient as every rule first transforms it: negated to maximize, plus ``weight_decay * p``."""
    g = -g if maximize else g
    if weight_decay != 0:
        g = fma(p, weight_decay, g)
    return g


@kernel
def sgd_update(param, grad, buf, lr, weight_decay, momentum, keep, nesterov, maximize, first):
    """``keep`` is ``1 - dampening``; ``buf`` is empty when ``momentum == 0``; ``first``: ``buf`` is
    filled with the (transformed) gradient instead of updated."""
    for i in range(param.size):
        g = _transformed_grad(grad[i], param[i], maximize, weight_decay)
        if momentum != 0:
            if first:
                b = g
            else:
                b = fma(g, keep, buf[i] * momentum)
            buf[i] = b
            g = fma(b, momentum, g) if nesterov else b
        param[i] = fma(g, -lr, param[i])


def _transformed_grad_array(g, p, maximize, weight_decay):
    g = -g if maximize else g
    return _fma32(p, weight_decay, g) if weight_decay != 0 else g


def _sgd_update_array(param, grad, buf, lr, weight_decay, momentum, keep, nesterov, maximize, first):
    g = _transformed_grad_array(grad, param, maximize, weight_decay)
    if momentum != 0:
        b = g if first else _fma32(g, keep, buf * momentum)
        buf[...] = b
        g = _fma32(b, momentum, g) if nesterov else b
    param[...] = _fma32(g, -lr, param)


interpreted.attach_loop(sgd_update, _sgd_update_array, sized=0, dtypes=(np.float32,))


@kernel
def _lerp(a, b, w, one_minus_w):
    d = b - a
    if abs(w) < 0.5:
        return fma(w, d, a)
    return fma(-d, one_minus_w, b)


@kernel
def _adam_grad(g, p, maximize, weight_decay, decoupled, decay):
    """The Adam family's gradient and parameter after weight decay: ``decoupled`` (AdamW) scales the
    parameter by ``decay = 1 - lr * weight_decay``, otherwise ``weight_decay * p`` joins the gradient."""
    g = -g if maximize else g
    if weight_decay != 0:
        if decoupled:
            p = p * decay
        else:
            g = fma(p, weight_decay, g)
    return g, p


@kernel
def _adam_moments(exp_avg, exp_avg_sq, i, g, w1, one_minus_w1, beta2, one_minus_beta2):
    """Element ``i`` of the first and second moments updated in place (``exp_avg.lerp_(g, 1 - beta1)``,
    ``exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)``); returns both."""
    m = _lerp(exp_avg[i], g, w1, one_minus_w1)
    exp_avg[i] = m
    v = fma(one_minus_beta2 * g, g, exp_avg_sq[i] * beta2)
    exp_avg_sq[i] = v
    return m, v


@kernel
def adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, amsgrad, maximize, weight_decay, decoupled,
                decay, w1, one_minus_w1, beta2, one_minus_beta2, bias_correction2_sqrt, eps, neg_step_size):
    """``decay`` is ``1 - lr * weight_decay`` (decoupled weight decay, AdamW); ``w1`` is ``1 - beta1``;
    ``max_exp_avg_sq`` is empty unless ``amsgrad``."""
    for i in range(param.size):
        g, p = _adam_grad(grad[i], param[i], maximize, weight_decay, decoupled, decay)
        m, v = _adam_moments(exp_avg, exp_avg_sq, i, g, w1, one_minus_w1, beta2, one_minus_beta2)
        if amsgrad:
            mx = max_exp_avg_sq[i]
            if v > mx or v != v:
                mx = v
            max_exp_avg_sq[i] = mx
            v = mx
        denom = np.sqrt(v) / bias_correction2_sqrt + eps
        param[i] = p + (neg_step_size * m) / denom


def _lerp_array(a, b, w, one_minus_w):
    d = b - a
    return _fma32(w, d, a) if abs(w) < 0.5 else _fma32(-d, one_minus_w, b)


def _adam_update_array(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, amsgrad, maximize, weight_decay,
                       decoupled, decay, w1, one_minus_w1, beta2, one_minus_beta2, bias_correction2_sqrt, eps,
                       neg_step_size):
    g = -grad if maximize else grad
    p = param
    if weight_decay != 0:
        if decoupled:
            p = param * decay
        else:
            g = _fma32(param, weight_decay, g)
    m = exp_avg[...] = _lerp_array(exp_avg, g, w1, one_minus_w1)
    v = exp_avg_sq[...] = _fma32(one_minus_beta2 * g, g, exp_avg_sq * beta2)
    if amsgrad:
        v = max_exp_avg_sq[...] = np.where((v > max_exp_avg_sq) | (v != v), v, max_exp_avg_sq)
    param[...] = p + (neg_step_size * m) / (np.sqrt(v) / bias_correction2_sqrt + eps)


interpreted.attach_loop(adam_update, _adam_update_array, sized=0, dtypes=(np.float32,))


@kernel
def rmsprop_update(param, grad, square_avg, grad_avg, buf, lr, alpha, one_minus_alpha, one_minus_w, eps,
                   weight_decay, momentum, centered, maximize):
    """``grad_avg`` is empty unless ``centered``, ``buf`` unless ``momentum > 0``; ``one_minus_w`` is
    ``1 - (1 - alpha)``, the complement of the ``lerp`` weight of the centered average."""
    for i in range(param.size):
        g = _transformed_grad(grad[i], param[i], maximize, weight_decay)
        s = fma(one_minus_alpha * g, g, square_avg[i] * alpha)
        square_avg[i] = s
        if centered:
            a = _lerp(grad_avg[i], g, one_minus_alpha, one_minus_w)
            grad_avg[i] = a
            avg = np.sqrt(fma(-a, a, s))
        else:
            avg = np.sqrt(s)
        avg = avg + eps
        if momentum > 0:
            b = buf[i] * momentum + g / avg
            buf[i] = b
            param[i] = fma(b, -lr, param[i])
        else:
            param[i] = param[i] + (-lr * g) / avg


@kernel
def adagrad_update(param, grad, state_sum, clr, eps, weight_decay, maximize):
    """``clr`` is the decayed learning rate ``lr / (1 + (step - 1) * lr_decay)``."""
    for i in range(param.size):
        g = _transformed_grad(grad[i], param[i], maximize, weight_decay)
        s = fma(g, g, state_sum[i])
        state_sum[i] = s
        param[i] = param[i] + (-clr * g) / (np.sqrt(s) + eps)


@kernel
def add_scaled(out, update, alpha):
    """``out.add_(update, alpha=alpha)``: ``fma(update, alpha, out)`` per element."""
    for i in range(out.size):
        out[i] = fma(update[i], alpha, out[i])


@kernel
def lerp_into(start, end, w, one_minus_w):
    """``start.lerp_(end, w)`` with torch's CPU roundings (see ``_lerp``)."""
    for i in range(start.size):
        start[i] = _lerp(start[i], end[i], w, one_minus_w)
