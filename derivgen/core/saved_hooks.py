"""``saved_tensors_hooks(pack, unpack)``: transform tensors as they are saved for backward."""
import threading

class _State(threading.local):
    stack = None  # a class default: reading it in a thread that never set it costs no AttributeError
    disabled_message = None  # set by disable_saved_tensors_hooks: registering hooks raises it


_tls = _State()

# How many hook pairs are pushed in all threads together. Every saved value asks for the current hooks;
# while none are pushed anywhere, this plain module global answers without the thread-local read:
# ``saved_hooks.pushed and saved_hooks._tls.stack``.
pushed = 0
_pushed_lock = threading.Lock()


def _count(n):
    global pushed
    with _pushed_lock:
        pushed += n


def set_stack(hooks):
    """Make ``hooks`` (a list of (pack, unpack) pairs) this thread's stack, in place of its own."""
    _count(len(hooks) - len(_tls.stack or ()))
    _tls.stack = hooks


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
        _count(1)
        return self

    def __exit__(self, *exc):
        _tls.stack.pop()
        _count(-1)
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
