"""The compiled backward tape: a chain of generated elementwise nodes on small arrays, run by one Numba call.

On graphs of many small ops (a chain of 2,000 ops on 8 elements) the engine's time goes to calling each
node from Python, not to the kernels. When the plain loop (``_run_plain`` in execute.py) reaches a node
whose row is on the tape (derivgen/codegen/tape.py) with a float32 or float64 gradient of at most
``MAX_ELEMENTS`` elements, ``run`` follows the chain behind it, writing per node its kind, the row of the
tape's gradient array that holds its gradient and the rows its gradients go to; the node's
``_tape_gather`` hands over its saved arrays and numbers. One kernel (tape_kernels.py) then runs the
whole chain, and the gradients leaving it reach the engine's buffers as if each node had run.

Order and sums. A node joins the chain when it is the one node the previous one completes and it
outranks every node waiting in the engine's heap: the engine would run it next (highest sequence number
first), so the tape runs the nodes in the engine's order. The gradients inside the chain take two rows of
the gradient array in turn; every node outside it that the chain feeds (a leaf's AccumulateGrad, a node of
another kind) has a row of its own, which starts from the gradient the node already had, if any, and adds
what the chain sends in the order it is sent: the engine's sum, bit for bit. The chain ends after a node
that completes a node outside it (one the engine would run next: a node of another kind, or a leaf whose
accumulator or tensor has hooks; a hook-free leaf's accumulation is not observable before the chain's
end, and runs right after it), and before a node the engine must run itself: one with hooks or
``retain_grad``, an input of another shape or dtype, saved values that are not intact (a version bumped,
released, saved-tensor hooks), or a gradient for an output of a multi-output node other than the first.
That node then runs on the plain loop, with its errors.

Compiling. A kernel covers the node kinds it was made for and takes seconds to compile, once per machine
(Numba caches it). So a program's first backwards run without the tape: chains of at least
``settings.tape_min_run`` nodes of kinds no kernel covers are counted, and once
``settings.tape_compile_after`` of their nodes have run on the plain loop, or at once when the kernel of
their kinds was written by an earlier process, the kernel of the kinds seen so far is made. Later chains
use it for the nodes whose kinds it covers; the others count toward the next kernel in the same way.
"""
import heapq
import threading

import numpy as np

from derivgen.config import settings as _cfg
from derivgen.core.node import AccumulateGrad
from derivgen.engine import tape_kernels
from derivgen.engine.ready_queue import push_numbers as _push_numbers
from derivgen.kernels.dispatch import _zero_of

# Gradients of at most this many elements. Beyond, a node's kernels take longer than the engine's work
# around them, and the tape's copy of the saved arrays (one more pass over them) stops being small.
MAX_ELEMENTS = 4096
# At most this many saved elements in one tape (its copy of them: 64 MiB of float64).
MAX_SAVED = 1 << 23


class _Progress:
    """Per dtype: the kernel in use and what counts toward the next one."""
    __slots__ = ("kernel", "kinds", "counted", "wanted", "looked_up")

    def __init__(self):
        self.kernel = None
        self.kinds = frozenset()   # the kinds ``kernel`` covers
        self.counted = 0           # nodes of counted chains the plain loop ran since ``kernel`` was made
        self.wanted = set()        # the kinds of those nodes
        self.looked_up = set()     # kind sets whose kernel was looked for among the written ones


_PROGRESS = {np.dtype(np.float32): _Progress(), np.dtype(np.float64): _Progress()}
_LOCK = threading.Lock()


class Stats:
    """What the tape ran in this process (``runs`` kernel calls, ``nodes`` nodes), for tests and benchmarks."""
    runs = 0
    nodes = 0

    @classmethod
    def reset(cls):
        cls.runs = cls.nodes = 0


def reset():
    """Forget the kernels in use and the counts (tests)."""
    for dtype in _PROGRESS:
        _PROGRESS[dtype] = _Progress()


def run(fn, buf, deps, buffers, owned, heap, keep_graph):
    """Run ``fn`` and the chain behind it on the tape, and deliver the gradients leaving the chain (into
    ``buffers``, ``deps`` and ``owned``; the nodes they complete go to ``heap``). Returns 0 when it did;
    otherwise how many nodes from ``fn`` on the engine should run itself (the tape does not look at them
    again)."""
    g = buf[0]
    if g is None or g.__class__ is not np.ndarray or not 0 < g.size <= MAX_ELEMENTS or g.size >= _cfg.fusion_threshold:
        return 1  # (from the fusion threshold on, fusion.py runs such chains, deferred values and all)
    progress = _PROGRESS.get(g.dtype)
    if progress is None:
        return 1
    kernel = progress.kernel
    if kernel is not None and fn._tape_kind in progress.kinds and progress.counted < _cfg.tape_compile_after:
        chain = _Chain(fn, g, deps, buffers, heap, progress.kinds, not keep_graph)
        if chain.n < 2:
            return 1
        chain.execute(kernel, deps, buffers, owned, heap, keep_graph)
        return 0
    # no kernel for fn's kind yet
    n, kinds = _chain_length(fn, deps)
    if n < 2 or n < _cfg.tape_min_run:
        return n
    with _LOCK:
        progress.counted += n
        progress.wanted |= kinds
        want = frozenset(progress.kinds | progress.wanted)
        if progress.counted < _cfg.tape_compile_after and not _written(progress, want):
            return n
        chain = _Chain(fn, g, deps, buffers, heap, None, False)
        if chain.n < 2:
            return 1
        want |= {node._tape_kind for node in chain.held}
        kernel = tape_kernels.kernel_for(want)
        progress.kernel, progress.kinds, progress.counted, progress.wanted = kernel, want, 0, set()
    chain.execute(kernel, deps, buffers, owned, heap, keep_graph)
    return 0


def _written(progress, kinds):
    """Whether the kernel of ``kinds`` was written before (looked up once per set of kinds)."""
    if kinds in progress.looked_up:
        return False
    progress.looked_up.add(kinds)
    return tape_kernels.written(kinds)


def _chain_length(fn, deps):
    """The number of nodes of tape kinds from ``fn`` on, each the only one its predecessor completes, and
    their kinds (a count: nothing is checked or gathered)."""
    n = 0
    kinds = set()
    while fn is not None:
        kinds.add(fn._tape_kind)
        n += 1
        following = None
        for nxt in fn._next_fns:
            if nxt is not None and nxt._tape_kind is not None and deps.get(nxt) == 1:
                following = nxt
                break
        fn = following
    return n, kinds


def _stacked(arrays, dtype, size):
    """The arrays (of one shape and dtype) as the rows of one array. Joining their bytes costs a quarter
    of what ``np.concatenate`` does on a few thousand small arrays; an array that is not contiguous
    has no such bytes, and the arrays are copied one by one."""
    try:
        data = bytearray().join(arrays)
    except (BufferError, TypeError, ValueError):
        return np.array(arrays, dtype).reshape(len(arrays), size)
    return np.frombuffer(data, dtype).reshape(len(arrays), size)


def _hooked(acc):
    """Whether running a leaf's accumulator runs user code (its hooks, its tensor's hooks)."""
    return bool(acc._pre_hooks or acc._post_hooks or acc._tensor_pre_hooks is not None
                or acc.variable._post_acc_hooks)


class _Chain:
    """The chain from ``fn`` (see the module's docstring), gathered: ``code`` (per node: its kind, then per
    input where its gradient goes: 2 * row of the gradient array, + 1 to add to what the row holds, -1
    for no gradient; node i's own gradient is in row i % 2), its ``saved`` arrays and ``numbers`` in node
    order, ``outside`` (node -> [its code for adding, gradients it still waits for after the chain]),
    ``seeds`` (row, the gradient a node outside already had), ``held`` (the nodes whose saved values are
    released only once the chain has run), ``pending`` (the node after the chain that the chain completes,
    and its row). ``kinds``: only nodes of these kinds join (None: any); ``release``: nodes after the
    first release their saved values as they join."""
    __slots__ = ("n", "g", "code", "saved", "numbers", "outside", "completed", "seeds", "held", "pending",
                 "pending_row")

    def __init__(self, fn, g, deps, buffers, heap, kinds, release):
        shape = g.shape
        dtype = g.dtype
        meta = (shape, dtype)
        metas = []             # in_meta tuples (shared between nodes) found to be all of the run's meta
        limit = -heap[0][0] if heap else -1   # the highest sequence number waiting in the heap
        most = MAX_SAVED // (3 * g.size) + 2
        # the code and the numbers grow as lists, converted once by np.fromiter: a list append costs a fifth
        # of an array.array append (which parses its argument), the conversion a third of that append
        code = self.code = []
        saved = self.saved = []
        numbers = self.numbers = []
        outside = self.outside = {}
        completed = self.completed = []   # the nodes outside that the chain completes, in the order it does
        seeds = self.seeds = []
        held = self.held = []
        append = code.append
        releasing = False      # the first node is held: a chain of one node is not run
        row = 0
        n = 0
        while True:
            kind = fn._tape_kind
            if (kind is None or fn._pre_hooks is not None or fn._post_hooks is not None
                    or fn._tensor_pre_hooks is not None or fn._retains_grad is not None
                    or (kinds is not None and kind not in kinds) or n == most):
                break
            im = fn._in_meta
            if im not in metas:
                if any(m is not None and m != meta for m in im):
                    # an input of another shape or dtype: fine if it needs no gradient (``h * 2``)
                    if any(f is not None and m is not None and m != meta for f, m in zip(fn._next_fns, im)):
                        break
                else:
                    metas.append(im)
            if not fn._tape_gather(saved, numbers, shape, dtype, g, releasing):
                break
            if not releasing:
                held.append(fn)
                releasing = release
            n += 1
            append(kind)
            following = None
            stop = False
            for nxt in fn._next_fns:
                if nxt is None:
                    append(-1)
                    continue
                d = deps[nxt]
                if d != 1:
                    e = outside.get(nxt)
                    if e is not None:
                        append(e[0])
                        left = e[1] = e[1] - 1
                        if left == 0:
                            completed.append(nxt)
                            if nxt.__class__ is not AccumulateGrad or _hooked(nxt):
                                stop = True
                        continue
                elif following is None and nxt._tape_kind is not None and nxt not in buffers:
                    following = nxt
                    append(2 - 2 * row)  # the other of the chain's two rows
                    continue
                else:
                    # this completes a node outside the chain: the engine would run it next
                    stop = stop or nxt.__class__ is not AccumulateGrad or _hooked(nxt)
                k = len(outside) + 2
                outside[nxt] = [k << 1 | 1, d - 1]
                if d == 1:
                    completed.append(nxt)
                b = buffers.get(nxt)
                if b is not None and b[0] is not None:
                    seeds.append((k, b[0]))
                    append(k << 1 | 1)
                else:
                    append(k << 1)
            if following is None:
                fn = None
                break
            fn = following
            row ^= 1
            if stop or fn._seq <= limit:
                break
        self.n = n
        self.g = g
        # the chain's last node completed ``fn`` (in ``row``), which does not join it
        self.pending = fn if n else None
        self.pending_row = row

    def execute(self, kernel, deps, buffers, owned, heap, keep_graph):
        g = self.g
        shape = g.shape
        dtype = g.dtype
        size = g.size
        grads = np.empty((len(self.outside) + 2, size), dtype)
        grads[0] = g.reshape(size)
        for k, a in self.seeds:
            grads[k] = a.reshape(size)
        saved = _stacked(self.saved, dtype, size)
        code = np.fromiter(self.code, np.int64, len(self.code))
        numbers = np.fromiter(self.numbers, np.float64, len(self.numbers))
        end = kernel.run(code, grads, saved, numbers, _zero_of(dtype))
        if end != len(code):
            raise RuntimeError(f"derivgen: the backward tape stopped at entry {end} of {len(code)} (a node kind "
                               "its kernel does not cover); please report this")
        Stats.runs += 1
        Stats.nodes += self.n
        if not keep_graph:
            for node in self.held:
                node._release_variables()
        for nxt, (k, left) in self.outside.items():
            b = buffers.get(nxt)
            if b is None:
                b = buffers[nxt] = [None] * nxt._n_inputs
            b[0] = grads[k >> 1].reshape(shape)
            owned[nxt] = owned.get(nxt, 0) | 1  # a row of the tape's own array
            deps[nxt] = left
        # pushed in the order the chain completed them, as the plain loop would have
        for nxt in self.completed:
            heapq.heappush(heap, (-nxt._seq, next(_push_numbers), nxt))
        fn = self.pending
        if fn is not None:
            buffers[fn] = [grads[self.pending_row].reshape(shape)]
            deps[fn] = 0
            heapq.heappush(heap, (-fn._seq, next(_push_numbers), fn))
