"""``derivgen.utils``: torch's utilities (``derivgen.utils.data``, ``derivgen.utils.checkpoint``,
``derivgen.utils.hooks``). ``checkpoint`` builds on ``derivgen.nn``, whose modules use ``utils.hooks``,
so it is imported on first access (``derivgen.utils.checkpoint``) rather than with this package."""
from derivgen.utils import data  # noqa: F401
from derivgen.utils import hooks  # noqa: F401


def __getattr__(name):
    if name == "checkpoint":
        import importlib
        return importlib.import_module("derivgen.utils.checkpoint")
    raise AttributeError(f"module 'derivgen.utils' has no attribute '{name}'")
