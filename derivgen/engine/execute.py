"""The backward engine (torch's ``Engine::execute`` in Python).

Dependencies are counted per edge from the roots; gradients for the same (node, slot) are summed in a
per-node buffer; ready nodes run from a priority queue, highest sequence number first (AccumulateGrad
carries UINT64_MAX, so a leaf's gradient is written as soon as it is complete). Each gradient is reduced
to its input's shape and cast to its dtype before it travels on. Saved values are released after a node
runs unless the graph is kept.
"""
import heapq
import threading
from sys import getrefcount as _getrefcount

import numpy as np

from derivgen.core import anomaly
from derivgen.core import grad_mode, observe, saved_hooks

from derivgen.engine import graph_task
from derivgen.kernels.buffers import sole_owner
from derivgen.config import settings as _cfg
from derivgen.engine import fusion
from derivgen.engine.fusion import run_region
from derivgen.core.grad_mode import enable_grad, set_grad_enabled
from derivgen.core.node import _NEEDS, AccumulateGrad, GraphRoot, accumulate_into_leaf, gradient_edge
from derivgen.core.sizes import is_expandable_to, sum_to, sum_to_graph
from derivgen.core.tensor import Tensor
from derivgen.core.dtypes import from_numpy_dtype


# Callbacks queued during a running backward (torch's ``Engine.queue_callback``), one list per backward
# in progress: a hook may start a nested backward, whose callbacks run when that one ends.
_final_callbacks = []


def queue_callback(callback):
    """Run ``callback()`` once the backward now running has finished (after every AccumulateGrad and
    hook), as torch's ``Variable._execution_engine.queue_callback``; DistributedDataParallel uses it to
    wait for its gradient all-reduces."""
    if not _final_callbacks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _final_callbacks[-1].append(callback)


def execute(roots, grads, keep_graph, create_graph, inputs=None, accumulate_grad=True):
    """Run backward from ``roots`` as the current graph task of this thread (see ``_execute``), then the
    callbacks queued while it ran (also those queued by them)."""
    if graph_task.depth() >= MAX_REENTRANT_DEPTH:
        # like torch's engine past its max recursion depth: a deeply reentrant backward (a custom
        # Function's backward calling backward, nested) continues on a fresh thread, with a fresh stack
        return _on_fresh_thread(execute, roots, grads, keep_graph, create_graph, inputs, accumulate_grad)
    task = graph_task.push()
    callbacks = []
    _final_callbacks.append(callbacks)
    try:
        result = _execute(roots, grads, keep_graph, create_graph, inputs, accumulate_grad, task)
        i = 0
        while i < len(callbacks):
            callbacks[i]()
            i += 1
    finally:
        _final_callbacks.pop()
        graph_task.pop()
    return result


MAX_REENTRANT_DEPTH = 40


def _on_fresh_thread(fn, *args):
    """``fn(*args)`` on a new thread that starts with this thread's grad mode and saved-tensor hooks."""
    enabled, inference = grad_mode._state.enabled, grad_mode._state.inference
    hooks = list(saved_hooks._tls.stack or ())
    result, error = [], []

    def run():
        grad_mode._state.enabled, grad_mode._state.inference = enabled, inference
        saved_hooks._tls.stack = hooks
        try:
            result.append(fn(*args))
        except BaseException as exc:  # re-raised on the calling thread
            error.append(exc)

    worker = threading.Thread(target=run, name="derivgen-reentrant-backward")
    worker.start()
    worker.join()
    if error:
        raise error[0]
    return result[0]


def _execute(roots, grads, keep_graph, create_graph, inputs, accumulate_grad, task):
    """Run backward from ``roots`` (Tensors) seeded with ``grads`` (arrays, or Tensors when
    ``create_graph``). With ``inputs`` and ``accumulate_grad=False`` (``autograd.grad``) the gradients
    reaching ``inputs`` are captured and returned instead of accumulated; with ``inputs`` and
    ``accumulate_grad=True`` (``backward(inputs=...)``) only those inputs are accumulated into."""
    graph = create_graph
    root_edges = [gradient_edge(t) for t in roots]
    if len(root_edges) == 1:
        root, slot = root_edges[0]
        buffers = {root: [None] * root._n_inputs}
        buffers[root][slot] = grads[0]
    else:
        root = GraphRoot(root_edges, grads)
        buffers = {root: []}
    # Which buffered gradients the engine owns (made by a kernel or by summing): those may be summed
    # into in place and handed to AccumulateGrad without a copy. Gradients passed through unchanged,
    # views, and the caller's root gradients are never written to.
    owned = {}

    deps = _compute_dependencies(root)
    task.root, task.reachable = root, deps
    watch = observe.ACTIVE  # a profiler or recorder listens: the general loop reports each node
    if not graph and inputs is None and not anomaly._state.enabled and not watch:
        with set_grad_enabled(False):
            _execute_plain(root, buffers, deps, keep_graph)
        return []
    captures = None
    needed = None
    if inputs is not None:
        target_edges = [gradient_edge(t) for t in inputs]
        if accumulate_grad:
            for t in inputs:
                if isinstance(t, Tensor) and t.grad_fn is not None:
                    t.retain_grad()
            needed = _nodes_leading_to(root, {e[0] for e in target_edges if e[0] is not None})
        else:
            captures = {}
            for idx, (node, nr) in enumerate(target_edges):
                if node is not None:
                    captures.setdefault(node, []).append((nr, idx))
            needed = _nodes_leading_to(root, set(captures), strict=True)
            # a captured node must receive its gradient even though it does not run
            needed_or_captured = needed | set(captures)
        task.executes = needed if captures is None else needed_or_captured
    captured = [None] * (len(inputs) if inputs is not None else 0)

    mode = enable_grad() if graph else set_grad_enabled(False)
    fuse = not graph and _cfg.fusion_enabled and not anomaly._state.enabled
    # (priority, tie-breaker, node): equal sequence numbers (AccumulateGrads, nodes from other threads)
    # have no defined order in torch either; a node's id breaks the tie without comparing nodes
    heap = [(-root._seq, id(root), root)]
    with mode:
        while heap:
            fn = heapq.heappop(heap)[2]
            buf = buffers.pop(fn)
            buf_owned = owned.pop(fn, None)
            # grad() captures what reaches an input; like torch, a node that must also run is captured
            # before its tensor hooks (they run as part of the node), one that only captures after them
            early = captures is not None and fn in captures and fn in needed
            if early:
                _capture(captures[fn], buf, captured)
            if fn._tensor_pre_hooks is not None or fn._retains_grad is not None:
                _run_tensor_pre_hooks(fn, buf, graph)
            if captures is not None and not early and fn in captures:
                _capture(captures[fn], buf, captured)
            if needed is not None and fn not in needed:
                continue
            watched = observe.node_start(fn) if watch else None
            if (not graph and type(fn) is AccumulateGrad and fn._pre_hooks is None and fn._post_hooks is None
                    and fn._tensor_pre_hooks is None):
                # the common leaf case: take ownership of an engine-made gradient instead of copying it
                g = buf[0]
                if g is not None:
                    accumulate_into_leaf(fn.variable, Tensor._make(g), fresh=bool(buf_owned and buf_owned[0]))
                if watched is not None:
                    observe.node_end(watched)
                continue
            fused = None
            if fuse and fn._fusion is not None:
                g = buf[0]
                if g is not None and g.size >= _cfg.fusion_threshold:
                    # fn and the elementwise nodes behind it in one kernel (fusion.py)
                    fused = run_region(fn, g, deps, buffers, needed if captures is None else needed_or_captured,
                                       captures, keep_graph)
            if fused is None:
                outs = _call_function(fn, buf, graph, needed if captures is None else needed_or_captured)
                if not keep_graph:
                    fn._release_variables()
                nexts = fn._next
            else:
                nexts, outs = fused
            if watched is not None:
                observe.node_end(watched, fusion.last_region() if fused is not None else ())
            for i in range(len(nexts)):
                nxt, nr = nexts[i]
                if nxt is None:
                    continue
                d = deps[nxt] - 1
                deps[nxt] = d
                g = outs[i]
                b = buffers.get(nxt)
                if b is None:
                    b = buffers[nxt] = [None] * nxt._n_inputs
                    owned[nxt] = [False] * nxt._n_inputs
                if g is not None:
                    old = b[nr]
                    own = owned[nxt]
                    if old is None:
                        b[nr] = g
                        own[nr] = (not graph and type(g) is np.ndarray and sole_owner(g) and not fn._post_hooks
                                   and _not_in(g, buf) and _not_in(g, outs, i))
                    elif own[nr] and old.shape == g.shape and old.dtype == g.dtype:
                        np.add(old, g, out=old)
                    else:
                        b[nr] = old + g
                        own[nr] = not graph and type(b[nr]) is np.ndarray
                if d == 0:
                    if needed is not None and nxt not in needed and (captures is None or nxt not in captures):
                        buffers.pop(nxt, None)
                        continue
                    heapq.heappush(heap, (-nxt._seq, id(nxt), nxt))
    return captured


def _execute_plain(root, buffers, deps, keep_graph):
    """``execute`` for the common case, ``backward()`` without create_graph, inputs or anomaly mode:
    the same rules with less bookkeeping per node, because per-node engine overhead is what limits
    graphs of many small ops.

    - A node with no pre/post hooks is called directly (no ``_call_function`` frame); its gradients are
      checked against the input metadata inline and reduced/cast only when they differ.
    - Whether a buffered gradient may be summed into in place is decided when the second gradient
      arrives, by reference count (``_owned``): nothing else holds the array then, so writing into it
      cannot be seen. The general loop decides it eagerly instead (it must, for captures).
    - When nothing else is queued and one node became ready, it runs next without the heap.
    """
    fuse = _cfg.fusion_enabled
    heap = []
    fn = root
    while True:
        buf = buffers.pop(fn)
        if fn._tensor_pre_hooks is not None or fn._retains_grad is not None:
            _run_tensor_pre_hooks(fn, buf, False)
        ready = None
        if type(fn) is AccumulateGrad and fn._pre_hooks is None and fn._post_hooks is None:
            # the common leaf case: take ownership of an engine-made gradient instead of copying it
            g = buf[0]
            if g is not None:
                fresh = type(g) is np.ndarray and _owned(g, 1)
                accumulate_into_leaf(fn.variable, Tensor._make(g), fresh=fresh)
        else:
            fused = None
            if fuse and fn._fusion is not None:
                g = buf[0]
                if g is not None and g.size >= _cfg.fusion_threshold:
                    # fn and the elementwise nodes behind it in one kernel (fusion.py)
                    fused = run_region(fn, g, deps, buffers, None, None, keep_graph)
            if fused is not None:
                nexts, outs = fused
            else:
                nexts = fn._next
                if fn._pre_hooks or fn._post_hooks:
                    outs = _call_function(fn, buf, False, None)
                else:
                    n = len(nexts)  # fn._needs(), inlined for one and two inputs
                    if n == 1:
                        needs = _NEEDS[nexts[0][0] is not None]
                    elif n == 2:
                        needs = (nexts[0][0] is not None, nexts[1][0] is not None)
                    else:
                        needs = fn._needs()
                    try:
                        outs = fn._apply_fast(buf, needs)
                    except Exception as exc:
                        exc.add_note(f"(raised while computing the backward of {fn.name()})")
                        raise
                    if len(outs) != len(nexts):
                        raise RuntimeError(f"Function {fn.name()} returned an invalid number of gradients - "
                                           f"expected {len(nexts)}, but got {len(outs)}")
                    for g, m in zip(outs, fn._in_meta):
                        if g is not None and m is not None and (g.shape != m[0] or g.dtype != m[1]):
                            outs = _validate_outputs(fn, outs, False)
                            break
                if not keep_graph:
                    fn._release_variables()
            for i in range(len(nexts)):
                nxt, nr = nexts[i]
                if nxt is None:
                    continue
                d = deps[nxt] - 1
                deps[nxt] = d
                g = outs[i]
                b = buffers.get(nxt)
                if b is None:
                    b = buffers[nxt] = [None] * nxt._n_inputs
                if g is not None:
                    old = b[nr]
                    if old is None:
                        b[nr] = g
                    elif (type(old) is np.ndarray and old.shape == g.shape and old.dtype == g.dtype
                          and _getrefcount(old) == _REFS_INLINE and (old.base is None or sole_owner(old))):
                        # _owned(old, 1), inlined (this runs for every gradient summed into a buffer):
                        # references are the buffer b, the name old and getrefcount's argument
                        np.add(old, g, out=old)
                    else:
                        b[nr] = old + g
                if d == 0:
                    if ready is None and not heap:
                        ready = nxt
                    else:
                        if ready is not None:
                            heapq.heappush(heap, (-ready._seq, id(ready), ready))
                            ready = None
                        heapq.heappush(heap, (-nxt._seq, id(nxt), nxt))
            # drop this node's gradients before the next node runs: the ownership tests count
            # references, and a leaf must find its gradient held by its own buffer only
            outs = fused = g = old = b = None
        if ready is not None:
            fn = ready
        elif heap:
            fn = heapq.heappop(heap)[2]
        else:
            return


def _accumulate_owned(fn, buf):
    """AccumulateGrad run with its hooks: like torch's, it takes the incoming gradient as ``.grad`` without
    a copy when nothing else refers to it (a pre hook's fresh result, an engine-made sum), so the node's
    post hooks see the very tensor that became ``.grad``."""
    g = buf[0]
    if g is not None:
        fresh = _owned(g, 1)  # before the Tensor below adds its own reference
        accumulate_into_leaf(fn.variable, Tensor._make(g), fresh=fresh)
    return []


def _owned(a, holders):
    """No one but the engine's ``holders`` lists (and the caller's name for it) refers to array ``a``,
    and it shares its memory with no other array: the engine may then write into it."""
    # references: the holders, the caller's local name, this function's argument, getrefcount's argument
    return _getrefcount(a) == holders - 1 + _REFS_VIA_OWNED and sole_owner(a)


def _calibrate_reference_counts():
    """The reference counts that mean "held by one buffer list only", measured with the same code shapes
    as the tests above (on CPython 3.11: 3 inline, 4 through ``_owned``). An interpreter that skips
    reference counting for some local loads (CPython 3.14 can) would report fewer; measuring keeps the
    tests exact there, and if the counts look wrong ownership is never claimed (the engine then makes
    new arrays instead of writing into old ones: slower, never wrong)."""
    holder = [np.empty(1)]
    old = holder[0]
    inline = _getrefcount(old)
    via_owned = _probe_refcount(old)
    if not (2 <= inline <= 3 and inline <= via_owned <= inline + 1):
        return -1, -1
    return inline, via_owned


def _probe_refcount(a):
    return _getrefcount(a)


_REFS_INLINE, _REFS_VIA_OWNED = _calibrate_reference_counts()


def _not_in(g, items, stop=None):
    """``g`` is not (by identity) among ``items[:stop]``."""
    for k, x in enumerate(items):
        if k == stop:
            break
        if x is g:
            return False
    return True


def _capture(slots, buf, captured):
    for nr, idx in slots:
        g = buf[nr]
        captured[idx] = g if captured[idx] is None or g is None else captured[idx] + g


def _compute_dependencies(root):
    deps = {}
    get = deps.get
    stack = [root]
    while stack:
        fn = stack.pop()
        for nxt, _ in fn._next:
            if nxt is not None:
                n = get(nxt)
                if n is None:  # first visit (the root is nobody's next: the graph has no cycles)
                    deps[nxt] = 1
                    stack.append(nxt)
                else:
                    deps[nxt] = n + 1
    return deps


def _nodes_leading_to(root, targets, strict=False):
    """Nodes with a path to one of ``targets`` (targets included unless ``strict``: a captured
    node itself need not run)."""
    memo = {}
    order = []
    stack = [(root, False)]
    while stack:
        fn, done = stack.pop()
        if done:
            hit = any(memo.get(n, False) or (n in targets) for n, _ in fn._next if n is not None)
            memo[fn] = hit or (fn in targets and not strict)
            continue
        if fn in memo:
            continue
        memo[fn] = False
        order.append(fn)
        stack.append((fn, True))
        for n, _ in fn._next:
            if n is not None and n not in memo:
                stack.append((n, False))
    return {fn for fn, ok in memo.items() if ok}


def _wrap(g, graph):
    return g if graph or g is None else Tensor._make(g)


def _unwrap(t, graph):
    return t if graph or t is None else t._array


def _hook_name(hook):
    return getattr(hook, "__name__", "")


def _check_hook_value(orig, res, hook):
    """torch's check_single_result: a hook may replace a gradient only by one of the same type and size."""
    if orig is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(res, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(res).__name__}'")
    if res._array.dtype != orig._array.dtype:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was {orig.type()} "
                           f"got {res.type()})")
    if res._array.shape != orig._array.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")


def _run_tuple_hooks(hooks, values, *extra):
    """Call each ``hook(values, *extra)`` in registration order; a returned tuple replaces ``values``."""
    for hook in list(hooks.values()):
        res = hook(values, *extra)
        if res is None:
            continue
        if not isinstance(res, tuple):
            raise TypeError(f"expected tuple, but hook returned '{type(res).__name__}'")
        if len(res) != len(values):
            raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of values "
                               f"(got {len(res)}, but expected {len(values)})")
        for orig, r in zip(values, res):
            if r is not None:
                _check_hook_value(orig, r, hook)
        values = res
    return values


def _run_tensor_pre_hooks(fn, buf, graph):
    """Tensor hooks of the tensors this node produced (``Tensor.register_hook``; called with None when
    no gradient arrived, as torch does), then ``retain_grad``."""
    if fn._tensor_pre_hooks is not None:
        for slot, hooks in fn._tensor_pre_hooks.items():
            if not hooks:
                continue
            g = _wrap(buf[slot], graph)
            for hook in list(hooks.values()):
                res = hook(g)
                if res is not None:
                    _check_hook_value(g, res, hook)
                    g = res
            buf[slot] = _unwrap(g, graph)
    if fn._retains_grad is not None:
        for slot, ref in fn._retains_grad.items():
            t = ref()
            g = buf[slot]
            if t is None or g is None or t.grad_fn is not fn:  # (not fn: an in-place op rebased t since)
                continue
            gt = g.clone() if graph else Tensor._make(g.copy())
            t._grad = gt if t._grad is None else t._grad + gt


def _call_function(fn, buf, graph, needed):
    if fn._pre_hooks:
        buf = [_unwrap(g, graph) for g in _run_tuple_hooks(fn._pre_hooks, tuple(_wrap(g, graph) for g in buf))]
    if needed is None:
        needs = fn._needs()
    else:
        needs = tuple(e[0] is not None and e[0] in needed for e in fn._next)
    anomaly_on = anomaly._state.enabled
    if anomaly_on:
        parent = anomaly.set_current_node(fn)
    try:
        if not graph and type(fn) is AccumulateGrad:
            outs = _accumulate_owned(fn, buf)
        else:
            outs = fn._apply_graph(buf, needs) if graph else fn._apply_fast(buf, needs)
    except Exception as exc:
        if anomaly_on:
            _report_anomaly(fn)
        exc.add_note(f"(raised while computing the backward of {fn.name()})")
        raise
    finally:
        if anomaly_on:
            anomaly.set_current_node(parent)
    if len(outs) != len(fn._next):
        raise RuntimeError(f"Function {fn.name()} returned an invalid number of gradients - expected "
                           f"{len(fn._next)}, but got {len(outs)}")
    outs = _validate_outputs(fn, outs, graph)
    if anomaly._state.enabled and anomaly._state.check_nan:
        _check_nan(fn, outs, graph)
    if fn._post_hooks:
        res = _run_tuple_hooks(fn._post_hooks, tuple(_wrap(g, graph) for g in outs),
                               tuple(_wrap(g, graph) for g in buf))
        outs = [_unwrap(g, graph) for g in res]
    return outs


def _validate_outputs(fn, outs, graph):
    meta = fn._in_meta
    n = len(meta)
    for i, g in enumerate(outs):
        if g is None or i >= n:
            continue
        m = meta[i]
        if m is None:
            continue
        shape, dtype = m
        data = g._array if graph else g
        if data.shape == shape and data.dtype == dtype:
            continue  # the common case: nothing to reduce or cast
        if data.shape != shape:
            if not is_expandable_to(shape, data.shape):
                raise RuntimeError(f"Function {fn.name()} returned an invalid gradient at index {i} - got "
                                   f"{list(data.shape)} but expected shape compatible with {list(shape)}")
            if graph:
                g = sum_to_graph(g, shape)
            else:
                g = sum_to(g, shape)
        data = g._array if graph else g
        if data.dtype != dtype:
            if graph:
                g = g.to(from_numpy_dtype(dtype))
            else:
                g = g.astype(dtype)
        outs[i] = g
    return outs


def _check_nan(fn, outs, graph):
    import numpy as np
    for i, g in enumerate(outs):
        if g is None:
            continue
        data = g._array if graph else g
        if data.dtype.kind == "f" and np.isnan(data).any():
            _report_anomaly(fn)
            raise RuntimeError(f"Function '{fn.name()}' returned nan values in its {i}th output.")


def _report_anomaly(fn):
    anomaly.report(fn)
