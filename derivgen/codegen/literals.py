"""Python source for the values a schema's defaults can hold (``derivgen.table.schema``)."""
import math


def python_literal(value):
    """Source that evaluates to ``value``: None, bools, ints, floats (also inf, -inf and nan, which
    ``repr`` spells as names Python does not know), strings and tuples of these."""
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "float('-inf')"
        return repr(value)
    if isinstance(value, tuple):
        items = [python_literal(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    raise TypeError(f"no Python literal for a schema default of type {type(value).__name__}")
