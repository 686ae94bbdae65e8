"""``derivgen.return_types``: the named tuples ops return (torch.return_types), by op name."""
from derivgen.core.return_types import by_name as _by_name


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _by_name(name)
