"""``derivgen.optim.swa_utils``: stochastic weight averaging, as torch's: ``AveragedModel`` (a running
average of a model's parameters, and optionally buffers, with SWA's equal weights or an EMA), the
averaging functions, ``update_bn`` (recompute BatchNorm statistics for the averaged weights) and the
``SWALR`` scheduler. On CPU tensors torch averages with ``get_swa_avg_fn`` (no multi-tensor kernels
there), and so does this module; the multi-tensor functions' ``lerp_`` is a Numba loop with torch's
roundings."""
import itertools
import math
import warnings
from copy import deepcopy

import numpy as np

from derivgen.core.grad_mode import no_grad
from derivgen.core.tensor import Tensor, bump_version
from derivgen.nn.modules.batchnorm import _BatchNorm
from derivgen.nn.modules.module import Module
from derivgen.optim import _kernels
from derivgen.optim.scheduler_base import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _lerp_all(starts, ends, weight):
    """``torch._foreach_lerp_(starts, ends, weight)`` for floating tensors."""
    for start, end in zip(starts, ends):
        arr = start._array
        flat = arr.reshape(-1) if arr.flags.c_contiguous and arr.flags.writeable else arr.flatten()
        w = arr.dtype.type(weight)
        _kernels.lerp_into(flat, np.ascontiguousarray(end._array, dtype=arr.dtype).reshape(-1), w, arr.dtype.type(1) - w)
        if not np.shares_memory(flat, arr):
            start._array[...] = flat.reshape(arr.shape)
        bump_version(start)


def get_ema_multi_avg_fn(decay=0.999):
    """An exponential moving average over lists of tensors: ``ema = decay * ema + (1 - decay) * p``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if ema_param_list[0].dtype.is_floating_point:
            _lerp_all(ema_param_list, current_param_list, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """The equal-weight running average over lists of tensors."""
    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if averaged_param_list[0].dtype.is_floating_point:
            _lerp_all(averaged_param_list, current_param_list, float(1 / (num_averaged + 1)))
        else:
            for p_averaged, p_model in zip(averaged_param_list, current_param_list):
                p_averaged.copy_(p_averaged + (p_model - p_averaged) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers, with ``use_buffers=True``) are the running
    average given by ``avg_fn`` (per tensor) or ``multi_avg_fn`` (per list); equal weights by default.
    ``n_averaged`` counts the models averaged."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", Tensor._make(np.array(0, np.int64)))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current parameters into the average (the first call copies them)."""
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        self_param_detached, model_param_detached = [], []
        copy_param = bool(self.n_averaged == 0)
        with no_grad():
            for p_averaged, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach()
                self_param_detached.append(p_averaged.detach())
                model_param_detached.append(p_model_)
                if copy_param:
                    p_averaged.detach().copy_(p_model_)
            if self.n_averaged > 0:
                if self.multi_avg_fn is not None:
                    for group in _group_by_dtype(self_param_detached, model_param_detached):
                        self.multi_avg_fn(*group, self.n_averaged)
                else:
                    avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                    for p_averaged, p_model in zip(self_param_detached, model_param_detached):
                        p_averaged.detach().copy_(avg_fn(p_averaged.detach(), p_model, self.n_averaged))
            if not self.use_buffers:
                # the averaged model's buffers follow the model's (update_bn recomputes them)
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach())
            self.n_averaged += 1


def _group_by_dtype(averaged, current):
    """The pairs of lists torch's ``_group_tensors_by_device_and_dtype`` gives on one device."""
    groups = {}
    for a, c in zip(averaged, current):
        lists = groups.setdefault(a.dtype, ([], []))
        lists[0].append(a)
        lists[1].append(c)
    return list(groups.values())


def update_bn(loader, model, device=None):
    """Recompute every BatchNorm's running statistics as a plain average over one pass of ``loader``
    (items, or the first element of list/tuple items) in training mode."""
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
        for bn_module in momenta:
            bn_module.momentum = momenta[bn_module]
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate to ``swa_lr`` over ``anneal_epochs`` steps (``"cos"`` or
    ``"linear"``), then holds it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for swa_lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = swa_lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # the learning rate the previous step would have started from, so that the annealing is
        # relative to whatever the optimizer's learning rate is now
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
