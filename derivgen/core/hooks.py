"""Hook registration shared by tensors and nodes: a weakly referenceable dict of hooks and the handle
``register_*hook`` returns (``remove()`` unregisters, also as a context manager), as torch's
``RemovableHandle``."""
import weakref


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters the hook."""
    _next_id = [0]

    __slots__ = ("_dict_ref", "id")

    def __init__(self, hooks_dict):
        self._dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle._next_id[0]
        RemovableHandle._next_id[0] += 1

    def remove(self):
        d = self._dict_ref()
        if d is not None:
            d.pop(self.id, None)

    def __getstate__(self):
        # the dict itself, so that pickling or deep-copying its owner keeps the handle pointing at the copy
        return (self._dict_ref(), self.id)

    def __setstate__(self, state):
        hooks, self.id = state
        self._dict_ref = weakref.ref(hooks if hooks is not None else _HookDict())  # None: a dead reference
        RemovableHandle._next_id[0] = max(RemovableHandle._next_id[0], self.id + 1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _HookDict(dict):
    """A dict that can be weakly referenced (hook handles hold it weakly, as torch does)."""
    __slots__ = ("__weakref__",)


def add_hook(hooks, fn):
    if hooks is None:
        hooks = _HookDict()
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return hooks, handle


def add_ordered_hook(hooks, fn, prepend=False):
    """Adds ``fn`` to the ordered dict ``hooks`` (an ``OrderedDict`` owned by a module, optimizer or the
    global hook tables), last or, with ``prepend``, first; returns its handle."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle
