"""``Tensor.set_``: make a tensor use another tensor's memory (or none), keeping the Tensor object.

torch's overloads on CPU:
  ``set_(source)``                                    share ``source``'s memory, shape and strides;
  ``set_(source, storage_offset, size, stride=())``   a strided window of ``source``'s storage, i.e. of the
                                                      whole memory block ``source`` is a view of (derivgen has
                                                      no separate Storage object: the storage is given as a
                                                      tensor, torch's ``set_.source_Tensor_storage_offset``);
  ``set_()``                                          no memory (shape ``[0]``).
torch grows a storage too small for the requested window; derivgen's memory is a numpy buffer that cannot
grow, so that case raises.

Autograd, as torch: it is an in-place op (version bump, the leaf check); with grad enabled and ``self`` or
``source`` requiring grad, ``self`` becomes the output of a node whose backward raises (torch's
NotImplemented); a leaf gets a new AccumulateGrad, so graphs recorded before reach the old one only.
"""
import numpy as np

from derivgen.core.grad_mode import is_grad_enabled
from derivgen.core.node import Node, gradient_edge, rebase_history
from derivgen.core.tensor import Tensor, bump_version, replace_array
from derivgen.ops.forwards._common import _tn
from derivgen.ops.inplace import check_inplace


class NotImplementedBackward(Node):
    """The grad_fn of an op without a derivative: reaching it in backward raises torch's error."""
    __slots__ = ("op",)

    def __init__(self, op, inputs):
        self.op = op
        self._init_node(tuple(gradient_edge(t) for t in inputs),
                        tuple((t._array.shape, t._array.dtype) for t in inputs), (None,))

    def name(self):
        return "derivgen::autograd::NotImplemented"

    def _apply_fast(self, grads, needs):
        raise RuntimeError(f"derivative for {self.op} is not implemented")

    _apply_graph = _apply_fast


NotImplementedBackward.__name__ = NotImplementedBackward.__qualname__ = "NotImplemented"


def set_(self, source=None, storage_offset=None, size=None, stride=None):
    if source is None:
        if storage_offset is not None or size is not None or stride is not None:
            raise TypeError("set_() received an invalid combination of arguments: storage_offset, size and stride "
                            "need a source")
        data = np.empty((0,), self._array.dtype)
    elif not isinstance(source, Tensor):
        raise TypeError(f"set_(): argument 'source' must be Tensor, not {type(source).__name__}")
    else:
        if source._array.dtype != self._array.dtype:
            raise RuntimeError(f"Could not set tensor of type {_tn(source._array)} to a tensor of type "
                               f"{_tn(self._array)}")
        if storage_offset is None and size is None and stride is None:
            data = source._array
        else:
            data = _storage_window(source._array, storage_offset or 0, size, stride)
    check_inplace(self)
    inputs = (self,) if source is None else (self, source)
    record = is_grad_enabled() and any(t.requires_grad for t in inputs)
    node = NotImplementedBackward("set_", inputs) if record else None
    replace_array(self, data)
    bump_version(self)
    if node is not None:
        rebase_history(self, node)
    elif self.grad_fn is None:
        self._acc = None  # torch's leaf gets a new AccumulateGrad: the tensor it accumulates for changed
    return self


def _storage_window(arr, offset, size, stride):
    """A strided window (sizes, element strides) of the storage of ``arr``, starting ``offset`` elements after
    ``arr``'s first element, as torch's ``set_(Tensor source, storage_offset, size, stride)``: the storage is
    the memory block ``arr`` lies in, up to its end."""
    if not arr.flags.c_contiguous:
        raise RuntimeError("passed in tensor to be used as storage must be contiguous")
    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    size = [int(s) for s in (size if size is not None else arr.shape)]
    if stride is None or len(stride) == 0:
        stride, step = [], 1
        for s in reversed(size):
            stride.insert(0, step)
            step *= max(s, 1)
    stride = [int(s) for s in stride]
    if len(size) != len(stride):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length ({len(stride)})")
    if any(s < 0 for s in size):
        raise RuntimeError("numel: integer multiplication overflow")
    itemsize = arr.itemsize
    root_start = root.__array_interface__["data"][0]
    start = arr.__array_interface__["data"][0]
    total_offset = (start - root_start) // itemsize + offset  # torch's storage offset, from the storage's start
    if total_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {total_offset}")
    available = (root_start + root.nbytes - start) // itemsize  # elements from arr's first one to the end
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * st for n, st in zip(size, stride))
    if needed > available:
        raise RuntimeError(f"setStorage: sizes {size}, strides {stride}, storage offset {total_offset}, and itemsize "
                           f"{itemsize} requiring a storage size of {(needed - offset + total_offset) * itemsize} are "
                           f"out of bounds for storage of size {root.nbytes}")
    elements = np.lib.stride_tricks.as_strided(arr, (available,), (itemsize,))
    return np.lib.stride_tricks.as_strided(elements[offset:], tuple(size), tuple(st * itemsize for st in stride))
