"""``LayerNorm`` and ``GroupNorm``."""
import numbers

from derivgen.nn import functional as F
from derivgen.nn import init
from derivgen.nn.modules.module import Module
from derivgen.nn.parameter import Parameter
from derivgen.ops.factories import empty


class LayerNorm(Module):
    """Normalises over the trailing ``normalized_shape`` dims; weight ones and bias zeros when
    ``elementwise_affine`` (bias only when ``bias``)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape if elementwise_affine else None, bias, dtype)

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return ("{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)
                + f", bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalises each of ``num_groups`` channel groups per sample; per-channel weight ones and bias zeros
    when ``affine``."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, num_channels if affine else None, bias, dtype)

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return ("{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}"
                .format(**self.__dict__, use_bias=self.bias is not None))


def _affine_parameters(module, shape, bias, dtype):
    """The elementwise affine ``weight`` (and ``bias`` unless ``bias=False``) of ``shape``, or None
    parameters when ``shape`` is None; initialised to ones and zeros."""
    if shape is not None:
        module.weight = Parameter(empty(shape, dtype=dtype))
        if bias:
            module.bias = Parameter(empty(shape, dtype=dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)
    module.reset_parameters()


def _reset_affine(module):
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims; weight ones when
    ``elementwise_affine``; ``eps`` None is the dtype's machine epsilon."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)
