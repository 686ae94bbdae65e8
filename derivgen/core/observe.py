"""The switch between the runtime and whoever watches it run (the profiler, the recorder of the
backward's execution order that ``derivgen.viz`` draws).

``ACTIVE`` is the one flag the hot paths read: each generated op tests it on entry and ``backward()``
tests it once per call. It is False unless an observer is registered, so watching costs nothing when
no one watches. Observers live in higher layers and register themselves here; this module imports
nothing of the runtime.

An observer has four methods, each given what it needs and returning a token handed back at the end:
``op_start(name, args) -> token``, ``op_end(token, result)``, ``node_start(node) -> token`` and
``node_end(token, fused_with)`` (``fused_with``: the other nodes a fused region ran in the same kernel).

An interceptor (``derivgen.func``'s vmap) is a callable ``(name, fn, kwargs) -> result or NotImplemented``
asked before an op runs: it may compute the op's result itself (a batching rule), in which case the op
function does not run and observers see the ops the rule runs instead.
"""
import threading

ACTIVE = False
_observers = []
_interceptors = []
_lock = threading.Lock()


class _Current(threading.local):
    fn = None  # the op function this thread is recording now (its body runs without recording again)


_current = _Current()


def _add(watchers, watcher):
    global ACTIVE
    with _lock:
        watchers.append(watcher)
        ACTIVE = True


def _remove(watchers, watcher):
    global ACTIVE
    with _lock:
        if watcher in watchers:
            watchers.remove(watcher)
        ACTIVE = bool(_observers or _interceptors)


def add_observer(observer):
    _add(_observers, observer)


def remove_observer(observer):
    _remove(_observers, observer)


def add_interceptor(interceptor):
    _add(_interceptors, interceptor)


def remove_interceptor(interceptor):
    _remove(_interceptors, interceptor)


def wanted(fn):
    """Whether a call of op function ``fn`` should be recorded: not when it is the call ``call_op``
    itself makes."""
    return _current.fn is not fn


def call_op(name, fn, kwargs):
    """Run ``fn(**kwargs)`` (a generated op) between every observer's ``op_start`` and ``op_end``, unless
    an interceptor computes the result."""
    for intercept in list(_interceptors):
        result = intercept(name, fn, kwargs)
        if result is not NotImplemented:
            return result
    observers = list(_observers)
    cur = _current
    prev, cur.fn = cur.fn, fn
    result = None
    tokens = []
    try:
        # op_start sees the op function in ``current_fn()`` (forward AD picks its rule by it)
        tokens = [o.op_start(name, kwargs) for o in observers]
        result = fn(**kwargs)
    finally:
        cur.fn = prev
        for o, t in zip(observers, tokens):
            o.op_end(t, result)
    return result


def current_fn():
    """The op function ``call_op`` is running on this thread (None outside one)."""
    return _current.fn


def node_start(node):
    return [(o, o.node_start(node)) for o in list(_observers)]


def node_end(tokens, fused_with=()):
    for o, t in tokens:
        o.node_end(t, fused_with)
