"""The forward-mode observer: after each op call with a dual input, the output's tangent.

Registered with ``derivgen.core.observe`` only while a dual level is active. ``op_start`` collects the
tangents of the call's differentiable inputs (and keeps a copy of ``self`` for an in-place op);
``op_end`` applies the row's rule from ``derivgen.generated.jvp`` and stores the tangent on the result.
A missing tangent among several inputs counts as zeros. The tangent's own computation runs with the
observer paused on this thread (its Tensor ops must not compute tangents of tangents).
"""
import threading
import weakref

import numpy as np

from derivgen.core import observe as _observe
from derivgen.core.node import SavedVariable
from derivgen.core.tensor import Tensor
from derivgen.generated import jvp as _jvp
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
    op = _jvp.OP_NAMES.get(fn_name, fn_name)
    return NotImplementedError(
        f"Trying to use forward AD with {op} that does not support it because it has not been implemented yet.\n"
        "Please file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template=feature-"
        "request.yml so that we can prioritize its implementation or submit a PR adding the implementation to "
        "derivatives.yaml")


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
        if row != fn_name:  # in-place: the rule needs self as it was before the op wrote into it
            original = Tensor._make(kwargs["self"]._array.copy())
        return _Call(row, kwargs, tangents, original)

    def op_end(self, token, result):
        if token is None or result is None:
            return
        with paused():
            tangent = _compute(token, result)
        if tangent is None:
            return
        if isinstance(result, (list, tuple)):  # a list of outputs (split, unbind): one tangent each
            for r, t in zip(result, tangent):
                if t is not None:
                    set_tangent(r, t)
        elif token.original_self is not None:
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


def _commit(t, out):
    """``ops.inplace.commit_inplace``'s hook: a row computed out of place (``copy_``, ``squeeze_``,
    ``fill_``) hands its result's tangent to ``t``."""
    new = tangent_of(out)
    if new is None:
        return
    if new._array.shape == t._array.shape:
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
    for name in getattr(type(node), "__slots__", ()):
        if name.startswith("_sv_"):
            sv = getattr(node, name, None)
            if isinstance(sv, SavedVariable) and sv.is_output and sv._array is result._array:
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
    if rule[0] == "kernel":
        _, kernel, arrays, numbers = rule
        # an elementwise kernel broadcasts: a missing tangent is a 0-dim zero, not a full array of zeros
        for arg in diff:
            if arg not in call.tangents and isinstance(kwargs.get(arg), Tensor):
                kwargs[f"{arg}_t"] = np.zeros((), kwargs[arg]._array.dtype)
        arrs = [_array_of(kwargs[a]) for a in arrays]
        out = kernel(arrs, tuple(kwargs[n] for n in numbers))
        dtype = result._array.dtype
        out = np.asarray(out)
        if out.dtype != dtype or out.shape != result._array.shape:
            out = np.broadcast_to(out, result._array.shape).astype(dtype)
        return Tensor._make(out)
    tangent = rule[1](result=result, **kwargs)
    if isinstance(result, (list, tuple)):
        return tangent
    if tangent is not None and tangent.dtype != result.dtype and tangent.dtype.is_floating_point:
        tangent = tangent.to(result.dtype)
    return tangent


def _array_of(v):
    if isinstance(v, Tensor):
        return v._array
    return np.asarray(v)


def has_tangents(args):
    """Whether a dual level is active and one of ``args`` carries a tangent."""
    return level >= 0 and any(isinstance(a, Tensor) and tangent_of(a) is not None for a in args)


def custom_function_jvp(user_jvp, ctx, args, outs):
    """Forward mode through ``autograd.Function``: the user's ``jvp(ctx, *tangents)`` (zeros for a floating
    Tensor input without a tangent, None for other arguments; ``ctx.saved_tensors`` gives what the forward
    passed to ``ctx.save_for_forward``), one tangent per Tensor output. ``user_jvp`` is None when the
    Function defines no jvp. The tangents must alias as the outputs do (``_check_jvp_result``)."""
    if user_jvp is None:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")
    tangents = [(tangent_of(a) if tangent_of(a) is not None else _zeros(a))
                if isinstance(a, Tensor) and a.dtype.is_floating_point else None for a in args]
    versions = [t._version if t is not None else None for t in tangents]
    ctx._in_jvp = True
    try:
        with paused():
            res = user_jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
    res = list(res) if isinstance(res, tuple) else [res]
    if len(res) != len(outs):
        raise RuntimeError(f"jvp() returned an incorrect number of gradients (expected {len(outs)}, got {len(res)})")
    nondiff = set(getattr(ctx, "_nondiff_outputs", ()))
    dirty = {id(t) for t in getattr(ctx, "dirty_tensors", ())}
    for i, (o, t) in enumerate(zip(outs, res)):
        if not isinstance(o, Tensor):
            continue
        if i in nondiff or not o.dtype.is_floating_point:
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
        _check_jvp_result(o, t, args, tangents, versions, id(o) in dirty)
        set_tangent(o, t)


def _check_jvp_result(out, tangent, args, tangents, versions, is_dirty):
    """torch's aliasing rules for a custom Function's tangents: an input modified in place (mark_dirty) has
    its tangent modified in place; an output that is a view of an input (or the input returned as-is) gets
    a tangent that is a view of that input's tangent (or of its tangent's base, when the output's forward
    base is the input's base)."""
    if is_dirty:
        k = next((k for k, a in enumerate(args) if a is out), None)
        if k is not None and tangents[k] is not None and tangents[k]._version == versions[k]:
            raise RuntimeError("An inplace custom Function is not modifying the forward mode gradients inplace. If "
                               "the forward is modifying an input inplace, then the jvp function must modify the "
                               "corresponding gradient inplace.")
        return
    base = _forward_base(out)
    if base is out:
        return
    if tangent._base is None:
        raise RuntimeError("A custom Function's forward is returning a view (or an input as-is) but the jvp is not "
                           "returning a view.")
    for k, a in enumerate(args):
        if tangents[k] is None:
            continue
        if a is base:
            if _root(tangent) is not _root(tangents[k]):
                raise RuntimeError("A custom Function is returning a view but the jvp is not returning a view of the "
                                   "given grad input.")
            return
        if _forward_base(a) is base:
            if _root(tangent) is not _root(tangents[k]):
                raise RuntimeError("A custom Function is returning a view but the jvp is not returning a view of the "
                                   "same base as the given grad input.")
            return


def _forward_base(t):
    """The furthest base of view ``t`` that is still forward-differentiable (has a tangent): make_dual's view
    of a primal without a tangent is a base of its own, as in torch's forward view tracking."""
    while t._base is not None and tangent_of(t._base) is not None:
        t = t._base
    return t if t._base is None or tangent_of(t) is not None else t._base


def _root(t):
    while t._base is not None:
        t = t._base
    return t
