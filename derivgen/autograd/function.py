"""``derivgen.autograd.Function``: user-defined ops with a hand-written backward, as in torch.

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            y, = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)          # y.grad_fn is an ExpBackward node (the ctx itself), no index

As in torch, the ctx *is* the backward node: a ``<Name>Backward`` subclass of
``derivgen.core.node.Node`` made for each Function class. It takes a sequence number when ``apply``
starts (before the forward runs), has one edge per Tensor argument, one input per forward output, and sits
in the engine like a generated node: ``_apply_fast`` wraps the incoming arrays as Tensors for the user's
``backward`` (grad mode off), ``_apply_graph`` passes Tensors with grad mode on (``create_graph=True``), so
a backward written with differentiable ops can be differentiated again.
"""
import functools
import inspect
import warnings

import numpy as np

from derivgen.autograd import _forward_rules
from derivgen.core.grad_mode import is_grad_enabled, no_grad
from derivgen.core.node import ERR_BACKWARD_TWICE, Node, SavedVariable, gradient_edge
from derivgen.core.tensor import Tensor, bump_version, shared_version
from derivgen.ops.inplace import check_inplace, set_inplace_history
from derivgen.ops.view_meta import CreationMeta, set_creation_meta

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable", "InplaceFunction",
           "NestedIOFunction"]


class FunctionCtx:
    """The ``ctx`` methods a forward uses (mixed into each ``<Name>Backward`` node class)."""
    __slots__ = ()

    def save_for_backward(self, *tensors):
        """Save Tensors (or None) for ``backward``; read them back with ``ctx.saved_tensors``. They are
        version-checked on unpack and freed after backward unless ``retain_graph=True``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self.to_save = tensors

    def mark_dirty(self, *args):
        """Declare inputs the forward modified in place (they must also be returned)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Declare outputs that get no gradient (``requires_grad=False``; backward still receives a
        gradient slot for them: zeros, or None without materialization)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """With True (the default) undefined output gradients reach ``backward`` as zeros; with False,
        as None."""
        self.materialize_grads = bool(value)

    def save_for_forward(self, *tensors):
        """Save Tensors (or None) for ``jvp``, where ``ctx.saved_tensors`` gives them back."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you should save "
                                     "non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors


class BackwardCFunction(FunctionCtx, Node):
    """Base of every ``<Name>Backward`` node class (torch's ``BackwardCFunction``)."""
    _forward_cls = None

    # ---- the ctx surface ---------------------------------------------------------------------------
    @property
    def saved_tensors(self):
        if self.__dict__.get("_in_jvp"):  # in the user's jvp: what the forward gave save_for_forward
            return tuple(self.__dict__.get("saved_for_forward", ()))
        saved = self.__dict__.get("_saved")
        if saved is None:
            if "to_save" in self.__dict__:  # read during forward: torch returns what was given
                return tuple(self.to_save)
            return ()
        clear_on_access = self._forward_cls.clear_saved_tensors_on_access
        if clear_on_access and self.__dict__.get("_saved_accessed"):
            raise RuntimeError("saved_tensors can only be accessed once when clear_saved_tensors_on_access=True "
                               "is set on the autograd.Function. Either access saved_tensors only once, or set "
                               "clear_saved_tensors_on_access=False.")
        tensors = tuple(None if sv is None else sv.unpack(self) for sv in saved)
        if clear_on_access:
            # the caller's references become the only ones, so each tensor can be freed as soon as it drops it
            self._saved_accessed = True
            for sv in saved:
                if sv is not None:
                    sv.release()
        return tensors

    saved_variables = saved_tensors

    @property
    def _raw_saved_tensors(self):
        """The SavedVariables behind ``saved_tensors`` (hooks can be registered on each), a placeholder
        standing for each ``None`` that was saved."""
        if getattr(self, "_released", False):
            raise RuntimeError(ERR_BACKWARD_TWICE)
        saved = self.__dict__.get("_saved") or ()
        return tuple(_SAVED_NONE if sv is None else sv for sv in saved)

    def apply(self, *grads):
        """torch's ``ctx.apply(*grads)``: run the user's backward."""
        return self._user_backward()(self, *grads)

    def _user_backward(self):
        """The user's ``backward``, or ``vjp`` when that is what the Function defines (not both)."""
        cls = self._forward_cls
        has_backward = cls.backward is not Function.backward
        has_vjp = cls.vjp is not Function.vjp
        if has_backward and has_vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
                               "should only implement one of them.")
        return cls.vjp if has_vjp else cls.backward

    # ---- the node surface --------------------------------------------------------------------------
    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__qualname__} object at {hex(id(self))}>"

    def _release_variables(self):
        saved = self.__dict__.get("_saved")
        if saved:
            for sv in saved:
                if sv is not None:
                    sv.release()
        self._released = True

    def _apply_fast(self, grads, needs):
        wrapped = [None if g is None else Tensor._make(g) for g in self._materialize(grads, False)]
        # views: a user's backward may return arrays it does not own (a saved tensor, a global), which the
        # engine must never sum into in place or hand to a leaf's .grad without a copy
        return [None if r is None else np.asarray(r._array).view() for r in self._run_backward(wrapped)]

    def _apply_graph(self, grads, needs):
        return self._run_backward(self._materialize(grads, True))

    def _materialize(self, grads, graph):
        if not self.materialize_grads:
            return list(grads)
        out = list(grads)
        # torch's ctx._materialize_non_diff_grads = False leaves None for outputs marked non-differentiable
        keep_none = () if getattr(self, "_materialize_non_diff_grads", True) else \
            getattr(self, "_nondiff_outputs", ())
        for i, g in enumerate(out):
            meta = self._out_meta[i]
            if g is None and meta is not None and i not in keep_none:
                z = np.zeros(meta[0], meta[1])
                out[i] = Tensor._make(z) if graph else z
        return out

    def _run_backward(self, grads):
        """Call the user's backward; check and return one gradient per Tensor argument (torch's
        PyNode::apply)."""
        res = self._user_backward()(self, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        is_tensor = self._is_tensor_input
        n = len(is_tensor)
        if len(res) > n and all(r is None for r in res[n:]):
            res = res[:n]
        if len(res) != n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients (expected {n}, "
                               f"got {len(res)})")
        out = []
        for i, r in enumerate(res):
            if not is_tensor[i]:
                if r is not None:
                    raise RuntimeError(f"function {self.name()} returned a gradient different than None at position "
                                       f"{i + 1}, but the corresponding forward input was not a Variable")
                continue
            if r is not None and not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
            out.append(r)
        return out


class _SavedNone:
    """What ``_raw_saved_tensors`` shows for a ``None`` given to ``save_for_backward``: there is no value
    for hooks to pack."""

    def register_hooks(self, pack_hook, unpack_hook):
        raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")


_SAVED_NONE = _SavedNone()


class FunctionMeta(type):
    """Gives each Function subclass its node class ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": BackwardCFunction.__module__})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class for custom differentiable operations: define static ``forward(ctx, *args)`` and
    ``backward(ctx, *grad_outputs)`` (or ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``),
    and call ``YourFunction.apply(*args)``."""

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, "
                      "so you should invoke them on the class itself. Instantiating an autograd function will raise "
                      "an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    # when True, the first read of ``ctx.saved_tensors`` drops the node's references to them (a second raises)
    clear_saved_tensors_on_access = False
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the vmap "
                                  "staticmethod or set generate_vmap_rule=True.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if cls.setup_context is not Function.setup_context:
            # as torch: setup_context sees every input of forward, its defaults filled in
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        ctx = cls._backward_cls.__new__(cls._backward_cls)
        ctx._init_node((), (), ())  # the sequence number is taken before the forward runs, as in torch
        is_tensor = tuple(isinstance(a, Tensor) for a in args)
        needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        executable = is_grad_enabled() and any(needs)
        ctx._is_tensor_input = is_tensor
        ctx.needs_input_grad = needs
        ctx.materialize_grads = True
        ctx.to_save = ()
        ctx.dirty_tensors = ()
        ctx.non_differentiable = ()

        forward_ad = _forward_rules.has_tangents(args) and not _forward_rules.is_paused()
        # as torch, the forward (and setup_context) runs with forward-mode tracking off: its ops compute no
        # tangents and see none; the outputs' tangents come from the Function's jvp
        with no_grad(), _forward_rules.paused():
            if cls.setup_context is Function.setup_context:
                outputs = cls.forward(ctx, *args, **kwargs)
            else:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)

        single = not isinstance(outputs, tuple)
        outs = [outputs] if single else list(outputs)
        input_ids = {id(a) for a in args if isinstance(a, Tensor)}
        dirty_ids = {id(t) for t in ctx.dirty_tensors}
        nondiff_ids = {id(t) for t in ctx.non_differentiable}
        for t in ctx.dirty_tensors:
            bump_version(t)
        out_ids = {id(o) for o in outs}
        if any(id(t) not in out_ids for t in ctx.dirty_tensors):
            raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                               "The inputs that are modified inplace must all be outputs of the Function.")

        if executable:
            tensor_args = [a for a in args if isinstance(a, Tensor)]
            ctx._next = tuple(gradient_edge(a) for a in tensor_args)
            ctx._in_meta = tuple((a._array.shape, a._array.dtype) for a in tensor_args)
        ctx._out_meta = tuple((o._array.shape, o._array.dtype) if isinstance(o, Tensor) else None for o in outs)
        ctx._n_inputs = len(outs)
        ctx._nondiff_outputs = tuple(i for i, o in enumerate(outs) if id(o) in nondiff_ids)
        for i, o in enumerate(outs):
            if isinstance(o, Tensor):
                outs[i] = _set_history(ctx, o, i, executable, len(outs), id(o) in input_ids, id(o) in dirty_ids,
                                       id(o) not in nondiff_ids)

        if executable:
            saved = []
            for t in ctx.to_save:
                saved.append(None if t is None else SavedVariable(t, is_output=t.grad_fn is ctx))
            ctx._saved = saved
        del ctx.to_save
        if forward_ad:
            _forward_rules.custom_function_jvp(cls.jvp if cls.jvp is not Function.jvp else None, ctx, args, outs,
                                               dirty_ids, nondiff_ids)
        return outs[0] if single else tuple(outs)


def _alias(t):
    """A new Tensor over the same data and version counter (torch's ``view_as(self)``)."""
    a = Tensor._make(t._array, vc=shared_version(t))
    a._base = t if t._base is None else t._base  # a view's base is the root, as torch's
    return a


def _set_history(ctx, var, nr, executable, n_outputs, is_input, is_dirty, differentiable):
    """torch's ``_wrap_outputs`` for one Tensor output."""
    differentiable = executable and differentiable and var.dtype.is_floating_point
    if not differentiable:
        if not var.requires_grad:
            out = _alias(var) if is_input and not is_dirty else var
            if out._base is not None and not is_dirty:  # torch marks the view even when nothing requires grad
                set_creation_meta(out, CreationMeta.IN_CUSTOM_FUNCTION)
            return out
        if is_input:
            return _alias(var)
        var.grad_fn = None
        var._requires_grad = False
        return var
    if is_dirty:
        if var.grad_fn is None and var._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        if not is_input:
            message = ("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been "
                       "mutated should be passed to ctx.mark_dirty().")
            if var._base is not None:  # a view of an intermediate: there is no history of its base to rewrite
                raise RuntimeError(message)
            warnings.warn(message)
        if var._base is not None:
            check_inplace(var)  # a view of a leaf, an output of a multi-view op: torch's in-place errors
            if n_outputs > 1:
                raise RuntimeError(_DIRTY_VIEW_MULTI_OUTPUT_ERROR)
        var._grad = None
        var._hooks = None
        # a dirty view rewrites its base's history (CopySlices wrapping this node), as any in-place op on a view
        set_inplace_history(var, ctx, nr)
        return var
    if is_input:
        var = _alias(var)
    var.grad_fn = ctx
    var.output_nr = nr
    var._requires_grad = False
    if var._base is not None:  # a view made inside forward (or an input returned as-is)
        set_creation_meta(var, CreationMeta.IN_CUSTOM_FUNCTION)
    return var


_DIRTY_VIEW_MULTI_OUTPUT_ERROR = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot return more "
    "than one Tensor. This is not supported by the current autograd engine. You should either make sure the input is "
    "not a view (using .clone() for example) or make your Function only return one Tensor (potentially splitting it "
    "into two Functions: one doing the inplace that returns a single Tensor and a second one that does the other "
    "operations). You can ask on the forum https://discuss.pytorch.org/ if you need help to do this change.")


# ---- once_differentiable ---------------------------------------------------------------------------

class DelayedError(Node):
    """Stands in for a backward that cannot be differentiated: raises when the engine reaches it."""
    __slots__ = ("msg",)

    def __init__(self, msg, next_edges, in_meta, out_meta):
        self.msg = msg
        self._init_node(next_edges, in_meta, out_meta)

    def name(self):
        return "derivgen::autograd::Error"

    def _apply_fast(self, grads, needs):
        raise RuntimeError(self.msg)

    _apply_graph = _apply_fast


DelayedError.__name__ = DelayedError.__qualname__ = "Error"


def once_differentiable(fn):
    """Decorate a ``backward`` that is not itself differentiable: it runs under no_grad, and with
    ``create_graph=True`` its results carry a node that raises if something differentiates through them."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled():
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        edges, meta = [], []
        for v in outs:
            if isinstance(v, Tensor):
                fake = v.detach()
                fake._requires_grad = v.dtype.is_floating_point
                edges.append(gradient_edge(fake))
                meta.append((v._array.shape, v._array.dtype))
            else:
                edges.append((None, 0))
                meta.append(None)
        err = DelayedError("trying to differentiate twice a function that was marked with @once_differentiable",
                           tuple(edges), tuple(meta), tuple(meta))
        wrapped = tuple(Tensor._make(v._array, err, i) if isinstance(v, Tensor) and v.dtype.is_floating_point else v
                        for i, v in enumerate(outs))
        return wrapped[0] if single else wrapped
    return wrapper


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (torch.autograd.function.InplaceFunction)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """Not supported: the legacy nested-IO API."""

    @classmethod
    def apply(cls, *args, **kwargs):
        raise NotImplementedError("derivgen does not implement torch's legacy NestedIOFunction")
