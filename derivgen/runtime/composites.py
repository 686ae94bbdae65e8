"""Composite ops: Python compositions of table ops, as torch's CompositeImplicitAutograd functions
are, so their graphs have torch's shape (``reshape`` is a ``ViewBackward0`` when it can view, and
``CloneBackward0`` + ``UnsafeViewBackward0`` when it must copy; ``matmul`` picks dot/mv/mm/bmm)."""
import numpy as np

from . import dtypes as _dt
from .tensor import Tensor


def _ops():
    from ..generated import ops
    return ops


def _size_args(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def reshape(self, *shape):
    shape = _size_args(shape)
    try:
        np.reshape(self.data, _resolve(shape, self.data.size), copy=False)
        return _ops().view(self, shape)
    except ValueError:
        return _ops()._unsafe_view(_ops().clone(self), shape)


def _resolve(shape, numel):
    from .shape_utils import infer_size
    return infer_size(shape, numel)


def matmul(self, other):
    ops = _ops()
    a, b = self.dim(), other.dim()
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a}D and {b}D")
    if a == 1 and b == 1:
        return ops.dot(self, other)
    if a == 2 and b == 1:
        return ops.mv(self, other)
    if a == 1 and b == 2:
        return ops.squeeze(ops.mm(ops.unsqueeze(self, 0), other), 0)
    if a == 2 and b == 2:
        return ops.mm(self, other)
    if a >= 3 and b <= 2:
        # fold the batch into rows: (..., n, k) @ (k, m) as one mm, like torch
        lead = tuple(self.shape[:-1])
        folded = reshape(self, (-1, self.shape[-1]))
        if b == 1:
            return _ops()._unsafe_view(ops.mv(folded, other), lead)
        return _ops()._unsafe_view(ops.mm(folded, other), lead + (other.shape[-1],))
    # batched: broadcast batch dims, then bmm
    x = self if a > 1 else ops.unsqueeze(self, 0)
    y = other if b > 1 else ops.unsqueeze(other, -1)
    batch = np.broadcast_shapes(tuple(x.shape[:-2]), tuple(y.shape[:-2]))
    n, k = x.shape[-2], x.shape[-1]
    k2, m = y.shape[-2], y.shape[-1]
    if k != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{int(np.prod(batch))}, {k}] but got: [{int(np.prod(batch))}, {k2}].")
    xb = reshape(ops.expand(x, batch + (n, k)), (-1, n, k))
    yb = reshape(ops.expand(y, batch + (k, m)), (-1, k, m))
    out = _ops()._unsafe_view(ops.bmm(xb, yb), batch + (n, m))
    if a == 1:
        out = ops.squeeze(out, -2)
    if b == 1:
        out = ops.squeeze(out, -1)
    return out


def to(self, *args, dtype=None, copy=False, **kwargs):
    for a in args:
        if isinstance(a, _dt.dtype):
            dtype = a
    if dtype is None or (dtype.np == self.data.dtype and not copy):
        return self
    return _ops()._to_copy(self, dtype=dtype)


def flatten(self, start_dim=0, end_dim=-1):
    nd = self.dim()
    if nd == 0:
        return reshape(self, (1,))
    s, e = start_dim % nd, end_dim % nd
    if s == e:
        return self
    shape = tuple(self.shape[:s]) + (-1,) + tuple(self.shape[e + 1:])
    return reshape(self, shape)


def expand_as(self, other):
    return _ops().expand(self, tuple(other.shape))


def view_as(self, other):
    return _ops().view(self, tuple(other.shape))


def reshape_as(self, other):
    return reshape(self, tuple(other.shape))


def type_as(self, other):
    return to(self, other.dtype)


def contiguous(self, memory_format=None):
    if self.data.flags.c_contiguous:
        return self
    return _ops().clone(self)


def T(self):  # noqa: N802 - torch spelling
    nd = self.dim()
    if nd <= 2:
        return _ops().t(self)
    return _ops().permute(self, tuple(range(nd - 1, -1, -1)))


def square(self):
    return _ops().pow(self, 2)
