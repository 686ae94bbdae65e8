"""``saved_tensors_hooks(pack, unpack)``: transform tensors as they are saved for backward."""
import threading

class _State(threading.local):
    stack = None  # a class default: reading it in a thread that never set it costs no AttributeError
    disabled_message = None  # set by disable_saved_tensors_hooks: registering hooks raises it


_tls = _State()


def current():
    stack = _tls.stack
    return stack[-1] if stack else None


class saved_tensors_hooks:
    def __init__(self, pack_hook, unpack_hook):
        self.hooks = (pack_hook, unpack_hook)

    def __enter__(self):
        if _tls.disabled_message is not None:
            raise RuntimeError(_tls.disabled_message)
        if _tls.stack is None:
            _tls.stack = []
        _tls.stack.append(self.hooks)
        return self

    def __exit__(self, *exc):
        _tls.stack.pop()
        return False


class disable_saved_tensors_hooks:
    """Within it, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self.prev = _tls.disabled_message
        _tls.disabled_message = self.error_message
        return self

    def __exit__(self, *exc):
        _tls.disabled_message = self.prev
        return False
