"""``profile`` (the context manager that records), ``record_function`` and ``ProfilerActivity``."""
import enum
import functools
import json
import threading
import warnings

from derivgen.core import observe
from derivgen.core.node import peek_sequence_nr
from derivgen.profiler import compile_events
from derivgen.profiler.events import (ENGINE_PREFIX, Event, created_node, node_sequence_nr, now_ns, shapes_of,
                                      thread_id, user_stack)


class ProfilerActivity(enum.Enum):
    CPU = "CPU"


_active = []  # profiles recording now (record_function reports to each)
_active_lock = threading.Lock()


class profile:
    """Record ops, backward nodes and compilations between ``__enter__`` and ``__exit__``.

    ``activities`` may only hold ``ProfilerActivity.CPU`` (derivgen runs on the CPU only);
    ``record_shapes`` keeps each op's input shapes; ``with_stack`` each op's Python call stack.
    ``profile_memory`` is not supported: it warns and records no memory."""

    def __init__(self, *, activities=None, record_shapes=False, with_stack=False, profile_memory=False, **unused):
        for a in activities or [ProfilerActivity.CPU]:
            if a is not ProfilerActivity.CPU:
                raise ValueError(f"derivgen.profiler records CPU activity only, got {a!r}")
        if profile_memory:
            warnings.warn("derivgen.profiler does not record memory; profile_memory=True is ignored", stacklevel=2)
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.events = []
        self._lock = threading.Lock()
        self._start_ns = None

    # ---- context manager -----------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self._start_ns = now_ns()
        with _active_lock:
            _active.append(self)
        observe.add_observer(self)
        compile_events.listen(self)

    def stop(self):
        compile_events.unlisten(self)
        observe.remove_observer(self)
        with _active_lock:
            if self in _active:
                _active.remove(self)

    def _add(self, event):
        with self._lock:
            self.events.append(event)

    # ---- observer interface (derivgen.core.observe) --------------------------------------------
    def op_start(self, name, kwargs):
        ev = Event(name, "cpu_op", now_ns(), tid=thread_id())
        if self.record_shapes:
            ev.input_shapes = shapes_of(kwargs.values())
        if self.with_stack:
            ev.stack = user_stack()
        return ev, peek_sequence_nr()

    def op_end(self, token, result):
        ev, seq_before = token
        ev.end_ns = now_ns()
        node = created_node(result, seq_before)
        if node is not None:
            ev.seq = node._sequence_nr()
        self._add(ev)

    def node_start(self, node):
        return node, now_ns()

    def node_end(self, token, fused_with):
        node, start = token
        end = now_ns()
        seq = node_sequence_nr(node)
        tid = thread_id()
        outer = Event(ENGINE_PREFIX + node.name(), "cpu_op", start, end, tid, seq, is_backward=True)
        inner = Event(node.name(), "cpu_op", start, end, tid, seq, is_backward=True)
        others = [n for n in fused_with if n is not node]
        if others:  # the nodes that ran in the same kernel as this one
            outer.extra["Fused nodes"] = [n.name() for n in others]
            outer.extra["Fused sequence numbers"] = [node_sequence_nr(n) for n in others]
        self._add(outer)
        self._add(inner)

    # ---- results ---------------------------------------------------------------------------------
    def key_averages(self, group_by_input_shape=False):
        from derivgen.profiler.table import key_averages
        return key_averages(self._sorted_events(), group_by_input_shape)

    def events_list(self):
        return self._sorted_events()

    def _sorted_events(self):
        with self._lock:
            return sorted(self.events, key=lambda e: (e.start_ns, -e.end_ns))

    def export_chrome_trace(self, path):
        from derivgen.profiler.chrome import chrome_trace
        with open(path, "w") as fh:
            json.dump(chrome_trace(self._sorted_events(), self._start_ns or 0), fh)


class record_function:
    """A named range in the profile (``with record_function("model"):`` or as a decorator)."""

    def __init__(self, name, args=None):
        self.name = name
        self._ev = None

    def __enter__(self):
        if _active:
            self._ev = Event(self.name, "user_annotation", now_ns(), tid=thread_id())
        return self

    def __exit__(self, *exc):
        ev, self._ev = self._ev, None
        if ev is not None:
            ev.end_ns = now_ns()
            for p in list(_active):
                p._add(ev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)
        return wrapped
