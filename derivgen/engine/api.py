"""``backward`` and ``autograd.grad``: argument checking and root gradients, then the engine."""
import math

import numpy as np

from derivgen.engine.execute import execute
from derivgen.kernels import threads as _threads
from derivgen.core.node import GradientEdge
from derivgen.core.registry import aten
from derivgen.core.dtypes import from_numpy_dtype
from derivgen.core.tensor import Tensor
from derivgen.core.sizes import sum_to


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grads, create_graph):
    out = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        shape, dtype = _output_meta(t)
        if g is None:
            if shape is None or math.prod(shape) != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if dtype.kind != "f":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs but got "
                                   f"{from_numpy_dtype(dtype)!r}")
            arr = np.empty(shape, dtype)
            arr.fill(1)  # np.ones, without its Python-level copyto
            out.append(Tensor._make(arr) if create_graph else arr)
            continue
        if not isinstance(g, Tensor):
            g = Tensor._make(np.asarray(g, dtype=dtype))
        if shape is not None and g._array.shape != shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {_shape(g._array.shape)} and "
                               f"output[{i}] has a shape of {_shape(shape)}.")
        if create_graph or dtype is None:
            out.append(g if create_graph else g._array)
        else:
            out.append(g._array if g._array.dtype == dtype else g._array.astype(dtype))
    return out


def _output_meta(t):
    """(shape, numpy dtype) of a root: a tensor's own, or what an edge's node records of the gradient it
    receives there (torch's ``input_metadata``); (None, None) where the node does not know it."""
    if isinstance(t, GradientEdge):
        meta = t.node._gradient_meta()[t.output_nr]
        return (None, None) if meta is None else meta
    return t._array.shape, t._array.dtype


def _shape(shape):
    return f"derivgen.Size({list(shape)})"


def _check_roots(outputs):
    for i, t in enumerate(outputs):
        if not isinstance(t, GradientEdge) and not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    if grad_variables is not None:
        import warnings
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.", FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                               "`backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors) or (None,) * len(tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} tensors and {len(tensors)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _as_tuple(tuple(inputs.values()) if isinstance(inputs, dict) else inputs)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    _check_roots(tensors)
    if create_graph:
        import warnings
        if any(isinstance(t, Tensor) and t.grad_fn is not None for t in tensors):
            warnings.warn(
                "Using backward() with create_graph=True will create a reference cycle between the parameter and "
                "its gradient which can cause a memory leak. We recommend using autograd.grad when creating the "
                "graph to avoid this. If you have to use this function, make sure to reset the .grad fields of "
                "your parameters to None after use to break the cycle and avoid the leak.", UserWarning, stacklevel=3)
    grads = _make_grads(tensors, grad_tensors, create_graph)
    _threads.adapt()  # thread counts for this step, from the machine's current load
    execute(list(tensors), grads, retain_graph, create_graph, inputs=inputs, accumulate_grad=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    input_names = list(inputs) if isinstance(inputs, dict) else None  # dict inputs give a dict of gradients
    inputs = _as_tuple(tuple(inputs.values()) if input_names is not None else inputs)
    if len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grad_outputs)} and {len(outputs)}")
    if retain_graph is None:
        retain_graph = create_graph
    _check_roots(outputs)
    for t in inputs:
        if not isinstance(t, GradientEdge) and not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    _threads.adapt()
    if is_grads_batched:
        captured = _batched_grads(outputs, inputs, grad_outputs, retain_graph, create_graph)
    else:
        grads = _make_grads(outputs, grad_outputs, create_graph)
        captured = execute(list(outputs), grads, retain_graph, create_graph, inputs=list(inputs), accumulate_grad=False)
    result = []
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if materialize_grads and isinstance(t, GradientEdge):
                raise RuntimeError("materialize_grads cannot be used when the given input is a GradientEdge")
            if materialize_grads:
                z = Tensor._make(np.zeros_like(t._array))
                z._requires_grad = create_graph
                result.append(z)
                continue
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            result.append(None)
            continue
        if not isinstance(g, Tensor):
            g = Tensor._make(g)
        if isinstance(t, GradientEdge):  # what reached the edge, as it reached it
            result.append(g)
            continue
        if not is_grads_batched and not create_graph:
            dtype = _captured_dtype(t, g)
            if g._array.shape != t._array.shape or g._array.dtype != dtype:
                g = Tensor._make(sum_to(g._array, t._array.shape).astype(dtype, copy=False))
        result.append(g)
    if input_names is not None:
        return dict(zip(input_names, result))
    return tuple(result)


def _captured_dtype(t, g):
    """The dtype of the gradient ``grad()`` returns for input ``t``: a leaf's grad_dtype (None: as it came,
    as torch's AccumulateGrad input metadata), a non-leaf's dtype."""
    if t.grad_fn is None:
        want = t._grad_np_dtype()
        return g._array.dtype if want is None else want
    return t._array.dtype


def _batched_grads(outputs, inputs, grad_outputs, retain_graph, create_graph):
    """``is_grads_batched=True``: the first dimension of every grad_output is a batch dimension. torch vmaps the
    backward pass over it; running it once per batch element and stacking the gradients is the same
    computation (only the graph kept for create_graph differs: a StackBackward0 joins the per-element
    gradients). An input that gets no gradient in the batch gets None, as the vmap's None pass-through."""
    sizes = []
    for i, (t, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(g, Tensor):
            continue  # None: the implicit gradient of a scalar output, unbatched, as torch builds it
        out_shape = _output_meta(t)[0]
        if g._array.ndim == 0 or (out_shape is not None and g._array.shape[1:] != out_shape):
            # torch reports the grad_output's shape without its first two dimensions (the batch one and, by
            # an off-by-one in its message, the first of the per-element shape); so does this message
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding "
                f"output, but a mismatch was detected: grad_output[{i}] has a shape of "
                f"derivgen.Size({list(g._array.shape[2:])}) and output[{i}] has a shape of {_shape(out_shape or ())}. If you only "
                "want some tensors in `grad_output` to be considered batched, consider using vmap.")
        sizes.append(g._array.shape[0])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over.")
    if any(n != sizes[0] for n in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    per_input = [[] for _ in inputs]
    for b in range(sizes[0]):
        element = [g[b] if isinstance(g, Tensor) else g for g in grad_outputs]
        grads = _make_grads(outputs, element, create_graph)
        last = b == sizes[0] - 1
        captured = execute(list(outputs), grads, retain_graph or not last, create_graph, inputs=list(inputs),
                           accumulate_grad=False)
        for i, (t, g) in enumerate(zip(inputs, captured)):
            if g is not None and not isinstance(g, Tensor):
                g = Tensor._make(g)
            if g is not None and not isinstance(t, GradientEdge) and not create_graph and (
                    g._array.shape != t._array.shape or g._array.dtype != t._array.dtype):
                g = Tensor._make(sum_to(g._array, t._array.shape).astype(t._array.dtype, copy=False))
            per_input[i].append(g)
    return [_stack_batch(gs, create_graph) for gs in per_input]


def _stack_batch(grads, create_graph):
    if all(g is None for g in grads):
        return None
    if create_graph:
        present = [g for g in grads if g is not None]
        zero = present[0] * 0
        return aten.stack_default([g if g is not None else zero for g in grads], 0)
    present = next(g for g in grads if g is not None)._array
    return Tensor._make(np.stack([g._array if g is not None else np.zeros_like(present) for g in grads]))
