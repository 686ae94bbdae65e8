"""``autograd.grad`` inside vmap: on the physical values when the graph was built on batched tensors
(per-example gradients), one backward pass per example when the cotangents are batched at a level the
graph is not (the backward formulas compute on arrays, not on batched tensors)."""
import numpy as np

from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor
from derivgen.engine.api import grad as _engine_grad
from derivgen.batching.dispatch import active_levels, suspended_level
from derivgen.batching.registry import batch_size
from derivgen.batching.tensor import BatchedTensor, materialize_levels, rewrap_levels


def levels_of(t):
    levels = set()
    while isinstance(t, BatchedTensor):
        levels.add(t._level)
        t = t._value
    return levels


def example(t, level, b):
    return aten.select(t._value, 0, b) if isinstance(t, BatchedTensor) and t._level == level else t


def grad(outputs, inputs, grad_outputs=None, **kwargs):
    """``autograd.grad``; inside vmap on the physical values (every active level materialized), the
    gradients rewrapped as the inputs are. A cotangent batched at a level its output is not (a vmapped
    ``vjp_fn`` of a graph built outside that vmap) gets one backward pass per example of that level: the
    backward formulas run on arrays, not on batched tensors."""
    levels = active_levels()
    if not levels or not any(isinstance(t, BatchedTensor)
                             for t in list(outputs) + list(inputs) + list(grad_outputs or ())):
        return _engine_grad(outputs, inputs, grad_outputs, **kwargs)
    for g, o in zip(grad_outputs or (), outputs):
        loop = [lv for lv in levels_of(g) if lv in levels and lv not in levels_of(o)]
        if loop:
            level = max(loop)
            kw = dict(kwargs, retain_graph=True)
            examples = [[example(c, level, b) for c in grad_outputs] for b in range(batch_size(level))]
            with suspended_level(level):  # the graph is not batched at this level: plain passes
                per = [grad(outputs, inputs, cts, **kw) for cts in examples]
            return tuple(None if per[0][k] is None else BatchedTensor(aten.stack([p[k] for p in per], 0), level)
                         for k in range(len(inputs)))
    outs = [materialize_levels(o, levels) for o in outputs]
    if grad_outputs is None:  # one scalar output per example: a gradient of ones for each
        cts = [Tensor._make(np.ones(o._array.shape, o._array.dtype)) for o in outs]
    else:
        cts = [None if g is None else materialize_levels(g, levels) for g in grad_outputs]
    plain_inputs = [materialize_levels(i, levels) for i in inputs]
    grads = _engine_grad(outs, plain_inputs, cts, **kwargs)
    return tuple(None if g is None else rewrap_levels(g, levels) for g in grads)
