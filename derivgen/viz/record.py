"""Recording which backward nodes ran, in which order, and which ran fused in one kernel.

``with record_execution() as rec: loss.backward()`` registers an observer (derivgen.core.observe) for
the duration only: outside the block the engine pays nothing. ``make_dot(..., execution=rec)`` then
numbers each node by when it ran and outlines each fused region."""
import contextlib
import weakref

from derivgen.core import observe


class ExecutionRecord:
    def __init__(self):
        self._order = {}    # id(node) -> 1-based position in the run
        self._refs = []     # weak references, so an id is trusted only while its node lives
        self.regions = []   # each fused region: a tuple of node ids

    # observer interface
    def op_start(self, name, kwargs):
        return None

    def op_end(self, token, result):
        pass

    def node_start(self, node):
        return node

    def node_end(self, node, fused_with):
        members = [node] + [n for n in fused_with if n is not node]
        for n in members:
            if id(n) not in self._order:
                self._order[id(n)] = len(self._order) + 1
                self._refs.append(weakref.ref(n))
        if fused_with:
            self.regions.append(tuple(id(n) for n in members))

    def position(self, node):
        """1-based position of ``node`` in the recorded run, or None if it did not run."""
        pos = self._order.get(id(node))
        if pos is None or self._refs[pos - 1]() is not node:
            return None
        return pos

    def __len__(self):
        return len(self._order)


@contextlib.contextmanager
def record_execution():
    rec = ExecutionRecord()
    observe.add_observer(rec)
    try:
        yield rec
    finally:
        observe.remove_observer(rec)
