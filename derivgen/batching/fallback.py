"""torch's slow path for ops without a batching rule: the op once per example, results stacked."""
import warnings

from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor
from derivgen.batching.registry import batch_size
from derivgen.batching.schemas import op_name
from derivgen.batching.tensor import BatchedTensor


def is_inplace(fn):
    return "__" in fn.__name__.lstrip("_")


def loop_fallback(fn, kwargs, level):
    op = op_name(fn)
    if is_inplace(fn):
        raise RuntimeError(f"vmap: the in-place op aten::{op} has no batching rule; use its out-of-place form")
    warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule for "
                  f"aten::{op}. Please file us an issue on GitHub so that we can prioritize its implementation.",
                  UserWarning, stacklevel=5)

    def example(v, b):
        if isinstance(v, BatchedTensor) and v._level == level:
            return aten.select(v._value, 0, b)
        if isinstance(v, list):
            return [example(x, b) for x in v]
        return v
    results = [fn(**{k: example(v, b) for k, v in kwargs.items()}) for b in range(batch_size(level))]
    first = results[0]
    if isinstance(first, Tensor):
        return BatchedTensor(aten.stack(results, 0), level)
    if isinstance(first, (tuple, list)) and all(isinstance(r, Tensor) for r in first):
        stacked = [BatchedTensor(aten.stack([r[i] for r in results], 0), level) for i in range(len(first))]
        return tuple(stacked) if isinstance(first, tuple) else stacked
    raise RuntimeError(f"vmap: aten::{op} returned {type(first).__name__}, which the per-example fallback cannot "
                       f"batch")
