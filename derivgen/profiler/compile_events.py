"""Numba compilations as profile events, through Numba's own event API (``numba:compile``): a kernel
compiled lazily on first use, and a fused backward kernel built for a new chain shape (its module
lives in the fused-kernel directory, named ``fused_...``)."""
import threading

from numba.core import event as _numba_event

from derivgen.profiler.events import Event, now_ns, thread_id

_listeners = {}
_lock = threading.Lock()


def _kernel_name(data):
    disp = data.get("dispatcher") if isinstance(data, dict) else None
    fn = getattr(disp, "py_func", None)
    if fn is None:
        return "numba::compile", False
    module = getattr(fn, "__module__", "") or ""
    fused = "fused" in module.rsplit(".", 1)[-1] or "fused" in getattr(fn.__code__, "co_filename", "")
    return f"{module}.{fn.__qualname__}", fused


class _Listener(_numba_event.Listener):
    def __init__(self, profile):
        self.profile = profile
        self.open = {}

    def on_start(self, ev):
        self.open[(thread_id(), id(ev.data.get("dispatcher")) if isinstance(ev.data, dict) else 0)] = now_ns()

    def on_end(self, ev):
        key = (thread_id(), id(ev.data.get("dispatcher")) if isinstance(ev.data, dict) else 0)
        start = self.open.pop(key, None)
        if start is None:
            return
        name, fused = _kernel_name(ev.data)
        prefix = "derivgen::build_fused_kernel: " if fused else "numba::compile: "
        self.profile._add(Event(prefix + name, "compile", start, now_ns(), thread_id()))


def listen(profile):
    listener = _Listener(profile)
    with _lock:
        _listeners[id(profile)] = listener
    _numba_event.register("numba:compile", listener)


def unlisten(profile):
    with _lock:
        listener = _listeners.pop(id(profile), None)
    if listener is not None:
        _numba_event.unregister("numba:compile", listener)
