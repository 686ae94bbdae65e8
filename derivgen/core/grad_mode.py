"""Grad mode: per-thread switches, usable as context managers and decorators (like torch)."""
import functools
import inspect
import threading

class _State(threading.local):
    # class defaults: each thread starts with grad on and inference mode off, and reading them costs
    # no AttributeError (this is read on every op)
    enabled = True
    inference = False


_state = _State()

# How many inference-mode contexts are open in all threads: every new tensor asks whether it is made
# under inference mode, and this plain global lets it skip the thread-local read while none is open.
inference_contexts = [0]


# How many threads have grad mode off. Every op asks whether grad mode is on; while no thread has
# switched it off, this plain module global answers without the thread-local read (which costs as much
# as a dozen plain attribute reads): ``not grad_mode.off_threads or grad_mode._state.enabled``. A thread
# that ends with grad mode off leaves the count above 0, which only sends ops to the thread-local read.
off_threads = 0
_off_threads_lock = threading.Lock()


def is_grad_enabled():
    return not off_threads or _state.enabled


def _set_enabled(flag):
    global off_threads
    flag = bool(flag)
    with _off_threads_lock:
        if flag != _state.enabled:
            off_threads += -1 if flag else 1
        _state.enabled = flag


def is_inference_mode_enabled():
    return _state.inference


class _DecoratorContextManager:
    """Base for grad-mode switches: ``with no_grad():`` and ``@no_grad()`` both work."""

    def __call__(self, fn):
        if inspect.isclass(fn):
            # torch still decorates a class (its construction runs in the mode), with a deprecation warning
            import warnings
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should only "
                          "decorate functions or methods. To preserve the current behavior of class decoration, you "
                          "can directly decorate the `__init__` method and nothing else.", FutureWarning, stacklevel=2)
            cls = fn

            def fn(*args, **kwargs):
                return cls(*args, **kwargs)
        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)
        return wrapper

    def _wrap_generator(self, fn):
        """Like torch: the mode holds while the generator's own code runs, not while its caller runs."""
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with self.__class__(*self._args()):
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.__class__(*self._args()):
                            gen.close()
                        raise
                    except BaseException as exc:  # noqa: BLE001 - forwarded into the generator
                        with self.__class__(*self._args()):
                            response = gen.throw(exc)
                    else:
                        with self.__class__(*self._args()):
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value
        return wrapper

    def _args(self):
        return ()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    def __enter__(self):
        self.prev = is_grad_enabled()
        _set_enabled(False)

    def __exit__(self, *exc):
        _set_enabled(self.prev)
        return False


class enable_grad(_NoParamDecoratorContextManager):
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

    def __call__(self, fn):
        _set_enabled(self.prev)  # as a decorator, construction must not change the mode (torch does the same)
        return super().__call__(fn)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_enabled(self.prev)
        return False


class inference_mode(_DecoratorContextManager):
    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # bare ``@inference_mode``

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def _args(self):
        return (self.mode,)

    def __enter__(self):
        self.prev = (is_grad_enabled(), is_inference_mode_enabled())
        # torch's InferenceMode(enabled): grad mode is the opposite of the inference flag it sets
        _set_enabled(not self.mode)
        _state.inference = self.mode
        inference_contexts[0] += 1

    def __exit__(self, *exc):
        _set_enabled(self.prev[0])
        _state.inference = self.prev[1]
        inference_contexts[0] -= 1
        return False
