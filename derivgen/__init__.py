"""derivgen: a symbolic autograd compiler with PyTorch's autograd surface.

``import derivgen as torch`` gives tensors, ops generated from ``formulas.yaml`` (functions and Tensor
methods), ``*Backward0`` nodes with torch's names and graph shapes, and ``derivgen.autograd``.
"""
__version__ = "0.1.0"

from derivgen.core import dtypes as _dtypes
from derivgen.core.dtypes import float32, float64, int64, int32, double, long, get_default_dtype, set_default_dtype  # noqa: F401
from derivgen.core.dtypes import bool_ as bool  # noqa: A001,F401
from derivgen.core.dtypes import dtype  # noqa: F401
from derivgen.core.dtypes import float as float  # noqa: A001,F401,PLC0414
from derivgen.core.dtypes import int as int  # noqa: A001,F401,PLC0414
from derivgen.ops.factories import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like,  # noqa: F401
                                linspace, manual_seed, ones, ones_like, rand, rand_like, randint, randn,
                                randn_like, tensor, zeros, zeros_like)
from derivgen.core.grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,  # noqa: F401
                                no_grad, set_grad_enabled)
from derivgen.core.anomaly import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: F401
from derivgen.core.tensor import Size, Tensor  # noqa: F401

_generated_error = None
try:
    from derivgen.generated import ops as _ops
except Exception as _exc:  # noqa: BLE001 - keep the CLI usable to regenerate a broken generated/
    _generated_error = _exc
    _ops = None

if _ops is not None:
    from derivgen.ops import composites as _composites
    from derivgen import tensor_methods as _operators
    _operators.install(_ops)
    globals().update(_ops.FUNCTIONS)
    reshape = _composites.reshape
    matmul = _composites.matmul
    flatten = _composites.flatten
    globals().update(_composites.FUNCTIONS)
    from derivgen import autograd  # noqa: F401,E402
    from derivgen import nn  # noqa: F401,E402
    from derivgen import linalg  # noqa: F401,E402

    def is_tensor(obj):
        return isinstance(obj, Tensor)

    def numel(t):
        return t.numel()

    def is_inference(t):
        return t.is_inference()


def __getattr__(name):
    if _generated_error is not None:
        raise ImportError(f"derivgen.generated failed to import ({_generated_error!r}); run `derivgen generate` "
                          f"to rebuild it from formulas.yaml") from _generated_error
    raise AttributeError(f"module 'derivgen' has no attribute '{name}'")
