"""``SparseAdam``: Adam for sparse gradients. derivgen has no sparse tensors, so every gradient is
dense (and no parameter is sparse or complex) and ``step`` raises torch's error for dense gradients; construction, argument checks and
``state_dict`` behave as torch's."""
from derivgen.core.grad_mode import enable_grad
from derivgen.optim.optimizer import Optimizer, check_tensor_lr


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        check_tensor_lr(lr)
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for index in (0, 1):
            if not 0.0 <= betas[index] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {index}: {betas[index]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            if any(p.grad is not None for p in group["params"]):
                raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        return loss
