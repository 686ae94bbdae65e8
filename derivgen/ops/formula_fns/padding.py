"""Backward helpers of the reflection and replication padding rows: ``grad`` summed back into the input
through each padded axis's one-hot matrix (``forwards/padding.py``), transposed. The graph versions use
differentiable matmuls with the matrices as constants, so the double backward is the pad itself."""
import numpy as np

from derivgen.ops.forwards.padding import pad_matrix
from derivgen.ops.forwards.pooling import apply_pool_matrices
from derivgen.ops.forwards.pooling3d import apply_pool_matrices3
from derivgen.ops.formula_fns.pooling import _apply3_graph, _apply_graph
from derivgen.ops.formula_fns.shapes import _T


def _matrices(shape, padding, reflect, dtype):
    """One (out, in) matrix per padded axis, outermost axis first."""
    dims = len(padding) // 2
    return [pad_matrix(shape[len(shape) - 1 - k], padding[2 * k], padding[2 * k + 1], reflect, dtype)
            for k in reversed(range(dims))]


def _backward(grad, shape, padding, reflect):
    mats = _matrices(shape, padding, reflect, grad.dtype)
    if len(mats) == 1:
        return np.ascontiguousarray(grad) @ mats[0]
    transposed = [np.ascontiguousarray(m.T) for m in mats]
    if len(mats) == 2:
        return apply_pool_matrices(grad, *transposed)
    return apply_pool_matrices3(grad, *transposed)


def _backward_graph(grad, shape, padding, reflect):
    from derivgen.ops.composites import matmul
    mats = _matrices(shape, padding, reflect, grad._array.dtype)
    if len(mats) == 1:
        return matmul(grad, _T(mats[0]))
    if len(mats) == 2:
        return _apply_graph(grad, *mats)
    return _apply3_graph(grad, *mats)


def reflection_pad_backward(grad, self, padding):
    return _backward(grad, self.shape, padding, True)


def reflection_pad_backward_graph(grad, self, padding):
    return _backward_graph(grad, tuple(self.shape), padding, True)


def replication_pad_backward(grad, self, padding):
    return _backward(grad, self.shape, padding, False)


def replication_pad_backward_graph(grad, self, padding):
    return _backward_graph(grad, tuple(self.shape), padding, False)


TENSOR_FUNCTIONS = {
    "reflection_pad_backward": (reflection_pad_backward, reflection_pad_backward_graph),
    "replication_pad_backward": (replication_pad_backward, replication_pad_backward_graph),
}
