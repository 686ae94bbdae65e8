"""The forward-mode observer: after each op call with a dual input, the output's tangent.

Registered with ``derivgen.core.observe`` only while a dual level is active. ``op_start`` collects the
tangents of the call's differentiable inputs (and keeps a copy of ``self`` for an in-place op);
``op_end`` applies the row's rule from ``derivgen.generated.jvp`` and stores the tangent on the result.
A missing tangent among several inputs counts as zeros. The tangent's own computation runs with the
observer paused on this thread (its Tensor ops must not compute tangents of tangents).

An elementwise row's tangent comes from its JVP kernel in one of three ways: deferred with a deferred
(whole-graph fused) result, so one loop computes both; by the kernel at once; or, when the tangent must
itself be differentiable (grad mode on and an input requiring grad), by the rule's Tensor-op form.
"""
import threading
import weakref

import numpy as np

from derivgen.core import observe as _observe
from derivgen.core.grad_mode import is_grad_enabled
from derivgen.core.node import SavedVariable, raw_saved
from derivgen.core.pending import Pending
from derivgen.core.tensor import Tensor, replace_array
from derivgen.engine import fusion as _fusion
from derivgen.generated import jvp as _jvp
from derivgen.generated import kernels as _kernels
from derivgen.ops.errors import forward_ad_unsupported
from derivgen.ops.inplace import set_tangent_commit, view_chain

level = -1   # the active dual level (set by forward_ad), -1 when none


class _Paused(threading.local):
    depth = 0


_paused = _Paused()


class paused:
    """Run Tensor ops without forward-mode tracking on this thread."""

    def __enter__(self):
        _paused.depth += 1

    def __exit__(self, *exc):
        _paused.depth -= 1
        return False


def tangent_of(t, lvl=None):
    grads = getattr(t, "_fw_grads", None)
    if not grads:
        return None
    return grads.get(level if lvl is None else lvl)


duals = []   # weakrefs of the tensors given a tangent at the active level (cleared on exit)


def set_tangent(t, tangent, lvl=None):
    grads = getattr(t, "_fw_grads", None)
    if grads is None:
        grads = t._fw_grads = {}
    grads[level if lvl is None else lvl] = tangent
    duals.append(weakref.ref(t))


def without_tangent(t):
    with paused():
        return t.view_as(t)


def _zeros(t):
    return Tensor._make(np.zeros(t._array.shape, t._array.dtype))


def unsupported(fn_name):
    return forward_ad_unsupported(_jvp.OP_NAMES.get(fn_name, fn_name))


class _Call:
    __slots__ = ("fn_name", "kwargs", "tangents", "original_self")

    def __init__(self, fn_name, kwargs, tangents, original_self):
        self.fn_name = fn_name
        self.kwargs = kwargs
        self.tangents = tangents
        self.original_self = original_self


class ForwardObserver:
    """The observer interface of derivgen.core.observe; only op calls matter to forward mode."""

    def op_start(self, name, kwargs):
        if _paused.depth:
            return None
        fn = _observe.current_fn()
        fn_name = getattr(fn, "__name__", "")
        diff = _jvp.DIFFERENTIABLE.get(fn_name)
        if not diff:
            return None
        tangents = {}
        for arg in diff:
            v = kwargs.get(arg)
            if isinstance(v, (list, tuple)):
                ts = [tangent_of(x) if isinstance(x, Tensor) else None for x in v]
                if any(x is not None for x in ts):
                    tangents[arg] = ts
            elif isinstance(v, Tensor):
                t = tangent_of(v)
                if t is not None:
                    tangents[arg] = t
        if not tangents:
            return None
        row = _jvp.INPLACE.get(fn_name, fn_name)
        if row not in _jvp.RULES:
            raise unsupported(fn_name)
        original = None
        if fn_name in _jvp.INPLACE:  # in-place: the rule needs self as it was before the op wrote into it
            original = Tensor._make(kwargs["self"]._array.copy())
        return _Call(row, kwargs, tangents, original)

    def op_end(self, token, result):
        if token is None or result is None:
            return
        with paused():
            tangent = _compute(token, result)
        if tangent is None:
            return
        if isinstance(result, (list, tuple)):  # several outputs (std_mean, split, unbind): one tangent each
            for r, t in zip(result, tangent):
                if t is not None:
                    set_tangent(r, t)
                    _share_with_saved_output(r)
        else:
            if token.original_self is not None:
                write_inplace_tangent(result, tangent)
            else:
                set_tangent(result, tangent)
            _share_with_saved_output(result)

    def node_start(self, node):
        return None

    def node_end(self, token, fused_with):
        pass


OBSERVER = ForwardObserver()


def write_inplace_tangent(t, new):
    """An in-place op gave ``t`` the tangent ``new``. As torch, tangents alias like their primals: the
    new value is written into ``t``'s tangent when it has one (views of it, and the base it views, see
    the change); a view without a tangent gets one as the same view of its base's tangent (zeros where
    the base had none), written through."""
    old = tangent_of(t)
    if old is not None:
        if old._array.shape == new._array.shape and old._array.flags.writeable:
            old._array[...] = new._array
            return
        set_tangent(t, new)
        return
    chain = view_chain(t) if t._base is not None else None
    if chain is not None and chain[0]._array.dtype.kind == "f":
        root = chain[0]
        root_t = tangent_of(root)
        if root_t is None:
            root_t = _zeros(root)
            set_tangent(root, root_t)
        with paused():
            v = root_t
            for fn, args, kwargs in chain[1:]:
                v = fn(v, *args, **kwargs)
        if v._array.flags.writeable and np.shares_memory(v._array, root_t._array) \
                and v._array.shape == new._array.shape:
            v._array[...] = new._array
            set_tangent(t, v)
            return
    set_tangent(t, new)


def _commit(t, out, view_op=False):
    """``ops.inplace.commit_inplace``'s hook: a row computed out of place (``copy_``, ``fill_``, or an in-place
    view op such as ``squeeze_``) hands its result's tangent to ``t``. A view op's result tangent is the same
    view of ``t``'s tangent: as torch applies the op to the tangent itself, that tangent tensor takes the new
    shape and strides (never the values written into the old layout)."""
    new = tangent_of(out)
    if new is None:
        return
    old = tangent_of(t)
    if view_op and old is not None:
        replace_array(old, new._array)
        return
    if new._array.shape == t._array.shape and not view_op:
        write_inplace_tangent(t, new)
    else:  # a shape change (squeeze_): the tangent is rebound with the value
        set_tangent(t, new)


set_tangent_commit(_commit)


def _share_with_saved_output(result):
    """A backward formula that uses the op's output (``exp``: ``grad * result``) reads it back from its
    node; give that saved copy the output's tangents, so that reverse mode run inside a dual level
    (``create_graph=True``: forward over reverse, ``jacfwd(jacrev(f))``) differentiates it too."""
    node = result.grad_fn
    if node is None:
        return
    raw = result._pending if result._lazy else result._array  # a deferred result stays deferred
    for name in getattr(type(node), "__slots__", ()):
        if name.startswith("_sv_"):
            sv = getattr(node, name, None)
            if sv is raw:  # kept compactly: the SavedVariable it stands for can carry the tangents
                sv = raw_saved(node, name[len("_sv_"):])
            if isinstance(sv, SavedVariable) and sv.is_output and sv._array is raw:
                sv.fw_grads = result._fw_grads


def _compute(call, result):
    rule = _jvp.RULES[call.fn_name]
    kwargs = dict(call.kwargs)
    if call.original_self is not None:
        kwargs["self"] = call.original_self
    diff = _jvp.DIFFERENTIABLE[call.fn_name]
    for arg in diff:
        given = call.tangents.get(arg)
        v = kwargs.get(arg)
        if isinstance(v, (list, tuple)):
            given = given or [None] * len(v)
            kwargs[f"{arg}_t"] = [g if g is not None else _zeros(x) for g, x in zip(given, v)]
        elif v is None:
            kwargs[f"{arg}_t"] = None
        else:
            kwargs[f"{arg}_t"] = given if given is not None else _zeros(v)
    if rule[0] == "kernel" and _needs_graph(kwargs, diff):
        graph_fn = rule[4]
        params = graph_fn.__code__.co_varnames[:graph_fn.__code__.co_argcount]
        tangent = graph_fn(**{k: v for k, v in kwargs.items() if k in params}, result=result)
        if tangent.dtype != result.dtype:
            tangent = tangent.to(result.dtype)
        return tangent if tuple(tangent.shape) == tuple(result.shape) else tangent.expand(*result.shape)
    if rule[0] == "kernel":
        _, kernel_name, arrays, numbers, _ = rule
        kernel = getattr(_kernels, kernel_name)  # imports the kernel's module on first use
        # an elementwise kernel broadcasts: a missing tangent is a 0-dim zero, not a full array of zeros
        for arg in diff:
            if arg not in call.tangents and isinstance(kwargs.get(arg), Tensor):
                kwargs[f"{arg}_t"] = np.zeros((), kwargs[arg]._array.dtype)
        deferred = _deferred_tangent(kernel, result, [kwargs[a] for a in arrays], [kwargs[n] for n in numbers])
        if deferred is not None:
            return deferred
        arrs = [_array_of(kwargs[a]) for a in arrays]
        out = kernel(arrs, tuple(kwargs[n] for n in numbers))
        raw = result._pending if result._lazy else result._array  # shape and dtype, without computing it
        out = np.asarray(out)
        if out.dtype != raw.dtype or out.shape != raw.shape:
            out = np.broadcast_to(out, raw.shape).astype(raw.dtype)
        return Tensor._make(out)
    tangent = rule[1](result=result, **kwargs)
    if isinstance(result, (list, tuple)):
        return tangent
    if tangent is not None and tangent.dtype != result.dtype and tangent.dtype.is_floating_point:
        tangent = tangent.to(result.dtype)
    return tangent


def _deferred_tangent(kernel, result, values, numbers):
    """The tangent of a deferred (whole-graph fused) elementwise result, deferred too: a Pending of the
    row's JVP over the same inputs, computed in one loop with the primal (its sibling) when either is
    read, so that a chain's tangents cost one more output of the primal's fused kernel instead of a
    pass over memory per op. None when the result is not deferred or the inputs do not fit."""
    if not result._lazy or kernel.scalar is None:
        return None
    primal = result._pending
    if primal.__class__ is not Pending or primal.value is not None:
        return None
    tensors = [v if isinstance(v, Tensor) else Tensor._make(np.asarray(v)) for v in values]
    pending = _fusion.defer(kernel, tensors, numbers)
    if pending is None or pending.shape != primal.shape or pending.dtype != primal.dtype:
        return None
    pending.siblings = (primal,)
    primal.siblings = primal.siblings + (pending,)
    return Tensor._make(pending)


def _needs_graph(kwargs, diff):
    """Whether the tangent must be differentiable: grad mode is on and a primal or tangent the rule reads
    requires grad (``create_graph=True`` over forward mode). The fused kernel records no graph; the rule's
    Tensor-op form does."""
    if not is_grad_enabled():
        return False
    for arg in diff:
        for v in (kwargs.get(arg), kwargs.get(f"{arg}_t")):
            if isinstance(v, Tensor) and v.requires_grad:
                return True
    return False


def _array_of(v):
    if isinstance(v, Tensor):
        return v._array
    return np.asarray(v)


def has_tangents(args):
    """Whether a dual level is active and one of ``args`` carries a tangent."""
    return level >= 0 and any(isinstance(a, Tensor) and tangent_of(a) is not None for a in args)


def is_paused():
    """Whether forward-mode tracking is off on this thread (torch's fw grad mode disabled: inside a tangent
    computation, a custom Function's forward and its jvp)."""
    return _paused.depth > 0


def _root(t):
    while t._base is not None:
        t = t._base
    return t


def custom_function_jvp(user_jvp, ctx, args, outs, dirty_ids, nondiff_ids):
    """Forward mode through ``autograd.Function`` (torch's ``_process_forward_mode_AD``): the user's
    ``jvp(ctx, *tangents)`` (zeros for a Tensor input without a tangent, None for other arguments;
    ``ctx.saved_tensors`` gives what the forward passed to ``ctx.save_for_forward``) runs with tracking
    off and returns one tangent per output. An input modified in place (``mark_dirty``) must have its
    tangent modified in place and returned as-is; an output that is a view of an input with a tangent
    (or the input returned as-is) must get a view of that tangent. ``user_jvp`` is None when the Function
    defines no jvp."""
    if user_jvp is None:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")
    given = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    versions = {id(a): (g, g._vc[0]) for a, g in zip(args, given) if g is not None}
    tangents = [None if not isinstance(a, Tensor) or not a.dtype.is_floating_point else (g if g is not None else _zeros(a))
                for a, g in zip(args, given)]
    ctx._in_jvp = True
    try:
        with paused():
            res = user_jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
    res = list(res) if isinstance(res, tuple) else [res]
    if len(res) != len(outs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected {len(outs)} "
                           f"but got {len(res)})")
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    roots = {id(_root(a)): a for a in args if isinstance(a, Tensor)}
    for i, (o, t) in enumerate(zip(outs, res)):
        if not isinstance(o, Tensor):
            continue
        if id(o) in nondiff_ids or not o.dtype.is_floating_point:
            if t is not None:
                raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but  the corresponding "
                                   "forward output is not a differentiable Tensor.You should return None at that "
                                   "position instead.")
            continue
        if t is None:
            continue
        if tuple(t.shape) != tuple(o.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(o.shape)} while the given "
                               f"forward gradient is of size {list(t.shape)}.")
        if id(o) in dirty_ids:
            _set_dirty_output_tangent(o, t, id(o) in input_ids, versions.get(id(o)))
            continue
        matching = roots.get(id(_root(o))) if o._base is not None else None
        matching_t = tangent_of(matching) if matching is not None else None
        if matching_t is not None:
            if t._base is None:
                raise RuntimeError("A custom Function's forward is returning a view (or an input as-is) but the jvp "
                                   "is not returning a view.")
            if matching_t._base is not None and _root(matching_t) is not _root(t):
                raise RuntimeError("A custom Function is returning a view but the jvp is not returning a view of the "
                                   "same base as the given grad input.")
            if matching_t._base is None and _root(t) is not matching_t:
                raise RuntimeError("A custom Function is returning a view but the jvp is not returning a view of the "
                                   "given grad input.")
        elif tangent_of(o) is not None:  # a tangent made inside the forward (make_dual there), as torch
            raise RuntimeError("Only inplace operations can re-set the forward grad of a Tensor that already has one.")
        set_tangent(o, t)


def _set_dirty_output_tangent(o, t, is_input, recorded):
    if not is_input:
        raise RuntimeError("Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not an input, there "
                           "is no need to pass it to mark_dirty().")
    if recorded is None:  # the input had no tangent: the returned one becomes its tangent, as an in-place op's
        write_inplace_tangent(o, t)
        return
    tangent, version = recorded
    if t._vc[0] == version:
        raise RuntimeError("An inplace custom Function is not modifying the forward mode gradients inplace. If the "
                           "forward is modifying an input inplace, then the jvp function must modify the corresponding "
                           "gradient inplace.")
    if t is not tangent:
        raise RuntimeError("An inplace custom Function is not returning the forward mode gradients as-is. If the "
                           "forward is modifying an input inplace, then the jvp function must modify the gradient "
                           "inplace and return it as-is.")
