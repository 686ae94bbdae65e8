"""The schema of each generated row function (its parameters and kinds), read from the generated
bindings' overload tables."""
from derivgen.generated import kernels as _kernels
from derivgen.generated import ops as _ops

_OVERLOADS = {}


def _load():
    for name, value in vars(_ops).items():
        if name.endswith("_rows") and isinstance(value, tuple):
            for overload in value:
                _OVERLOADS.setdefault(overload.fn.__name__, overload)


def overload_of(fn):
    """The row's ``binding.Overload`` (params with ``name`` and ``kind``, ``schema``), or None."""
    if not _OVERLOADS:
        _load()
    return _OVERLOADS.get(fn.__name__)


def op_name(fn):
    """torch's ``name.overload`` of the row (``mul.Tensor``)."""
    ov = overload_of(fn)
    return ov.schema.split("(", 1)[0] if ov is not None else fn.__name__


def is_elementwise(fn):
    """Whether the row has a generated elementwise kernel (a ``forward:`` in the table)."""
    name = op_name(fn).replace(".", "_")
    return hasattr(_kernels, f"{name}_forward")
