"""Checks shared by every generated in-place op (``add_``, ``mul_``, ...)."""
import numpy as np

from derivgen.core import observe
from derivgen.core.dtypes import scalar_type_name
from derivgen.core.grad_mode import _state as _grad_mode_state, enable_grad, is_grad_enabled, is_inference_mode_enabled
from derivgen.core.node import rebase_history
from derivgen.core.pending import LIVE_REFS, flush
from derivgen.core.registry import aten
from derivgen.core.scalars import FLOAT32_MAX, INT64_MIN, UINT64_END
from derivgen.engine.copyslices import CopySlices
from derivgen.kernels.loops import clamp_inplace
from derivgen.kernels.promotion import can_cast
from derivgen.core.sizes import has_internal_overlap
from derivgen.core.tensor import Tensor, bump_version, replace_array
from derivgen.ops.view_meta import (CreationMeta, RecordedView, append_view_step, check_view_meta, mode_meta,
                                    live_views, register_view, view_steps)

_DEFAULT_META = CreationMeta.DEFAULT  # a plain global for the per-view path (see view_meta)


# torch writes into a tensor over a non-writable NumPy array (undefined behaviour, after a warning at
# from_numpy); numpy refuses to, so derivgen says so before any kernel sees the array.
READ_ONLY_MEMORY = ("a tensor whose memory is read-only (made from a NumPy array that is not writable) cannot be "
                    "modified in place. Please clone() the tensor, or give from_numpy a writable array.")


def check_inplace(t):
    if LIVE_REFS:
        # deferred values read their inputs when computed: compute them before this write
        flush()
    if 0 in t._array.strides and has_internal_overlap(t._array):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    if not t._array.flags.writeable:
        raise RuntimeError(READ_ONLY_MEMORY)
    grad_enabled = _check_history_rules(t)
    if not grad_enabled:
        return
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


def check_inplace_view(t):
    """``check_inplace`` for an in-place view op (``t_``, ``unsqueeze_``, ...): it writes no data, so overlapping
    memory is fine and a view needs no replay of its own (its history is set, not moved to its base)."""
    if LIVE_REFS:
        flush()
    if _check_history_rules(t) and t._base is not None and t._base.requires_grad and t._base.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def _check_history_rules(t):
    """The creation-meta, leaf and inference-tensor refusals every in-place op shares; whether grad mode is on."""
    grad_enabled = is_grad_enabled()
    if grad_enabled and t.__class__ is RecordedView and t.requires_grad:
        check_view_meta(t)  # before the leaf checks, as torch's check_inplace
    if grad_enabled and t.grad_fn is None and (t._requires_grad or (t._inference and t.requires_grad)):
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if t._inference and not is_inference_mode_enabled():
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make "
                           "a clone to get a normal tensor before doing inplace update.See "
                           "https://github.com/pytorch/rfcs/pull/17 for more details.")
    return grad_enabled


def original_self(t):
    """What an in-place op saves of the tensor it overwrites (torch's ``original_self = self.clone()``):
    a copy, differentiable when ``t`` requires grad so that double backward reaches ``t``'s history."""
    if t.grad_fn is not None or t._requires_grad:
        return t.clone()
    return Tensor._make(t._array.copy())


def inplace_target(args, kwargs):
    """The tensor an in-place op writes into: its first argument."""
    if args:
        return args[0]
    return kwargs.get("self", kwargs.get("input"))


def write_inplace(t, result):
    """Write an out-of-place forward's ``result`` into ``t`` (same shape; cast to ``t``'s dtype within its
    category: torch refuses a float result for an int tensor, an int one for a bool tensor)."""
    if result.shape != t._array.shape:
        raise RuntimeError(f"output with shape {list(t._array.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    if not can_cast(result.dtype, t._array.dtype):
        raise RuntimeError(f"result type {scalar_type_name(result.dtype)} can't be cast to the desired output type "
                           f"{scalar_type_name(t._array.dtype)}")
    t._array[...] = result


def commit_inplace(t, out):
    """Make ``t`` the result ``out`` of a functional row computed from it (``zero_``, ``fill_``, ``copy_``):
    the data is written through (views of ``t`` see it) or, for a change of shape, rebound; the history is
    rewritten to ``out``'s node and the version bumped when data changed."""
    if out.grad_fn is not None:
        check_view_meta(t)  # before anything is written
    if out._array.shape == t._array.shape:
        if out._array is not t._array and not _same_memory(out._array, t._array):
            _write(t._array, out._array)
            bump_version(t)
    else:
        replace_array(t, out._array)
    if out.grad_fn is not None:
        set_inplace_history(t, out.grad_fn, out.output_nr)
    if _tangent_commit[0] is not None and getattr(out, "_fw_grads", None):
        _tangent_commit[0](t, out)  # forward mode: ``t`` takes the result's tangent with its value
    return t


def commit_view_inplace(t, out, dispatch, name, rows, args, kwargs):
    """Make ``t`` the result ``out`` of an in-place view row (``transpose_``, ``squeeze_``, ``as_strided_``...)
    computed from it: ``t`` takes ``out``'s shape and strides over the same memory, its version moves (as
    torch's, though no data changed) and ``out``'s node becomes its grad_fn directly (torch sets the history
    of an in-place view op; it does not rebase a view's onto its base). A view keeps the step, so that
    replaying it from its root (forward-mode tangents, a non-contiguous root) gives its new geometry: the
    op's ``dispatch(name, rows, args, kwargs)`` on the view in place of ``t``."""
    fn = out.grad_fn
    if fn is not None:
        check_view_meta(t)
    replace_array(t, out._array)
    bump_version(t)
    if t._base is not None:
        rest = tuple(args[1:]) if args and args[0] is t else tuple(args)
        kwargs = {k: v for k, v in kwargs.items() if v is not t}
        append_view_step(t, replay_view_op, (dispatch, name, rows, rest, kwargs), {})
    if fn is not None:
        rebase_history(t, fn, out.output_nr)
    elif (t._base is not None and t.__class__ is not RecordedView and t._base.requires_grad
          and not t._base._inference):
        # made without recording (no_grad): the view's grad_fn is regenerated from its root, as torch's is
        # once the version it was made at has moved on
        _regenerate_view_grad_fn(t, t._base, view_chain(t))
    if _tangent_commit[0] is not None and getattr(out, "_fw_grads", None):
        _tangent_commit[0](t, out, True)
    return t


def replay_view_op(v, dispatch, name, rows, args, kwargs):
    """One in-place view op step of a view's replay: the op's row, computed out of place from ``v``."""
    return dispatch(name, rows, (v,) + args, kwargs)


# Forward mode registers here how a committed result hands its tangent to ``t`` (written through into
# t's tangent, or its base's, so views and bases stay aliased as torch's tangents are).
_tangent_commit = [None]


def set_tangent_commit(fn):
    _tangent_commit[0] = fn


def _write(dst, src):
    """``dst[...] = src``. A fill (``zero_``, ``fill_``: every element of ``src`` is one memory location)
    of a contiguous array writes the value directly, and zero as bytes: numpy's byte fill is a memset,
    about twice as fast as filling floats (a 400 KB gradient: 10 against 18 µs)."""
    if src.ndim and dst.flags.c_contiguous and not any(src.strides):
        value = src.reshape(-1)[0] if src.size else None
        if value is None:
            return
        if value == 0 and not np.signbit(value):
            dst.reshape(-1).view(np.uint8).fill(0)
        else:
            dst.fill(value)
        return
    dst[...] = src


_FLOAT32, _FLOAT64 = np.dtype(np.float32), np.dtype(np.float64)


def _direct_write_target(t):
    """``t``'s array where an in-place op written straight into it cannot differ from the general path:
    no history to record (grad mode off, or ``t`` needs no gradient), a plain contiguous writable float
    tensor that is no view and no inference tensor, no deferred values (they may still read ``t``) and
    no observer (forward mode is one while a dual level is active, so no tangent is missed); else None."""
    if (observe.ACTIVE or LIVE_REFS or t.__class__ is not Tensor or t._base is not None or t._inference
            or (_grad_mode_state.enabled and (t.grad_fn is not None or t._requires_grad))):
        return None
    a = t._array
    dt = a.dtype
    if dt is not _FLOAT32 and dt is not _FLOAT64:
        return None
    flags = a.flags
    if not flags.c_contiguous or not flags.writeable:
        return None
    return a


def fill_directly(t, value):
    """``t.fill_(value)`` / ``t.zero_()`` without the general path, where nothing it does can differ (see
    ``_direct_write_target``), for an int or float ``value``. Writes and bumps the version; False otherwise.

    ``w.grad.zero_()`` in a training loop otherwise costs several microseconds of checks and a result
    Tensor that is committed back into ``t`` (6 µs on a 64x100 gradient, against 1 µs for torch)."""
    if type(value) is not int and type(value) is not float:
        return False
    a = _direct_write_target(t)
    if a is None:
        return False
    dt = a.dtype
    if type(value) is int:
        if not INT64_MIN <= value < UINT64_END:
            return False  # outside what torch reads a Python int as (check_fill on the general path says so)
    elif (value > FLOAT32_MAX or value < -FLOAT32_MAX) and dt is _FLOAT32:
        return False  # may not fit float32 (the same)
    if a.size >= 16384 and value == 0 and (type(value) is int or not np.signbit(value)):
        # a byte fill is a memset, up to twice as fast as filling floats; below about 16k elements the
        # two extra views cost more than it saves
        a.reshape(-1).view(np.uint8).fill(0)
    else:
        a.fill(value)
    bump_version(t)
    return True


def clamp_directly(t, lo, hi):
    """``t.clamp_(lo, hi)`` with Python int/float bounds (either None, not both) without the general path,
    which clamps into a new array and copies it back: where nothing it does can differ (see
    ``_direct_write_target``), for bounds within float32's range and ints torch reads (a NaN, infinite or
    larger bound takes the general path and its rules). Clamps ``t``'s array in place and bumps the
    version; False otherwise."""
    a = _direct_write_target(t)
    if a is None:
        return False
    dt = a.dtype
    for v in (lo, hi):
        if v is not None and (not -FLOAT32_MAX <= v <= FLOAT32_MAX
                              or (type(v) is int and not INT64_MIN <= v < UINT64_END)):
            return False  # (an int outside what torch reads a Python int as: its OverflowError)
    clamp_inplace(a, None if lo is None else dt.type(lo), None if hi is None else dt.type(hi))
    bump_version(t)
    return True


def copy_directly(t, src):
    """``t.copy_(src)`` without the general path, where nothing it does can differ (the conditions of
    ``fill_directly``, and ``src`` a plain tensor of ``t``'s shape and dtype kind whose memory is not
    ``t``'s): writes ``src``'s values in ``t``'s dtype and bumps the version; False otherwise.

    The general path computes the copy as a row's result and commits it into ``t``: two copies and
    about 10 µs of checks for a 1,000-element tensor, against torch's 1 µs."""
    if (observe.ACTIVE or LIVE_REFS or t.__class__ is not Tensor or src.__class__ is not Tensor
            or t._base is not None or t._inference
            or (_grad_mode_state.enabled and (t.grad_fn is not None or t._requires_grad
                                              or src.grad_fn is not None or src._requires_grad))):
        return False
    a = t._array
    b = src._array
    if (a.shape != b.shape or not a.flags.writeable or b.dtype.kind != a.dtype.kind
            or np.may_share_memory(a, b)):
        return False
    np.copyto(a, b, casting="unsafe")
    bump_version(t)
    return True


def _same_memory(a, b):
    # strides first: comparing them is cheap, reading the data addresses builds two dicts
    return a.strides == b.strides and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]


# ---- views: how to replay them from their base, and CopySlices --------------------------------------------

def record_view(view, base, fn, args, kwargs):
    """Remember that ``view = fn(base, *args, **kwargs)`` and the mode it was made in (generated view rows
    call this). A view of an inference tensor is one; a view of a normal tensor stays normal, wherever made."""
    inference = view._inference = base._inference
    register_view(view, base, fn, args, kwargs, _DEFAULT_META if inference else mode_meta(base))


def record_multi_output_views(outputs, base):
    """The outputs of a view op returning several views (split, chunk, unbind): torch forbids an in-place op
    on them that autograd would have to record (MULTIPLE_VIEW)."""
    inference = base._inference
    meta = CreationMeta.DEFAULT if inference else mode_meta(base, multiple=True)
    for view in outputs:
        view._inference = inference
        register_view(view, base, meta=meta)


def view_chain(t):
    """``[root, (fn, args, kwargs), ...]`` replaying ``t`` from the tensor that owns its memory, or None."""
    return view_steps(t)


def set_inplace_history(t, fn, output_nr=0):
    """After an in-place op with node ``fn`` wrote into ``t``: a plain tensor becomes output ``output_nr``
    of ``fn`` (rebase_history); a view instead gives its base a CopySlices node wrapping ``fn``, and gets
    its own grad_fn back by replaying its view ops on the base (SelectBackward0 -> CopySlices, as torch).
    Either way the other live views of the base then take a grad_fn regenerated from the base's new history."""
    if t._base is not None:
        check_view_meta(t)
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
    history changes, gives the same graphs; a view made before its base required grad gains a grad_fn.
    A view torch refuses to rebuild (a RecordedView) is left alone: its own grad_fn read sees the new version."""
    for v in live_views(root):
        if v is written or v._array.dtype != root._array.dtype or not _inside(v._array, root._array):
            continue
        if v.__class__ is RecordedView:
            continue
        chain = view_chain(v)
        if chain is not None and chain[0] is not root:
            continue
        _regenerate_view_grad_fn(v, root, chain)


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
