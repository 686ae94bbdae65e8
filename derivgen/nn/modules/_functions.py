"""torch's ``torch.nn.modules._functions`` path for ``BackwardHookFunction`` (defined with the other
autograd Functions, below the ``utils.hooks`` that uses it)."""
from derivgen.autograd.backward_hook_function import BackwardHookFunction  # noqa: F401
