"""``derivgen.nn``: the functional layer of torch.nn (``derivgen.nn.functional``)."""
from derivgen.nn import functional  # noqa: F401
