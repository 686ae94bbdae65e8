"""Helpers of elementwise rows whose forward takes optional or str arguments (clamp, logit, gelu,
rounding). Masks are not differentiable, so the graph versions compute them from the arrays and only
the arithmetic on ``grad`` goes through ops."""
import numpy as np

from derivgen.core.registry import aten
from derivgen.kernels.loops import clamp_grad as _clamp_grad
from derivgen.ops.formula_fns.shapes import zeros_like_graph
from derivgen.core.tensor import Tensor
from derivgen.ops.scalar_checks import check_elu_slope, check_leaky_relu_slope


def _mask_tensor(m):
    return Tensor._make(np.asarray(m))


def _zero(like):
    """A 0-dim zero of ``like``'s dtype: ``where`` takes Tensors only (``where.self``)."""
    return Tensor._make(np.zeros((), like._array.dtype))


def _arr(v):
    """The array of a Tensor, or the value itself (None, a number, an array)."""
    return getattr(v, "_array", v) if v is not None and not isinstance(v, (int, float)) else v


def isfinite(x):
    return np.isfinite(x)


def isfinite_graph(x):
    return _mask_tensor(np.isfinite(x._array))


def isnan(x):
    return np.isnan(x)


def isnan_graph(x):
    return _mask_tensor(np.isnan(x._array))


_CLAMP_LOOP_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_NUMBER_BOUNDS = (int, float, type(None))


def _clamp_mask(self, mn, mx):
    mask = None
    if mn is not None:
        mask = self >= mn
    if mx is not None:
        m2 = self <= mx
        mask = m2 if mask is None else mask & m2
    return mask


def clamp_backward(grad, self, min, max):  # noqa: A002 - torch's argument names
    """Gradient of clamp for self: passes where ``min <= self <= max`` (bounds optional)."""
    if (grad.dtype == self.dtype and self.dtype in _CLAMP_LOOP_DTYPES and grad.shape == self.shape
            and type(min) in _NUMBER_BOUNDS and type(max) in _NUMBER_BOUNDS and (min, max) != (None, None)
            and grad.flags.c_contiguous and self.flags.c_contiguous):
        # the common case (``x.clamp(min=0)``): one loop, without a mask array
        t = self.dtype.type
        return _clamp_grad(grad, self, None if min is None else t(min), None if max is None else t(max))
    mask = _clamp_mask(self, min, max)
    return grad if mask is None else np.where(mask, grad, grad.dtype.type(0))


def clamp_backward_graph(grad, self, min, max):  # noqa: A002
    mask = _clamp_mask(self._array, _arr(min), _arr(max))
    return grad if mask is None else aten.where(_mask_tensor(mask), grad, _zero(grad))


def _clamp_min_max_masks(self, mn, mx):
    if mn is not None and mx is not None:
        return (self < mn) & (mn < mx), (self > mx) | (mx < mn)
    return (None if mn is None else self < mn), (None if mx is None else self > mx)


def clamp_backward_min_max(grad, self, min, max):  # noqa: A002
    """Gradients of clamp.Tensor for ``min`` and ``max`` (torch's clamp_backward_min_max)."""
    m_lo, m_hi = _clamp_min_max_masks(self, min, max)
    zero = grad.dtype.type(0)
    return (None if m_lo is None else np.where(m_lo, grad, zero),
            None if m_hi is None else np.where(m_hi, grad, zero))


def clamp_backward_min_max_graph(grad, self, min, max):  # noqa: A002
    m_lo, m_hi = _clamp_min_max_masks(self._array, _arr(min), _arr(max))
    return (None if m_lo is None else aten.where(_mask_tensor(m_lo), grad, _zero(grad)),
            None if m_hi is None else aten.where(_mask_tensor(m_hi), grad, _zero(grad)))


def _clamp_jvp_masks(self, mn, mx):
    """torch's clamp_jvp: which tangent each element takes (``None`` bounds are absent). With both
    bounds, ``min > max`` gives max's tangent; a tie with a single bound takes the bound's tangent."""
    if mn is not None and mx is not None:
        take_max = (mn > mx) | ((self > mx) & ~(self < mn))
        take_min = ~(mn > mx) & (self < mn)
        return take_min, take_max
    if mn is not None:
        return ~(self > mn), None
    if mx is not None:
        return None, ~(self < mx)
    return None, None


def clamp_jvp(self_p, self_t, min_p, min_t, max_p, max_t):  # noqa: A002
    """Forward-mode tangent of clamp.Tensor: ``self_t`` where self is inside the bounds, the bound's
    tangent where the bound was taken."""
    take_min, take_max = _clamp_jvp_masks(self_p, min_p, max_p)
    out = self_t
    if take_min is not None:
        out = np.where(take_min, min_t, out)
    if take_max is not None:
        out = np.where(take_max, max_t, out)
    return out


def clamp_jvp_graph(self_p, self_t, min_p, min_t, max_p, max_t):  # noqa: A002
    take_min, take_max = _clamp_jvp_masks(self_p._array, _arr(min_p), _arr(max_p))
    out = self_t
    if take_min is not None:
        out = aten.where(_mask_tensor(take_min), min_t, out)
    if take_max is not None:
        out = aten.where(_mask_tensor(take_max), max_t, out)
    return out


def _logit_mask(self, eps):
    if eps is None:
        return (self < 0) | (self > 1), np.nan
    return (self < eps) | (self > 1 - eps), 0.0


def logit_backward(grad, self, eps):
    """torch's logit_backward: grad / (x (1 - x)); 0 outside [eps, 1 - eps], NaN outside [0, 1] without eps."""
    mask, fill = _logit_mask(self, eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = grad / (self * (1 - self))
    return np.where(mask, g.dtype.type(fill), g)


def logit_backward_graph(grad, self, eps):
    mask, fill = _logit_mask(self._array, eps)
    return aten.where(_mask_tensor(mask), fill, grad / (self * (1 - self)))


_GELU_BETA = 0.7978845608028654   # sqrt(2 / pi)
_GELU_KAPPA = 0.044715
_INV_SQRT_2PI = 0.3989422804014327


def gelu_double_backward(ggI, gO, self, approximate):
    """torch's gelu_double_backward: d gelu_backward(gO, self) / d self, times ``ggI``."""
    if approximate == "tanh":
        inner = _GELU_BETA * (self + _GELU_KAPPA * self * self * self)
        t = np.tanh(inner)
        g = 1 - t * t
        h = _GELU_BETA * (1 + 3 * _GELU_KAPPA * self * self)
        f = 0.5 * self
        return ggI * gO * (g * h - 2 * f * h * h * g * t + f * g * (6 * _GELU_KAPPA * _GELU_BETA) * self)
    sq = self * self
    pdf = _INV_SQRT_2PI * np.exp(-0.5 * sq)
    return ggI * gO * (2 * pdf - sq * pdf)


def gelu_double_backward_graph(ggI, gO, self, approximate):
    if approximate == "tanh":
        t = aten.tanh(_GELU_BETA * (self + _GELU_KAPPA * self * self * self))
        g = 1 - t * t
        h = _GELU_BETA * (1 + 3 * _GELU_KAPPA * self * self)
        f = 0.5 * self
        return ggI * gO * (g * h - 2 * f * h * h * g * t + f * g * (6 * _GELU_KAPPA * _GELU_BETA) * self)
    sq = self * self
    pdf = _INV_SQRT_2PI * aten.exp(-0.5 * sq)
    return ggI * gO * (2 * pdf - sq * pdf)


def zero_if_rounding(x, rounding_mode):
    """div with a rounding mode is piecewise constant: its gradient is zero (torch's convention)."""
    return x if rounding_mode is None else np.zeros_like(x)


def zero_if_rounding_graph(x, rounding_mode):
    return x if rounding_mode is None else zeros_like_graph(x)


# ---- in-place activations (elu_, celu_, leaky_relu_): the backward reads the result, as torch's
# ``elu_backward(..., is_result=true, result)``. With a negative slope the result no longer tells which side of
# zero the input was on, so torch refuses the backward; so do these. The graph versions call the rows
# elu_backward / leaky_relu_backward (which refuse it themselves), so create_graph records torch's
# EluBackwardBackward0 / LeakyReluBackwardBackward0.

def elu_result_backward(grad, result, alpha, scale, input_scale):
    """d elu / d x from the result: ``input_scale * (result + alpha * scale)`` where result <= 0."""
    check_elu_slope(alpha)
    return np.where(result <= 0, grad * (input_scale * (result + alpha * scale)), grad * scale).astype(grad.dtype,
                                                                                                         copy=False)


def elu_result_backward_graph(grad, result, alpha, scale, input_scale):
    return aten.elu_backward(grad, alpha, scale, input_scale, True, result)


def leaky_relu_result_backward(grad, result, negative_slope):
    check_leaky_relu_slope(negative_slope)
    return np.where(result > 0, grad, grad * negative_slope).astype(grad.dtype, copy=False)


def leaky_relu_result_backward_graph(grad, result, negative_slope):
    return aten.leaky_relu_backward(grad, result, negative_slope, True)


TENSOR_FUNCTIONS = {
    "elu_result_backward": (elu_result_backward, elu_result_backward_graph),
    "leaky_relu_result_backward": (leaky_relu_result_backward, leaky_relu_result_backward_graph),
    "isfinite": (isfinite, isfinite_graph),
    "isnan": (isnan, isnan_graph),
    "clamp_backward": (clamp_backward, clamp_backward_graph),
    "clamp_backward_min_max": (clamp_backward_min_max, clamp_backward_min_max_graph),
    "clamp_jvp": (clamp_jvp, clamp_jvp_graph),
    "logit_backward": (logit_backward, logit_backward_graph),
    "gelu_double_backward": (gelu_double_backward, gelu_double_backward_graph),
    "zero_if_rounding": (zero_if_rounding, zero_if_rounding_graph),
}
