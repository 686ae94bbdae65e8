"""``swap_in_optimizer_params_and_state``: run an optimizer, for the duration of a ``with`` block, on
other parameter tensors and a ``state_dict()``-shaped state (integer parameter ids), restoring the
live parameters, groups and state afterwards, as torch's. In-place changes to the supplied state's
tensors are kept; other changes to the state stay inside the block."""
import contextlib
from collections import defaultdict

from derivgen.core.tensor import Tensor

_NAME = "swap_in_optimizer_params_and_state"


def _check_state(state):
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter "
                           f"ids to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _check_param_groups(optimizer, param_groups):
    if not isinstance(param_groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group "
                           f"dicts, got {type(param_groups).__name__}.")
    if len(optimizer.param_groups) != len(param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than the live optimizer.")
    return param_groups


def _check_group(idx, group, swapin_group):
    if not isinstance(swapin_group, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = swapin_group.get("params")
    if not isinstance(ids, list) or not all(isinstance(pid, int) for pid in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries keyed "
                           "by packed parameter ids.")
    if len(group["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of params than the live "
                           "optimizer param group.")
    swapin_only = [k for k in swapin_group if k not in group]
    live_only = [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match the "
                           f"live optimizer group keys for group {idx}. Keys only in swap-in: {swapin_only}. Keys "
                           f"only in live: {live_only}.")
    return ids


def _prepare(optimizer, swapin_parameters, swapin_optim_state):
    """The swap-in state and, per group, ``(live group, swap-in group, its parameters)``; the
    parameters are matched to the groups in order."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _check_state(swapin_optim_state.get("state"))
    groups = _check_param_groups(optimizer, swapin_optim_state.get("param_groups"))
    flat_parameters = list(swapin_parameters.values())
    offset = 0
    seen = set()
    swaps = []
    for idx, (group, swapin_group) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _check_group(idx, group, swapin_group)
        seen.update(ids)
        if offset + len(ids) > len(flat_parameters):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match optimizer.param_groups "
                               "ordering.")
        swaps.append((group, swapin_group, flat_parameters[offset:offset + len(ids)]))
        offset += len(ids)
    extra_keys = [k for k in state if k not in seen]
    if extra_keys:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter ids "
                           f"from param_groups[*]['params']; got extra keys {extra_keys!r}.")
    return state, swaps


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    state, swaps = _prepare(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    # shallow copies: the restored groups keep their own ``params`` list objects
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapin_state = defaultdict(dict)
        for live_group, swapin_group, params in swaps:
            live_group["params"] = params
            for key, value in swapin_group.items():
                if key != "params":
                    live_group[key] = value
            for param, param_id in zip(params, swapin_group["params"]):
                swapin_state[param] = dict(state.get(param_id, {}))
        optimizer.state = swapin_state
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
