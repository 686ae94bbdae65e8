"""How a view was made (torch's ``CreationMeta``) and the in-place changes that this forbids.

Every view (a tensor with a ``_base``, which is always the root tensor owning the memory, as torch's) keeps
an entry in its ``_view`` slot: how to replay it from that root (when generated view rows made every step),
its creation meta and the version of its memory when its ``grad_fn`` was last set. A view whose creation
meta is not DEFAULT is a ``RecordedView``: torch refuses to rebuild its history, so

- an in-place op on it that autograd would record raises (``check_view_meta``), and
- once its memory was written by anyone else (its version moved on), reading its ``grad_fn`` raises,
  as torch's lazy regeneration of a view's grad_fn does (``RecordedView.grad_fn``).

Plain DEFAULT views stay plain Tensors: they cost no property on the per-op path.
"""
import enum
import weakref

from derivgen.core.grad_mode import _state as _grad_mode_state
from derivgen.core.grad_mode import inference_contexts as _inference_contexts
from derivgen.core.node import forward_op_name
from derivgen.core.tensor import Tensor


class CreationMeta(enum.IntEnum):
    DEFAULT = 0
    IN_CUSTOM_FUNCTION = 1
    MULTIPLE_VIEW = 2
    NO_GRAD_MODE = 3
    INFERENCE_MODE = 4


# the members as plain globals for the per-view path (reading an enum member off its class costs
# about 50 ns, a few times per view)
_DEFAULT, _MULTIPLE_VIEW = CreationMeta.DEFAULT, CreationMeta.MULTIPLE_VIEW
_NO_GRAD_MODE, _INFERENCE_MODE = CreationMeta.NO_GRAD_MODE, CreationMeta.INFERENCE_MODE


# A view's entry, in its ``_view`` slot: [row function or None, positional args, keyword args, CreationMeta,
#   version of the view's memory when its grad_fn was last set,
#   the (fn, args, kwargs) steps from the root to the tensor the last step applies to, or None]
# The steps are captured when the view is made (torch's view_fn): a later in-place view op on an
# intermediate view does not change how its earlier views replay. The root's ``_live_views`` slot lists
# its views at any depth, weakly.
_FN, _ARGS, _KWARGS, _META, _VERSION, _PREFIX = range(6)
_VIEW_SLOT = Tensor.__dict__["_view"]
_LIVE_VIEWS_SLOT = Tensor.__dict__["_live_views"]


class LiveViews:
    """The views of one root, as weak references by id. Dead ones are dropped when the table has doubled
    since the last sweep rather than by a callback per view: a view then costs one weak reference and one
    dict entry, and a root viewed once per step keeps at most twice its live views."""
    __slots__ = ("refs", "sweep_at")

    def __init__(self):
        self.refs = {}
        self.sweep_at = 16

    def add(self, view):
        refs = self.refs
        key = id(view)
        refs.pop(key, None)  # a dead view's id, reused: the new view goes last, in the order views are made
        refs[key] = weakref.ref(view)
        if len(refs) > self.sweep_at:
            for key in [k for k, ref in refs.items() if ref() is None]:
                del refs[key]
            self.sweep_at = max(16, 2 * len(refs))

    def alive(self):
        """The live views, in the order they were made."""
        return [v for v in (ref() for ref in list(self.refs.values())) if v is not None]


def view_entry(t):
    """The entry of the view ``t``, or None."""
    try:
        return _VIEW_SLOT.__get__(t)
    except AttributeError:
        return None


def live_views(root):
    """The live views of ``root`` (the tensor owning their memory), at any depth."""
    try:
        return _LIVE_VIEWS_SLOT.__get__(root).alive()
    except AttributeError:
        return []


def register_view(view, base, fn=None, args=(), kwargs=None, meta=CreationMeta.DEFAULT):
    """Record ``view`` (``fn(base, *args, **kwargs)`` when a row made it) and list it under its root,
    weakly, making the root its ``_base``. The root outlives its views (``_base`` holds it)."""
    root = base._base
    if root is None:
        root, prefix = base, ()
    else:
        parent = view_entry(base)
        if parent is None or parent[_FN] is None or parent[_PREFIX] is None:
            prefix = None
        else:
            prefix = parent[_PREFIX] + ((parent[_FN], parent[_ARGS], parent[_KWARGS]),)
    view._base = root
    view._view = [fn, args, kwargs, meta, view._vc[0], prefix]
    try:
        live = _LIVE_VIEWS_SLOT.__get__(root)
    except AttributeError:
        live = root._live_views = LiveViews()
    live.add(view)
    if meta is not _DEFAULT and view.__class__ is Tensor:
        view.__class__ = RecordedView


def mode_meta(base, multiple=False):
    """The creation meta of a view of ``base`` made now: torch's choice from the grad mode, carried over
    from a base that is itself a view made in no_grad or inference mode (``propagate_creation_meta``)."""
    if _inference_contexts[0] != 0 and _grad_mode_state.inference:
        new = _INFERENCE_MODE
    elif not _grad_mode_state.enabled:
        new = _NO_GRAD_MODE
    else:
        new = _MULTIPLE_VIEW if multiple else _DEFAULT
    if base._base is None:
        return new
    entry = view_entry(base)
    prev = entry[_META] if entry is not None else _DEFAULT
    if new is _DEFAULT or prev is _INFERENCE_MODE:
        return prev
    return new


def set_creation_meta(view, meta):
    """Give ``view`` (whose ``_base`` is set) creation meta ``meta`` (a custom Function's outputs that are
    views become IN_CUSTOM_FUNCTION, as torch marks them)."""
    entry = view_entry(view)
    if entry is None:
        register_view(view, view._base, meta=meta)
        return
    entry[_META] = meta
    if meta is not CreationMeta.DEFAULT and view.__class__ is Tensor:
        view.__class__ = RecordedView


def view_steps(t):
    """``[root, (fn, args, kwargs), ...]`` replaying the view ``t`` from its root, or None when a step was not
    made by a view row (a custom Function's output, a multi-output view op)."""
    entry = view_entry(t)
    if entry is None or entry[_FN] is None or entry[_PREFIX] is None:
        return None
    return [t._base, *entry[_PREFIX], (entry[_FN], entry[_ARGS], entry[_KWARGS])]


def append_view_step(t, fn, args, kwargs):
    """An in-place view op turned the view ``t`` into ``fn(t, *args, **kwargs)``: replays add that step."""
    entry = view_entry(t)
    if entry is None:
        return
    if entry[_FN] is not None and entry[_PREFIX] is not None:
        entry[_PREFIX] = entry[_PREFIX] + ((entry[_FN], entry[_ARGS], entry[_KWARGS]),)
        entry[_FN], entry[_ARGS], entry[_KWARGS] = fn, args, kwargs
    else:
        entry[_FN] = None


def creation_meta(view):
    entry = view_entry(view)
    return entry[_META] if entry is not None else CreationMeta.DEFAULT


_GRAD_FN_SLOT = Tensor.__dict__["grad_fn"]
_REQUIRES_GRAD_SLOT = Tensor.__dict__["_requires_grad"]


def check_view_meta(t):
    """Raise torch's error when ``t`` is a view autograd may not record an in-place change of (torch's
    ``handle_view_on_rebase`` for the view being written)."""
    if t.__class__ is RecordedView:
        entry = view_entry(t)
        if entry is not None:
            raise RuntimeError(view_error(t, entry[_META], _GRAD_FN_SLOT.__get__(t), indirect=False))


class RecordedView(Tensor):
    """A view whose creation meta is not DEFAULT (see the module docstring). Reading ``grad_fn`` raises once
    the view's memory was written after its grad_fn was set, if the view takes part in autograd."""
    __slots__ = ()

    @property
    def grad_fn(self):
        fn = _GRAD_FN_SLOT.__get__(self)
        if fn is None and not self._base.requires_grad:
            return None
        entry = view_entry(self)
        if entry is not None and entry[_VERSION] != self._vc[0]:
            raise RuntimeError(view_error(self, entry[_META], fn, indirect=True))
        return fn

    @grad_fn.setter
    def grad_fn(self, fn):
        _GRAD_FN_SLOT.__set__(self, fn)
        entry = view_entry(self)
        if entry is not None:  # as torch's set_gradient_edge: the history now matches the data
            entry[_VERSION] = self._vc[0]

    @property
    def _requires_grad(self):
        # ops on the view record history when its base requires grad, as torch's ``requires_grad()`` of a
        # view; the gradient for it goes nowhere unless the view itself was flagged (``grad_accumulator``
        # reads the flag alone, as torch gives such a view no accumulator)
        return _REQUIRES_GRAD_SLOT.__get__(self) or self._base.requires_grad

    @_requires_grad.setter
    def _requires_grad(self, flag):
        _REQUIRES_GRAD_SLOT.__set__(self, flag)


def _node_label(fn):
    # a custom Function's node is named by its Function (``Output 0 of MyFn``); other nodes by their
    # forward op, as torch 2.13 names them (``Output 0 of Split``)
    function = getattr(type(fn), "_forward_cls", None)
    return function.__name__ if function is not None else forward_op_name(fn.name())


def view_error(view, meta, fn, indirect):
    """torch's ``handle_view_on_rebase`` message for ``view`` (``indirect``: its base or another view of its
    base was written, rather than the view itself)."""
    modified = "its base or another view of its base has been" if indirect else "is being"
    if meta in (CreationMeta.INFERENCE_MODE, CreationMeta.NO_GRAD_MODE) or fn is None:
        if fn is not None:
            prefix = f"Output {view.output_nr} of {_node_label(fn)} is a view of a view which was created in"
        else:
            prefix = "A view was created in"
        if meta is CreationMeta.INFERENCE_MODE:
            msg = f"{prefix} inference mode and {modified} modified inplace in normal mode."
        else:  # without a grad_fn the view was made in no_grad mode, whatever its meta
            msg = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        msg = f"Output {view.output_nr} of {_node_label(fn)} is a view and {modified} modified inplace."
    return msg + _REASONS[meta]


_REASONS = {
    CreationMeta.MULTIPLE_VIEW: (
        " This view is the output of a function that returns multiple views. Such functions do not allow the output "
        "views to be modified inplace. You should replace the inplace operation by an out-of-place one."),
    CreationMeta.NO_GRAD_MODE: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
        "both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
        "tracked) or both outside (if you want the inplace to be tracked)."),
    CreationMeta.INFERENCE_MODE: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
        "both the view and the inplace either both inside the inference_mode block (if you don't want the inplace to "
        "be tracked) or both outside (if you want the inplace to be tracked)."),
    CreationMeta.IN_CUSTOM_FUNCTION: (
        " This view was created inside a custom Function (or because an input was returned as-is) and the autograd "
        "logic to handle view+inplace would override the custom backward associated with the custom Function, "
        "leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the "
        "custom Function."),
}
