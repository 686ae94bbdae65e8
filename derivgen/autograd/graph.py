"""``derivgen.autograd.graph``: the Node type, gradient edges and saved-tensor hooks."""
from derivgen.core.node import GradientEdge, Node, gradient_edge  # noqa: F401
from derivgen.core.saved_hooks import saved_tensors_hooks  # noqa: F401

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version", "saved_tensors_hooks", "save_on_cpu"]


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
    from derivgen.core.tensor import Tensor
    tensors = (tensor,) if isinstance(tensor, Tensor) else tensor
    for t in tensors:
        t._vc[0] += 1


class save_on_cpu(saved_tensors_hooks):
    """torch's ``save_on_cpu``: derivgen tensors always live in host memory, so saved tensors are kept as
    they are (``pin_memory`` is accepted and ignored)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t, lambda t: t)
