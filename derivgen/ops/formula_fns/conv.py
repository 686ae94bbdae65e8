"""Backward helper of the ``convolution`` row: gradients for input, weight and bias.

The fast path reuses the forward's array primitives (im2col + matmul, col2im). The graph path is built
from the ``convolution`` row itself, so a second derivative again goes through ConvolutionBackward0:
the input gradient of a plain convolution is a transposed convolution of ``grad`` with the weight (and
the other way round), and the weight gradient is a convolution of the input (batch and channel swapped)
with ``grad`` as kernel, stride and dilation exchanged, cut to the kernel size.
"""
import numpy as np

from derivgen.core.registry import aten
from derivgen.ops.forwards.conv import (
    _as_2d,
    _pair,
    conv2d_arrays,
    conv3d_arrays,
    conv3d_input_grad,
    conv3d_weight_grad,
    convolution,
    conv_input_grad,
    conv_weight_grad,
    transposed_out_size,
)
from derivgen.ops.formula_fns.shapes import _composite_reshape


def _bias_grad(grad, bias, mask):
    if bias is None or not mask[2]:
        return None
    if grad.dtype.kind == "f" and grad.ndim > 2:
        # each plane's sum as one BLAS product with a ones vector, then the sum over the batch: 2.5-3x
        # faster than numpy's reduction over the non-adjacent axes (0, 2, 3) on LeNet-5's layers
        planes = np.ascontiguousarray(grad).reshape(grad.shape[0], grad.shape[1], -1)
        return np.add.reduce(planes @ np.ones(planes.shape[2], grad.dtype), axis=0)
    return np.sum(grad, axis=(0,) + tuple(range(2, grad.ndim)), dtype=grad.dtype)


def convolution_backward(grad, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups,  # noqa: A002
                         grad_input_mask):
    """(input, weight, bias) gradients; only those ``grad_input_mask`` asks for are computed (a first
    layer's input needs none: its col2im is half of the backward)."""
    gi = gw = None
    n_spatial = weight.ndim - 2
    if n_spatial == 3:
        return _convolution_backward_3d(grad, input, weight, bias, stride, padding, dilation, transposed, groups,
                                        grad_input_mask)
    g = np.ascontiguousarray(_as_2d(grad, n_spatial))
    x = np.ascontiguousarray(_as_2d(input, n_spatial))
    w = np.ascontiguousarray(_as_2d(weight, n_spatial))
    s, p, d = _pair(stride, n_spatial, 1), _pair(padding, n_spatial, 0), _pair(dilation, n_spatial, 1)
    if grad_input_mask[0]:
        if not transposed:
            gi = conv_input_grad(g, w, x.shape, s, p, d, groups)
        else:
            gi = conv2d_arrays(g, w, s, p, d, groups)[:, :, :x.shape[2], :x.shape[3]]
        gi = gi.reshape(input.shape)
    if grad_input_mask[1]:
        gw = conv_weight_grad(x, g, w.shape, s, p, d, groups) if not transposed else \
            conv_weight_grad(g, x, w.shape, s, p, d, groups)
        gw = gw.reshape(weight.shape)
    return gi, gw, _bias_grad(grad, bias, grad_input_mask)


def _convolution_backward_3d(grad, input, weight, bias, stride, padding, dilation, transposed, groups,  # noqa: A002
                             grad_input_mask):
    g, x, w = (np.ascontiguousarray(a) for a in (grad, input, weight))
    gi = gw = None
    if grad_input_mask[0]:
        if not transposed:
            gi = conv3d_input_grad(g, w, x.shape, stride, padding, dilation, groups)
        else:
            gi = conv3d_arrays(g, w, stride, padding, dilation, groups)
            gi = np.ascontiguousarray(gi[tuple(slice(0, s) for s in x.shape)])
    if grad_input_mask[1]:
        gw = conv3d_weight_grad(x, g, w.shape, stride, padding, dilation, groups) if not transposed else \
            conv3d_weight_grad(g, x, w.shape, stride, padding, dilation, groups)
    return gi, gw, _bias_grad(grad, bias, grad_input_mask)


def _input_grad_graph(grad, weight, input_shape, stride, padding, dilation, groups):
    """Input gradient of a plain convolution: the transposed convolution of ``grad`` whose output
    padding restores the input rows no window reached."""
    out_pad = [size - transposed_out_size(o, k, s, p, d, 0) for size, o, k, s, p, d in
               zip(input_shape[2:], grad.shape[2:], weight.shape[2:], stride, padding, dilation)]
    return aten.convolution(grad, weight, None, list(stride), list(padding), list(dilation), True, out_pad, groups)


def _weight_grad_graph(x, grad, weight_shape, stride, padding, dilation, groups):
    """Weight gradient of a plain convolution: ``x`` as (C/g, g*N, *) convolved with ``grad`` as
    (O, N, *) kernels, stride and dilation exchanged, cut to the kernel size."""
    ops = aten
    n, c = x.shape[:2]
    spatial = tuple(x.shape[2:])
    k = len(spatial)
    xs = ops.permute(ops.view(x, (n, groups, c // groups) + spatial), [2, 1, 0] + list(range(3, 3 + k)))
    xs = _composite_reshape(xs, (c // groups, groups * n) + spatial)
    gs = ops.transpose(grad, 0, 1)
    r = ops.convolution(xs, gs, None, list(dilation), list(padding), list(stride), False, [0] * k, groups)
    cut = (slice(None), slice(None)) + tuple(slice(0, kk) for kk in weight_shape[2:])
    if tuple(r.shape[2:]) != tuple(weight_shape[2:]):
        r = r[cut]
    return ops.transpose(r, 0, 1)


def convolution_backward_graph(grad, input, weight, bias, stride, padding, dilation, transposed, output_padding,  # noqa: A002
                               groups, grad_input_mask):
    ops = aten
    gi = gw = gb = None
    if grad_input_mask[0] and not transposed:
        gi = _input_grad_graph(grad, weight, tuple(input.shape), stride, padding, dilation, groups)
    elif grad_input_mask[0]:
        gi = ops.convolution(grad, weight, None, list(stride), list(padding), list(dilation), False,
                             [0] * len(stride), groups)
        if tuple(gi.shape) != tuple(input.shape):
            gi = gi[tuple(slice(0, s) for s in input.shape)]
    if grad_input_mask[1]:
        gw = _weight_grad_graph(input, grad, tuple(weight.shape), stride, padding, dilation, groups) if not transposed \
            else _weight_grad_graph(grad, input, tuple(weight.shape), stride, padding, dilation, groups)
    if bias is not None and grad_input_mask[2]:
        gb = ops.sum(grad, [0] + list(range(2, grad.dim())))
    return gi, gw, gb


def convolution_jvp(input_p, input_t, weight_p, weight_t, bias_t, stride, padding, dilation, transposed,  # noqa: A002
                    output_padding, groups):
    """Forward-mode tangent of convolution, bilinear in input and weight: ``conv(input_t, weight) +
    conv(input, weight_t) + bias_t``."""
    args = (stride, padding, dilation, transposed, output_padding, groups)
    return convolution(input_t, weight_p, bias_t, *args) + convolution(input_p, weight_t, None, *args)


def convolution_jvp_graph(input_p, input_t, weight_p, weight_t, bias_t, stride, padding, dilation, transposed,  # noqa: A002
                          output_padding, groups):
    args = (stride, padding, dilation, transposed, output_padding, groups)
    return aten.convolution(input_t, weight_p, bias_t, *args) + aten.convolution(input_p, weight_t, None, *args)


TENSOR_FUNCTIONS = {
    "convolution_backward": (convolution_backward, convolution_backward_graph),
    "convolution_jvp": (convolution_jvp, convolution_jvp_graph),
}
