"""Backward helper of the ``rrelu_with_noise`` row: ``grad`` times the slope each element was scaled by,
the saved ``noise`` in training (when the range is not a single value), else the fixed mean slope."""
import numpy as np

from derivgen.core.registry import aten
from derivgen.ops.formula_fns.shapes import _T


def _slopes(self, noise, lower, upper, training):
    if training and float(upper) - float(lower) > 1e-6:
        return noise
    return np.where(self > 0, 1.0, (float(lower) + float(upper)) / 2).astype(self.dtype)


def rrelu_with_noise_backward(grad, self, noise, lower, upper, training):
    return grad * _slopes(self, noise, lower, upper, training)


def rrelu_with_noise_backward_graph(grad, self, noise, lower, upper, training):
    return aten.mul(grad, _T(np.asarray(_slopes(self._array, noise._array, lower, upper, training))))


TENSOR_FUNCTIONS = {
    "rrelu_with_noise_backward": (rrelu_with_noise_backward, rrelu_with_noise_backward_graph),
}
