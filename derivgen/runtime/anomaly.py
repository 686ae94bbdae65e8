"""Anomaly mode: record the forward traceback of each node so a failing backward can name it."""
import threading
import traceback


class _AnomalyState:
    enabled = False
    check_nan = True


_state = _AnomalyState()
_lock = threading.Lock()


def record_forward_trace(node):
    node.metadata["traceback_"] = "".join(traceback.format_stack()[:-3])


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
    def __init__(self, check_nan=True):
        self.check_nan_arg = check_nan
        self.prev = None

    def __enter__(self):
        self.prev = (_state.enabled, _state.check_nan)
        _state.enabled = True
        _state.check_nan = self.check_nan_arg
        return self
