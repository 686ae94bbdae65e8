"""``derivgen.utils.checkpoint``: activation checkpointing with torch's two variants, warnings and errors.

``use_reentrant=True`` runs the function under ``no_grad`` inside ``CheckpointFunction``, whose backward
reruns it with grad enabled (same RNG state) and calls ``backward`` on the rerun (a reentrant backward).
``use_reentrant=False`` runs the function under ``saved_tensors_hooks`` that keep placeholders instead of
the saved tensors; the first unpack in a backward call reruns the function (under hooks that collect what
it saves), checks that the same number of tensors with the same metadata was saved, and hands them out.
"""
import contextlib
import threading
import uuid
import warnings
import weakref
from collections import defaultdict

from derivgen.autograd.function import Function
from derivgen.core.generator import get_rng_state, set_rng_state
from derivgen.core.grad_mode import enable_grad, is_grad_enabled, no_grad
from derivgen.core.saved_hooks import saved_tensors_hooks
from derivgen.core.tensor import Tensor
from derivgen.engine import graph_task
from derivgen.engine.api import backward as _autograd_backward
from derivgen.nn.modules.container import Sequential

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "GraphExecGroup",
           "detach_variable",
           "check_backward_validity", "noop_context_fn", "set_checkpoint_early_stop",
           "set_checkpoint_debug_enabled"]

_DEFAULT_DETERMINISM_MODE = "default"
_checkpoint_debug_enabled = None
_enable_checkpoint_early_stop = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Overrides ``debug=`` of every checkpoint in the block (``None``: each checkpoint's own)."""
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    _checkpoint_debug_enabled = enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether non-reentrant checkpoints created in the block stop recomputing once every saved tensor
    is recomputed."""
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    _enable_checkpoint_early_stop = enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def detach_variable(inputs):
    if isinstance(inputs, tuple):
        out = []
        for inp in inputs:
            if not isinstance(inp, Tensor):
                out.append(inp)
                continue
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            out.append(x)
        return tuple(out)
    raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def _is_checkpoint_valid():
    """False inside a backward call restricted by ``inputs=`` (or ``autograd.grad``), where a reentrant
    backward would accumulate into the wrong tensors (torch's ``_is_checkpoint_valid``)."""
    task = graph_task.current()
    return task is None or task.executes is None


@contextlib.contextmanager
def _fork_rng(enabled):
    """Restore the default generator's state on exit (torch's ``random.fork_rng`` for the CPU)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        # non-tensor inputs stay on ctx; tensors are saved (and version-checked) for the rerun
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *args):
        if not _is_checkpoint_valid():
            raise RuntimeError("When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                               "passing an `inputs` parameter to .backward(). To resolve this error, you can either "
                               "set use_reentrant=False, or call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        tensors = ctx.saved_tensors
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = tensors[i]
        with _fork_rng(ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                set_rng_state(ctx.fwd_cpu_state)
            detached_inputs = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outputs_with_grad = []
        args_with_grad = []
        for i in range(len(outputs)):
            if isinstance(outputs[i], Tensor) and outputs[i].requires_grad:
                outputs_with_grad.append(outputs[i])
                args_with_grad.append(args[i])
        if len(outputs_with_grad) == 0:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _autograd_backward(outputs_with_grad, args_with_grad)
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached_inputs)
        return (None, None) + grads


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check=_DEFAULT_DETERMINISM_MODE, debug=False, early_stop=True, **kwargs):
    """Run ``function(*args, **kwargs)`` without keeping its intermediate results for backward; backward
    recomputes them. ``preserve_rng_state`` (default True) replays the RNG state of the forward."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
                      "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                      "the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    gen = _checkpoint_without_reentrant_generator(function, preserve, context_fn, determinism_check, debug,
                                                  early_stop, *args, **kwargs)
    next(gen)
    try:
        ret = function(*args, **kwargs)
    except BaseException as e:
        try:
            gen.throw(e)
        except StopIteration as stop:
            raise RuntimeError("torch.utils.checkpoint: the forward context provided by context_fn suppressed an "
                               "exception raised during the checkpointed forward. This is not supported because "
                               "checkpoint cannot return a value for a failed forward.") from stop
        raise
    try:
        next(gen)
    except StopIteration:
        return ret
    raise AssertionError("torch.utils.checkpoint: expected context_fn generator to yield exactly twice, but it "
                         "yielded more than twice.")


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):  # noqa: A002 - torch's name
    """Run ``functions`` (a Sequential or a list of callables) in ``segments`` chunks, checkpointing every
    chunk but the last."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default "
                      "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):  # noqa: A002
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1  # the last chunk runs normally: its activations are needed right away
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)


# ---- the non-reentrant variant ---------------------------------------------------------------------

class CheckpointError(RuntimeError):
    pass


_DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.
"""


def _internal_assert(cond):
    if not cond:
        raise AssertionError("Something went unexpectedly wrong in activation checkpoint. Please report this bug by "
                             "filing an issue to PyTorch.")


def _default_meta_extractor(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns = {_DEFAULT_DETERMINISM_MODE: _default_meta_extractor, "none": lambda _: None}


class _Handle:
    pass


class _Holder:
    """What the forward's pack hook saves in place of a tensor: per backward call, the handle of its
    recomputed value."""

    def __init__(self):
        self.handles = {}


class _StopRecomputationError(Exception):
    pass


class _CheckpointFrame:
    def __init__(self, recompute_fn, early_stop, metadata_fn):
        self.recompute_fn = recompute_fn
        self.saved_args = []
        self.weak_holders = []
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter = defaultdict(int)
        self.is_recomputed = defaultdict(bool)
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.x_metadatas = []
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def check_recomputed_tensors_match(self, gid):
        if self.ignore_saved_mismatch:
            return
        if not len(self.weak_holders) == self.recomp_counter[gid]:
            raise CheckpointError("torch.utils.checkpoint: A different number of tensors was saved during the "
                                  "original forward and recomputation.\n"
                                  f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                                  f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                                  f"{_DEBUG_TIP}")
        different = []
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            _internal_assert(gid in holder.handles)
            _internal_assert(holder.handles[gid] is not None)
            _internal_assert(holder.handles[gid] in self.recomputed[gid])
            x_meta = self.x_metadatas[idx]
            recomputed_meta = self.metadata_fn(self.recomputed[gid][holder.handles[gid]])
            if x_meta != recomputed_meta:
                different.append((idx, x_meta, recomputed_meta))
        if different:
            mismatched = "".join(f"tensor at position {idx}:\nsaved metadata: {x_meta}\n"
                                 f"recomputed metadata: {recomputed_meta}\n"
                                 for idx, x_meta, recomputed_meta in different)
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have different "
                                  f"metadata than during the forward pass.\n{mismatched}.\n{_DEBUG_TIP}")


class _recomputation_hook(saved_tensors_hooks):  # noqa: N801 - torch's name
    """Active while the function is rerun: files each saved tensor under the holder of the same position."""

    def __init__(self, target_frame_ref, gid):
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            target_frame = target_frame_ref()
            _internal_assert(target_frame is not None)
            recomp_idx = target_frame.recomp_counter[gid]
            target_frame.recomp_counter[gid] += 1
            if recomp_idx >= len(target_frame.weak_holders):
                _internal_assert(not target_frame.early_stop)
                if not target_frame.forward_completed:
                    # backward inside the checkpointed forward: the recomputation may save more
                    target_frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during recomputation "
                                      f"than during the original forward pass.\n{_DEBUG_TIP}")
            holder = target_frame.weak_holders[recomp_idx]()
            if holder is not None:
                _internal_assert(holder.handles.get(gid, None) is None)
                holder.handles[gid] = _Handle()
                target_frame.recomputed[gid][holder.handles[gid]] = x
            if target_frame.early_stop and target_frame.recomp_counter[gid] == len(target_frame.weak_holders):
                raise _StopRecomputationError
            return x

        super().__init__(pack_hook, lambda x: x)


class _checkpoint_hook(saved_tensors_hooks):  # noqa: N801 - torch's name
    """Active during the checkpointed forward: saves holders; unpacking one recomputes (once per backward
    call) and returns the recomputed tensor."""

    def __init__(self, frame):
        def pack_hook(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            gid = GraphExecGroup._get_current_group()
            if gid is None:
                gid = graph_task.current_graph_task_id()
                if gid == -1:  # an unpack outside any backward call gets an id of its own
                    gid = int(uuid.uuid4())
            if not frame.is_recomputed[gid]:
                args = frame.saved_args
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            _internal_assert(gid in holder.handles)
            if holder.handles[gid] is None:
                extra = ("Performing two backward calls that overlap (i.e. require the same saved activation in order "
                         "to compute gradients) is not allowed while under the torch.utils.checkpoint.GraphExecGroup "
                         "context. " if GraphExecGroup._get_current_group() is not None else "")
                raise CheckpointError("torch.utils.checkpoint: Unpack is being triggered for a tensor that was already "
                                      f"unpacked once. {extra}If you are calling ctx.saved_tensors in backward, make "
                                      "sure to do so only once. Otherwise please open an issue with details on your "
                                      "use case.")
            _internal_assert(holder.handles[gid] in frame.recomputed[gid])
            ret = frame.recomputed[gid][holder.handles[gid]]
            holder.handles[gid] = None
            return ret

        super().__init__(pack_hook, unpack_hook)


_graph_exec_group = threading.local()


class GraphExecGroup:
    """Backward calls made inside the same ``with GraphExecGroup():`` block recompute each non-reentrant
    checkpointed region at most once: they share one set of recomputed tensors, keyed by the group instead of
    by each backward call. So the calls must use disjoint saved tensors of a region, even with
    ``retain_graph=True``; a second unpack of one raises. Groups do not nest; each thread has its own."""

    def __enter__(self):
        current = self._get_current_group()
        if current is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group {current}")
        _graph_exec_group.group = self
        return self

    def __exit__(self, *args):
        _graph_exec_group.group = None

    @classmethod
    def _get_current_group(cls):
        return getattr(_graph_exec_group, "group", None)


def _checkpoint_without_reentrant_generator(fn, preserve_rng_state=True, context_fn=noop_context_fn,
                                            determinism_check=_DEFAULT_DETERMINISM_MODE, debug=False,
                                            early_stop=True, *args, **kwargs):
    """Yields once before the checkpointed forward runs and once after it (torch's generator form)."""
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check in _allowed_determinism_checks_to_fns:
        metadata_fn = _allowed_determinism_checks_to_fns[determinism_check]
    else:
        raise ValueError(f"determinism_check should be one of {list(_allowed_determinism_checks_to_fns.keys())}, "
                         f"but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    fwd_cpu_state = get_rng_state() if preserve_rng_state else None

    def recompute_fn(*inputs):
        with _fork_rng(preserve_rng_state):
            if preserve_rng_state:
                set_rng_state(fwd_cpu_state)
            with recompute_context:
                fn(*inputs, **kwargs)

    new_frame = _CheckpointFrame(
        recompute_fn, _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None else early_stop,
        metadata_fn)
    if not is_grad_enabled():  # nothing is saved for backward: the forward runs as it is
        yield
        return
    new_frame.saved_args = list(args)
    forward_context_suppressed_exc = False
    with _checkpoint_hook(new_frame), forward_context:
        try:
            yield
        except BaseException:
            forward_context_suppressed_exc = True
            raise
    if forward_context_suppressed_exc:
        raise RuntimeError("torch.utils.checkpoint: the forward context provided by context_fn suppressed an "
                           "exception raised during the checkpointed forward. This is not supported because "
                           "checkpoint cannot return a value for a failed forward.")
    new_frame.forward_completed = True
