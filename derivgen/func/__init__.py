"""``derivgen.func``: torch.func's function transforms over derivgen's two modes.

``jvp`` and ``jacfwd`` run forward mode (dual tensors, ``derivgen.autograd.forward_ad``); ``vjp``,
``grad``, ``grad_and_value`` and ``jacrev`` run reverse mode; ``hessian`` is ``jacfwd(jacrev(f))`` as in
torch. ``vmap`` is not provided. Functions take and return Tensors or tuples of Tensors; ``argnums``
selects the differentiated positional arguments as torch's does.
"""
import numpy as np

from derivgen.autograd import forward_ad as _fwAD
from derivgen.core.grad_mode import enable_grad
from derivgen.core.tensor import Tensor
from derivgen.engine.api import grad as _autograd_grad
from derivgen.generated import ops as _ops

__all__ = ["jvp", "jacfwd", "vjp", "grad", "grad_and_value", "jacrev", "hessian"]


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _check_tensors(values, fn_name, what):
    for v in values:
        if not isinstance(v, Tensor):
            raise ValueError(f"{fn_name}: Expected {what} to be a tuple of Tensors, got {type(v)}")


def _detached(t):
    return Tensor._make(t._array)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)`` by forward mode."""
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
        return tuple(g if g is not None else Tensor._make(np.zeros(p._array.shape, p._array.dtype))
                     for g, p in zip(grads, leaves))
    prim = tuple(_detached(o) for o in outs)
    prim = prim if isinstance(out, tuple) else prim[0]
    return (prim, vjp_fn, aux) if has_aux else (prim, vjp_fn)


def _argnums_tuple(argnums, n):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(a)}")
        if not -n <= a < n:
            raise RuntimeError(f"Got argnums={a}, but only {n} positional inputs")
    return tuple(a % n for a in nums)


def grad_and_value(func, argnums=0, has_aux=False):
    """``f -> (grad of f's scalar output with respect to args[argnums], value)``."""
    def wrapper(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args))
        with enable_grad():
            args = list(args)
            for i in nums:
                args[i] = _detached(args[i]).requires_grad_(True)
            out = func(*args, **kwargs)
            aux = None
            if has_aux:
                out, aux = out
            if not isinstance(out, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs "
                                   "instead?")
            grads = _autograd_grad([out], [args[i] for i in nums], allow_unused=True)
        grads = tuple(g if g is not None else Tensor._make(np.zeros(args[i]._array.shape, args[i]._array.dtype))
                      for g, i in zip(grads, nums))
        g = grads if isinstance(argnums, tuple) else grads[0]
        value = _detached(out)
        return (g, (value, aux)) if has_aux else (g, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``f -> gradient of f's scalar output with respect to args[argnums]``."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def _stack_jacobian(columns, out_shape, in_shape, dtype):
    """columns[k] is d out / d in_flat[k]: the Jacobian of shape out_shape + in_shape."""
    n = int(np.prod(in_shape, dtype=np.int64))
    jac = np.empty(tuple(out_shape) + (n,), dtype)
    for k, c in enumerate(columns):
        jac[..., k] = c
    return Tensor._make(jac.reshape(tuple(out_shape) + tuple(in_shape)))


def jacfwd(func, argnums=0, has_aux=False):
    """The Jacobian by forward mode: one JVP per input element (a basis tangent)."""
    def wrapper(*args):
        nums = _argnums_tuple(argnums, len(args))
        per_input = []
        aux = None
        out = None
        for i in nums:
            x = args[i]
            cols = []
            for k in range(x._array.size):
                basis = np.zeros(x._array.size, x._array.dtype)
                basis[k] = 1
                with _fwAD.dual_level():
                    call = list(args)
                    call[i] = _fwAD.make_dual(_detached(x), Tensor._make(basis.reshape(x._array.shape)))
                    res = func(*call)
                    if has_aux:
                        res, aux = res
                    out = res
                    cols.append([_tangent_array(o) for o in _tuple(res)])
            if x._array.size == 0:
                with _fwAD.dual_level():
                    out = func(*args)
                    if has_aux:
                        out, aux = out
            per_input.append(cols)
        outs = _tuple(out)
        jacs = []
        for o_index, o in enumerate(outs):
            row = tuple(_stack_jacobian([c[o_index] for c in cols], o.shape, args[i].shape, o._array.dtype)
                        for cols, i in zip(per_input, nums))
            jacs.append(row if isinstance(argnums, tuple) else row[0])
        result = tuple(jacs) if isinstance(out, tuple) else jacs[0]
        return (result, aux) if has_aux else result
    return wrapper


def _tangent_array(o):
    t = _fwAD.unpack_dual(o).tangent
    return np.zeros(o._array.shape, o._array.dtype) if t is None else t._array


def jacrev(func, argnums=0, has_aux=False):
    """The Jacobian by reverse mode: one vector-Jacobian product per output element."""
    def wrapper(*args):
        nums = _argnums_tuple(argnums, len(args))
        with enable_grad():
            call = list(args)
            leaves = []
            for i in nums:
                # a fresh leaf; inside jacfwd (a dual level) it keeps the argument's tangent, and the
                # reverse pass keeps a graph, so the tangents flow through it (forward over reverse)
                leaf = _detached(args[i]).requires_grad_(True)
                tangent = _fwAD.unpack_dual(args[i]).tangent
                call[i] = _fwAD.make_dual(leaf, tangent) if tangent is not None else leaf
                leaves.append(call[i])
            out = func(*call)
            aux = None
            if has_aux:
                out, aux = out
            outs = _tuple(out)
            jacs = []
            for o in outs:
                rows = [[] for _ in nums]
                flat = o.reshape(-1)
                for k in range(flat.shape[0]):
                    gs = _autograd_grad([flat[k]], leaves, retain_graph=True, allow_unused=True,
                                        create_graph=_fwAD._current_level >= 0)
                    for r, g, leaf in zip(rows, gs, leaves):
                        r.append(g if g is not None else leaf * 0)
                jac = []
                for r, leaf in zip(rows, leaves):
                    if r:
                        jac.append(_ops.stack_default(r).reshape(tuple(o.shape) + tuple(leaf.shape)))
                    else:
                        jac.append(Tensor._make(np.zeros(tuple(o.shape) + tuple(leaf.shape), o._array.dtype)))
                jacs.append(tuple(jac) if isinstance(argnums, tuple) else jac[0])
        result = tuple(jacs) if isinstance(out, tuple) else jacs[0]
        return (result, aux) if has_aux else result
    return wrapper


def hessian(func, argnums=0):
    """``jacfwd(jacrev(func))``, as torch: forward mode over reverse mode. Inside the dual level the
    reverse pass runs with ``create_graph=True``, so its Tensor-op formulas carry the tangents (saved
    outputs included)."""
    return jacfwd(jacrev(func, argnums), argnums)
