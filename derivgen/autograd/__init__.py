"""``derivgen.autograd``: torch.autograd's user-facing API over derivgen's engine."""
from ..runtime.anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly  # noqa: F401
from ..runtime.autograd_api import backward, grad  # noqa: F401
from ..runtime.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from ..runtime.node import peek_sequence_nr as _get_sequence_nr  # noqa: F401
from . import graph  # noqa: F401

__all__ = ["backward", "grad", "set_detect_anomaly", "detect_anomaly", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "graph"]
