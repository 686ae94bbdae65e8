"""``Optimizer``: torch's base class (parameter groups with defaults, per-parameter ``state``,
``state_dict`` / ``load_state_dict`` in torch's format, ``zero_grad``, ``step(closure)``).

Subclasses implement ``_update(group)``, which runs their update rule (a Numba loop from
``derivgen.optim._kernels``) on every parameter of the group that has a gradient.
"""
import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

import numpy as np

from derivgen.core import dtypes as _dt
from derivgen.core.grad_mode import enable_grad, set_grad_enabled
from derivgen.core.hooks import add_ordered_hook
from derivgen.core.pending import LIVE_REFS as _LIVE_PENDING
from derivgen.core.tensor import Tensor, bump_version, replace_array
from derivgen.ops.inplace import READ_ONLY_MEMORY


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

# hooks of every optimizer's step (torch's globals), run before each optimizer's own pre-hooks and after
# its own post-hooks
_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """``hook(optimizer, args, kwargs) -> None | (args, kwargs)`` before every optimizer's ``step``."""
    return add_ordered_hook(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    return add_ordered_hook(_global_optimizer_post_hooks, hook)


def _hooked_step(func):
    """``step`` with the step hooks around it (torch's ``profile_hook_step``); ``args`` includes the
    optimizer, as in torch."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        self = args[0]
        for pre_hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{func} must return None or a tuple of (new_args, new_kwargs), but got "
                                       f"{result}.")
        out = func(*args, **kwargs)
        self._opt_called = True  # read by lr_scheduler to warn about calls in the wrong order
        for post_hook in chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    wrapper.hooked = True
    return wrapper


def _typename(obj):
    if isinstance(obj, Tensor):
        return f"derivgen.{obj.dtype._legacy}"
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in (None, "builtins") else f"{module}.{name}"


_HOOK_DICTS = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
               "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
               "_optimizer_load_state_dict_post_hooks")


class Optimizer:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):  # a subclass's own step runs the hooks too
            cls.step = _hooked_step(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        for name in _HOOK_DICTS:
            setattr(self, name, OrderedDict())
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # ---- groups --------------------------------------------------------------------------------
    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        extracted_param_tensors = []
        extracted_param_names = []
        for param in param_group["params"]:
            if isinstance(param, tuple):  # (name, tensor), as named_parameters() gives
                extracted_param_names.append(param[0])
                extracted_param_tensors.append(param[1])
            else:
                extracted_param_tensors.append(param)
        param_group["params"] = extracted_param_tensors
        if extracted_param_names:
            if len(extracted_param_names) == len(extracted_param_tensors):
                param_group["param_names"] = extracted_param_names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current_group_txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current_group_txt} to the optimizer")
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- gradients and steps -------------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    arr = g._array
                    if arr.flags.writeable:
                        arr[...] = 0
                    else:
                        replace_array(g, np.zeros_like(arr))
                    bump_version(g)

    @_hooked_step
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        if _LIVE_PENDING:
            from derivgen.engine.fusion import flush
            flush()
        for group in self.param_groups:  # before any parameter moves: an update is all or nothing
            for p in group["params"]:
                if p.grad is not None and not p._array.flags.writeable:
                    raise RuntimeError(READ_ONLY_MEMORY)
        # torch runs the update with autograd recording exactly when the optimizer is differentiable
        with set_grad_enabled(bool(self.defaults.get("differentiable", False))):
            for group in self.param_groups:
                check_step_options(self, group)
                if group.get("differentiable", False):
                    self._update_differentiable(group)
                else:
                    self._update(group)
        return loss

    def _update(self, group):
        """The update rule on every parameter of ``group`` with a gradient: a Numba loop on the arrays."""
        raise NotImplementedError

    def _update_differentiable(self, group):
        """The update as autograd-recorded tensor operations (torch's single-tensor code with
        ``differentiable=True``): the functions of ``derivgen.optim.differentiable``."""
        raise NotImplementedError

    # what torch names in its refusal of ``capturable=True`` for CPU tensors, and the devices it lists
    _capturable_names = "params and state_steps"
    _capturable_devices = ("cuda", "xpu", "hpu", "privateuseone", "xla")

    # ---- hooks ---------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None | (args, kwargs)`` before each ``step``."""
        return add_ordered_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` after each ``step``."""
        return add_ordered_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer)`` before ``state_dict`` is built."""
        return add_ordered_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> None | state_dict`` after ``state_dict`` is built."""
        return add_ordered_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> None | state_dict`` before ``load_state_dict`` reads it."""
        return add_ordered_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer)`` after ``load_state_dict``."""
        return add_ordered_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ---- state_dict ----------------------------------------------------------------------------
    def state_dict(self):
        """torch's format: ``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``,
        parameters numbered in the order of the groups; the state's tensors are the live ones."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        mapping = {}
        index = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                if id(p) not in mapping:
                    mapping[id(p)] = index
                    index += 1
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            hook_result = post_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        return state_dict

    def load_state_dict(self, state_dict):
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            hook_result = pre_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = {key: _cast_state(param, key, value) for key, value in v.items()}
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)


def _cast_state(param, key, value):
    """A loaded state value for ``param``: tensors take the parameter's floating dtype, except ``step``."""
    if isinstance(value, Tensor):
        if key != "step" and param.dtype.is_floating_point:
            return value.to(dtype=param.dtype)
        return value
    if isinstance(value, dict):
        return {k: _cast_state(param, k, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):  # LBFGS's histories; their items are never ``step``
        return type(value)(_cast_state(param, None, v) for v in value)
    return value


# ---- helpers shared by the optimizers --------------------------------------------------------------
def scalar_dtype():
    """The dtype of the ``step`` counters, as torch's ``_get_scalar_dtype``."""
    return _dt.float64 if _dt.get_default_dtype() is _dt.float64 else _dt.float32


def new_step(fused=False):
    """A 0-dim ``step`` counter: float32 under ``fused`` (torch's ``_get_scalar_dtype(is_fused=True)``)."""
    return Tensor._make(np.zeros((), (_dt.float32 if fused else scalar_dtype()).np))


def new_mu_product():
    """NAdam's extra state: the running product of its momentum coefficients, a 0-dim step-dtype tensor."""
    return {"mu_product": Tensor._make(np.ones((), scalar_dtype().np))}


def advance(step):
    """``step += 1`` on a 0-dim step tensor, and its new value as a Python float."""
    step._array += 1  # in place: a 0-dim array stays one
    bump_version(step)
    return float(step._array)


def zeros_like_param(p, fill=0):
    return Tensor._make(np.full(p._array.shape, fill, p._array.dtype))


class Flat:
    """Flat 1-D writable views of tensors for one update loop, written back afterwards when a tensor's
    array could not be viewed flat (not contiguous, or not writable)."""

    def __init__(self):
        self._writebacks = []

    def out(self, t):
        arr = t._array
        if arr.flags.c_contiguous and arr.flags.writeable:
            flat = arr.reshape(-1)
        else:
            flat = np.ascontiguousarray(arr).reshape(-1).copy()
            self._writebacks.append((t, flat))
        bump_version(t)
        return flat

    @staticmethod
    def read(t, dtype):
        return np.ascontiguousarray(t._array, dtype=dtype).reshape(-1)

    def finish(self):
        for t, flat in self._writebacks:
            t._array[...] = flat.reshape(t._array.shape)


def empty_like_flat(flat):
    return flat[:0]


def typed(arr, value):
    """``value`` as a scalar of ``arr``'s dtype (torch casts a Scalar argument to the tensor's type)."""
    return arr.dtype.type(value)


def check_grad(p):
    g = p.grad
    if g._array.shape != p._array.shape:
        raise RuntimeError(f"the gradient of a parameter has shape {list(g.shape)} but the parameter has shape "
                           f"{list(p.shape)}")
    return g


# ---- argument checks and per-parameter state shared by the optimizers ------------------------------
_ARG_LABELS = {"lr": "learning rate", "eps": "epsilon value"}


def check_tensor_lr(lr):
    """torch's first check of every optimizer: a learning rate given as a tensor holds one number."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def check_nonnegative(**values):
    """torch's ``Invalid <name>: <value>`` ValueError for the first of ``values`` (checked in the order
    given) that is not ``>= 0`` (NaN included); a tensor ``lr`` must hold one number."""
    if "lr" in values:
        check_tensor_lr(values["lr"])
    for name, value in values.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {_ARG_LABELS.get(name, name + ' value')}: {value}")


def check_adam_args(lr, eps, betas, weight_decay):
    """The checks, in torch's order, of the Adam family's shared arguments."""
    check_nonnegative(lr=lr, eps=eps)
    for index in (0, 1):
        if not 0.0 <= betas[index] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {betas[index]}")
    check_nonnegative(weight_decay=weight_decay)


def check_options(foreach=None, fused=None, differentiable=False):
    """torch's refusals, at construction, of option combinations (``fused`` with ``differentiable`` or
    with ``foreach``). ``foreach`` and ``fused`` otherwise only choose torch's implementation: here every
    update already is one fused loop per parameter, so both are accepted and change nothing but the
    ``step`` counter's dtype under ``fused`` (float32, as torch's)."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


_FUSED_DEVICES = ['mps', 'cuda', 'xpu', 'hpu', 'cpu', 'mtia', 'privateuseone']


def check_step_options(optimizer, group):
    """torch's refusals at ``step`` time: ``capturable=True`` needs accelerator tensors (an
    ``AssertionError`` on CPU, as in torch), ``fused=True`` floating-point parameters."""
    if group.get("capturable", False) and any(p.grad is not None for p in group["params"]):
        raise AssertionError(f"If capturable=True, {optimizer._capturable_names} must be on supported devices: "
                             f"{list(optimizer._capturable_devices)}.")
    if group.get("fused", False):
        for p in group["params"]:
            if p.grad is not None and not p.dtype.is_floating_point:
                raise RuntimeError("`fused=True` requires all the params to be floating point Tensors of "
                                   f"supported devices: {_FUSED_DEVICES} but {p.dtype} and cpu")


def params_with_grad(group):
    """``(param, grad)`` for every parameter of ``group`` that has a gradient (of the parameter's shape)."""
    for p in group["params"]:
        if p.grad is not None:
            yield p, check_grad(p)


def param_state(state, p, *buffers, first=None, fused=False):
    """``state`` (one parameter's), filled when empty as torch does: ``step``, then what ``first()``
    returns, then a zero buffer shaped like ``p`` per name in ``buffers`` (``None``: an option leaves
    that buffer out)."""
    if len(state) == 0:
        state["step"] = new_step(fused)
        if first is not None:
            state.update(first())
        for name in buffers:
            if name is not None:
                state[name] = zeros_like_param(p)
    return state
