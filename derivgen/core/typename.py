"""torch.typename: the name torch's error texts give an object's type."""
from derivgen.core.tensor import Tensor


def typename(obj):
    """The tensor's type string, else the qualified class name (``int``, ``builtins`` dropped)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__", None) else f"{module}.{name}"
