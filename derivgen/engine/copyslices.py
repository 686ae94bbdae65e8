"""``CopySlices``: the node an in-place op on a view puts on the view's base (torch's CopySlices).

``base[...view...].op_(...)`` rewrites the base's history: its new grad_fn takes the gradient of the whole
base, routes the view's region through the in-place op's own node ``fn`` and passes the rest of the base
through unchanged. Its edges are the base's previous edge followed by ``fn``'s edges for the op's other
inputs, as in torch. The view's geometry (shape, strides, offset into the base) is kept, so the region is
found again in a gradient laid out like the base.
"""
import numpy as np

from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor

from derivgen.core.node import Node, gradient_edge
from derivgen.core.sizes import sum_to


def _addr(a):
    return a.__array_interface__["data"][0]


class CopySlices(Node):
    __slots__ = ("fn", "base_shape", "base_strides", "view_shape", "view_strides", "view_offset")

    def __init__(self, base, view, fn):
        self.fn = fn
        b, v = base._array, view._array
        self.base_shape, self.base_strides = b.shape, b.strides
        self.view_shape, self.view_strides = v.shape, v.strides
        self.view_offset = _addr(v) - _addr(b)
        edges = (gradient_edge(base),) + tuple(fn._next[1:])
        meta = ((b.shape, b.dtype),) + tuple(fn._in_meta[1:])
        self._init_node(edges, meta, (meta[0],))  # its one output is the base

    def name(self):
        return "derivgen::autograd::CopySlices"

    def _layout(self, dtype):
        """A zeroed buffer seen twice: with the base's shape and strides, and with the view's geometry."""
        itemsize = np.dtype(dtype).itemsize
        base_itemsize = self._in_meta[0][1].itemsize
        scale = itemsize / base_itemsize
        strides = tuple(int(s * scale) for s in self.base_strides)
        extent = itemsize
        for n, st in zip(self.base_shape, strides):
            extent = 0 if n == 0 else extent + (n - 1) * st
        buf = np.zeros(max(extent, itemsize), np.uint8)
        whole = np.ndarray(self.base_shape, dtype, buf, 0, strides)
        region = np.ndarray(self.view_shape, dtype, buf, int(self.view_offset * scale),
                            tuple(int(st * scale) for st in self.view_strides))
        return whole, region

    def _apply_fast(self, grads, needs):
        g = grads[0]
        if g is None:
            return [None] * len(self._next_fns)
        whole, region = self._layout(g.dtype)
        whole[...] = g
        # the region's own gradient is needed only when the view required grad before the op (fn's first
        # edge); otherwise the overwritten values contribute nothing and fn saved nothing to compute it
        outs = self.fn._apply_fast([region.copy()], (self.fn._next_fns[0] is not None,) + tuple(needs[1:]))
        gv = outs[0]
        region[...] = 0 if gv is None else sum_to(np.asarray(gv), self.view_shape)
        return [np.array(whole)] + list(outs[1:])

    def _apply_graph(self, grads, needs):
        """The same routing with differentiable ops (create_graph=True), built as torch's CopySlices builds
        it, so the new graph has torch's nodes: the gradient is copied into a fresh tensor of the base's
        geometry (CopyBackwards), the view's region of it is read with as_strided, ``fn``'s graph formulas
        run on a clone of that region, and their result is copied back into the region (CopySlices)."""
        g = grads[0]
        if g is None:
            return [None] * len(self._next_fns)
        itemsize = self._in_meta[0][1].itemsize
        contiguous = tuple(int(st) for st in np.empty(self.base_shape, np.uint8).strides)
        if tuple(st // itemsize for st in self.base_strides) != contiguous or self.view_offset % itemsize:
            raise NotImplementedError("derivgen: create_graph=True through CopySlices is supported for views of a "
                                      "contiguous base only; apply the op out of place")
        result = Tensor._make(np.empty(self.base_shape, g._array.dtype))
        aten.copy_(result, g)
        strides = tuple(st // itemsize for st in self.view_strides)
        grad_slice = aten.as_strided_default(result, self.view_shape, strides, self.view_offset // itemsize)
        # the clone: fn may save its gradient input, and the region is overwritten below
        outs = self.fn._apply_graph([aten.clone_default(grad_slice)],
                                    (self.fn._next_fns[0] is not None,) + tuple(needs[1:]))
        gv = outs[0]
        # without a gradient for the view (it did not require grad before the op), the overwritten values
        # contribute nothing
        aten.copy_(grad_slice, gv if gv is not None else Tensor._make(np.zeros(self.view_shape, g._array.dtype)))
        return [result] + list(outs[1:])

    def _release_variables(self):
        self.fn._release_variables()
        self._released = True
