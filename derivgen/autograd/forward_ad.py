"""Forward-mode automatic differentiation, with ``torch.autograd.forward_ad``'s API.

A dual tensor is a primal Tensor with a tangent stored on it (``Tensor._fw_grads``, keyed by level as
torch keys them). While a dual level is active, an observer of the op calls (``derivgen.core.observe``,
the one flag every generated op already tests on entry) computes each op's output tangent from its
inputs' tangents with the row's forward-mode rule (``derivgen.generated.jvp``): a fused Numba kernel for
elementwise rows, Tensor ops for ``result:`` formulas. Outside a dual level nothing is registered, so
ops pay nothing. Tangents are cleared when their level exits.
"""
import threading
from collections import namedtuple

from derivgen.autograd import _forward_rules as _rules
from derivgen.core import observe as _observe
from derivgen.core.tensor import Tensor

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "The (primal, tangent) pair ``unpack_dual`` returns."


class _Levels:
    current = -1          # torch supports one level at a time: 0 while it is active
    lock = threading.Lock()


_current_level = -1  # torch's module attribute: the active level, -1 when none (read, never set, by callers)


def enter_dual_level():
    """Start a new forward AD level and return its index."""
    global _current_level
    with _Levels.lock:
        if _Levels.current >= 0:
            raise RuntimeError("Nested forward mode AD is not supported at the moment")
        _Levels.current = _current_level = 0
        _rules.duals.clear()
        _rules.level = 0
        _observe.add_observer(_rules.OBSERVER)
    return 0


def exit_dual_level(*, level=None):
    """End the forward AD level ``level`` (the current one by default); its tangents are cleared."""
    global _current_level
    with _Levels.lock:
        if level is None:
            level = _Levels.current
        if level < 0:
            raise RuntimeError("Dual level must be a positive number.")
        if level != _Levels.current:
            raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                               "This is not supported.")
        _observe.remove_observer(_rules.OBSERVER)
        for ref in _rules.duals:
            t = ref()
            if t is not None:
                grads = getattr(t, "_fw_grads", None)
                if grads:
                    grads.pop(level, None)
        _rules.duals.clear()
        _Levels.current = _current_level = -1
        _rules.level = -1


class dual_level:
    """Context manager of a forward AD level: ``with dual_level(): ...``. Tangents made inside are
    cleared on exit."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def _set_tangent(tensor, tangent, level):
    _rules.set_tangent(tensor, tangent, level)


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient at ``level``."""
    if level is None:
        level = _Levels.current
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError(f"make_dual(): argument 'tensor' and 'tangent' must be Tensor, not "
                        f"{type(tensor if not isinstance(tensor, Tensor) else tangent).__name__}")
    if not tensor.dtype.is_floating_point:
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not tangent.dtype.is_floating_point:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tensor.shape) != tuple(tangent.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    dual = tensor.view_as(tensor)
    _set_tangent(dual, tangent, level)
    return dual


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor`` at ``level``: the primal is a view without the tangent, the
    tangent None when there is none."""
    if level is None:
        level = _Levels.current
    if level < 0 or _rules.is_paused():  # tracking off (a custom Function's forward or jvp): no tangent, as torch
        return UnpackedDualTensor(tensor, None)
    tangent = _rules.tangent_of(tensor, level)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_rules.without_tangent(tensor), tangent)
