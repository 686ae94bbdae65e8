"""The backward engine (torch's ``Engine::execute`` in Python).

Dependencies are counted per edge from the roots; gradients for the same (node, slot) are summed in a
per-node buffer; ready nodes run from a priority queue, highest sequence number first (AccumulateGrad
carries UINT64_MAX, so a leaf's gradient is written as soon as it is complete). Each gradient is reduced
to its input's shape and cast to its dtype before it travels on. Saved values are released after a node
runs unless the graph is kept. A plain ``backward()`` runs in ``_run_plain``, the loop kept short for
graphs of many small ops; every other call runs in ``_run``, with ``_General`` adding what ``grad()``,
``inputs=``, ``create_graph``, anomaly mode and profilers need. Both share the order, the hooks and the
ownership rules below. Which gradient arrays the engine may
write into is decided by construction (see "Gradient ownership" below).
"""
import heapq
import linecache
import os
import sys
import threading

import numpy as np

from derivgen.core import anomaly
from derivgen.core import grad_mode, observe, saved_hooks

from derivgen.engine import graph_task
from derivgen.config import settings as _cfg
from derivgen.engine import fusion, tape
from derivgen.engine.ready_queue import push_numbers as _push_numbers
from derivgen.engine.fusion import run_region
from derivgen.kernels import errors as _kernel_errors
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
        grad_mode._set_enabled(enabled)
        grad_mode._state.inference = inference
        saved_hooks.set_stack(hooks)
        try:
            result.append(fn(*args))
        except BaseException as exc:  # re-raised on the calling thread
            error.append(exc)
        finally:
            # reset: what a thread ends with would stay counted (grad_mode.off_threads, saved_hooks.pushed)
            grad_mode._set_enabled(True)
            saved_hooks.set_stack([])

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
    root_edges = [gradient_edge(t) for t in roots]
    if len(root_edges) == 1:
        root, slot = root_edges[0]
        buffers = {root: [None] * root._n_inputs}
        buffers[root][slot] = grads[0]
    else:
        root = GraphRoot(root_edges, grads)
        buffers = {root: []}
    deps = _compute_dependencies(root)
    task.root, task.reachable = root, deps
    if not create_graph and inputs is None and not anomaly._state.enabled and not observe.ACTIVE:
        with set_grad_enabled(False):
            _run_plain(root, buffers, deps, keep_graph)
        return []
    general = _General(root, create_graph, inputs, accumulate_grad)
    task.executes = general.runs
    with (enable_grad() if create_graph else set_grad_enabled(False)):
        _run(root, buffers, deps, keep_graph, general)
    return general.captured


class _General:
    """What a backward call does beyond plain ``backward()``, chosen once per call: ``grad()``'s
    captures and ``inputs=`` (only the nodes leading to the inputs run), ``create_graph`` (gradients
    are Tensors and nodes run differentiably), anomaly mode and a profiler or recorder watching each
    node. The loop (``_run``) calls it at the points where these differ from the plain path."""

    def __init__(self, root, create_graph, inputs, accumulate_grad):
        self.graph = create_graph
        self.captures = None   # node -> [(input slot, index into captured)], for grad()
        self.needed = None     # the nodes that must run (None: all)
        self.runs = None       # the nodes that run or capture (None: all)
        if inputs is not None:
            target_edges = [gradient_edge(t) for t in inputs]
            if accumulate_grad:
                for t in inputs:
                    if isinstance(t, Tensor) and t.grad_fn is not None:
                        t.retain_grad()
                self.needed = self.runs = _nodes_leading_to(root, {e[0] for e in target_edges if e[0] is not None})
            else:
                captures = self.captures = {}
                for idx, (node, nr) in enumerate(target_edges):
                    if node is not None:
                        captures.setdefault(node, []).append((nr, idx))
                self.needed = _nodes_leading_to(root, set(captures), strict=True)
                # a captured node must receive its gradient even though it does not run
                self.runs = self.needed | set(captures)
        self.captured = [None] * (len(inputs) if inputs is not None else 0)
        self.watch = observe.ACTIVE
        self.watched = None

    def enter(self, fn, buf):
        """Before ``fn`` runs: captures and its tensor hooks. False when ``fn`` only captures."""
        captures, needed = self.captures, self.needed
        # grad() captures what reaches an input; like torch, a node that must also run is captured
        # before its tensor hooks (they run as part of the node), one that only captures after them
        early = captures is not None and fn in captures and fn in needed
        if early:
            _capture(captures[fn], buf, self.captured)
        if fn._tensor_pre_hooks is not None or fn._retains_grad is not None:
            _run_tensor_pre_hooks(fn, buf, self.graph)
        if captures is not None and not early and fn in captures:
            _capture(captures[fn], buf, self.captured)
        if needed is not None and fn not in needed:
            return False
        if self.watch:
            self.watched = observe.node_start(fn)
        return True

    def leave(self, fused):
        if self.watched is not None:
            observe.node_end(self.watched, fusion.last_region() if fused else ())
            self.watched = None

    def skips(self, node):
        """``node`` got all its gradients but neither runs nor captures (``inputs=`` / ``grad()``)."""
        return self.runs is not None and node not in self.runs


# Gradient ownership. The engine writes into a gradient array (sums a later gradient for the same
# input into it, or makes it a leaf's .grad without a copy) only when it owns it, and it owns an array
# only by construction: the array is the result of the engine's own sum or of its reduction to an
# input's shape, a fused region's output, or an output a generated node declares new
# (``_fresh_outputs``: made by one kernel call inside that node), and no one else has been handed it
# since. A node's post hooks, the consumer's pre hooks and tensor hooks all see the gradient, so an
# array that went through a hook is not owned; neither are the caller's root gradients, what a
# custom Function or a hand-written node returns, gradients passed through unchanged (``self: grad``)
# and every gradient when building a graph (``create_graph``: they are graph Tensors).
# ``owned`` maps a node to a bit mask over its input slots.


def _run(root, buffers, deps, keep_graph, general):
    """The backward loop: run ``root``, then every node whose gradients are complete, highest sequence
    number first (a heap; a lone ready node runs next without it), handing each output gradient to the
    buffer of the node it feeds and summing gradients that meet there. ``general``: the ``_General`` of
    the call (a plain ``backward()`` runs in ``_run_plain``)."""
    graph = general.graph
    fuse = not graph and _cfg.fusion_enabled and not anomaly._state.enabled
    runs = general.runs
    captures = general.captures
    owned = {}
    heap = []
    fn = root
    while True:
        buf = buffers.pop(fn)
        ready = None
        if not general.enter(fn, buf):
            fn = _next_node(heap)
            if fn is None:
                return
            continue
        fused = None
        if type(fn) is AccumulateGrad and not graph and fn._pre_hooks is None and fn._post_hooks is None:
            # the common leaf case: an owned gradient becomes .grad without a copy (unless a tensor hook
            # was handed it: the hook may keep it)
            g = buf[0]
            if g is not None:
                fresh = owned.pop(fn, 0) & 1 == 1 and fn._tensor_pre_hooks is None
                accumulate_into_leaf(fn.variable, Tensor._make(g), fresh=fresh)
        else:
            if fuse and fn._fusion is not None:
                g = buf[0]
                if g is not None and g.size >= _cfg.fusion_threshold:
                    # fn and the elementwise nodes behind it in one kernel (fusion.py)
                    fused = run_region(fn, g, deps, buffers, runs, captures, keep_graph)
            if fused is not None:
                fns, nrs, outs = fused
                fresh = -1  # every output of a fused region is a new array
            else:
                fns = fn._next_fns
                nrs = fn._next_nrs
                mask = 0  # the owned input slots: only an AccumulateGrad uses them once it runs
                if type(fn) is AccumulateGrad and fn._tensor_pre_hooks is None:
                    mask = owned.pop(fn, 0)
                outs = _call_function(fn, buf, graph, runs, mask)
                fresh = 0 if fn._post_hooks or graph else fn._fresh_outputs
                if not keep_graph:
                    fn._release_variables()
            # hand each gradient to the buffer of the node it feeds
            for i in range(len(fns)):
                nxt = fns[i]
                if nxt is None:
                    continue
                nr = nrs[i]
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
                        # ownership matters only for a slot that may receive more gradients or a leaf
                        if fresh >> i & 1 and (d or type(nxt) is AccumulateGrad):
                            owned[nxt] = owned.get(nxt, 0) | 1 << nr
                    elif graph:
                        b[nr] = old + g
                    else:
                        m = owned.get(nxt, 0)
                        if m >> nr & 1 and old.shape == g.shape and old.dtype == g.dtype:
                            np.add(old, g, old)
                        else:
                            s = b[nr] = old + g
                            if type(s) is np.ndarray:
                                owned[nxt] = m | 1 << nr
                if d == 0:
                    if general.skips(nxt):
                        buffers.pop(nxt, None)
                        owned.pop(nxt, None)
                        continue
                    if ready is None and not heap:
                        ready = nxt
                    else:
                        if ready is not None:
                            heapq.heappush(heap, (-ready._seq, next(_push_numbers), ready))
                            ready = None
                        heapq.heappush(heap, (-nxt._seq, next(_push_numbers), nxt))
        general.leave(fused is not None)
        if ready is not None:
            fn = ready
        elif heap:
            fn = heapq.heappop(heap)[2]
        else:
            return


def _run_plain(root, buffers, deps, keep_graph):
    """``_run`` for a plain ``backward()`` (no ``inputs``, ``create_graph``, anomaly mode or profiler):
    the same order, hooks and gradient ownership, with less work per node, the cost that limits graphs
    of many small ops. A node whose gradients become complete while the loop hands over gradients and
    that can run next (no other node is waiting in the heap) keeps its buffer in a local variable instead
    of ``buffers``; hook-free generated nodes are called inline; the fusion threshold is read once. A chain
    of generated elementwise nodes on small arrays runs on the compiled backward tape (tape.py) when it
    can: ``skip`` counts the nodes it left to this loop."""
    fuse = _cfg.fusion_enabled
    threshold = _cfg.fusion_threshold
    taping = _cfg.tape
    skip = 0
    owned = {}
    heap = []
    fn = root
    buf = buffers.pop(root)
    while True:
        if taping and fn._tape_kind is not None:
            if skip:
                skip -= 1
            else:
                skip = tape.run(fn, buf, deps, buffers, owned, heap, keep_graph)
                if skip == 0:  # the chain ran; what it completed waits in the heap
                    if not heap:
                        return
                    fn = heapq.heappop(heap)[2]
                    buf = buffers.pop(fn)
                    continue
                skip -= 1
        if fn._tensor_pre_hooks is not None or fn._retains_grad is not None:
            _run_tensor_pre_hooks(fn, buf, False)
        if type(fn) is AccumulateGrad:
            if fn._pre_hooks is None and fn._post_hooks is None:
                # an owned gradient becomes .grad without a copy (unless a tensor hook was handed it)
                g = buf[0]
                if g is not None:
                    fresh = owned.pop(fn, 0) & 1 == 1 and fn._tensor_pre_hooks is None
                    accumulate_into_leaf(fn.variable, Tensor._make(g), fresh=fresh)
            else:
                _call_function(fn, buf, False, None, 0 if fn._tensor_pre_hooks is not None else owned.pop(fn, 0))
                if not keep_graph:
                    fn._release_variables()
            n = 0
        else:
            fused = None
            if fuse and fn._fusion is not None:
                g = buf[0]
                if g is not None and g.size >= threshold:
                    # fn and the elementwise nodes behind it in one kernel (fusion.py)
                    fused = run_region(fn, g, deps, buffers, None, None, keep_graph)
            if fused is not None:
                fns, nrs, outs = fused
                n = len(fns)
                fresh = -1  # every output of a fused region is a new array
            else:
                fns = fn._next_fns
                nrs = fn._next_nrs
                n = len(fns)
                if fn._pre_hooks or fn._post_hooks:
                    outs = _call_function(fn, buf, False, None)
                    fresh = 0 if fn._post_hooks else fn._fresh_outputs
                else:
                    if n == 1:  # fn._needs(), inlined for one and two inputs
                        needs = _NEEDS[fns[0] is not None]
                    elif n == 2:
                        needs = (fns[0] is not None, fns[1] is not None)
                    else:
                        needs = fn._needs()
                    try:
                        outs = fn._apply_fast(buf, needs)
                    except Exception as exc:
                        _raise_backward_error(exc, fn, buf)
                    if len(outs) != n:
                        raise RuntimeError(f"Function {fn.name()} returned an invalid number of gradients - "
                                           f"expected {n}, but got {len(outs)}")
                    fresh = fn._fresh_outputs
                    # reduce or cast a gradient that does not match its input (unrolled for one and two)
                    meta = fn._in_meta
                    k = len(meta)
                    if k == 1 == n:
                        g = outs[0]
                        m = meta[0]
                        if g is not None and m is not None and (g.shape != m[0] or g.dtype != m[1]):
                            fresh |= _reduce_outputs(fn, outs)
                    elif k == 2 == n:
                        g = outs[0]
                        m = meta[0]
                        g2 = outs[1]
                        m2 = meta[1]
                        if (g is not None and m is not None and (g.shape != m[0] or g.dtype != m[1])) or (
                                g2 is not None and m2 is not None and (g2.shape != m2[0] or g2.dtype != m2[1])):
                            fresh |= _reduce_outputs(fn, outs)
                    else:
                        for g, m in zip(outs, meta):
                            if g is not None and m is not None and (g.shape != m[0] or g.dtype != m[1]):
                                fresh |= _reduce_outputs(fn, outs)
                                break
                if not keep_graph:
                    fn._release_variables()
        # hand each gradient to the buffer of the node it feeds; the first node that becomes ready keeps
        # its buffer here (``ready``/``ready_buf``) when nothing waits in the heap
        ready = None
        for i in range(n):
            nxt = fns[i]
            if nxt is None:
                continue
            nr = nrs[i]
            d = deps[nxt] - 1
            deps[nxt] = d
            g = outs[i]
            if d:
                b = buffers.get(nxt)
                if b is None:
                    b = buffers[nxt] = [None] * nxt._n_inputs
            else:
                b = buffers.pop(nxt, None)
                if b is None:
                    b = [None] * nxt._n_inputs
            if g is not None:
                old = b[nr]
                if old is None:
                    b[nr] = g
                    # ownership matters only for a slot that may receive more gradients or a leaf
                    if fresh >> i & 1 and (d or type(nxt) is AccumulateGrad):
                        owned[nxt] = owned.get(nxt, 0) | 1 << nr
                else:
                    m = owned.get(nxt, 0)
                    if m >> nr & 1 and old.shape == g.shape and old.dtype == g.dtype:
                        np.add(old, g, old)
                    else:
                        s = b[nr] = old + g
                        if type(s) is np.ndarray:
                            owned[nxt] = m | 1 << nr
            if d == 0:
                if ready is None and not heap:
                    ready = nxt
                    ready_buf = b
                else:
                    if ready is not None:
                        buffers[ready] = ready_buf
                        heapq.heappush(heap, (-ready._seq, next(_push_numbers), ready))
                        ready = None
                    buffers[nxt] = b
                    heapq.heappush(heap, (-nxt._seq, next(_push_numbers), nxt))
        if ready is not None:
            fn = ready
            buf = ready_buf
        elif heap:
            fn = heapq.heappop(heap)[2]
            buf = buffers.pop(fn)
        else:
            return


def _next_node(heap):
    return heapq.heappop(heap)[2] if heap else None


def _reduce_outputs(fn, outs):
    """``_validate_outputs`` on the plain path; returns the mask of outputs it replaced by new arrays
    (reduced to the input's shape or cast to its dtype)."""
    before = list(outs)
    _validate_outputs(fn, outs, False)
    made = 0
    for i, g in enumerate(outs):
        if g is not before[i] and not np.may_share_memory(g, before[i]):  # not a reshaped view
            made |= 1 << i
    return made


def _accumulate_owned(fn, buf, fresh):
    """AccumulateGrad run with its hooks. An owned gradient that no hook was handed becomes ``.grad``
    without a copy. When the gradient starts a new ``.grad``, the node's post hooks are handed that
    ``.grad`` as their gradient: torch's AccumulateGrad steals a gradient nothing else holds (a pre hook's
    fresh result), so its post hooks see the very tensor that became ``.grad``, post-accumulate-grad
    hooks' changes included; a copy made because the gradient may be held elsewhere shows the same."""
    g = buf[0]
    if g is not None:
        var = fn.variable
        first = var._grad is None
        accumulate_into_leaf(var, Tensor._make(g), fresh=fresh)
        new = var._grad
        if first and new is not None and type(new._array) is np.ndarray and new._array.shape == g.shape \
                and new._array.dtype == g.dtype:
            buf[0] = new._array
    return []


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
        for nxt in fn._next_fns:
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
            hit = any(memo.get(n, False) or (n in targets) for n in fn._next_fns if n is not None)
            memo[fn] = hit or (fn in targets and not strict)
            continue
        if fn in memo:
            continue
        memo[fn] = False
        order.append(fn)
        stack.append((fn, True))
        for n in fn._next_fns:
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


def _call_function(fn, buf, graph, needed, mask=0):
    """Run ``fn`` with its pre and post hooks, anomaly mode and ``create_graph``; ``mask``: the input
    slots whose gradients the engine owns (an AccumulateGrad may take them as ``.grad``)."""
    if fn._pre_hooks:
        mask = 0
        buf = [_unwrap(g, graph) for g in _run_tuple_hooks(fn._pre_hooks, tuple(_wrap(g, graph) for g in buf))]
    if needed is None:
        needs = fn._needs()
    else:
        needs = tuple(n is not None and n in needed for n in fn._next_fns)
    anomaly_on = anomaly._state.enabled
    if anomaly_on:
        parent = anomaly.set_current_node(fn)
    try:
        if not graph and type(fn) is AccumulateGrad:
            outs = _accumulate_owned(fn, buf, mask & 1 == 1)
        else:
            outs = fn._apply_graph(buf, needs) if graph else fn._apply_fast(buf, needs)
    except Exception as exc:
        if anomaly_on:
            _report_anomaly(fn)
        _raise_backward_error(exc, fn, buf)
    finally:
        if anomaly_on:
            anomaly.set_current_node(parent)
    if len(outs) != len(fn._next_fns):
        raise RuntimeError(f"Function {fn.name()} returned an invalid number of gradients - expected "
                           f"{len(fn._next_fns)}, but got {len(outs)}")
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
        if data.dtype != dtype and type(fn._next_fns[i]) is AccumulateGrad:
            # a leaf's gradient takes its grad_dtype (None: any), which may differ from its dtype
            want = fn._next_fns[i].variable._grad_np_dtype()
            dtype = data.dtype if want is None else want
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


def _raise_backward_error(exc, fn, grads):
    """Re-raise an exception from ``fn``'s backward, naming the node. One that escaped numpy or Numba
    (a backward helper's numpy call refusing its arrays) becomes torch's RuntimeError naming the node and
    the incoming gradients' shapes and dtypes."""
    if _kernel_errors.is_foreign(exc) or _raised_by_compiled_code(exc, fn):
        arrays = [getattr(g, "_array", g) for g in grads if g is not None]
        descriptions = [_kernel_errors.describe_array(a) for a in arrays if hasattr(a, "shape")]
        error = RuntimeError(_kernel_errors.message(exc, fn.name(), descriptions))
        error.add_note(f"(raised while computing the backward of {fn.name()})")
        raise error from None
    exc.add_note(f"(raised while computing the backward of {fn.name()})")
    raise exc


def _raised_by_compiled_code(exc, fn):
    """True when no Python ``raise`` made ``exc``: its innermost frame is derivgen's own code (the package,
    or the module of ``fn``'s class, e.g. generated/) calling into compiled code (numpy's C loops refusing
    broadcast shapes or an index). A user's hook or Function raises from the user's own file instead and
    passes unchanged."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return False
    path = os.path.abspath(last.tb_frame.f_code.co_filename)
    module = sys.modules.get(type(fn).__module__)
    own = (_PACKAGE_DIR,) + ((os.path.dirname(os.path.abspath(module.__file__)) + os.sep,)
                             if getattr(module, "__file__", None) else ())
    if not path.startswith(own) or path.startswith(_AUTOGRAD_FUNCTION_FILE):
        return False
    return not linecache.getline(path, last.tb_lineno).lstrip().startswith("raise")


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# custom Functions' and hooks' user code is called from here: what it raises is the user's
_AUTOGRAD_FUNCTION_FILE = os.path.join(_PACKAGE_DIR, "autograd") + os.sep
