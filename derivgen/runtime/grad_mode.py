"""Grad mode: per-thread switches, usable as context managers and decorators (like torch)."""
import functools
import threading

_state = threading.local()


def is_grad_enabled():
    return getattr(_state, "enabled", True)


def _set_enabled(flag):
    _state.enabled = bool(flag)


def is_inference_mode_enabled():
    return getattr(_state, "inference", False)


class _DecoratorContextManager:
    """Base for grad-mode switches: ``with no_grad():`` and ``@no_grad()`` both work."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)
        return wrapper

    def _args(self):
        return ()


class no_grad(_DecoratorContextManager):
    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_enabled(False)

    def __exit__(self, *exc):
        _set_enabled(self.prev)
        return False


class enable_grad(_DecoratorContextManager):
    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_enabled(True)

    def __exit__(self, *exc):
        _set_enabled(self.prev)
        return False


class set_grad_enabled(_DecoratorContextManager):
    def __init__(self, mode):
        self.mode = bool(mode)
        self.prev = is_grad_enabled()
        _set_enabled(self.mode)  # like torch: takes effect on construction too

    def _args(self):
        return (self.mode,)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_enabled(self.prev)
        return False


class inference_mode(_DecoratorContextManager):
    def __init__(self, mode=True):
        self.mode = bool(mode)

    def _args(self):
        return (self.mode,)

    def __enter__(self):
        self.prev = (is_grad_enabled(), is_inference_mode_enabled())
        if self.mode:
            _set_enabled(False)
            _state.inference = True

    def __exit__(self, *exc):
        _set_enabled(self.prev[0])
        _state.inference = self.prev[1]
        return False
