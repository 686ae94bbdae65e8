"""torch's type promotion between arrays (``torch.promote_types``, and 0-dim operands not deciding the
result against dimensioned ones). The Tensor-level rules, where wrapped Python numbers rank lowest,
build on these in ``derivgen.core.tensor.result_dtype``."""
import numpy as np

_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2}


def promote_types(a, b):
    """torch.promote_types for the dtypes derivgen supports (int64 with float32 is float32, unlike numpy)."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    ra, rb = _KIND_RANK[a.kind], _KIND_RANK[b.kind]
    if ra != rb:
        return a if ra > rb else b
    if a.kind != b.kind:  # signed with unsigned: the smallest signed type holding both (uint8 + int8 -> int16)
        return np.promote_types(a, b)
    return a if a.itemsize >= b.itemsize else b


def can_cast(result, out):
    """torch's canCast for in-place results: never to a lower category (float into an int tensor, an
    int into a bool one); any size within a category."""
    return _KIND_RANK[result.kind] <= _KIND_RANK[out.kind]


def combine(higher, lower):
    """The result of a higher-priority group of operands with a lower one: the higher decides, except
    that a lower operand of a higher category (bool < int < float) lifts the result to its category."""
    if higher is None:
        return lower
    if lower is None or higher.kind == "f":
        return higher
    if higher.kind == "b" or lower.kind == "f":
        return promote_types(higher, lower)
    return higher


def array_result_dtype(arrays):
    """The result dtype of arrays: dimensioned arrays beat 0-dim ones."""
    groups = [None, None]
    for a in arrays:
        if a is None:
            continue
        g = 1 if a.ndim == 0 else 0
        groups[g] = a.dtype if groups[g] is None else promote_types(groups[g], a.dtype)
    return combine(groups[0], groups[1])
