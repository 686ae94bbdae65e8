"""torch's keyword spelling of the tensor argument: Python functions call it ``input``
(``torch.matmul(input=a, other=b)``) where the schema and the methods call it ``self``.

The argument binder (``derivgen.ops.binding``) maps ``input=`` onto a row's ``self`` parameter; the
hand-written composite functions get the same through ``accept_input_keyword``.
"""
import functools
import inspect


def accept_input_keyword(fn):
    """``fn`` if its first parameter is not ``self``, else a wrapper passing ``input=`` as ``self``."""
    params = list(inspect.signature(fn).parameters)
    if not params or params[0] != "self":
        return fn

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if "input" in kwargs:
            args = (kwargs.pop("input"),) + args
        return fn(*args, **kwargs)
    return call
