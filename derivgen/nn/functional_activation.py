"""torch.nn.functional's activations beyond functional.py's, with torch's graphs: ``logsigmoid``
(LogSigmoidBackward0), ``softshrink``, ``hardshrink``, ``glu`` and ``prelu`` (PreluKernelBackward0) over
their rows; ``softsign``, ``tanhshrink`` and ``softmin`` composed as torch's Python code composes them;
channel-wise dropout (``dropout1d``/``2d``/``3d``: torch's feature dropout, one MulBackward0) and
``rms_norm``."""
import warnings

import numpy as np

from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor
from derivgen.core.generator import numpy_generator
from derivgen.ops import composites as _c


def logsigmoid(input):  # noqa: A002 - torch spelling
    return aten.log_sigmoid(input)


def softshrink(input, lambd=0.5):  # noqa: A002
    return aten.softshrink(input, lambd)


def hardshrink(input, lambd=0.5):  # noqa: A002
    return aten.hardshrink(input, lambd)


def tanhshrink(input):  # noqa: A002
    return aten.sub(input, aten.tanh(input))


def softsign(input):  # noqa: A002
    return aten.div(input, aten.add(aten.abs(input), 1))


def softmin(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    if dim is None:
        warnings.warn("Implicit dimension choice for softmin has been deprecated. Change the call to include dim=X "
                      "as an argument.", stacklevel=_stacklevel)
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return _c.softmax(aten.neg(input), dim, dtype)


def glu(input, dim=-1):  # noqa: A002
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return aten.glu(input, dim)


def prelu(input, weight):  # noqa: A002
    """torch.prelu: a weight per channel (dim 1) or one for all, reshaped to broadcast, then the
    ``_prelu_kernel`` row."""
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {input.dtype._scalar_type} and "
                           f"{weight.dtype._scalar_type}")
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if input.dim() != weight.dim():
        shape = [1] * input.dim()
        if input.dim() > 1:
            shape[1] = weight.numel()
        weight = _c.reshape(weight, tuple(shape))
    return aten._prelu_kernel(input, weight)


# ---- channel-wise dropout --------------------------------------------------------------------------------

def _feature_dropout(input, p, training, inplace):
    """torch's feature_dropout: ``input * noise`` with one Bernoulli(1 - p) / (1 - p) draw per channel."""
    if not training or p == 0:
        return input
    a = input._array
    shape = a.shape[:2] + (1,) * (a.ndim - 2)
    rng = numpy_generator(None)
    noise = np.zeros(shape, a.dtype) if p == 1 else (rng.random(shape) >= p).astype(a.dtype) / a.dtype.type(1 - p)
    noise_t = Tensor._make(noise)
    return aten.mul_(input, noise_t) if inplace else aten.mul(input, noise_t)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout1d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    _check_p(p)
    nd = input.dim()
    if nd not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that dropout1d "
                           "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
                           "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    batched = nd == 3
    if not batched:
        input = aten.unsqueeze_(input, 0) if inplace else aten.unsqueeze(input, 0)
    result = _feature_dropout(input, p, training, inplace)
    if not batched:
        result = aten.squeeze_(result, 0) if inplace else aten.squeeze(result, 0)
    return result


def dropout2d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    _check_p(p)
    nd = input.dim()
    if nd not in (3, 4):
        warnings.warn(f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).", stacklevel=2)
    if nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    _check_p(p)
    nd = input.dim()
    if nd not in (4, 5):
        warnings.warn(f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                      "inputs).", stacklevel=2)
    batched = nd in (5, 3)
    if not batched:
        input = aten.unsqueeze_(input, 0) if inplace else aten.unsqueeze(input, 0)
    result = _feature_dropout(input, p, training, inplace)
    if not batched:
        result = aten.squeeze_(result, 0) if inplace else aten.squeeze(result, 0)
    return result


# ---- rms_norm -------------------------------------------------------------------------------------------

def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002
    """torch's rms_norm: ``input * rsqrt(mean(input ** 2, last dims, keepdim) + eps)`` (times ``weight``), eps
    defaulting to the dtype's machine epsilon."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    n = len(normalized_shape)
    if tuple(input.shape[input.dim() - n:]) != normalized_shape or n > input.dim():
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in normalized_shape)}], but got input of size"
                           f"{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != normalized_shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(normalized_shape)}")
    if eps is None:
        eps = float(np.finfo(input._array.dtype).eps)
    dims = list(range(input.dim() - n, input.dim()))
    inv = aten.rsqrt(aten.add_Scalar(aten.mean(aten.pow(input, 2), dims, True), eps))
    out = aten.mul(input, inv)
    return aten.mul(out, weight) if weight is not None else out
