"""``derivgen.func``: torch.func's function transforms over derivgen's two modes.

``jvp`` and ``jacfwd`` run forward mode (dual tensors, ``derivgen.autograd.forward_ad``); ``vjp``,
``grad``, ``grad_and_value`` and ``jacrev`` run reverse mode; ``hessian`` is ``jacfwd(jacrev(f))`` as in
torch; ``vmap`` (from ``derivgen.batching``) maps a function over a batch dimension. Functions take and return
Tensors or tuples of Tensors; ``argnums`` selects the differentiated positional arguments as torch's does.

Inside vmap, the reverse-mode transforms differentiate the physical values: each differentiated input
becomes a leaf batched at every active vmap level (an input shared by the examples is expanded), so the
gradient of the summed per-example outputs is the per-example gradient (``vmap(grad(f))``).
"""
import numpy as np

from derivgen.autograd import forward_ad as _fwAD
from derivgen.core.grad_mode import enable_grad
from derivgen.core.tensor import Tensor
from derivgen.batching.pytree import tree_flatten, tree_unflatten
from derivgen.batching.autograd import grad as _autograd_grad
from derivgen.batching.vmap import vmap
from derivgen.generated import ops as _ops
from derivgen.autograd.transforms import _detached, _per_example, _tuple, _zeros_for, jvp, vjp

__all__ = ["jvp", "jacfwd", "vjp", "grad", "grad_and_value", "jacrev", "hessian", "vmap"]


def _argnums_tuple(argnums, n):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(a)}")
        if not -n <= a < n:
            raise RuntimeError(f"Got argnums={a}, but only {n} positional inputs")
    return tuple(a % n for a in nums)


def grad_and_value(func, argnums=0, has_aux=False):
    """``f -> (grad of f's scalar output with respect to args[argnums], value)``; a differentiated argument
    may be a pytree (tuple, list, dict) of Tensors, its gradient then has the same structure."""
    def wrapper(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args))
        with enable_grad():
            args = list(args)
            specs = []
            leaves = []
            for i in nums:
                flat, spec = tree_flatten(args[i])
                flat = [_detached(t).requires_grad_(True) for t in flat]
                args[i] = tree_unflatten(flat, spec)
                specs.append((spec, len(flat)))
                leaves += flat
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
            flat_grads = _autograd_grad([out], leaves, allow_unused=True)
        flat_grads = [g if g is not None else _zeros_for(leaf) for g, leaf in zip(flat_grads, leaves)]
        grads, start = [], 0
        for spec, n in specs:
            grads.append(tree_unflatten(flat_grads[start:start + n], spec))
            start += n
        g = tuple(grads) if isinstance(argnums, tuple) else grads[0]
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
    """The Jacobian by forward mode: one JVP per input element (a basis tangent). Inside vmap, with
    batched arguments, one Jacobian per example: the forward-mode rules compute on arrays."""
    def wrapper(*args):
        looped = _per_example(wrapper, args)
        if looped is not None:
            return looped
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


def _jacrev_vectorized(func, args, nums, argnums, has_aux):
    """torch's jacrev: vmap of the vector-Jacobian product over the one-hot cotangents of each output.
    Under vmap the forward runs once for all rows and one backward pass gives them all."""
    out = func(*args)
    aux = None
    if has_aux:
        out, aux = out
    outs = _tuple(out)
    jacs = []
    for index, o in enumerate(outs):
        n = o.numel()
        basis = Tensor._make(np.eye(n, dtype=o._array.dtype).reshape((n,) + tuple(o.shape)))

        def row(e, index=index):
            def partial(*diff):
                call = list(args)
                for i, d in zip(nums, diff):
                    call[i] = d
                res = func(*call)
                return _tuple(res[0] if has_aux else res)[index]
            return vjp(partial, *[args[i] for i in nums])[1](e)
        rows = vmap(row)(basis) if n else tuple(Tensor._make(np.zeros((0,) + tuple(args[i].shape), o._array.dtype))
                                                for i in nums)
        jac = tuple(r.reshape(tuple(o.shape) + tuple(args[i].shape)) for r, i in zip(rows, nums))
        jacs.append(jac if isinstance(argnums, tuple) else jac[0])
    result = tuple(jacs) if isinstance(out, tuple) else jacs[0]
    return (result, aux) if has_aux else result


def jacrev(func, argnums=0, has_aux=False):
    """The Jacobian by reverse mode: vmap of the vector-Jacobian product over the one-hot cotangents, as
    torch; inside a dual level (``hessian``'s forward over reverse) one product per output element, with
    a graph the tangents flow through."""
    def wrapper(*args):
        nums = _argnums_tuple(argnums, len(args))
        if _fwAD._current_level < 0 and not any(_fwAD.unpack_dual(a).tangent is not None
                                                  for a in args if isinstance(a, Tensor)):
            return _jacrev_vectorized(func, args, nums, argnums, has_aux)
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
