"""``derivgen.backends``: the accelerator back ends a CPU-only torch reports (none available) and the oneDNN switch."""
from derivgen.backends import mkldnn, mps  # noqa: F401
