"""The one translation point for exceptions escaping numpy or Numba during an op's forward.

Every generated op function runs its forward inside ``try``; on an exception it calls
``translate``, which raises torch's error type (RuntimeError) with a message naming the op, its
tensor arguments' shapes and dtypes when the exception came from numpy or Numba, and otherwise
returns so that the caller re-raises the original (derivgen's own errors already are torch's).
Generated kernel calls (a node's backward) translate in the kernels layer (derivgen.kernels.errors),
with the same test of where an exception came from and the same message."""
from derivgen.core.dtypes import scalar_type_name
from derivgen.kernels.errors import describe_array, is_foreign, message, register_dtype_names

register_dtype_names(scalar_type_name)


def _describe(value):
    data = getattr(value, "_pending", None) if getattr(value, "_lazy", False) else getattr(value, "_array", None)
    return None if data is None else describe_array(data)


def _descriptions(tensors):
    parts = []
    for t in tensors:
        if isinstance(t, (list, tuple)):
            parts += [d for d in (_describe(x) for x in t) if d]
        else:
            d = _describe(t)
            if d:
                parts.append(d)
    return parts


def describe(op, tensors):
    """``op`` with the shapes and dtypes of its tensor arguments, for an error message."""
    parts = _descriptions(tensors)
    return f"{op}(): tensors {', '.join(parts)}" if parts else f"{op}()"


def translate(exc, op, tensors):
    """Raise torch's RuntimeError for a numpy/Numba exception ``exc`` in ``op``; return otherwise."""
    if not is_foreign(exc):
        return
    raise RuntimeError(message(exc, op, _descriptions(tensors))) from None


__all__ = ["describe", "is_foreign", "translate"]


def forward_ad_unsupported(op):
    """torch's error for an op without a forward-mode formula reached by a tensor with a tangent."""
    return NotImplementedError(
        f"Trying to use forward AD with {op} that does not support it because it has not been implemented yet.\n"
        "Please file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template=feature-"
        "request.yml so that we can prioritize its implementation or submit a PR adding the implementation to "
        "derivatives.yaml")
