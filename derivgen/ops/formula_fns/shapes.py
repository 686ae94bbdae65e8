"""Shape helpers: reductions to a shape, undoing views and shape ops, multi-output ops (undefined
gradients become zeros), and plain-value metadata functions."""
import numpy as np

from derivgen.core.sizes import dims_list, expand_view, sum_to as _sum_to, sum_to_graph  # noqa: F401  (a helper of the table)
from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor
from derivgen.ops.composites import reshape as _reshape
from derivgen.ops.factories import full_like as _full_like
from derivgen.ops.factories import zeros_like as _zeros_like


def _T(a):
    return Tensor._make(np.asarray(a))


def _composite_reshape(x, shape):
    return _reshape(x, shape)


# ---- reductions to a shape -------------------------------------------------------------------

def sum_to(x, shape):
    return _sum_to(x, shape)


def sum_backward(grad, sizes, dim, keepdim):
    """Gradient of ``sum(self, dim, keepdim)``: put the reduced dims back and broadcast."""
    if not keepdim and len(sizes):
        for d in dims_list(dim, len(sizes)):
            grad = np.expand_dims(grad, d)
    return expand_view(grad, tuple(sizes))


def sum_backward_graph(grad, sizes, dim, keepdim):
    if not keepdim and len(sizes):
        for d in dims_list(dim, len(sizes)):
            grad = grad.unsqueeze(d)
    return grad.expand(tuple(sizes))


def expand(x, sizes):
    return expand_view(x, tuple(sizes))


def expand_graph(x, sizes):
    return x.expand(tuple(sizes))


# ---- multi-output ops: undefined gradients become zeros ----------------------------------------

def split_backward(grads, split_size, dim, sizes, dtype):
    d = dim % len(sizes)
    n = sizes[d]
    pieces = []
    for i, g in enumerate(grads):
        if g is None:
            shape = list(sizes)
            shape[d] = min(split_size, n - i * split_size)
            g = np.zeros(shape, dtype)
        pieces.append(g)
    return np.concatenate(pieces, axis=d)


def split_backward_graph(grads, split_size, dim, sizes, dtype):
    return _cat_with_zeros_graph(grads, [min(split_size, sizes[dim % len(sizes)] - i * split_size)
                                         for i in range(len(grads))], dim, sizes, dtype)


def split_with_sizes_backward(grads, split_sizes, dim, sizes, dtype):
    d = dim % len(sizes)
    pieces = []
    for g, k in zip(grads, split_sizes):
        if g is None:
            shape = list(sizes)
            shape[d] = k
            g = np.zeros(shape, dtype)
        pieces.append(g)
    return np.concatenate(pieces, axis=d)


def split_with_sizes_backward_graph(grads, split_sizes, dim, sizes, dtype):
    return _cat_with_zeros_graph(grads, list(split_sizes), dim, sizes, dtype)


def _cat_with_zeros_graph(grads, lengths, dim, sizes, dtype):
    d = dim % len(sizes)
    pieces = []
    for g, k in zip(grads, lengths):
        if g is None:
            shape = list(sizes)
            shape[d] = k
            g = Tensor._make(np.zeros(shape, dtype))
        pieces.append(g)
    return aten.cat(pieces, d)


def unbind_backward(grads, dim, sizes, dtype):
    d = dim % len(sizes)
    shape = list(sizes)
    del shape[d]
    return np.stack([np.zeros(shape, dtype) if g is None else g for g in grads], axis=d)


def unbind_backward_graph(grads, dim, sizes, dtype):
    d = dim % len(sizes)
    shape = list(sizes)
    del shape[d]
    return aten.stack([Tensor._make(np.zeros(shape, dtype)) if g is None else g for g in grads], d)


def reshape(x, sizes):
    return np.reshape(x, tuple(sizes))


def reshape_graph(x, sizes):
    return _reshape(x, tuple(sizes))


def permute_backward(grad, dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d % len(dims)] = i
    return np.transpose(grad, inverse)


def permute_backward_graph(grad, dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d % len(dims)] = i
    return aten.permute(grad, tuple(inverse))


def unsqueeze_to(grad, dim, sizes):
    """Undo ``squeeze(dim)``: put the dim back if the input had size 1 there."""
    d = dim % max(len(sizes), 1)
    if len(sizes) and sizes[d] == 1:
        return np.expand_dims(grad, d)
    return grad


def unsqueeze_to_graph(grad, dim, sizes):
    d = dim % max(len(sizes), 1)
    if len(sizes) and sizes[d] == 1:
        return grad.unsqueeze(d)
    return grad


def full_like(x, value):
    return np.full_like(x, value)


def full_like_graph(x, value):
    return _full_like(x, value)


def zeros_like(x):
    return np.zeros_like(x)


def zeros_like_graph(x):
    return _zeros_like(x)


def cat_tensors_backward(grad, sizes, dim):
    """Gradient of ``cat``: the slice of ``grad`` each input contributed (empty 1-D inputs get zeros)."""
    out, offset = [], 0
    d = None
    for shape in sizes:
        if len(shape) == 1 and shape[0] == 0:
            out.append(np.zeros((0,), grad.dtype))
            continue
        d = dim % len(shape)
        idx = [slice(None)] * grad.ndim
        idx[d] = slice(offset, offset + shape[d])
        out.append(grad[tuple(idx)])
        offset += shape[d]
    return out


def cat_tensors_backward_graph(grad, sizes, dim):
    out, offset = [], 0
    for shape in sizes:
        if len(shape) == 1 and shape[0] == 0:
            out.append(Tensor._make(np.zeros((0,), grad._array.dtype)))
            continue
        d = dim % len(shape)
        out.append(aten.narrow(grad, d, offset, shape[d]) if "narrow" in aten
                   else aten.slice(grad, d, offset, offset + shape[d], 1))
        offset += shape[d]
    return out


def stack_tensors_backward(grad, dim):
    d = dim % grad.ndim
    return [np.take(grad, i, axis=d) for i in range(grad.shape[d])]


def stack_tensors_backward_graph(grad, dim):
    d = dim % grad.dim()
    return list(aten.unbind(grad, d))


# ---- metadata functions (plain values, same on both paths) -------------------------------------

def reduced_numel(sizes, dim):
    """How many elements each output of a reduction over ``dim`` averages."""
    n = 1
    for d in dims_list(dim, len(sizes)):
        n *= sizes[d]
    return n


def numel(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def _strided_flat_index(size, stride, storage_offset):
    idx = np.full(tuple(size), storage_offset or 0, np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        idx = idx + (np.arange(n) * s).reshape(shape)
    return idx.reshape(-1)


def as_strided_backward(grad, sizes, size, stride, storage_offset):
    """Gradient of as_strided of a contiguous tensor: each view element's gradient added at its position."""
    out = np.zeros(int(np.prod(sizes)), grad.dtype)
    np.add.at(out, _strided_flat_index(size, stride, storage_offset), np.asarray(grad).reshape(-1))
    return out.reshape(tuple(sizes))


def as_strided_backward_graph(grad, sizes, size, stride, storage_offset):
    ops = aten
    zeros = _T(np.zeros(int(np.prod(sizes)), grad._array.dtype))
    flat = ops.index_put(zeros, [_T(_strided_flat_index(size, stride, storage_offset))],
                         _composite_reshape(grad, (-1,)), True)
    return ops.view(flat, tuple(sizes))


TENSOR_FUNCTIONS = {
    "sum_to": (sum_to, sum_to_graph),
    "sum_backward": (sum_backward, sum_backward_graph),
    "expand": (expand, expand_graph),
    "split_backward": (split_backward, split_backward_graph),
    "split_with_sizes_backward": (split_with_sizes_backward, split_with_sizes_backward_graph),
    "unbind_backward": (unbind_backward, unbind_backward_graph),
    "reshape": (reshape, reshape_graph),
    "permute_backward": (permute_backward, permute_backward_graph),
    "unsqueeze_to": (unsqueeze_to, unsqueeze_to_graph),
    "full_like": (full_like, full_like_graph),
    "zeros_like": (zeros_like, zeros_like_graph),
    "cat_tensors_backward": (cat_tensors_backward, cat_tensors_backward_graph),
    "stack_tensors_backward": (stack_tensors_backward, stack_tensors_backward_graph),
    "as_strided_backward": (as_strided_backward, as_strided_backward_graph),
}


META_FUNCTIONS = {
    "reduced_numel": reduced_numel,
    "numel": numel,
}
