"""``scatter`` / ``scatter_`` with torch's ``reduce=`` keyword ('add' or 'multiply'): torch has no derivative
for these overloads, so their result carries torch's NotImplemented node (its backward raises "derivative
for aten::scatter is not implemented"). Without ``reduce`` they are the table's ``scatter`` rows."""
import warnings

import numpy as np

from derivgen.core.grad_mode import is_grad_enabled
from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor, bump_version
from derivgen.ops.forwards.shapes import _along, _check_index_range, _full_index
from derivgen.ops.inplace import check_inplace, set_inplace_history
from derivgen.ops.tensor_set import NotImplementedBackward

_warned = False


def _reduced(self, dim, index, source, reduce):
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    a, idx = self._array, index._array
    d = _along(a, dim, idx, "scatter")
    out = a.copy()
    if idx.size == 0:
        return out
    if idx.ndim == 0 and a.ndim == 1:
        idx = idx.reshape(1)
    _check_index_range(idx, a.shape[d] if a.ndim else 1, d)
    if isinstance(source, Tensor):
        src = source._array
        if src.ndim:
            src = src[tuple(slice(0, s) for s in idx.shape)]
    else:
        src = a.dtype.type(source)
    (np.add if reduce == "add" else np.multiply).at(out, _full_index(idx, d), src)
    return out


def _warn_tensor_src(source):
    global _warned
    if isinstance(source, Tensor) and not _warned:
        _warned = True
        warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                      "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                      UserWarning, stacklevel=3)


def _source(args, kwargs):
    if args:
        return args[0]
    return kwargs["src"] if "src" in kwargs else kwargs["value"]


def _grad_inputs(self, source):
    inputs = [self] + ([source] if isinstance(source, Tensor) else [])
    if is_grad_enabled() and any(t.requires_grad for t in inputs):
        return inputs
    return None


def scatter(self, dim, index, *args, reduce=None, **kwargs):
    if reduce is None:
        return aten.scatter(self, dim, index, *args, **kwargs)
    source = _source(args, kwargs)
    _warn_tensor_src(source)
    out = _reduced(self, dim, index, source, reduce)
    inputs = _grad_inputs(self, source)
    if inputs is None:
        return Tensor._make(out)
    return Tensor._make(out, NotImplementedBackward("aten::scatter", inputs), 0)


def scatter_(self, dim, index, *args, reduce=None, **kwargs):
    if reduce is None:
        return aten.scatter_(self, dim, index, *args, **kwargs)
    source = _source(args, kwargs)
    _warn_tensor_src(source)
    check_inplace(self)
    out = _reduced(self, dim, index, source, reduce)
    inputs = _grad_inputs(self, source)
    node = NotImplementedBackward("aten::scatter_", inputs) if inputs is not None else None
    self._array[...] = out
    bump_version(self)
    if node is not None:
        set_inplace_history(self, node)
    return self


FUNCTIONS = {"scatter": scatter}
METHODS = {"scatter": scatter, "scatter_": scatter_}
