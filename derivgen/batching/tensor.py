"""``BatchedTensor``: a tensor as one vmap level sees it (the per-example view of a physical tensor
whose dimension 0 is the batch)."""
import numpy as np

from derivgen.core.registry import aten
from derivgen.core.sizes import wrap_dim
from derivgen.core.tensor import Size, Tensor
from derivgen.batching.registry import batch_size


class _Logical:
    """What ``Tensor._array`` gives for a BatchedTensor: the per-example shape and dtype, which the
    runtime's argument checks read, and no data: code that would compute on the values directly (and so
    mix the examples) stops here with an error that says so."""
    __slots__ = ("owner", "shape", "dtype")

    def __init__(self, owner):
        self.owner = owner  # the BatchedTensor
        v = owner._value
        self.shape = tuple(v.shape)[1:]
        self.dtype = v._array.dtype

    @property
    def strides(self):
        return tuple(self.owner._value._array.strides)[1:]

    @property
    def flags(self):
        """Only ``c_contiguous``: whether each example is laid out in C order (``contiguous()`` reads it)."""
        return _Flags(_c_contiguous(self.shape, self.strides, self.dtype.itemsize))

    @property
    def __array_interface__(self):
        return {"data": (id(self.owner._value), False)}

    def __setitem__(self, index, other):
        # an in-place op committing its out-of-place result (``zero_``, ``fill_``, ``copy_``): write it
        # into the physical value
        if index is not Ellipsis or not isinstance(other, _Logical):
            self.__array__()
        aten.copy_(self.owner._value, other.owner._value)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self):
        return self.dtype.itemsize

    def __len__(self):
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("vmap: an operation read the values of a batched tensor directly, which has no "
                           "batching rule; express it with derivgen ops, or move it out of the vmapped function")


class _Flags:
    __slots__ = ("c_contiguous",)

    def __init__(self, c_contiguous):
        self.c_contiguous = c_contiguous


def _c_contiguous(shape, strides, itemsize):
    step = itemsize
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != step:
            return False
        step *= size
    return True


def _data_dependent(*args, **kwargs):
    raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
                       "flow. We don't support that yet, please file an issue at "
                       "https://github.com/pytorch/pytorch/issues .")


def _item(self):
    raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
                       ".item() on a Tensor, please try to rewrite what you're doing with other operations. If error "
                       "is occurring somewhere inside PyTorch internals, please file a bug report.")


class BatchedTensor(Tensor):
    """``_value`` holds the examples along its dimension 0; ``_level`` is the vmap that made it. The value
    may itself be a BatchedTensor of an outer (lower) level: nested vmaps nest wrappers."""
    __slots__ = ("_value", "_level")

    def __init__(self, value, level):
        self._value = value
        self._level = level
        self._wrapped = False
        self._inference = False
        self._base = None
        self._vc = [0]
        self._hooks = None
        self._acc = None
        self.output_nr = 0
        self._grad = None
        self._retains_grad = False
        self._post_acc_hooks = None

    @property
    def _array(self):
        return _Logical(self)

    @_array.setter
    def _array(self, logical):
        # a shape-changing in-place op (``squeeze_``) rebinds the tensor to its result's value
        if not isinstance(logical, _Logical):
            raise RuntimeError("vmap: cannot set the data of a batched tensor")
        self._value = logical.owner._value

    # autograd state is the physical value's: transforms inside vmap (grad, vjp) differentiate it
    @property
    def grad_fn(self):
        return self._value.grad_fn

    @grad_fn.setter
    def grad_fn(self, fn):
        pass  # an in-place op's history lives on the physical value, which its batching rule rewrote

    @property
    def _requires_grad(self):
        return self._value.requires_grad

    @property
    def requires_grad(self):
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self._value.requires_grad = flag

    @property
    def shape(self):
        return Size(tuple(self._value.shape)[1:])

    def size(self, dim=None):
        shape = tuple(self._value.shape)[1:]
        return Size(shape) if dim is None else shape[wrap_dim(dim, len(shape))]

    @property
    def dtype(self):
        return self._value.dtype

    def dim(self):
        return self._value.dim() - 1

    ndimension = dim

    @property
    def ndim(self):
        return self._value.dim() - 1

    def numel(self):
        return int(np.prod(tuple(self._value.shape)[1:], dtype=np.int64))

    nelement = numel

    def stride(self, dim=None):
        st = tuple(self._value.stride())[1:]
        return st if dim is None else st[wrap_dim(dim, len(st))]

    def is_contiguous(self):
        return self._array.flags.c_contiguous

    def detach(self):
        return BatchedTensor(self._value.detach(), self._level)

    @property
    def data(self):
        return BatchedTensor(self._value.data, self._level)

    item = _item
    tolist = _item
    numpy = _item
    __bool__ = _data_dependent
    __float__ = _data_dependent
    __int__ = _data_dependent
    __index__ = _data_dependent

    def __repr__(self):
        inner = repr(self._value).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n    {inner}\n)"

    __str__ = __repr__


def is_batched(t, level):
    return isinstance(t, BatchedTensor) and t._level == level


def physical(t, level):
    """The physical value of ``t`` at ``level`` (dimension 0 the batch), or None when ``t`` is not batched
    there."""
    return t._value if isinstance(t, BatchedTensor) and t._level == level else None


def materialize(t, level, batch_size):
    """``t`` as a physical value at ``level``: its own, or ``t`` expanded along a new dimension 0."""
    if isinstance(t, BatchedTensor) and t._level == level:
        return t._value
    return aten.expand(aten.unsqueeze(t, 0), (batch_size,) + tuple(t.shape))


def add_batch_dim(t, in_dim, level):
    """The BatchedTensor of ``level`` whose examples are ``t``'s slices along ``in_dim``."""
    if in_dim != 0:
        order = [in_dim] + [d for d in range(t.dim()) if d != in_dim]
        t = aten.permute(t, order)
    return BatchedTensor(t, level)


def remove_batch_dim(t, level, batch_size, out_dim):
    """The plain (or outer-level) tensor with the examples of ``t`` along ``out_dim``; an output that does
    not depend on the batch is expanded along it, as in torch."""
    if isinstance(t, BatchedTensor) and t._level == level:
        v = t._value
    else:
        v = aten.expand(aten.unsqueeze(t, 0), (batch_size,) + tuple(t.shape))
    out_dim = wrap_dim(out_dim, v.dim())
    if out_dim != 0:
        order = list(range(1, v.dim()))
        order.insert(out_dim, 0)
        v = aten.permute(v, order)
    return v


def materialize_levels(t, levels):
    """The plain tensor under ``t`` with one dimension per level of ``levels`` (ascending, the order the
    physical dims have) in front: levels ``t`` is not batched at are expanded."""
    present = []
    v = t
    while isinstance(v, BatchedTensor) and v._level in levels:
        present.append(v._level)
        v = v._value
    present.reverse()
    for pos, level in enumerate(levels):
        if level not in present:
            v = aten.unsqueeze(v, pos)
            shape = list(v.shape)
            shape[pos] = batch_size(level)
            v = aten.expand(v, shape)
    return v


def rewrap_levels(plain, levels):
    """The inverse of ``materialize_levels``: BatchedTensors of ``levels`` around ``plain``."""
    v = plain
    for level in levels:
        v = BatchedTensor(v, level)
    return v
