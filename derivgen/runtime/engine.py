"""The backward engine (torch's ``Engine::execute`` in Python).

Dependencies are counted per edge from the roots; gradients for the same (node, slot) are summed in a
per-node buffer; ready nodes run from a priority queue, highest sequence number first (AccumulateGrad
carries UINT64_MAX, so a leaf's gradient is written as soon as it is complete). Each gradient is reduced
to its input's shape and cast to its dtype before it travels on. Saved values are released after a node
runs unless the graph is kept.
"""
import heapq
import itertools
import warnings

from . import anomaly
from .node import AccumulateGrad, GraphRoot, gradient_edge
from .shape_utils import is_expandable_to, sum_to


def execute(roots, grads, keep_graph, create_graph, inputs=None, accumulate_grad=True):
    """Run backward from ``roots`` (Tensors) seeded with ``grads`` (arrays, or Tensors when
    ``create_graph``). With ``inputs`` and ``accumulate_grad=False`` (``autograd.grad``) the gradients
    reaching ``inputs`` are captured and returned instead of accumulated; with ``inputs`` and
    ``accumulate_grad=True`` (``backward(inputs=...)``) only those inputs are accumulated into."""
    from .grad_mode import enable_grad, set_grad_enabled
    graph = create_graph
    root_edges = [gradient_edge(t) for t in roots]
    if len(root_edges) == 1:
        root, slot = root_edges[0]
        buffers = {root: [None] * root._n_inputs}
        buffers[root][slot] = grads[0]
    else:
        root = GraphRoot(root_edges, grads)
        buffers = {root: []}

    deps = _compute_dependencies(root)
    captures = None
    needed = None
    if inputs is not None:
        target_edges = [gradient_edge(t) for t in inputs]
        if accumulate_grad:
            for t in inputs:
                if t.grad_fn is not None:
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
    captured = [None] * (len(inputs) if inputs is not None else 0)

    mode = enable_grad() if graph else set_grad_enabled(False)
    counter = itertools.count()
    heap = [(-root._seq, next(counter), root)]
    with mode:
        while heap:
            fn = heapq.heappop(heap)[2]
            buf = buffers.pop(fn)
            if fn._tensor_pre_hooks is not None or fn._retains_grad is not None:
                _run_tensor_pre_hooks(fn, buf, graph)
            if captures is not None:
                for nr, idx in captures.get(fn, ()):
                    g = buf[nr]
                    captured[idx] = g if captured[idx] is None or g is None else captured[idx] + g
            if needed is not None and fn not in needed:
                continue
            outs = _call_function(fn, buf, graph, needed if captures is None else needed_or_captured)
            if not keep_graph:
                fn._release_variables()
            nexts = fn._next
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
                    b[nr] = g if old is None else old + g
                if d == 0:
                    if needed is not None and nxt not in needed and (captures is None or nxt not in captures):
                        buffers.pop(nxt, None)
                        continue
                    heapq.heappush(heap, (-nxt._seq, next(counter), nxt))
    return captured


def _compute_dependencies(root):
    deps = {}
    stack = [root]
    seen = {root}
    while stack:
        fn = stack.pop()
        for nxt, _ in fn._next:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
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
    from .tensor import Tensor
    return g if graph or g is None else Tensor._make(g)


def _unwrap(t, graph):
    return t if graph or t is None else t.data


def _run_tensor_pre_hooks(fn, buf, graph):
    if fn._tensor_pre_hooks is not None:
        for slot, hooks in fn._tensor_pre_hooks.items():
            for hook in list(hooks.values()):
                if buf[slot] is None:
                    continue
                res = hook(_wrap(buf[slot], graph))
                if res is not None:
                    buf[slot] = _unwrap(res, graph)
    if fn._retains_grad is not None:
        from .tensor import Tensor
        for slot, ref in fn._retains_grad.items():
            t = ref()
            g = buf[slot]
            if t is None or g is None:
                continue
            gt = g if graph else Tensor._make(g.copy())
            t._grad = gt if t._grad is None else t._grad + gt


def _call_function(fn, buf, graph, needed):
    if fn._pre_hooks:
        for hook in list(fn._pre_hooks.values()):
            res = hook(tuple(_wrap(g, graph) for g in buf))
            if res is not None:
                buf = [_unwrap(g, graph) for g in res]
    if needed is None:
        needs = tuple(e[0] is not None for e in fn._next)
    else:
        needs = tuple(e[0] is not None and e[0] in needed for e in fn._next)
    try:
        outs = fn._apply_graph(buf, needs) if graph else fn._apply_fast(buf, needs)
    except Exception as exc:
        if anomaly._state.enabled:
            _report_anomaly(fn)
        exc.add_note(f"(raised while computing the backward of {fn.name()})")
        raise
    if len(outs) != len(fn._next):
        raise RuntimeError(f"Function {fn.name()} returned an invalid number of gradients - expected "
                           f"{len(fn._next)}, but got {len(outs)}")
    outs = _validate_outputs(fn, outs, graph)
    if anomaly._state.enabled and anomaly._state.check_nan:
        _check_nan(fn, outs, graph)
    if fn._post_hooks:
        for hook in list(fn._post_hooks.values()):
            res = hook(tuple(_wrap(g, graph) for g in outs), tuple(_wrap(g, graph) for g in buf))
            if res is not None:
                outs = [_unwrap(g, graph) for g in res]
    return outs


def _validate_outputs(fn, outs, graph):
    meta = fn._in_meta
    for i, g in enumerate(outs):
        if g is None or i >= len(meta) or meta[i] is None:
            continue
        shape, dtype = meta[i]
        data = g.data if graph else g
        if data.shape != shape:
            if not is_expandable_to(shape, data.shape):
                raise RuntimeError(f"Function {fn.name()} returned an invalid gradient at index {i} - got "
                                   f"{list(data.shape)} but expected shape compatible with {list(shape)}")
            if graph:
                from .formula_fns import sum_to_graph
                g = sum_to_graph(g, shape)
            else:
                g = sum_to(g, shape)
        data = g.data if graph else g
        if data.dtype != dtype:
            if graph:
                from .dtypes import from_numpy_dtype
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
        data = g.data if graph else g
        if data.dtype.kind == "f" and np.isnan(data).any():
            _report_anomaly(fn)
            raise RuntimeError(f"Function '{fn.name()}' returned nan values in its {i}th output.")


def _report_anomaly(fn):
    trace = fn._metadata.get("traceback_") if fn._metadata else None
    if trace is None:
        warnings.warn(f"Error detected in {fn.name()}. No forward pass information available. "
                      "Enable detect anomaly during forward pass for more information.", stacklevel=4)
    else:
        warnings.warn(f"Error detected in {fn.name()}. Traceback of forward call that caused the error:\n{trace}",
                      stacklevel=4)


def is_accumulate_grad(fn):
    return isinstance(fn, AccumulateGrad)
