"""Backward helpers of the pooling rows. Max pooling scatters ``grad`` to the saved indices; average
pooling, plain and adaptive, applies the forward's averaging matrices transposed (see
``derivgen/ops/forwards/pooling.py``). The graph versions use scatter_add and matmul, so their own
derivatives come from the table."""
import numpy as np

from derivgen.core.registry import aten
from derivgen.ops.forwards import _pool_kernels
from derivgen.ops.forwards.pooling import adaptive_matrices, apply_pool_matrices, avg_pool2d_matrices
from derivgen.ops.forwards.pooling3d import adaptive3d_matrices, apply_pool_matrices3, avg_pool3d_matrices
from derivgen.ops.formula_fns.shapes import _T, _composite_reshape


def max_pool2d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    h, w = self.shape[-2:]
    planes = int(np.prod(self.shape[:-2]))
    out = np.zeros((planes, h * w), grad.dtype)
    _pool_kernels.max_pool2d_scatter(np.ascontiguousarray(grad).reshape(planes, -1),
                                     np.ascontiguousarray(indices).reshape(planes, -1), out)
    return out.reshape(self.shape)


def max_pool2d_with_indices_backward_graph(grad, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    ops = aten
    h, w = self.shape[-2:]
    planes = int(np.prod(tuple(self.shape[:-2])))
    zeros = _T(np.zeros((planes, h * w), grad._array.dtype))
    out = ops.scatter_add(zeros, 1, _composite_reshape(indices, (planes, -1)), _composite_reshape(grad, (planes, -1)))
    return ops.view(out, tuple(self.shape))


def avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    ah, aw = avg_pool2d_matrices(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return apply_pool_matrices(grad, ah.T, aw.T)


def _apply_graph(grad, ah, aw):
    """``ah.T @ grad @ aw`` with differentiable matmuls (the matrices are constants)."""
    from derivgen.ops.composites import matmul
    return matmul(_T(np.ascontiguousarray(ah.T)), matmul(grad, _T(aw)))


def avg_pool2d_backward_graph(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override):
    ah, aw = avg_pool2d_matrices(self._array, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                 divisor_override)
    return _apply_graph(grad, ah, aw)


def adaptive_avg_pool2d_backward(grad, self):
    ah, aw = adaptive_matrices(self, list(grad.shape[-2:]))
    return apply_pool_matrices(grad, ah.T, aw.T)


def adaptive_avg_pool2d_backward_graph(grad, self):
    ah, aw = adaptive_matrices(self._array, list(grad.shape[-2:]))
    return _apply_graph(grad, ah, aw)


def max_pool2d_with_indices_jvp(self_t, indices):
    """Forward-mode tangent of max pooling: the input's tangent read at each window's saved argmax."""
    planes = int(np.prod(indices.shape[:-2]))
    t = np.ascontiguousarray(self_t).reshape(planes, -1)
    return np.take_along_axis(t, np.ascontiguousarray(indices).reshape(planes, -1), 1).reshape(indices.shape)


def max_pool2d_with_indices_jvp_graph(self_t, indices):
    planes = int(np.prod(tuple(indices.shape[:-2])))
    out = aten.gather(_composite_reshape(self_t, (planes, -1)), 1, _composite_reshape(indices, (planes, -1)))
    return aten.view(out, tuple(indices.shape))


def adaptive_max_pool2d_backward(grad, self, indices):
    """The scatter of max pooling: adaptive windows keep flat indices into each plane too."""
    return max_pool2d_with_indices_backward(grad, self, None, None, None, None, None, indices)


def adaptive_max_pool2d_backward_graph(grad, self, indices):
    return max_pool2d_with_indices_backward_graph(grad, self, None, None, None, None, None, indices)


# ---- 3-D: the same scatter, gather and averaging matrices over (D, H, W) volumes ----------------------------

def _volumes(shape):
    return int(np.prod(tuple(shape[:-3])))


def max_pool3d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    n = _volumes(self.shape)
    out = np.zeros((n, int(np.prod(self.shape[-3:]))), grad.dtype)
    _pool_kernels.max_pool2d_scatter(np.ascontiguousarray(grad).reshape(n, -1),
                                     np.ascontiguousarray(indices).reshape(n, -1), out)
    return out.reshape(self.shape)


def max_pool3d_with_indices_backward_graph(grad, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    n = _volumes(tuple(self.shape))
    zeros = _T(np.zeros((n, int(np.prod(tuple(self.shape[-3:])))), grad._array.dtype))
    out = aten.scatter_add(zeros, 1, _composite_reshape(indices, (n, -1)), _composite_reshape(grad, (n, -1)))
    return aten.view(out, tuple(self.shape))


def adaptive_max_pool3d_backward(grad, self, indices):
    """The scatter of 3-D max pooling: adaptive windows keep flat indices into each volume too."""
    return max_pool3d_with_indices_backward(grad, self, None, None, None, None, None, indices)


def adaptive_max_pool3d_backward_graph(grad, self, indices):
    return max_pool3d_with_indices_backward_graph(grad, self, None, None, None, None, None, indices)


def max_pool3d_with_indices_jvp(self_t, indices):
    n = _volumes(indices.shape)
    t = np.ascontiguousarray(self_t).reshape(n, -1)
    return np.take_along_axis(t, np.ascontiguousarray(indices).reshape(n, -1), 1).reshape(indices.shape)


def max_pool3d_with_indices_jvp_graph(self_t, indices):
    n = _volumes(tuple(indices.shape))
    out = aten.gather(_composite_reshape(self_t, (n, -1)), 1, _composite_reshape(indices, (n, -1)))
    return aten.view(out, tuple(indices.shape))


def _transposed(mats):
    return [np.ascontiguousarray(m.T) for m in mats]


def _apply3_graph(grad, ad, ah, aw):
    """``grad`` spread back along its last three axes by the transposed matrices, with differentiable
    matmuls (the matrices are constants)."""
    from derivgen.ops.composites import matmul
    lead = tuple(grad.shape[:-3])
    od, oh, ow = tuple(grad.shape[-3:])
    d, h, w = ad.shape[1], ah.shape[1], aw.shape[1]
    t = matmul(grad, _T(aw))                                                   # (..., od, oh, W)
    t = matmul(_T(np.ascontiguousarray(ah.T)), t)                              # (..., od, H, W)
    t = matmul(_T(np.ascontiguousarray(ad.T)), _composite_reshape(t, lead + (od, h * w)))
    return _composite_reshape(t, lead + (d, h, w))


def avg_pool3d_backward(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    mats = avg_pool3d_matrices(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return apply_pool_matrices3(grad, *_transposed(mats))


def avg_pool3d_backward_graph(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override):
    return _apply3_graph(grad, *avg_pool3d_matrices(self._array, kernel_size, stride, padding, ceil_mode,
                                                     count_include_pad, divisor_override))


def adaptive_avg_pool3d_backward(grad, self):
    return apply_pool_matrices3(grad, *_transposed(adaptive3d_matrices(self, list(grad.shape[-3:]))))


def adaptive_avg_pool3d_backward_graph(grad, self):
    return _apply3_graph(grad, *adaptive3d_matrices(self._array, list(grad.shape[-3:])))


TENSOR_FUNCTIONS = {
    "adaptive_max_pool3d_backward": (adaptive_max_pool3d_backward, adaptive_max_pool3d_backward_graph),
    "adaptive_max_pool2d_backward": (adaptive_max_pool2d_backward, adaptive_max_pool2d_backward_graph),
    "max_pool3d_with_indices_backward": (max_pool3d_with_indices_backward, max_pool3d_with_indices_backward_graph),
    "max_pool3d_with_indices_jvp": (max_pool3d_with_indices_jvp, max_pool3d_with_indices_jvp_graph),
    "avg_pool3d_backward": (avg_pool3d_backward, avg_pool3d_backward_graph),
    "adaptive_avg_pool3d_backward": (adaptive_avg_pool3d_backward, adaptive_avg_pool3d_backward_graph),
    "max_pool2d_with_indices_backward": (max_pool2d_with_indices_backward, max_pool2d_with_indices_backward_graph),
    "max_pool2d_with_indices_jvp": (max_pool2d_with_indices_jvp, max_pool2d_with_indices_jvp_graph),
    "avg_pool2d_backward": (avg_pool2d_backward, avg_pool2d_backward_graph),
    "adaptive_avg_pool2d_backward": (adaptive_avg_pool2d_backward, adaptive_avg_pool2d_backward_graph),
}
