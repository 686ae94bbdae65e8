"""Padding modules: ``ReflectionPad``, ``ReplicationPad``, ``CircularPad``, ``ConstantPad`` and ``ZeroPad``
in 1-D, 2-D and 3-D, each one ``F.pad`` call with torch's attributes, input checks and repr."""
from derivgen.nn import functional as F
from derivgen.nn.modules.module import Module


def _expand(padding, dims):
    """An int becomes ``2 * dims`` copies; a sequence is kept as given, as torch's ``_ntuple`` does."""
    if isinstance(padding, int):
        return (padding,) * (2 * dims)
    return tuple(padding)


class _PadNd(Module):
    __constants__ = ["padding"]
    mode = None
    dims = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _expand(padding, self.dims)

    def _check_input_dim(self, input):
        if input.dim() not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"expected {self.dims + 1}D or {self.dims + 2}D input (got {input.dim()}D input)")

    def forward(self, input):
        if self.mode == "circular":
            self._check_input_dim(input)
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


def _family(mode, prefix):
    return [type(f"{prefix}{d}d", (_PadNd,), {"mode": mode, "dims": d, "__module__": __name__,
                                               "__qualname__": f"{prefix}{d}d"}) for d in (1, 2, 3)]


ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _family("reflect", "ReflectionPad")
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _family("replicate", "ReplicationPad")
CircularPad1d, CircularPad2d, CircularPad3d = _family("circular", "CircularPad")


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]
    dims = None

    def __init__(self, padding, value):
        super().__init__()
        self.padding = _expand(padding, self.dims)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    dims = 1


class ConstantPad2d(_ConstantPadNd):
    dims = 2


class ConstantPad3d(_ConstantPadNd):
    dims = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    dims = 1


class ZeroPad2d(_ZeroPadNd):
    dims = 2


class ZeroPad3d(_ZeroPadNd):
    dims = 3
