"""torch.nn.functional's convolution, pooling and normalisation functions over the table rows
``convolution``, ``max_pool2d_with_indices``, ``max_pool3d_with_indices``, ``avg_pool2d``, ``avg_pool3d``,
``_adaptive_avg_pool2d``, ``_adaptive_avg_pool3d``, ``adaptive_max_pool2d``, ``native_batch_norm`` and
``native_group_norm``, composed as torch's Python and C++ wrappers compose them (unbatched inputs through
unsqueeze / squeeze, ``padding='same'`` through constant_pad_nd when asymmetric, 1-D pooling as 2-D pooling of
a height-1 input, ``instance_norm`` as batch norm of a (1, N*C, *) view), so the graphs match torch's.
Re-exported by ``derivgen.nn.functional``.
"""
from derivgen.core.grad_mode import no_grad
from derivgen.core.registry import aten


def _tuple(value, n):
    if isinstance(value, int):
        return [value] * n
    value = list(value)
    return value * n if len(value) == 1 else value


# ---- convolution ---------------------------------------------------------------------------------------

def _check_rank(name, input, n):  # noqa: A002
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, but got input of "
                           f"size: {list(input.shape)}")
    return input.dim() == n + 2


def _same_padding(input, weight, stride, dilation, n):  # noqa: A002
    """torch's padding='same': symmetric padding, plus one more row / column on the right (a
    constant_pad_nd of the input) where the kernel's extent is even."""
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    left, extra = [], []
    for i in range(n):
        total = dilation[i] * (weight.shape[2 + i] - 1)
        left.append(total // 2)
        extra.append(total - 2 * (total // 2))
    if any(extra):
        pad = []
        for i in reversed(range(n)):
            pad += [0, extra[i]]
        input = aten.constant_pad_nd(input, pad, 0)
    return input, left


def _conv(name, n, input, weight, bias, stride, padding, dilation, groups):  # noqa: A002
    batched = _check_rank(name, input, n)
    x = input if batched else input.unsqueeze(0)
    stride, dilation = _tuple(stride, n), _tuple(dilation, n)
    if isinstance(padding, str):
        if padding == "valid":
            padding = [0] * n
        elif padding == "same":
            x, padding = _same_padding(x, weight, stride, dilation, n)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    out = aten.convolution(x, weight, bias, stride, _tuple(padding, n), dilation, False, [0] * n, groups)
    return out if batched else out.squeeze(0)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(name, n, input, weight, bias, stride, padding, output_padding, groups, dilation):  # noqa: A002
    batched = _check_rank(name, input, n)
    x = input if batched else input.unsqueeze(0)
    out = aten.convolution(x, weight, bias, _tuple(stride, n), _tuple(padding, n), _tuple(dilation, n), True,
                             _tuple(output_padding, n), groups)
    return out if batched else out.squeeze(0)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):  # noqa: A002
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):  # noqa: A002
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):  # noqa: A002
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


# ---- pooling -------------------------------------------------------------------------------------------

def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):  # noqa: A002
    out, indices = aten.max_pool2d_with_indices(input, _tuple(kernel_size, 1), [] if stride is None else
                                                  _tuple(stride, 1), _tuple(padding, 1), _tuple(dilation, 1),
                                                  ceil_mode)
    return (out, indices) if return_indices else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):  # noqa: A002
    if input.dim() not in (2, 3):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(input.shape)}")
    k, p, d = _tuple(kernel_size, 1)[0], _tuple(padding, 1)[0], _tuple(dilation, 1)[0]
    s = k if stride is None or (not isinstance(stride, int) and not list(stride)) else _tuple(stride, 1)[0]
    length = input.shape[-1]
    size = (length + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (size - 1) * s >= length + p:
        size -= 1
    if size <= 0 and k > 0 and s > 0 and d > 0 and 0 <= p <= k // 2:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {size}")
    out, indices = aten.max_pool2d_with_indices(input.unsqueeze(-2), [1, k], [1, s], [0, p], [1, d], ceil_mode)
    out = out.squeeze(-2)
    return (out, indices.squeeze(-2)) if return_indices else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,  # noqa: A002
               divisor_override=None):
    return aten.avg_pool2d(input, _tuple(kernel_size, 1), [] if stride is None else _tuple(stride, 1),
                             _tuple(padding, 1), ceil_mode, count_include_pad, divisor_override)


def _one_int(name, arg, value):
    values = [value] if isinstance(value, int) else list(value)
    if len(values) != 1:
        raise RuntimeError(f"{name}() argument '{arg}' should contain one int (got {len(values)})")
    return values[0]


def _check_1d_rank(name, input):  # noqa: A002
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {name})")


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):  # noqa: A002
    """torch's avg_pool1d: avg_pool2d of a height-1 input, squeezed (SqueezeBackward1 over AvgPool2DBackward0)."""
    _check_1d_rank("avg_pool1d", input)
    k = _one_int("avg_pool1d", "kernel_size", kernel_size)
    s = k if stride is None or (not isinstance(stride, int) and not list(stride)) else \
        _one_int("avg_pool1d", "stride", stride)
    p = _one_int("avg_pool1d", "padding", padding)
    out = aten.avg_pool2d(input.unsqueeze(-2), [1, k], [1, s], [0, p], ceil_mode, count_include_pad, None)
    return out.squeeze(-2)


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """torch's adaptive_avg_pool1d: adaptive_avg_pool2d of a height-1 input, squeezed."""
    _check_1d_rank("adaptive_avg_pool1d", input)
    size = _one_int("adaptive_avg_pool1d", "output_size", output_size)
    return adaptive_avg_pool2d(input.unsqueeze(-2), [1, size]).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    size = _tuple(output_size, 2)
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    size = [input.shape[-2 + i] if s is None else s for i, s in enumerate(size)]
    if size == [1, 1] and input.dim() in (3, 4):
        return aten.mean(input, [-1, -2], True)  # torch takes the mean for a 1x1 output
    return aten._adaptive_avg_pool2d(input, size)


def adaptive_max_pool2d(input, output_size, return_indices=False):  # noqa: A002
    size = _tuple(output_size, 2)
    size = [input.shape[-2 + i] if s is None else s for i, s in enumerate(size)]
    out, indices = aten.adaptive_max_pool2d(input, size)
    return (out, indices) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):  # noqa: A002
    """torch's adaptive_max_pool1d: adaptive_max_pool2d of a height-1 input, squeezed."""
    _check_1d_rank("adaptive_max_pool1d", input)
    size = _one_int("adaptive_max_pool1d", "output_size", output_size)
    out, indices = aten.adaptive_max_pool2d(input.unsqueeze(-2), [1, size])
    out, indices = out.squeeze(-2), indices.squeeze(-2)
    return (out, indices) if return_indices else out


def adaptive_max_pool3d(input, output_size, return_indices=False):  # noqa: A002
    size = _tuple(output_size, 3)
    size = [input.shape[-3 + i] if s is None else s for i, s in enumerate(size)]
    out, indices = aten.adaptive_max_pool3d(input, size)
    return (out, indices) if return_indices else out


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):  # noqa: A002
    out, indices = aten.max_pool3d_with_indices(input, _tuple(kernel_size, 1), [] if stride is None else
                                                _tuple(stride, 1), _tuple(padding, 1), _tuple(dilation, 1), ceil_mode)
    return (out, indices) if return_indices else out


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,  # noqa: A002
               divisor_override=None):
    return aten.avg_pool3d(input, _tuple(kernel_size, 1), [] if stride is None else _tuple(stride, 1),
                           _tuple(padding, 1), ceil_mode, count_include_pad, divisor_override)


def adaptive_avg_pool3d(input, output_size):  # noqa: A002
    size = _tuple(output_size, 3)
    if len(size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    size = [input.shape[-3 + i] if s is None else s for i, s in enumerate(size)]
    if size == [1, 1, 1] and input.dim() in (4, 5):
        return aten.mean(input, [-1, -2, -3], True)  # torch takes the mean for a 1x1x1 output
    return aten._adaptive_avg_pool3d(input, size)


# ---- normalisation -------------------------------------------------------------------------------------

def _verify_batch_size(size):
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):  # noqa: A002
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return aten.native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.shape[0] * input.shape[1] // num_groups, num_groups] + list(input.shape[2:]))
    from derivgen.ops.forwards.normalization import check_group_norm
    check_group_norm(input, num_groups, weight, bias)
    n, c = input.shape[:2]
    hxw = input.numel() // (n * c) if n * c else 0
    return aten.native_group_norm(input, weight, bias, n, c, hxw, num_groups, eps)[0]


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,  # noqa: A002
                  momentum=0.1, eps=1e-5):
    if use_input_stats:
        spatial = 1
        for s in input.shape[2:]:
            spatial *= s
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.size()}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    b, c = input.shape[:2]

    def repeat(t):
        return None if t is None else t.repeat(b)
    stats = (repeat(running_mean), repeat(running_var))
    x = input.contiguous().view(1, b * c, *input.shape[2:])
    out = aten.native_batch_norm(x, repeat(weight), repeat(bias), stats[0], stats[1], use_input_stats, momentum,
                                   eps)[0]
    with no_grad():
        for running, repeated in zip((running_mean, running_var), stats):
            if running is not None:
                running.copy_(repeated.view(b, c).mean(0))
    return out.view(*input.shape)
