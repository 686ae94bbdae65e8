"""Checks shared by every generated in-place op (``add_``, ``mul_``, ...)."""
from derivgen.core.grad_mode import enable_grad, is_grad_enabled
from derivgen.core.node import rebase_history
from derivgen.core.pending import LIVE, flush
from derivgen.core.registry import aten
from derivgen.engine.copyslices import CopySlices


def check_inplace(t):
    if LIVE:
        # deferred values read their inputs when computed: compute them before this write
        flush()
    if not is_grad_enabled():
        return
    if t.grad_fn is None and t._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if t._base is None:
        return
    chain = view_chain(t)
    base = chain[0] if chain is not None else t._base
    if base.requires_grad:
        if base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        if chain is None:
            raise RuntimeError("derivgen: this view cannot be modified in place (it does not record how it was "
                               "made from its base); apply the operation out of place.")


def inplace_target(args, kwargs):
    """The tensor an in-place op writes into: its first argument."""
    if args:
        return args[0]
    return kwargs.get("self", kwargs.get("input"))


def write_inplace(t, result):
    """Write an out-of-place forward's ``result`` into ``t`` (same shape; cast to ``t``'s dtype)."""
    if result.shape != t._array.shape:
        raise RuntimeError(f"output with shape {list(t._array.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    t._array[...] = result


def commit_inplace(t, out):
    """Make ``t`` the result ``out`` of a functional row computed from it (``squeeze_``, ``zero_``,
    ``fill_``): the data is written through (views of ``t`` see it) or, for a metadata-only change of
    shape, rebound; the history is rewritten to ``out``'s node and the version bumped when data changed."""
    if out._array.shape == t._array.shape:
        if out._array is not t._array and not _same_memory(out._array, t._array):
            t._array[...] = out._array
            t._vc[0] += 1
    else:
        t._array = out._array
    if out.grad_fn is not None:
        set_inplace_history(t, out.grad_fn, out.output_nr)
    if _tangent_commit[0] is not None and getattr(out, "_fw_grads", None):
        _tangent_commit[0](t, out)  # forward mode: ``t`` takes the result's tangent with its value
    return t


# Forward mode registers here how a committed result hands its tangent to ``t`` (written through into
# t's tangent, or its base's, so views and bases stay aliased as torch's tangents are).
_tangent_commit = [None]


def set_tangent_commit(fn):
    _tangent_commit[0] = fn


def _same_memory(a, b):
    return a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.strides == b.strides


# ---- views: how to replay them from their base, and CopySlices --------------------------------------------

_VIEWS = {}  # id(view) -> (weakref to the view, row function, positional args, keyword args)


def record_view(view, base, fn, args, kwargs):
    """Remember that ``view = fn(base, *args, **kwargs)`` (generated view rows call this)."""
    import weakref
    key = id(view)
    _VIEWS[key] = (weakref.ref(view, lambda _r, k=key: _VIEWS.pop(k, None)), fn, args, kwargs)


def view_chain(t):
    """``[root, (fn, args, kwargs), ...]`` replaying ``t`` from the tensor that owns its memory, or None."""
    steps = []
    cur = t
    while cur._base is not None:
        entry = _VIEWS.get(id(cur))
        if entry is None or entry[0]() is not cur:
            return None
        steps.append(entry[1:])
        cur = cur._base
    return [cur] + steps[::-1]


def set_inplace_history(t, fn, output_nr=0):
    """After an in-place op with node ``fn`` wrote into ``t``: a plain tensor becomes output ``output_nr``
    of ``fn`` (rebase_history); a view instead gives its base a CopySlices node wrapping ``fn``, and gets
    its own grad_fn back by replaying its view ops on the base (SelectBackward0 -> CopySlices, as torch)."""
    chain = view_chain(t) if t._base is not None else None
    if chain is None:
        rebase_history(t, fn, output_nr)
        return
    root = chain[0]
    rebase_history(root, CopySlices(root, t, fn), 0)
    with enable_grad():
        if root._array.flags.c_contiguous:  # torch regenerates a CPU view's grad_fn as as_strided of its base
            item = t._array.itemsize
            offset = (t._array.__array_interface__["data"][0] - root._array.__array_interface__["data"][0]) // item
            v = aten.as_strided_default(root, t._array.shape, tuple(s // item for s in t._array.strides), offset)
        else:  # replay the view ops on the base
            v = root
            for f, args, kwargs in chain[1:]:
                v = f(v, *args, **kwargs)
    rebase_history(t, v.grad_fn, v.output_nr)
