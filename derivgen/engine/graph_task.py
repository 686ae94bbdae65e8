"""The backward call running on this thread (torch's GraphTask as Python code can see it): an id and
which nodes it will execute, for ``autograd.graph.register_multi_grad_hook``."""
import itertools
import threading

_tls = threading.local()
_ids = itertools.count()


class GraphTask:
    __slots__ = ("id", "root", "reachable", "executes")

    def __init__(self):
        self.id = next(_ids)
        self.root = None
        self.reachable = None   # every node reachable from the root (its dependency counts)
        self.executes = None    # the nodes that run or capture, when inputs= restricts them; None: all

    def will_execute(self, node):
        if node is not self.root and (self.reachable is None or node not in self.reachable):
            return False
        return self.executes is None or node in self.executes


def push():
    task = GraphTask()
    stack = getattr(_tls, "stack", None)
    if stack is None:
        stack = _tls.stack = []
    stack.append(task)
    return task


def depth():
    """How many backward calls are running on this thread (reentrant ones nest)."""
    stack = getattr(_tls, "stack", None)
    return len(stack) if stack else 0


def pop():
    _tls.stack.pop()


def current():
    stack = getattr(_tls, "stack", None)
    return stack[-1] if stack else None


def current_graph_task_id():
    """The id of the backward call running on this thread, -1 outside one."""
    task = current()
    return -1 if task is None else task.id


def will_engine_execute_node(node):
    """Whether the running backward call will execute (or capture at) ``node``."""
    task = current()
    if task is None:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    return task.will_execute(node)
