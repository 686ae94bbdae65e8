"""Checks shared by every generated in-place op (``add_``, ``mul_``, ...)."""
from .grad_mode import is_grad_enabled


def check_inplace(t):
    if not is_grad_enabled():
        return
    if t.grad_fn is None and t._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = t._base
    if base is not None and base.requires_grad:
        if base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        raise RuntimeError("derivgen: in-place operations on views of tensors that require grad are not "
                           "supported yet (torch rewrites the base's history with CopySlices); apply the "
                           "operation out of place, e.g. `y = y.mul(2)` instead of `y.mul_(2)`.")
