"""``derivgen.autograd.graph``: the Node type, gradient edges and saved-tensor hooks."""
from derivgen.core.node import GradientEdge, Node, gradient_edge  # noqa: F401
from derivgen.core.saved_hooks import disable_saved_tensors_hooks, saved_tensors_hooks  # noqa: F401
from derivgen.core.tensor import Tensor, bump_version

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version", "saved_tensors_hooks", "save_on_cpu",
           "register_multi_grad_hook"]


def get_gradient_edge(tensor):
    """The edge the gradient of ``tensor`` flows along: its ``(grad_fn, output_nr)``, or its leaf's
    AccumulateGrad."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    node, nr = gradient_edge(tensor)
    return GradientEdge(node, nr)


def increment_version(tensor):
    """Bump the version counter of ``tensor`` (or of each tensor of an iterable), as an in-place op would."""
    tensors = (tensor,) if isinstance(tensor, Tensor) else tensor
    for t in tensors:
        bump_version(t)


class save_on_cpu(saved_tensors_hooks):
    """torch's ``save_on_cpu``: derivgen tensors always live in host memory, so saved tensors are kept as
    they are (``pin_memory`` is accepted and ignored)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t, lambda t: t)


class _MultiHandle:
    """Removes every per-tensor hook of one ``register_multi_grad_hook`` call."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """torch's multi-grad hook. ``"all"``: ``fn(grads)`` once per backward call, after the gradient of every
    tensor that call will compute (None for the others); ``"any"``: ``fn(grad)`` once per backward call, on
    the first of the tensors' gradients to be computed."""
    import threading
    from derivgen.core.node import grad_accumulator
    from derivgen.engine import graph_task
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    lock = threading.Lock()
    tensors = tuple(tensors)
    if mode == "any":
        fired = set()

        def first_only(grad):
            task_id = graph_task.current_graph_task_id()
            with lock:
                if task_id in fired:
                    return
                fired.add(task_id)
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(first_only) for t in tensors if t.requires_grad))

    nodes = [t.grad_fn if t.grad_fn is not None else grad_accumulator(t) for t in tensors]
    seen = {}      # graph task id -> how many of the tensors' gradients have arrived
    buffers = {}   # graph task id -> the gradients so far

    def collector(idx):
        def hook(grad):
            task_id = graph_task.current_graph_task_id()
            with lock:
                arrived = seen.get(task_id, 0)
                seen[task_id] = arrived + 1
                buf = buffers.setdefault(task_id, [None] * len(tensors))
                expected = sum(1 for n in nodes if graph_task.will_engine_execute_node(n))
            buf[idx] = grad
            if arrived == expected - 1:
                del seen[task_id], buffers[task_id]
                fn(buf)
        return hook

    return _MultiHandle(tuple(t.register_hook(collector(i)) for i, t in enumerate(tensors)))
