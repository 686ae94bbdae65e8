"""``finfo`` and ``iinfo``: the numerical limits of a floating or an integer dtype, with torch's attributes,
printed form and errors (float16 and bfloat16 included: their limits are known without making tensors)."""
import numpy as np

from derivgen.core import dtypes as _dt

# bfloat16 has no numpy type: its limits, as torch reports them
_BFLOAT16 = dict(bits=16, eps=0.0078125, max=3.3895313892515355e+38, min=-3.3895313892515355e+38,
                 tiny=1.1754943508222875e-38, resolution=0.01)


class finfo:  # noqa: N801 - torch spelling
    """torch.finfo(dtype=None): ``bits``, ``eps``, ``max``, ``min``, ``tiny``, ``smallest_normal``,
    ``resolution`` and ``dtype`` (its name) of a floating dtype (the default dtype when None)."""

    def __init__(self, type=None):  # noqa: A002 - torch spelling
        d = _dt.get_default_dtype() if type is None else type
        if not isinstance(d, _dt.dtype) or not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        if d.name == "bfloat16":
            info = _BFLOAT16
        else:
            np_info = np.finfo(np.float16 if d.name == "float16" else d.np)
            info = dict(bits=int(np_info.bits), eps=float(np_info.eps), max=float(np_info.max),
                        min=float(np_info.min), tiny=float(np_info.smallest_normal),
                        resolution=10.0 ** -int(np_info.precision))
        self.bits = info["bits"]
        self.eps = info["eps"]
        self.max = info["max"]
        self.min = info["min"]
        self.tiny = self.smallest_normal = info["tiny"]
        self.resolution = info["resolution"]
        self.dtype = d.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")

    __str__ = __repr__


class iinfo:  # noqa: N801 - torch spelling
    """torch.iinfo(dtype): ``bits``, ``max``, ``min`` and ``dtype`` (its name) of an integer dtype."""

    def __init__(self, type):  # noqa: A002 - torch spelling
        if not isinstance(type, _dt.dtype) or type.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        if type.name == "bool":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        np_info = np.iinfo(type.np)
        self.bits = int(np_info.bits)
        self.max = int(np_info.max)
        self.min = int(np_info.min)
        self.dtype = type.name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"

    __str__ = __repr__
