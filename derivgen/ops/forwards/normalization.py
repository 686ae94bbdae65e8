"""Forwards of the normalisation rows ``native_batch_norm`` and ``native_group_norm``.

Batch norm runs Numba loops over (N, C, S) (``_norm_kernels``): on 64x6x24x24 float32 the forward took
0.42 ms against 1.0 ms for the numpy spelling, the backward 0.41 ms against 12 ms (numpy reduces over
axes (0, 2) in strided passes with temporaries). Group norm runs the same loops on its groups, the rows
of (1, N*G, C/G*S): forward 0.68 -> 0.37 ms, backward 1.28 -> 0.68 ms on 64x6x24x24 in 3 groups.

Both return (output, mean, inverse standard deviation), as torch's do. In training, batch norm updates
the running statistics in place (the running variance with the unbiased variance), as torch does; in
evaluation it normalises with them and returns empty statistics.
"""
import numpy as np

from derivgen.ops.forwards import _norm_kernels


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
    x = np.ascontiguousarray(input).reshape(input.shape[0], c, -1)
    if training:
        mean, var = np.empty(c), np.empty(c)
        _norm_kernels.channel_stats(x, mean, var)
        invstd = 1.0 / np.sqrt(var + eps)
        n = input.size // c if c else 0
        with np.errstate(divide="ignore", invalid="ignore"):
            if running_mean is not None:
                running_mean[...] = (1 - momentum) * running_mean + momentum * mean
            if running_var is not None:
                running_var[...] = (1 - momentum) * running_var + momentum * var * (n / dt(n - 1))
        save_mean, save_invstd = mean.astype(input.dtype), invstd.astype(input.dtype)
    else:
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
        mean = running_mean.astype(np.float64)
        invstd = 1.0 / np.sqrt(running_var.astype(np.float64) + eps)
        save_mean, save_invstd = np.empty(0, input.dtype), np.empty(0, input.dtype)
    alpha = invstd if weight is None else invstd * weight
    beta = -mean * alpha if bias is None else bias - mean * alpha
    out = np.empty(x.shape, input.dtype)
    _norm_kernels.channel_affine(x, alpha.astype(input.dtype), beta.astype(input.dtype), out)
    return out.reshape(input.shape), save_mean, save_invstd


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
    x = np.ascontiguousarray(input)
    mean, var = np.empty(N * group), np.empty(N * group)
    _norm_kernels.channel_stats(x.reshape(1, N * group, -1), mean, var)
    rstd = 1.0 / np.sqrt(var + eps)
    # per (sample, channel): alpha = rstd of the channel's group * weight, beta = bias - mean * alpha
    per_channel = np.repeat(np.arange(N * group), C // group)
    alpha = rstd[per_channel].reshape(N, C)
    if weight is not None:
        alpha = alpha * weight
    beta = -mean[per_channel].reshape(N, C) * alpha
    if bias is not None:
        beta = beta + bias
    out = np.empty(x.shape, input.dtype)
    _norm_kernels.channel_affine(x.reshape(1, N * C, -1), alpha.reshape(-1).astype(input.dtype),
                                 beta.reshape(-1).astype(input.dtype), out.reshape(1, N * C, -1))
    return out, mean.reshape(N, group).astype(input.dtype), rstd.reshape(N, group).astype(input.dtype)
