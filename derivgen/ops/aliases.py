"""torch's other names for ops derivgen has (``absolute`` is ``abs``, ``arccos`` is ``acos``, ``clip`` is
``clamp``, ``divide`` is ``div``, ``moveaxis`` is ``movedim``, ...): the same function object, so the
graph is the op's own (``torch.arccos(x)`` records AcosBackward0, as in torch)."""
from derivgen.core.registry import aten

# alias -> op, for functions and Tensor methods alike; an in-place alias (``arccos_``) is the op's ``_``
# form, present where the op has one
_ALIASES = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
    "arctan": "atan", "arctanh": "atanh", "arctan2": "atan2", "clip": "clamp", "divide": "div",
    "multiply": "mul", "subtract": "sub", "true_divide": "div", "negative": "neg", "fix": "trunc",
    "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
    "concat": "cat", "concatenate": "cat",
}
# torch has these as Tensor methods only (and torch.concat/concatenate as functions only)
_FUNCTION_ONLY = {"concat", "concatenate"}
_NO_FUNCTION_INPLACE = {"absolute_", "divide_", "multiply_", "subtract_", "true_divide_", "greater_",
                        "greater_equal_", "less_", "less_equal_", "not_equal_", "arctan2_"}


def _alias(op):
    def fn(*args, **kwargs):
        return getattr(aten, op)(*args, **kwargs)
    return fn


def _build():
    functions, methods = {}, {}
    for alias, op in _ALIASES.items():
        fn = _alias(op)
        fn.__name__ = fn.__qualname__ = alias
        fn.__doc__ = f"torch's alias of ``{op}``."
        functions[alias] = fn
        if alias in _FUNCTION_ONLY:
            continue
        methods[alias] = fn
        inplace_op = op + "_"
        if not hasattr(aten, inplace_op):  # derivgen has no in-place form of the op (gt_, ...)
            continue
        ifn = _alias(inplace_op)
        ifn.__name__ = ifn.__qualname__ = alias + "_"
        ifn.__doc__ = f"torch's alias of ``{inplace_op}``."
        methods[alias + "_"] = ifn
        if alias + "_" not in _NO_FUNCTION_INPLACE:
            functions[alias + "_"] = ifn
    return functions, methods


FUNCTIONS, METHODS = _build()
