"""``derivgen.nn``: the functional layer of torch.nn (``derivgen.nn.functional``)."""
from . import functional  # noqa: F401
