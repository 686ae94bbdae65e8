"""Batching rules read from a row's schema.

* Elementwise rows (a ``forward:`` kernel): each batched argument's batch dimension is already in
  front; batched arguments of lower rank get size-1 dimensions after it, so that broadcasting the
  physical values right-aligned broadcasts the examples as the op would. In-place rows need ``self``
  batched (an unbatched ``self`` cannot hold a result per example: torch's broadcast error).
* Rows with one Tensor argument and ``dim``-like arguments (``dim``, ``dims``, ``dim0``...): each dim is
  wrapped against the example's rank and shifted past the batch dimension; for reductions (rows with
  ``keepdim``) an absent or empty ``dim`` means every example dimension.
* Anything else runs once per example (``fallback.loop_fallback``) unless ``hand_rules`` registered one.
"""
import numpy as np

from derivgen.core.registry import aten
from derivgen.core.sizes import wrap_dim
from derivgen.core.tensor import Tensor
from derivgen.batching.fallback import is_inplace, loop_fallback
from derivgen.batching.registry import batch_size
from derivgen.batching.schemas import is_elementwise, overload_of
from derivgen.batching.tensor import BatchedTensor, physical

DIM_NAMES = ("dim", "dims", "dim0", "dim1", "dim2")


def wrap(result, level):
    """BatchedTensors of ``level`` for an op's physical result (a Tensor, or a tuple/list of them)."""
    if isinstance(result, Tensor):
        return BatchedTensor(result, level)
    if isinstance(result, tuple):
        return tuple(wrap(r, level) for r in result)
    if isinstance(result, list):
        return [wrap(r, level) for r in result]
    return result


def pad(value, n):
    """``value`` (batch in front) with ``n`` size-1 dimensions after the batch dimension."""
    for _ in range(n):
        value = aten.unsqueeze(value, 1)
    return value


def pointwise(fn, kwargs, level):
    tensors = [(k, v) for k, v in kwargs.items() if isinstance(v, Tensor)]
    rank = max(v.dim() for _, v in tensors)
    new = dict(kwargs)
    for k, v in tensors:
        p = physical(v, level)
        if p is not None:
            new[k] = pad(p, rank - v.dim())
    return wrap(fn(**new), level)


def pointwise_inplace(fn, kwargs, level):
    self = kwargs["self"]
    tensors = [(k, v) for k, v in kwargs.items() if isinstance(v, Tensor)]
    if physical(self, level) is None:
        shape = np.broadcast_shapes(*(tuple(v.shape) for _, v in tensors))
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{[batch_size(level)] + list(shape)}")
    rank = self.dim()
    new = dict(kwargs)
    for k, v in tensors:
        p = physical(v, level)
        if p is not None:
            new[k] = pad(p, max(rank - v.dim(), 0))
    fn(**new)
    return self


def shift_dims(value, rank):
    """A dim argument (int or list of ints) of an example of ``rank`` dims, as a physical dim."""
    if isinstance(value, (list, tuple)):
        return [wrap_dim(d, rank) + 1 for d in value]
    return wrap_dim(value, rank) + 1


def _dim_rule(tensor_name, dim_names, reduces, wrap_extra=0):
    def rule(fn, kwargs, level):
        self = kwargs[tensor_name]
        p = physical(self, level)
        rank = self.dim()
        scalar = rank == 0 and wrap_extra == 0
        if scalar:  # a 0-dim example: give it one dimension, removed again after the op
            p = aten.unsqueeze(p, 1)
            rank = 1
        new = dict(kwargs)
        new[tensor_name] = p
        for name in dim_names:
            v = kwargs.get(name)
            if v is None or (isinstance(v, (list, tuple)) and not v):
                if not reduces:
                    continue
                v = list(range(rank))
            new[name] = shift_dims(v, rank + wrap_extra)
        result = fn(**new)
        if scalar:
            result = _squeeze_scalar(result)
        return wrap(result, level)
    return rule


def _squeeze_scalar(result):
    if isinstance(result, Tensor):
        return aten.squeeze(result, 1) if result.dim() == 2 else result
    return type(result)(_squeeze_scalar(r) for r in result)


def derive(fn):
    """The batching rule the schema of ``fn``'s row implies (the per-example loop when none does)."""
    ov = overload_of(fn)
    if ov is None:
        return loop_fallback
    if is_elementwise(fn):
        return pointwise_inplace if is_inplace(fn) else pointwise
    tensor_params = [p for p in ov.params if p.kind in ("tensor", "tensor_list")]
    dims = [p.name for p in ov.params if p.name in DIM_NAMES and p.kind in ("int", "int_list")]
    sized = any(p.kind == "int_list" and p.name.endswith("sizes") for p in ov.params)  # example shapes
    if (len(tensor_params) == 1 and tensor_params[0].kind == "tensor" and dims and not sized
            and not is_inplace(fn)):
        reduces = any(p.name == "keepdim" for p in ov.params)
        return _dim_rule(tensor_params[0].name, dims, reduces, 1 if ov.schema.startswith("unsqueeze(") else 0)
    return loop_fallback
