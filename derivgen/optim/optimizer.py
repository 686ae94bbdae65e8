"""``Optimizer``: torch's base class (parameter groups with defaults, per-parameter ``state``,
``state_dict`` / ``load_state_dict`` in torch's format, ``zero_grad``, ``step(closure)``).

Subclasses implement ``_update(group)``, which runs their update rule (a Numba loop from
``derivgen.optim._kernels``) on every parameter of the group that has a gradient.
"""
from collections import defaultdict
from copy import deepcopy
from itertools import chain

import numpy as np

from derivgen.core import dtypes as _dt
from derivgen.core.grad_mode import enable_grad, no_grad
from derivgen.core.pending import LIVE as _LIVE_PENDING
from derivgen.core.tensor import Tensor


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    if isinstance(obj, Tensor):
        return f"derivgen.{obj.dtype._legacy}"
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in (None, "builtins") else f"{module}.{name}"


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
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
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
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
                        g._array = np.zeros_like(arr)
                    g._vc[0] += 1

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        if _LIVE_PENDING:
            from derivgen.engine.fusion import flush
            flush()
        with no_grad():
            for group in self.param_groups:
                self._update(group)
        return loss

    def _update(self, group):
        raise NotImplementedError

    # ---- state_dict ----------------------------------------------------------------------------
    def state_dict(self):
        """torch's format: ``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``,
        parameters numbered in the order of the groups; the state's tensors are the live ones."""
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
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
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
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})


def _cast_state(param, key, value):
    """A loaded state value for ``param``: tensors take the parameter's floating dtype, except ``step``."""
    if isinstance(value, Tensor):
        if key != "step" and param.dtype.is_floating_point:
            return value.to(dtype=param.dtype)
        return value
    if isinstance(value, dict):
        return {k: _cast_state(param, k, v) for k, v in value.items()}
    return value


# ---- helpers shared by the optimizers --------------------------------------------------------------
def scalar_dtype():
    """The dtype of the ``step`` counters, as torch's ``_get_scalar_dtype``."""
    return _dt.float64 if _dt.get_default_dtype() is _dt.float64 else _dt.float32


def new_step():
    return Tensor._make(np.zeros((), scalar_dtype().np))


def advance(step):
    """``step += 1`` on a 0-dim step tensor, and its new value as a Python float."""
    step._array += 1  # in place: a 0-dim array stays one
    step._vc[0] += 1
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
        t._vc[0] += 1
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
