"""torch.func's ``jvp`` and ``vjp`` (``derivgen.func`` exports them with the other transforms). They live
with autograd because ``autograd.functional`` and ``gradcheck`` build on them; inside vmap they
differentiate the physical values (see ``derivgen.func``)."""
import numpy as np

from derivgen.autograd import forward_ad as _fwAD
from derivgen.batching import BatchedTensor, active_levels
from derivgen.batching.autograd import example as _example
from derivgen.batching.autograd import grad as _autograd_grad
from derivgen.batching.autograd import levels_of as _levels_of
from derivgen.batching.dispatch import suspended_level
from derivgen.batching.pytree import tree_flatten, tree_unflatten
from derivgen.batching.registry import batch_size
from derivgen.batching.tensor import materialize_levels, rewrap_levels
from derivgen.core.grad_mode import enable_grad
from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor

__all__ = ["jvp", "vjp"]


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _check_tensors(values, fn_name, what):
    for v in values:
        if not isinstance(v, Tensor):
            raise ValueError(f"{fn_name}: Expected {what} to be a tuple of Tensors, got {type(v)}")


def _detached(t):
    """A new leaf with ``t``'s values; inside vmap a BatchedTensor at every active level, whose innermost
    physical value is the leaf (so gradients with respect to it are per example)."""
    levels = active_levels()
    if levels and isinstance(t, Tensor):
        plain = materialize_levels(t, levels)
        # no copy: an input shared by the examples stays a stride-0 view (a C-order copy would cost a
        # write of every example's copy, and matmul on the broadcast view is one BLAS call)
        return rewrap_levels(Tensor._make(plain._array), levels)
    return Tensor._make(t._array)


def _per_example(fn, args):
    """``fn(*args)`` one example at a time for the innermost vmap level batching ``args``, the results (a
    pytree of Tensors) stacked at that level again; None when no argument is batched at an active level."""
    levels = active_levels()
    found = [lv for a in args for lv in _levels_of(a) if lv in levels]
    if not found:
        return None
    level = max(found)
    examples = [[_example(a, level, b) for a in args] for b in range(batch_size(level))]
    with suspended_level(level):
        per = [fn(*ex) for ex in examples]
    flat = [tree_flatten(p)[0] for p in per]
    spec = tree_flatten(per[0])[1]
    stacked = [BatchedTensor(aten.stack([f[k] for f in flat], 0), level) if isinstance(flat[0][k], Tensor)
               else flat[0][k] for k in range(len(flat[0]))]
    return tree_unflatten(stacked, spec)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)`` by forward mode; ``strict=True`` refuses an output that does not
    depend on the primals (torch's error). Inside vmap, with batched primals or tangents, one JVP per
    example: the forward-mode rules compute on arrays, not on batched tensors."""
    if isinstance(primals, tuple) and isinstance(tangents, tuple) and len(primals) == len(tangents):
        n = len(primals)
        looped = _per_example(lambda *a: jvp(func, tuple(a[:n]), tuple(a[n:]), strict=strict, has_aux=has_aux),
                              primals + tangents)
        if looped is not None:
            return looped
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    if not isinstance(tangents, tuple) or len(tangents) != len(primals):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {len(primals)} and tangents with structure "
                           f"{len(tangents) if isinstance(tangents, tuple) else 1}")
    _check_tensors(primals, "jvp(f, primals, tangents)", "primals")
    _check_tensors(tangents, "jvp(f, primals, tangents)", "tangents")
    with _fwAD.dual_level():
        duals = tuple(_fwAD.make_dual(p, t) for p, t in zip(primals, tangents))
        out = func(*duals)
        aux = None
        if has_aux:
            out, aux = out
        outs = _tuple(out)
        pairs = [_fwAD.unpack_dual(o) for o in outs]
        if strict and any(p.tangent is None for p in pairs):
            raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the inputs. "
                               "This is not allowed with strict=True.")
        prim = tuple(_detached(p.primal) for p in pairs)
        tang = tuple(p.tangent if p.tangent is not None else Tensor._make(np.zeros(o._array.shape, o._array.dtype))
                     for p, o in zip(pairs, outs))
    if not isinstance(out, tuple):
        prim, tang = prim[0], tang[0]
    return (prim, tang, aux) if has_aux else (prim, tang)


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` returns one gradient per primal."""
    with enable_grad():
        leaves = tuple(_detached(p).requires_grad_(True) for p in primals)
        out = func(*leaves)
        aux = None
        if has_aux:
            out, aux = out
    outs = _tuple(out)

    def vjp_fn(*cotangents):
        cts = cotangents[0] if len(cotangents) == 1 and isinstance(cotangents[0], tuple) else cotangents
        grads = _autograd_grad(list(outs), list(leaves), list(cts), retain_graph=True, allow_unused=True)
        return tuple(g if g is not None else _zeros_for(p) for g, p in zip(grads, leaves))
    prim = tuple(_detached(o) for o in outs)
    prim = prim if isinstance(out, tuple) else prim[0]
    return (prim, vjp_fn, aux) if has_aux else (prim, vjp_fn)


def _zeros_for(leaf):
    """A zero gradient for ``leaf`` (batched as it is inside vmap)."""
    levels = active_levels()
    if levels and isinstance(leaf, BatchedTensor):
        plain = materialize_levels(leaf, levels)
        return rewrap_levels(Tensor._make(np.zeros(plain._array.shape, plain._array.dtype)), levels)
    return Tensor._make(np.zeros(leaf._array.shape, leaf._array.dtype))
