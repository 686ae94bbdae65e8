"""``Muon``: momentum SGD whose update, for each 2-D parameter, is the momentum (or its Nesterov
look-ahead) orthogonalised by a few Newton-Schulz iterations, scaled by ``adjust_lr_fn``, as torch's
single-tensor implementation.

torch runs the Newton-Schulz iteration in bfloat16, a dtype derivgen does not have; here each of
those bfloat16 operations is computed in float32 and rounded to bfloat16 (round to nearest even),
which is what torch's CPU kernels do too, but matrix products accumulate in their own order, so an
element can land one bfloat16 step away from torch's: the parameters agree with torch's to about
1e-2 of the step, not bit for bit."""
import math

import numpy as np

from derivgen.core.tensor import Tensor, bump_version
from derivgen.optim import _kernels
from derivgen.optim.optimizer import Flat, Optimizer, check_tensor_lr, params_with_grad

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _bfloat16(x):
    """``x`` rounded to bfloat16 (round to nearest, ties to even), held in float32."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    rounded = (bits + (((bits >> 16) & 1) + np.uint32(0x7FFF))) & np.uint32(0xFFFF0000)
    return np.where(np.isnan(x), np.float32(np.nan), rounded.view(np.float32))


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = (np.float32(v) for v in ns_coefficients)
    ortho = _bfloat16(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        ortho = ortho.T
    norm = _bfloat16(np.sqrt(np.sum(ortho * ortho, dtype=np.float32)))
    ortho = _bfloat16(ortho / max(norm, _bfloat16(np.float32(eps))))
    for _ in range(ns_steps):
        gram = _bfloat16(ortho @ ortho.T)
        gram_update = _bfloat16(b * gram + c * (gram @ gram))
        ortho = _bfloat16(a * ortho + gram_update @ ortho)
    return ortho.T if tall else ortho


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    """torch's shape-dependent learning-rate scale: ``"original"`` (the default) or ``"match_rms_adamw"``."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        adjusted_ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        adjusted_ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        adjusted_ratio = 1.0
    return lr * adjusted_ratio


class Muon(Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
                    "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps,
                    "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _update(self, group):
        lr, momentum = group["lr"], group["momentum"]
        for p, grad_t in params_with_grad(group):
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = Tensor._make(np.zeros(grad_t._array.shape, grad_t._array.dtype))
            buf = state["momentum_buffer"]
            grad = np.ascontiguousarray(grad_t._array)
            dtype = grad.dtype.type
            w = dtype(1 - momentum)
            _kernels.lerp_into(buf._array.reshape(-1), grad.reshape(-1), w, dtype(1) - w)
            bump_version(buf)
            if group["nesterov"]:
                update = grad.copy()
                w = dtype(momentum)
                _kernels.lerp_into(update.reshape(-1), buf._array.reshape(-1), w, dtype(1) - w)
            else:
                update = buf._array
            update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
            adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
            flat = Flat()
            param = flat.out(p)
            param *= param.dtype.type(1 - lr * group["weight_decay"])
            _kernels.add_scaled(param, np.ascontiguousarray(update, param.dtype).reshape(-1),
                                param.dtype.type(-adjusted_lr))
            flat.finish()
