"""``derivgen.autograd``: torch.autograd's user-facing API over derivgen's engine."""
from ..runtime.anomaly import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly  # noqa: F401
from ..runtime.autograd_api import backward, grad  # noqa: F401
from ..runtime.grad_mode import (enable_grad, inference_mode, is_grad_enabled, no_grad,  # noqa: F401
                                 set_grad_enabled)
from ..runtime.node import peek_sequence_nr as _get_sequence_nr  # noqa: F401
from . import graph  # noqa: F401
from .function import Function, NestedIOFunction, InplaceFunction, once_differentiable  # noqa: F401
from . import function  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: F401
from . import functional  # noqa: F401

__all__ = ["backward", "grad", "set_detect_anomaly", "detect_anomaly", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "graph", "Function", "once_differentiable", "gradcheck",
           "gradgradcheck", "functional"]
