"""``derivgen.autograd.graph``: the Node type and saved-tensor hooks."""
from ..runtime.node import Node  # noqa: F401
from ..runtime.saved_hooks import saved_tensors_hooks  # noqa: F401
