"""The named tuples ops return (``sort``, ``max`` over a dim, ``topk``, ...): torch's ``torch.return_types``
structseqs, printed as torch prints them (``derivgen.return_types.sort(\\nvalues=...,\\nindices=...)``).
One class per op name and fields; ``derivgen.return_types`` looks them up by name."""
import collections

_TYPES = {}


def _repr(self):
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"derivgen.return_types.{type(self).__name__}(\n{fields})"


def return_type(name, fields):
    """The return type of op ``name`` with these ``fields`` (made on first use, then shared)."""
    key = (name, tuple(fields))
    cls = _TYPES.get(key)
    if cls is None:
        base = collections.namedtuple(name, fields)
        cls = type(name, (base,), {"__slots__": (), "__repr__": _repr, "__str__": _repr,
                                   "__module__": "derivgen.return_types", "__qualname__": name})
        _TYPES[key] = cls
    return cls


def by_name(name):
    """The return type registered for op ``name`` (the first one made, when fields differ)."""
    for (n, _), cls in _TYPES.items():
        if n == name:
            return cls
    raise AttributeError(f"module 'derivgen.return_types' has no attribute '{name}'")
