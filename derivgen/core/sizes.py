"""Shape helpers shared by the engine, the kernels' dispatcher and the backward helpers."""
import math

import numpy as np

from derivgen.kernels.loops import column_sums


_COLUMN_SUM_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def sum_to(g, shape):
    """Reduce a broadcast gradient ``g`` to ``shape`` (torch's ``at::sum_to``)."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    if (g.ndim == 2 and g.shape[0] and shape in ((g.shape[1],), (1, g.shape[1]))
            and g.dtype in _COLUMN_SUM_DTYPES and g.flags.c_contiguous):
        # a bias row's gradient: one loop, the same sums as np.add.reduce (see loops.py)
        out = np.empty(g.shape[1], g.dtype)
        column_sums(g, out)
        return out.reshape(shape)
    lead = g.ndim - len(shape)
    if lead < 0:
        raise ValueError(f"cannot sum {list(g.shape)} to {list(shape)}")
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1)
    if axes:
        return np.add.reduce(g, axis=axes, keepdims=True).reshape(shape)
    return g.reshape(shape)


def expand_view(a, shape, writeable=False):
    """``a`` broadcast to ``shape`` (a tuple ``a``'s shape broadcasts to) as a view with stride 0 on the
    dims it repeats, as ``np.broadcast_to`` makes it at about three times the cost (its argument checks
    and an nditer). Read-only unless ``writeable`` and ``a`` is writable."""
    lead = len(shape) - a.ndim
    if lead < 0:
        raise ValueError(f"cannot broadcast {list(a.shape)} to {list(shape)}")
    strides = [0] * lead
    for n, s, stride in zip(a.shape, shape[lead:], a.strides):
        if n == s:
            strides.append(stride)
        elif n == 1:
            strides.append(0)
        else:
            raise ValueError(f"cannot broadcast {list(a.shape)} to {list(shape)}")
    if a.flags.c_contiguous and a.size:
        view = np.ndarray(shape, a.dtype, a, 0, tuple(strides))  # a view of a's buffer; its base is a
        if not writeable and view.flags.writeable:
            view.flags.writeable = False
        return view
    return np.lib.stride_tricks.as_strided(a, shape, tuple(strides), writeable=writeable and a.flags.writeable)


def is_expandable_to(shape, target):
    """True when ``shape`` broadcasts to ``target``, i.e. a gradient of ``target`` can be summed to it."""
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target)):
        if s != 1 and s != t:
            return False
    return True


def wrap_dim(dim, ndim, op="op"):
    if ndim == 0:
        ndim = 1
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def has_internal_overlap(a):
    """True when two elements of array ``a`` share memory (a dim of size > 1 with stride 0, as an
    expanded view has): torch refuses to write into such a tensor in place."""
    if 0 not in a.strides:
        return False
    return any(st == 0 and n > 1 for n, st in zip(a.shape, a.strides))


def dims_list(dim, ndim):
    """Normalise ``dim`` (None, int, list/tuple) to a sorted tuple of non-negative dims. A 0-dim tensor
    accepts dim 0 and -1 as torch does (checked here) and has no axis to reduce: the result is ()."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        dim = (int(dim),)
    if len(dim) == 0:
        return tuple(range(ndim))
    dims = tuple(sorted(wrap_dim(int(d), ndim) for d in dim))
    return dims if ndim else ()


def infer_size(shape, numel):
    """Resolve a single -1 in a view/reshape size."""
    if -1 not in shape:
        if math.prod(shape) == numel:
            return tuple(shape)  # the common case: a complete size that fits
    elif len(shape) == 1:
        return (numel,)  # flattening: x.view(-1)
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if neg:
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                               "unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def sum_to_graph(x, shape):
    """``sum_to`` of a Tensor through differentiable ops (for create_graph=True backward passes)."""
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    lead = x.dim() - len(shape)
    axes = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and x.shape[lead + i] != 1]
    if axes:
        x = x.sum(axes, keepdim=True)
    return x.view(shape) if tuple(x.shape) != shape else x
