"""Runs one optimizer on two parameters with the same program under derivgen and under PyTorch.

The gradients are set from numpy (a fixed function of the current parameter values), so both
libraries' optimizers see bit-identical gradients and any difference is the update rule's own."""
import numpy as np

import derivgen

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

DTYPES = {"float64": np.float64, "float32": np.float32}


def start_values():
    rng = np.random.default_rng(7)
    return [rng.standard_normal((3, 4)), rng.standard_normal(5), rng.standard_normal((2, 3)).T]


def grad_of(x):
    return np.sin(x) * x + x ** 3 - 0.5


def make_params(lib, dtype):
    return [lib.tensor(a.astype(DTYPES[dtype]), requires_grad=True) for a in start_values()]


def run(lib, cls_name, options, dtype="float64", steps=6, params=None, opt=None):
    """The parameters' values after ``steps`` steps, the optimizer and the parameters."""
    params = params if params is not None else make_params(lib, dtype)
    opt = opt if opt is not None else getattr(lib.optim, cls_name)(params, **options)
    for _ in range(steps):
        opt.zero_grad()
        for p in params:
            p.grad = lib.tensor(grad_of(p.detach().numpy()))
        opt.step()
    return [p.detach().numpy().copy() for p in params], opt, params
