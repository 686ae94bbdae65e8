"""Ops whose results are positions or distinct values: ``argsort``, ``msort``, ``searchsorted``, ``bucketize``,
``unique`` and ``unique_consecutive``, with torch's signatures, int64 (or ``out_int32``) results and errors.

Autograd, as torch: index results never require grad. The values ``unique`` / ``unique_consecutive`` return do
(when the input does) and carry torch's node (``Unique2Backward0``, ``UniqueDimBackward0``,
``UniqueConsecutiveBackward0``), whose backward raises torch's NotImplementedError: torch has no derivative
for them either (nor a forward-mode one: a tangent on the input raises too). ``msort`` is ``sort`` along
dim 0 (``SortBackward0``); ``sort``, ``topk``, ``kthvalue`` and ``count_nonzero`` themselves are table rows.
"""
import numbers

import numpy as np

from derivgen.core.grad_mode import is_grad_enabled
from derivgen.core.registry import aten
from derivgen.core.sizes import wrap_dim
from derivgen.core.tensor import Tensor, bump_version, replace_array
from derivgen.ops.errors import forward_ad_unsupported
from derivgen.ops.forwards import stable_argsort
from derivgen.ops.forwards._common import _scalar_type_name
from derivgen.ops.inplace import check_inplace
from derivgen.ops.tensor_set import NotImplementedBackward


class _UndifferentiatedBackward(NotImplementedBackward):
    """The node of a torch op whose derivative formula is ``not_implemented``: it carries the op's own node
    name and raises NotImplementedError when backward reaches it."""
    __slots__ = ()

    def name(self):
        return type(self).__name__

    def _apply_fast(self, grads, needs):
        raise NotImplementedError(f"the derivative for '{self.op}' is not implemented.")

    _apply_graph = _apply_fast


def _node_class(name):
    return type(name, (_UndifferentiatedBackward,), {"__slots__": ()})


UniqueBackward0 = _node_class("UniqueBackward0")
Unique2Backward0 = _node_class("Unique2Backward0")
UniqueDimBackward0 = _node_class("UniqueDimBackward0")
UniqueConsecutiveBackward0 = _node_class("UniqueConsecutiveBackward0")


def _values_output(values, node_cls, op, source):
    """``values`` as the differentiable first output of ``op`` on ``source``; a forward-mode tangent on
    ``source`` is refused, as torch has no forward formula for ``op`` either."""
    if getattr(source, "_fw_grads", None):
        raise forward_ad_unsupported(op)
    if is_grad_enabled() and source.requires_grad:
        return Tensor._make(values, node_cls(op, (source,)), 0)
    return Tensor._make(values)


def _index(array):
    return Tensor._make(np.array(array, dtype=np.int64, order="C"))


def _as_tensor_arg(x, op):
    """The array of a Tensor argument, or of a Python number where torch accepts a Scalar (0-dim)."""
    if isinstance(x, Tensor):
        return x._array
    if isinstance(x, (bool, numbers.Number)):
        return np.asarray(x)
    raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")


# ---- sorting ------------------------------------------------------------------------------------------------

def argsort(input, dim=-1, descending=False, *, stable=False):  # noqa: A002 - torch spelling
    a = input._array
    if a.ndim == 0:
        wrap_dim(dim, 0)
        return _index(np.zeros((), np.int64))
    return _index(stable_argsort(a, wrap_dim(dim, a.ndim), descending))


def msort(input):  # noqa: A002 - torch spelling
    return aten.sort(input, 0)[0]


# ---- searchsorted / bucketize ----------------------------------------------------------------------------------

def _side(side, right):
    if side is None:
        return "right" if right else "left"
    if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                           "right was True")
    return side


def _search(boundaries, values, side, out_int32):
    """Per row of ``boundaries`` (its last dim; one row for 1-D boundaries), the insertion points of the
    matching row of ``values``."""
    dtype = np.result_type(boundaries.dtype, values.dtype)
    boundaries, values = boundaries.astype(dtype, copy=False), values.astype(dtype, copy=False)
    if boundaries.ndim == 1:
        out = np.searchsorted(boundaries, values, side=side)
    else:
        rows_b = boundaries.reshape(-1, boundaries.shape[-1])
        rows_v = values.reshape(rows_b.shape[0], -1)
        out = np.stack([np.searchsorted(b, v, side=side) for b, v in zip(rows_b, rows_v)]).reshape(values.shape)
    return Tensor._make(np.array(out, dtype=np.int32 if out_int32 else np.int64, order="C"))


_OUT_DTYPES = {False: np.dtype(np.int64), True: np.dtype(np.int32)}


def _check_out(out, out_int32):
    """searchsorted's and bucketize's ``out=``: torch checks its dtype against ``out_int32`` first."""
    if out is None:
        return
    if not isinstance(out, Tensor):
        raise TypeError(f"searchsorted(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out._array.dtype != _OUT_DTYPES[bool(out_int32)]:
        raise RuntimeError("torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                           "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype "
                           f"{_scalar_type_name(out._array)} and out_int32 flag is {bool(out_int32)}")


def _write_out(result, out):
    """The positions written into ``out`` (resized when its shape differs, as torch does); positions have no
    gradient, so inputs that require grad are fine here, unlike other ``out=`` ops."""
    if out is None:
        return result
    check_inplace(out)
    data = result._array
    if data.shape == out._array.shape:
        np.copyto(out._array, data)
    else:
        replace_array(out, data.copy())
    bump_version(out)
    return out


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None,  # noqa: A002
                 out=None):
    _check_out(out, out_int32)
    return _write_out(_searchsorted(sorted_sequence, input, out_int32, right, side, sorter), out)


def _searchsorted(sorted_sequence, input, out_int32, right, side, sorter):  # noqa: A002 - torch spelling
    side = _side(side, right)
    boundaries = sorted_sequence._array
    values = _as_tensor_arg(input, "searchsorted")
    if boundaries.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if sorter is not None:
        order = sorter._array
        if order.dtype != np.int64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{_scalar_type_name(order)}")
        if order.shape != boundaries.shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(boundaries.shape)}and got sorter tensor {list(order.shape)}")
        boundaries = np.take_along_axis(boundaries, order, axis=-1)
    if boundaries.ndim > 1 and (values.ndim != boundaries.ndim or values.shape[:-1] != boundaries.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(boundaries.shape)} and input value tensor {list(values.shape)}")
    return _search(boundaries, values, side, out_int32)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):  # noqa: A002 - torch spelling
    _check_out(out, out_int32)
    b = boundaries._array
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    return _write_out(_search(b, _as_tensor_arg(input, "bucketize"), "right" if right else "left", out_int32), out)


# ---- unique ---------------------------------------------------------------------------------------------------

def _results(values, inverse, counts, return_inverse, return_counts):
    """torch.unique's return: the values alone, or a tuple with the asked-for index tensors."""
    if not (return_inverse or return_counts):
        return values
    out = (values,)
    if return_inverse:
        out += (_index(inverse),)
    if return_counts:
        out += (_index(counts),)
    return out


def _slices(a, dim, op):
    """``a`` with ``dim`` first and the rest flattened: one row per slice along ``dim``."""
    if a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, a.ndim)
    if a.size == 0 and a.shape[d] != 0:
        raise RuntimeError(f"There are 0 sized dimensions, and they aren't selected, so {op} cannot be applied")
    rest = int(np.prod(a.shape[:d] + a.shape[d + 1:], dtype=np.int64))
    return d, np.moveaxis(a, d, 0).reshape(a.shape[d], rest)


def _restore(rows, a, d):
    """Rows of ``_slices`` back into ``a``'s layout (``len(rows)`` slices along ``d``)."""
    moved = np.moveaxis(a, d, 0)
    return np.array(np.moveaxis(rows.reshape((len(rows),) + moved.shape[1:]), 0, d), order="C")


def _unique_flat(input, node_cls, op):
    """The sorted distinct values of ``input`` (as ``op``'s differentiable output), the inverse in
    ``input``'s shape and the counts."""
    a = input._array
    values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False)
    return _values_output(np.array(values, order="C"), node_cls, op, input), inverse.reshape(a.shape), counts


def _unique(input, sorted=True, return_inverse=False):  # noqa: A002 - torch's aten op
    values, inverse, _ = _unique_flat(input, UniqueBackward0, "_unique")
    return values, _index(inverse if return_inverse else np.zeros(0))


def _unique2(input, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002 - torch's aten op
    values, inverse, counts = _unique_flat(input, Unique2Backward0, "_unique2")
    return values, _index(inverse if return_inverse else np.zeros(0)), _index(counts if return_counts else np.zeros(0))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    # sorted=False is allowed to sort (torch's CPU kernel does too)
    if dim is None:
        return _results(*_unique_flat(input, Unique2Backward0, "_unique2"), return_inverse, return_counts)
    a = input._array
    d, rows = _slices(a, dim, "unique")
    if rows.shape[0] == 0:
        values, inverse, counts = rows, np.zeros(0, np.int64), np.zeros(0, np.int64)
    else:
        order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(rows.shape[0])
        ordered = rows[order]
        starts = np.ones(len(ordered), bool)
        starts[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
        group = np.cumsum(starts) - 1
        values = ordered[starts]
        inverse = np.empty(len(rows), np.int64)
        inverse[order] = group
        counts = np.bincount(group)
    out = _values_output(_restore(values, a, d), UniqueDimBackward0, "unique_dim", input)
    return _results(out, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    a = input._array
    if dim is None:
        d, rows = None, a.reshape(-1, 1)
    else:
        d, rows = _slices(a, dim, "unique_consecutive")
    starts = np.ones(len(rows), bool)
    starts[1:] = np.any(rows[1:] != rows[:-1], axis=1)
    group = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), len(rows)))
    kept = rows[starts]
    values = np.array(kept.reshape(-1), order="C") if d is None else _restore(kept, a, d)
    out = _values_output(values, UniqueConsecutiveBackward0, "unique_consecutive", input)
    return _results(out, group.reshape(a.shape) if d is None else group, counts, return_inverse, return_counts)


FUNCTIONS = {"argsort": argsort, "msort": msort, "searchsorted": searchsorted, "bucketize": bucketize,
             "unique": unique, "unique_consecutive": unique_consecutive, "_unique": _unique, "_unique2": _unique2}
METHODS = {"argsort": argsort, "msort": msort, "unique": unique, "unique_consecutive": unique_consecutive}
