"""A deferred elementwise value: what a LazyTensor holds until its value is needed.

Kept free of imports so that every core module (node.py, tensor.py) can test for it cheaply.
``derivgen.engine.fusion`` creates, compiles and computes these (it installs its compiler as
``Pending.compute`` when imported); see its docstring for the rules.
"""
import threading
import weakref

# Every Pending not yet computed. In-place ops flush them first (``flush``), so a deferred value
# always sees its inputs as they were when the op was called. The lock keeps the set consistent when
# several threads defer and flush at once (only large ops get here, so it costs nothing measurable).
LIVE = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()
# The set of weak references behind LIVE, for hot paths: its truth test is one C call where the
# WeakSet's ``__len__`` is a Python one. It may still hold a reference whose Pending just died; a true
# answer only sends the caller down its general path, which flushes.
LIVE_REFS = LIVE.data


def snapshot():
    with _LIVE_LOCK:
        return list(LIVE)


def discard(p):
    with _LIVE_LOCK:
        LIVE.discard(p)


def flush():
    """Compute every pending value (before an in-place write may change one of their inputs)."""
    for p in snapshot():
        p.materialize()


class Pending:
    """``op(*args, *scalars)`` elementwise over arrays of one ``shape`` and float ``dtype``.

    ``args`` are contiguous arrays of that shape, other Pendings, or numbers of ``dtype`` (0-dim
    inputs); ``scalars`` are the op's number arguments. ``value`` is the array once computed, after
    which ``args`` are dropped so the inputs can be freed. ``siblings`` are Pendings computed in the
    same kernel as this one (a value and its forward-mode tangent, which read the same inputs).
    """
    __slots__ = ("op", "args", "scalars", "shape", "dtype", "n_ops", "value", "siblings", "__weakref__")
    compute = None  # the fusion engine's ``compute(pending)``; every Pending is made by that engine

    def __init__(self, op, args, scalars, shape, dtype, n_ops):
        self.op = op
        self.args = args
        self.scalars = scalars
        self.shape = shape
        self.dtype = dtype
        self.n_ops = n_ops
        self.value = None
        self.siblings = ()
        with _LIVE_LOCK:
            LIVE.add(self)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def materialize(self):
        if self.value is None:
            self.compute()
        return self.value

    def __repr__(self):
        state = "computed" if self.value is not None else f"{self.n_ops} op(s) deferred"
        return f"<Pending {self.op.scalar.__name__} {list(self.shape)} {self.dtype} ({state})>"
