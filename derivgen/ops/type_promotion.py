"""torch's public type-promotion functions: ``promote_types``, ``result_type`` and ``can_cast``, answered by
the same rules the ops use (``derivgen.kernels.promotion`` and ``derivgen.core.tensor.result_dtype``)."""
from derivgen.core import dtypes as _dt
from derivgen.core.tensor import Tensor, result_dtype, wrap_scalar
from derivgen.kernels import promotion


def promote_types(type1, type2):
    return _dt.from_numpy_dtype(promotion.promote_types(_dt.to_numpy_dtype(type1), _dt.to_numpy_dtype(type2)))


def result_type(tensor1, tensor2):
    operands = [t if isinstance(t, Tensor) else wrap_scalar(t) for t in (tensor1, tensor2)]
    d = result_dtype(*operands)
    if d.kind == "f" and not any(isinstance(t, Tensor) for t in (tensor1, tensor2)):
        return _dt.get_default_dtype()  # Python numbers alone: floats are the default dtype
    return _dt.from_numpy_dtype(d)


def can_cast(from_, to):
    return promotion.can_cast(_dt.to_numpy_dtype(from_), _dt.to_numpy_dtype(to))


FUNCTIONS = {"promote_types": promote_types, "result_type": result_type, "can_cast": can_cast}
