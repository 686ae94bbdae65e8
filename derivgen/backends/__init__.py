"""``derivgen.backends``: the accelerator back ends a CPU-only torch reports (none available)."""
from derivgen.backends import mps  # noqa: F401
