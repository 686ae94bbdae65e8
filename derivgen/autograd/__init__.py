"""``derivgen.autograd``: torch.autograd's user-facing API over derivgen's engine."""
from derivgen.core.anomaly import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly  # noqa: F401
from derivgen.engine.api import backward, grad  # noqa: F401
from derivgen.core.grad_mode import (enable_grad, inference_mode, is_grad_enabled, no_grad,  # noqa: F401
                                 set_grad_enabled)
from derivgen.core.node import peek_sequence_nr as _get_sequence_nr  # noqa: F401
from derivgen.autograd import graph  # noqa: F401
from derivgen.autograd.function import Function, NestedIOFunction, InplaceFunction, once_differentiable  # noqa: F401
from derivgen.autograd import function  # noqa: F401
from derivgen.autograd.gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: F401
from derivgen.autograd import functional  # noqa: F401
from derivgen.autograd import forward_ad  # noqa: F401

__all__ = ["backward", "grad", "set_detect_anomaly", "detect_anomaly", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "graph", "Function", "once_differentiable", "gradcheck",
           "gradgradcheck", "functional", "forward_ad"]
