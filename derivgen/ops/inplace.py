"""Checks shared by every generated in-place op (``add_``, ``mul_``, ...)."""
from derivgen.core.grad_mode import enable_grad, is_grad_enabled, is_inference_mode_enabled
from derivgen.core.node import forward_op_name, rebase_history
from derivgen.core.pending import LIVE, flush
from derivgen.core.registry import aten
from derivgen.engine.copyslices import CopySlices
from derivgen.core.sizes import has_internal_overlap
from derivgen.core.tensor import Tensor


def check_inplace(t):
    if LIVE:
        # deferred values read their inputs when computed: compute them before this write
        flush()
    if 0 in t._array.strides and has_internal_overlap(t._array):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    grad_enabled = is_grad_enabled()
    if grad_enabled and t.grad_fn is None and (t._requires_grad or (t._inference and t.requires_grad)):
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if t._inference and not is_inference_mode_enabled():
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make "
                           "a clone to get a normal tensor before doing inplace update.See "
                           "https://github.com/pytorch/rfcs/pull/17 for more details.")
    if not grad_enabled:
        return
    if t._base is None:
        return
    if t.requires_grad:
        check_forbidden_view(t)
    chain = view_chain(t)
    base = chain[0] if chain is not None else t._base
    if base.requires_grad:
        if base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        if chain is None:
            raise RuntimeError("derivgen: this view cannot be modified in place (it does not record how it was "
                               "made from its base); apply the operation out of place.")


def original_self(t):
    """What an in-place op saves of the tensor it overwrites (torch's ``original_self = self.clone()``):
    a copy, differentiable when ``t`` requires grad so that double backward reaches ``t``'s history."""
    if t.grad_fn is not None or t._requires_grad:
        return t.clone()
    from derivgen.core.tensor import Tensor
    return Tensor._make(t._array.copy())


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
    # strides first: comparing them is cheap, reading the data addresses builds two dicts
    return a.strides == b.strides and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]


# ---- views: how to replay them from their base, and CopySlices --------------------------------------------

_VIEWS = {}  # id(view) -> (weakref to the view, row function, positional args, keyword args)
_VIEWS_OF_ROOT = {}  # id(root) -> {id(view): weakref to the view}: the live views of each base, at any depth


def record_view(view, base, fn, args, kwargs):
    """Remember that ``view = fn(base, *args, **kwargs)`` (generated view rows call this)."""
    if base._inference:  # a view of an inference tensor is one, wherever it is made
        view._inference = True
    _VIEWS[id(view)] = (_track_view(view, base), fn, args, kwargs)


def _root_of(t):
    while t._base is not None:
        t = t._base
    return t


def _track_view(view, base):
    """A weak reference to ``view`` listed under its root (the tensor owning the memory); it unlists the view
    when the view dies. The root outlives its views (``_base`` holds it), so its id stays its own meanwhile."""
    import weakref
    root = _root_of(base)
    key, root_key = id(view), id(root)

    def forget(_ref):
        _VIEWS.pop(key, None)
        views = _VIEWS_OF_ROOT.get(root_key)
        if views is not None:
            views.pop(key, None)
            if not views:
                del _VIEWS_OF_ROOT[root_key]

    ref = weakref.ref(view, forget)
    _VIEWS_OF_ROOT.setdefault(root_key, {})[key] = ref
    return ref


_FORBIDDEN_VIEWS = {}  # id(view) -> (weakref to the view, its error message)

_MULTI_VIEW_ERROR = ("Output {nr} of {node} is a view and is being modified inplace. This view is the output of a "
                     "function that returns multiple views. Such functions do not allow the output views to be "
                     "modified inplace. You should replace the inplace operation by an out-of-place one.")


def forbid_inplace_on_view(view, message):
    """Mark ``view`` as one torch refuses to modify in place when autograd would record it (torch's
    CreationMeta other than DEFAULT); ``message`` may name ``{nr}`` and ``{node}``."""
    import weakref
    key = id(view)
    text = message.format(nr=view.output_nr, node=view.grad_fn.name() if view.grad_fn is not None else "")
    _FORBIDDEN_VIEWS[key] = (weakref.ref(view, lambda _r, k=key: _FORBIDDEN_VIEWS.pop(k, None)), text)
    if view._base is not None and key not in _VIEWS_OF_ROOT.get(id(_root_of(view)), ()):
        _track_view(view, view._base)  # so that an in-place op on its base finds it (refresh_views)


def record_multi_output_views(outputs, base, node_name):
    """Mark the outputs of a view op returning several views (split, chunk, unbind): torch forbids an
    in-place op on them that autograd would have to record."""
    for nr, view in enumerate(outputs):
        view._base = base
        _track_view(view, base)
        if base._inference:
            view._inference = True
        # torch 2.13 names the forward op here (``Output 0 of Split``), as in its version-counter error
        forbid_inplace_on_view(view, _MULTI_VIEW_ERROR.replace("{nr}", str(nr)).replace("{node}",
                                                                                       forward_op_name(node_name)))


def check_forbidden_view(t):
    """Raise torch's error when ``t`` is a view that may not be modified in place (an output of a multi-view
    op, a view made inside a custom Function) and autograd records the in-place op."""
    entry = _FORBIDDEN_VIEWS.get(id(t))
    if entry is not None and entry[0]() is t:
        raise RuntimeError(entry[1])


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
    its own grad_fn back by replaying its view ops on the base (SelectBackward0 -> CopySlices, as torch).
    Either way the other live views of the base then take a grad_fn regenerated from the base's new history."""
    if t._base is not None:
        check_forbidden_view(t)
    chain = view_chain(t) if t._base is not None else None
    if chain is None:
        rebase_history(t, fn, output_nr)
        if t._base is None:
            refresh_views(t)
        return
    root = chain[0]
    rebase_history(root, CopySlices(root, t, fn), 0)
    _regenerate_view_grad_fn(t, root, chain)
    refresh_views(root, t)


def refresh_views(root, written=None):
    """Regenerate the grad_fn of every live view of ``root`` (but ``written``) from ``root``'s current history.

    torch does this lazily: a view whose version differs from the one its grad_fn was made at gets a new
    grad_fn (AsStridedBackward0, or its view ops replayed) when it is next read. Every in-place op that
    records history on a base moves that version for all its views, so regenerating them here, when the
    history changes, gives the same graphs; a view made before its base required grad gains a grad_fn."""
    views = _VIEWS_OF_ROOT.get(id(root))
    if not views:
        return
    for ref in list(views.values()):
        v = ref()
        if v is None or v is written or v._array.dtype != root._array.dtype or not _inside(v._array, root._array):
            continue
        if v.__class__ is _StaleView:
            continue
        forbidden = _FORBIDDEN_VIEWS.get(id(v))
        if forbidden is not None and forbidden[0]() is v and v.__class__ is Tensor:
            v.__class__ = _StaleView
            continue
        chain = view_chain(v)
        if chain is not None and chain[0] is not root:
            continue
        _regenerate_view_grad_fn(v, root, chain)


_GRAD_FN_SLOT = Tensor.__dict__["grad_fn"]


class _StaleView(Tensor):
    """A view torch refuses to rebuild (made inside a custom Function, or one of several views of one op)
    whose base was modified in place: reading its ``grad_fn`` (as any op using it does) raises torch's
    error, as torch's lazy regeneration does when it meets such a view. The text is the view's in-place
    refusal (``_FORBIDDEN_VIEWS``, kept while the view lives) told of its base instead."""
    __slots__ = ()

    @property
    def grad_fn(self):
        raise RuntimeError(_FORBIDDEN_VIEWS[id(self)][1].replace(
            "is a view and is being modified inplace.",
            "is a view and its base or another view of its base has been modified inplace."))

    @grad_fn.setter
    def grad_fn(self, fn):
        _GRAD_FN_SLOT.__set__(self, fn)


def _inside(view, root):
    """Whether ``view``'s first element still lies in ``root``'s memory (``set_`` or a shape change may have
    given either tensor other memory since the view was made)."""
    start = root.__array_interface__["data"][0]
    addr = view.__array_interface__["data"][0]
    return view.size == 0 or start <= addr < start + max(root.nbytes, 1)


def _regenerate_view_grad_fn(t, root, chain):
    with enable_grad():
        if root._array.flags.c_contiguous:  # torch regenerates a CPU view's grad_fn as as_strided of its base
            item = t._array.itemsize
            offset = (t._array.__array_interface__["data"][0] - root._array.__array_interface__["data"][0]) // item
            v = aten.as_strided_default(root, t._array.shape, tuple(s // item for s in t._array.strides), offset)
        elif chain is not None:  # replay the view ops on the base
            v = root
            for f, args, kwargs in chain[1:]:
                v = f(v, *args, **kwargs)
        else:
            return
    rebase_history(t, v.grad_fn, v.output_nr)
