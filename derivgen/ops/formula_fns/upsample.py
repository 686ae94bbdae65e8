"""Backward helpers of the 2-D upsampling rows: each output element's gradient added to the input elements
it was read from (with its interpolation weight), as one separable linear map per spatial dim."""
import numpy as np

from derivgen.ops.composites import matmul as _matmul
from derivgen.ops.formula_fns.shapes import _T
from derivgen.ops.forwards.upsample import linear_indices_weights, nearest_indices


def _nearest_matrix(in_size, out_size, scale, dtype):
    m = np.zeros((out_size, in_size), dtype)
    m[np.arange(out_size), nearest_indices(in_size, out_size, scale)] = 1
    return m


def _linear_matrix(in_size, out_size, align_corners, scale, dtype):
    i0, i1, w0, w1 = linear_indices_weights(in_size, out_size, align_corners, scale, dtype)
    m = np.zeros((out_size, in_size), np.float64)
    rows = np.arange(out_size)
    np.add.at(m, (rows, i0), w0.astype(np.float64))
    np.add.at(m, (rows, i1), w1.astype(np.float64))
    return m.astype(dtype)


def _maps(kind, input_sizes, output_size, align_corners, scales_h, scales_w, dtype):
    if kind == "nearest":
        return (_nearest_matrix(input_sizes[2], output_size[0], scales_h, dtype),
                _nearest_matrix(input_sizes[3], output_size[1], scales_w, dtype))
    return (_linear_matrix(input_sizes[2], output_size[0], align_corners, scales_h, dtype),
            _linear_matrix(input_sizes[3], output_size[1], align_corners, scales_w, dtype))


def _backward(grad, mh, mw):
    return np.ascontiguousarray(mh.T @ grad @ mw)


def _backward_graph(grad, mh, mw):
    return _matmul(_matmul(_T(np.ascontiguousarray(mh.T)), grad), _T(mw))


def upsample_nearest2d_backward(grad, output_size, input_sizes, scales_h, scales_w):
    return _backward(grad, *_maps("nearest", input_sizes, output_size, None, scales_h, scales_w, grad.dtype))


def upsample_nearest2d_backward_graph(grad, output_size, input_sizes, scales_h, scales_w):
    return _backward_graph(grad, *_maps("nearest", input_sizes, output_size, None, scales_h, scales_w,
                                        grad._array.dtype))


def upsample_bilinear2d_backward(grad, output_size, input_sizes, align_corners, scales_h, scales_w):
    return _backward(grad, *_maps("linear", input_sizes, output_size, align_corners, scales_h, scales_w, grad.dtype))


def upsample_bilinear2d_backward_graph(grad, output_size, input_sizes, align_corners, scales_h, scales_w):
    return _backward_graph(grad, *_maps("linear", input_sizes, output_size, align_corners, scales_h, scales_w,
                                        grad._array.dtype))


TENSOR_FUNCTIONS = {
    "upsample_nearest2d_backward": (upsample_nearest2d_backward, upsample_nearest2d_backward_graph),
    "upsample_bilinear2d_backward": (upsample_bilinear2d_backward, upsample_bilinear2d_backward_graph),
}
