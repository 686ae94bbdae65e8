"""Anomaly mode: record the forward traceback of each node so a failing backward can name it."""
import threading
import traceback


class _AnomalyState:
    enabled = False
    check_nan = True


_state = _AnomalyState()
_lock = threading.Lock()


_tls = threading.local()


def record_forward_trace(node):
    """torch's ``store_stack`` + ``assign_parent``: ``metadata["traceback_"]`` is the forward stack (a
    list of lines, as torch stores it) and ``metadata["parent_"]`` the node whose backward created this
    one (double backward)."""
    node.metadata["traceback_"] = traceback.format_stack()[:-3]
    parent = getattr(_tls, "current", None)
    if parent is not None:
        node.metadata["parent_"] = parent


def set_current_node(node):
    """Mark ``node`` as the one whose backward is running on this thread; returns the previous one."""
    prev = getattr(_tls, "current", None)
    _tls.current = node
    return prev


def _warn(message):
    """A UserWarning, as torch's TORCH_WARN; while the backward error propagates a warning that the filters turn
    into an exception must not replace that error, so, as torch does, it is printed to stderr instead."""
    import sys
    import warnings
    try:
        warnings.warn(message, stacklevel=6)
    except Warning as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)


def report(node):
    """Warn with the forward traceback of ``node`` and of every node whose backward created it."""
    meta = node._metadata or {}
    trace = meta.get("traceback_")
    if trace is None:
        _warn(f"Error detected in {node.name()}. No forward pass information available. Enable detect "
              "anomaly during forward pass for more information.")
        return
    _warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n" + "".join(trace))
    parent = meta.get("parent_")
    while parent is not None:
        pmeta = parent._metadata or {}
        _warn(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of forward call that "
              "induced the previous calculation:\n" + "".join(pmeta.get("traceback_", ())))
        parent = pmeta.get("parent_")


def is_anomaly_enabled():
    return _state.enabled


def is_anomaly_check_nan_enabled():
    return _state.check_nan


class set_detect_anomaly:
    """``set_detect_anomaly(True)`` switches anomaly detection on (also usable as a context manager)."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_state.enabled, _state.check_nan)
        _state.enabled = bool(mode)
        _state.check_nan = bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self.prev
        return False


class detect_anomaly(set_detect_anomaly):
    """``with detect_anomaly():`` or ``@detect_anomaly()``: anomaly detection inside the block."""

    def __init__(self, check_nan=True):
        import warnings
        self.check_nan_arg = check_nan
        self.prev = None
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper

    def __enter__(self):
        self.prev = (_state.enabled, _state.check_nan)
        _state.enabled = True
        _state.check_nan = self.check_nan_arg
        return self
