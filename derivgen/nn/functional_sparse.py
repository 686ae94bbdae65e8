"""torch.nn.functional.embedding_bag over the ``_embedding_bag`` row (EmbeddingBagBackward0): 2-D input
as fixed-length bags, 1-D input with ``offsets``, modes sum / mean / max, ``per_sample_weights``,
``include_last_offset``, ``padding_idx`` and ``max_norm``, with torch's argument errors."""
import warnings

import numpy as np

from derivgen.core import dtypes as _dt
from derivgen.core.grad_mode import is_grad_enabled
from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor, bump_version
from derivgen.ops import composites as _c

_MODES = {"sum": 0, "mean": 1, "max": 2}

SPARSE_BAG_UNSUPPORTED = (
    "derivgen: embedding_bag with sparse=True makes a sparse gradient for the weight, and derivgen has no sparse "
    "tensors; use sparse=False (the same values, as a dense gradient)")


def embedding_renorm_(weight, input, max_norm, norm_type):  # noqa: A002
    """torch's ``embedding_renorm_``: rescale, in place and outside autograd, each row of ``weight`` that
    ``input`` looks up whose ``norm_type``-norm exceeds ``max_norm`` to norm ``max_norm``."""
    w = weight._array
    rows = np.unique(np.asarray(input._array).reshape(-1))
    norms = np.linalg.norm(w[rows].astype(np.float64), ord=norm_type, axis=1)
    over = norms > max_norm
    if over.any():
        scale = max_norm / (norms[over] + 1e-7)
        w[rows[over]] = (w[rows[over]] * scale[:, None]).astype(w.dtype)
        bump_version(weight)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,  # noqa: A002
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    if weight.dtype == _dt.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = Tensor._make(np.arange(0, input.numel(), input.shape[1], dtype=input._array.dtype))
        include_last_offset = False
        input = _c.reshape(input, (-1,))
        if per_sample_weights is not None:
            per_sample_weights = _c.reshape(per_sample_weights, (-1,))
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if sparse and weight.requires_grad and is_grad_enabled():
        raise NotImplementedError(SPARSE_BAG_UNSUPPORTED)
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx < 0:
        padding_idx = weight.shape[0] + padding_idx
    out = aten._embedding_bag(weight, input, offsets, scale_grad_by_freq, _MODES[mode], sparse, per_sample_weights,
                              include_last_offset, padding_idx)
    return out[0]
