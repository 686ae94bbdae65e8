"""Forwards of the normalisation rows ``native_batch_norm`` and ``native_group_norm``, vectorised numpy
(a few passes over (N, C, *) with per-channel / per-group statistics; nothing to gain from a loop at the
sizes these see, where the passes are memory-bound).

Both return (output, mean, inverse standard deviation), as torch's do. In training, batch norm updates
the running statistics in place (the running variance with the unbiased variance), as torch does; in
evaluation it normalises with them and returns empty statistics.
"""
import numpy as np


def _channel_shape(x):
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _check_channels(name, t, c):
    if t is not None and t.size != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.size}")


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):  # noqa: A002
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm: expected input with at least 2 dims, got input of size {list(input.shape)}")
    if input.dtype.kind != "f":
        raise RuntimeError(f"\"batch_norm\" not implemented for '{input.dtype.name}'")
    c = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        _check_channels(name, t, c)
    dt = input.dtype.type
    axes = (0,) + tuple(range(2, input.ndim))
    shape = _channel_shape(input)
    if training:
        mean = np.mean(input, axis=axes, dtype=input.dtype)
        centered = input - mean.reshape(shape)
        var = np.mean(centered * centered, axis=axes, dtype=input.dtype)
        invstd = (dt(1) / np.sqrt(var + dt(eps))).astype(input.dtype)
        n = input.size // c
        m = dt(momentum)
        with np.errstate(divide="ignore", invalid="ignore"):
            if running_mean is not None:
                running_mean[...] = (dt(1) - m) * running_mean + m * mean
            if running_var is not None:
                running_var[...] = (dt(1) - m) * running_var + m * var * (dt(n) / dt(n - 1))
        out = centered * invstd.reshape(shape)
        save_mean, save_invstd = mean, invstd
    else:
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
        scale = (dt(1) / np.sqrt(running_var.astype(input.dtype) + dt(eps))).astype(input.dtype)
        out = (input - running_mean.astype(input.dtype).reshape(shape)) * scale.reshape(shape)
        save_mean, save_invstd = np.empty(0, input.dtype), np.empty(0, input.dtype)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return np.asarray(out, dtype=input.dtype), save_mean, save_invstd


def check_group_norm(input, num_groups, weight, bias):  # noqa: A002
    """torch's group_norm checks (shared with nn.functional.group_norm)."""
    c = input.shape[1] if input.ndim >= 2 else 0
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):  # noqa: A002,N803 - schema names
    check_group_norm(input, group, weight, bias)
    if input.dtype.kind != "f":
        raise RuntimeError(f"\"group_norm\" not implemented for '{input.dtype.name}'")
    dt = input.dtype.type
    x = input.reshape(N, group, -1)
    mean = np.mean(x, axis=2, dtype=input.dtype)
    centered = x - mean[:, :, None]
    var = np.mean(centered * centered, axis=2, dtype=input.dtype)
    rstd = (dt(1) / np.sqrt(var + dt(eps))).astype(input.dtype)
    out = (centered * rstd[:, :, None]).reshape(input.shape)
    shape = _channel_shape(input)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return np.asarray(out, dtype=input.dtype), mean, rstd
