"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov momentum, weight decay and
``maximize``, updated as torch's single-tensor implementation (bit-for-bit in float64)."""
import numpy as np

from derivgen.core.tensor import Tensor
from derivgen.optim import _kernels, differentiable
from derivgen.optim.optimizer import Flat, Optimizer, check_options, check_tensor_lr, empty_like_flat, params_with_grad, \
    typed


class SGD(Optimizer):
    _update_differentiable = differentiable.sgd

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        check_tensor_lr(lr)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        check_options(foreach, fused, differentiable)

    def _update(self, group):
        momentum = group["momentum"]
        scalars = {}  # dtype -> the loop's typed scalars
        for p, grad in params_with_grad(group):
            flat = Flat()
            param = flat.out(p)
            g = Flat.read(grad, param.dtype)
            buf_tensor = None
            if momentum != 0:
                state = self.state[p]
                buf_tensor = state.get("momentum_buffer")
                first = buf_tensor is None
                if first:
                    buf_tensor = Tensor._make(np.empty(p._array.shape, param.dtype))  # the loop fills it
                buf = flat.out(buf_tensor)
            else:
                first, buf = False, empty_like_flat(param)
            typed_scalars = scalars.get(param.dtype)
            if typed_scalars is None:
                typed_scalars = scalars[param.dtype] = (
                    typed(param, group["lr"]), typed(param, group["weight_decay"]), typed(param, momentum),
                    typed(param, 1 - group["dampening"]), bool(group["nesterov"]), bool(group["maximize"]))
            _kernels.sgd_update(param, g, buf, *typed_scalars, first)
            flat.finish()
            if momentum != 0:
                self.state[p]["momentum_buffer"] = buf_tensor
