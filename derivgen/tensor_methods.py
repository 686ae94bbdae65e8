"""Python operators and composite methods on Tensor, mapped to ops the way torch maps them
(``2 - x`` is ``rsub.Scalar``: RsubBackward1; ``2 / x`` is ``reciprocal(x) * 2``; ``2 ** x`` is
``pow.Scalar``: PowBackward2)."""
import numbers

import numpy as np

from derivgen.core.tensor import Tensor, python_number, wrap_scalar
from derivgen.engine.api import backward as _backward
from derivgen.ops import aliases, bitwise, closeness, composites, division, linalg, scatter_modes, sorting, structural
from derivgen.ops.indexing import getitem, setitem
from derivgen.ops.inplace import clamp_directly, copy_directly, fill_directly


def _as_method(fn, name, general):
    """``fn``, a direct path in front of the generated ``general``, named and documented as the method."""
    fn.__name__, fn.__qualname__, fn.__doc__ = name, f"Tensor.{name}", general.__doc__
    return fn


def _is_number(v):
    return isinstance(v, (numbers.Number, np.number, np.bool_)) and not isinstance(v, complex)


def _number_bounds(args, kwargs):
    """(min, max) of a ``clamp`` call whose bounds are Python ints or floats (or None, not both), given as
    ``(min[, max])`` and/or ``min=`` / ``max=``; else None."""
    if len(args) > 2 or len(args) + len(kwargs) > 2:
        return None
    lo = args[0] if args else None
    hi = args[1] if len(args) == 2 else None
    for name, v in kwargs.items():
        if name == "min" and not args:
            lo = v
        elif name == "max" and len(args) < 2:
            hi = v
        else:
            return None
    if lo is None and hi is None:
        return None
    for v in (lo, hi):
        if v is not None and type(v) is not int and type(v) is not float:
            return None
    return lo, hi


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Compute the gradient of this tensor with respect to the graph leaves (``autograd.backward``)."""
    _backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _real(self):
    """Every dtype here is real, so (as in torch for a real tensor) the tensor itself."""
    return self


def _imag(self):
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def install(ops):
    """Attach generated ops (methods) and operators to Tensor."""
    for name, fn in ops.METHODS.items():
        setattr(Tensor, name, fn)

    def binary(op_name):
        fn = getattr(ops, op_name)
        row = getattr(ops, f"{op_name}_Tensor", None)
        rows = getattr(ops, f"_{op_name}_rows", ())
        # the ops whose argument parser wraps a number as a Tensor (NUMBERS_AS_TENSORS), and those with a
        # ``.Tensor`` row only (``x > 0``), where wrapping is all the parser can do
        if row is None or not (op_name in ("add", "sub", "mul", "div") or (len(rows) == 1 and rows[0].fn is row)):
            def method(self, other):
                if not isinstance(other, Tensor) and not _is_number(other):
                    return NotImplemented
                return fn(self, other)
            return method

        # The hot path of `x * y` / `x + 2`: what the argument parser would pick (the `.Tensor` row, a
        # number wrapped as a 0-dim tensor), without running the parser.
        def fast(self, other):
            if type(other) is Tensor:
                return row(self, other)
            if type(other) is float or type(other) is int:
                return row(self, wrap_scalar(other))
            if isinstance(other, Tensor):
                return row(self, other)
            if not _is_number(other):
                return NotImplemented
            return row(self, wrap_scalar(python_number(other)))
        return fast

    # ``w.grad.zero_()`` / ``b.fill_(0.1)`` where no check of the general path can refuse (fill_directly)
    zero_, fill_ = ops.zero_, ops.fill_

    def fast_zero_(self, *args, **kwargs):
        if not args and not kwargs and fill_directly(self, 0):
            return self
        return zero_(self, *args, **kwargs)

    def fast_fill_(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and fill_directly(self, args[0]):
            return self
        return fill_(self, *args, **kwargs)
    copy_ = ops.copy_

    def fast_copy_(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and type(args[0]) is Tensor and copy_directly(self, args[0]):
            return self
        return copy_(self, *args, **kwargs)
    Tensor.copy_ = _as_method(fast_copy_, "copy_", copy_)
    Tensor.zero_ = _as_method(fast_zero_, "zero_", zero_)
    Tensor.fill_ = _as_method(fast_fill_, "fill_", fill_)

    # ``h.clamp(min=0)`` (the tutorials' ReLU), ``p.clamp_(-1, 1)``: Python-number bounds pick the Scalar
    # row, as the argument parser would, without running it; ``clamp_`` that records nothing clamps the
    # array in place where the general path could not differ (clamp_directly)
    def number_bounds(general, scalar_row, directly=None):
        def method(self, *args, **kwargs):
            bounds = _number_bounds(args, kwargs)
            if bounds is not None and type(self) is Tensor:
                if directly is not None and directly(self, *bounds):
                    return self
                return scalar_row(self, *bounds)
            return general(self, *args, **kwargs)
        return _as_method(method, general.__name__, general)
    Tensor.clamp = number_bounds(ops.clamp, ops.clamp_default)
    Tensor.clamp_ = number_bounds(ops.clamp_, ops.clamp__default, clamp_directly)

    # ``x.view(-1)``, ``x.view(n, 4)``, ``x.view((n, 4))``: plain ints are the ``view`` row's size as the
    # argument parser would pass it (a tuple), without running the parser
    view, view_size = ops.view, ops.view_default

    def fast_view(self, *args, **kwargs):
        if not kwargs and type(self) is Tensor and args:
            size = args[0] if len(args) == 1 and type(args[0]) is tuple else args
            for s in size:
                if type(s) is not int:
                    break
            else:
                return view_size(self, size)
        return view(self, *args, **kwargs)
    Tensor.view = _as_method(fast_view, "view", view)

    # ``p.add_(g, alpha=-lr)``, ``w.sub_(lr * g)``, ``buf.mul_(0.9)`` (manual updates, optimizers): a Tensor
    # or a Python number, and a Python-number ``alpha``, go to the ``.Tensor`` row directly, as the
    # argument parser would send them (a number as a wrapped 0-dim tensor)
    def with_alpha(name):
        general, row = getattr(ops, name), getattr(ops, name + "_Tensor")  # add_ -> add__Tensor

        def method(self, *args, **kwargs):
            if len(args) == 1 and type(self) is Tensor:
                other = args[0]
                if type(other) is float or type(other) is int:
                    other = wrap_scalar(other)
                elif type(other) is not Tensor:
                    return general(self, *args, **kwargs)
                if not kwargs:
                    return row(self, other)
                if len(kwargs) == 1:
                    alpha = kwargs.get("alpha")
                    if type(alpha) is int or type(alpha) is float:
                        return row(self, other, alpha=alpha)
            return general(self, *args, **kwargs)
        return _as_method(method, name, general)
    for name in ("add", "add_", "sub", "sub_"):
        setattr(Tensor, name, with_alpha(name))

    def one_operand(name):
        general, row = getattr(ops, name), getattr(ops, name + "_Tensor")  # mul_ -> mul__Tensor

        def method(self, *args, **kwargs):
            if len(args) == 1 and not kwargs and type(self) is Tensor:
                other = args[0]
                if type(other) is Tensor:
                    return row(self, other)
                if type(other) is float or type(other) is int:
                    return row(self, wrap_scalar(other))
            return general(self, *args, **kwargs)
        return _as_method(method, name, general)
    for name in ("mul", "mul_", "div", "div_"):
        setattr(Tensor, name, one_operand(name))

    def inplace(op_name):
        fn = getattr(ops, op_name)

        def method(self, other):
            return fn(self, other)
        return method

    Tensor.__add__ = binary("add")
    Tensor.__radd__ = binary("add")  # `2 + x` is torch's `x.add(2)`: same row, same edge order
    Tensor.__sub__ = binary("sub")
    Tensor.__mul__ = binary("mul")
    Tensor.__rmul__ = binary("mul")
    Tensor.__truediv__ = binary("div")
    # ``x ** 2`` / ``x.pow(2)``: a Python-number exponent is the ``.Tensor_Scalar`` row (pow is not an op
    # whose parser wraps numbers as tensors), picked without running the parser
    pow_general, pow_dunder, pow_scalar = ops.pow, binary("pow"), ops.pow_Tensor_Scalar

    def fast_pow(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and type(self) is Tensor and (type(args[0]) is int or type(args[0]) is float):
            return pow_scalar(self, args[0])
        return pow_general(self, *args, **kwargs)

    def fast_pow_operator(self, other):
        if type(self) is Tensor and (type(other) is int or type(other) is float):
            return pow_scalar(self, other)
        return pow_dunder(self, other)
    Tensor.pow = _as_method(fast_pow, "pow", pow_general)
    Tensor.__pow__ = fast_pow_operator
    if hasattr(ops, "remainder"):
        Tensor.__mod__ = binary("remainder")
    Tensor.__matmul__ = lambda self, other: composites.matmul(self, other)
    Tensor.__rmatmul__ = lambda self, other: composites.matmul(other, self)
    Tensor.__neg__ = lambda self: ops.neg(self)
    if hasattr(ops, "abs"):
        Tensor.__abs__ = lambda self: ops.abs(self)

    def rsub(self, other):
        if _is_number(other) and hasattr(ops, "rsub_Scalar"):
            return ops.rsub_Scalar(self, other)
        return ops.rsub(self, other)
    Tensor.__rsub__ = rsub

    def rtruediv(self, other):
        if hasattr(ops, "reciprocal"):
            return ops.mul(ops.reciprocal(self), other)
        return ops.div(other, self)
    Tensor.__rtruediv__ = rtruediv

    def rpow(self, other):
        return ops.pow(other, self)
    Tensor.__rpow__ = rpow
    Tensor.__floordiv__ = division.floordiv
    Tensor.__rfloordiv__ = division.rfloordiv
    Tensor.floor_divide = division.floor_divide

    for dunder, name in (("__lt__", "lt"), ("__le__", "le"), ("__gt__", "gt"), ("__ge__", "ge"),
                         ("__eq__", "eq"), ("__ne__", "ne")):
        if hasattr(ops, name):
            setattr(Tensor, dunder, binary(name))
    for dunder, name in (("__iadd__", "add_"), ("__isub__", "sub_"), ("__imul__", "mul_"),
                         ("__itruediv__", "div_")):
        if hasattr(ops, name):
            setattr(Tensor, dunder, inplace(name))

    for name, fn in composites.METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in closeness.METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in sorting.METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in bitwise.METHODS.items():
        setattr(Tensor, name, fn)
    for module in (aliases, structural, linalg, scatter_modes):
        for name, fn in module.METHODS.items():
            setattr(Tensor, name, fn)
    Tensor.T = property(composites.T)

    Tensor.__getitem__ = getitem
    Tensor.__setitem__ = setitem
    Tensor.backward = backward
    Tensor.mT = property(composites.mT)
    Tensor.real = property(_real)
    Tensor.imag = property(_imag)
