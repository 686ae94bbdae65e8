"""Tensor dtypes, spelled as in PyTorch (``derivgen.float32``) and mapped onto numpy."""
import numpy as np

from derivgen.config import settings as _cfg


class dtype:
    __slots__ = ("name", "np", "is_floating_point", "itemsize", "_legacy")

    def __init__(self, name, np_dtype, is_floating_point, legacy):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = is_floating_point
        self.itemsize = self.np.itemsize
        self._legacy = legacy  # PyTorch's legacy type name, used in error messages

    def __repr__(self):
        return f"derivgen.{self.name}"

    @property
    def is_signed(self):
        return self.name not in ("uint8", "bool")

    @property
    def is_complex(self):
        return False

    @property
    def _scalar_type(self):
        """torch's ScalarType name (Float, Half, Long, ...), as its error texts spell it."""
        return self._legacy[:-len("Tensor")]

    def __reduce__(self):
        return (from_numpy_dtype, (self.np,))


float32 = dtype("float32", np.float32, True, "FloatTensor")
float64 = dtype("float64", np.float64, True, "DoubleTensor")
int64 = dtype("int64", np.int64, False, "LongTensor")
int32 = dtype("int32", np.int32, False, "IntTensor")
int16 = dtype("int16", np.int16, False, "ShortTensor")
int8 = dtype("int8", np.int8, False, "CharTensor")
uint8 = dtype("uint8", np.uint8, False, "ByteTensor")
bool_ = dtype("bool", np.bool_, False, "BoolTensor")
float = float32  # noqa: A001 - torch.float is float32
double = float64
long = int64
int = int32  # noqa: A001
short = int16

_BY_NP = {d.np: d for d in (float32, float64, int64, int32, int16, int8, uint8, bool_)}
NUMPY_DTYPES = frozenset(_BY_NP)
_SUPPORTED = "float32, float64, int64, int32, int16, int8, uint8, bool"


def unsupported_dtype(d):
    """The TypeError for making a tensor of a dtype derivgen names but cannot compute in (float16,
    bfloat16: numpy has no bfloat16 and no fast half-precision arithmetic; derivgen keeps one clear refusal
    rather than half-done support)."""
    return TypeError(f"derivgen: dtype {d!r} is not supported (supported: {_SUPPORTED}); half-precision "
                     "tensors (float16, bfloat16) are not implemented")


def _unsupported(name, itemsize, legacy):
    """A dtype torch has and derivgen names but cannot compute in: using it to make a tensor raises."""
    d = object.__new__(dtype)
    d.name, d.np, d.is_floating_point, d.itemsize, d._legacy = name, None, True, itemsize, legacy
    return d


float16 = _unsupported("float16", 2, "HalfTensor")
bfloat16 = _unsupported("bfloat16", 2, "BFloat16Tensor")
half = float16


_BY_LEGACY = {d._legacy: d for d in (float32, float64, int64, int32, int16, int8, uint8, bool_, float16, bfloat16)}


def from_legacy_name(name):
    """The dtype of a legacy tensor type name (``'torch.FloatTensor'``, ``'derivgen.FloatTensor'``); an
    unknown name raises torch's ValueError."""
    prefix, _, legacy = name.rpartition(".")
    d = _BY_LEGACY.get(legacy) if prefix in ("torch", "derivgen") else None
    if d is None:
        raise ValueError(f"invalid type: '{name}'")
    return d


def from_numpy_dtype(np_dtype):
    """The derivgen dtype of a numpy dtype; unsupported dtypes raise a clear TypeError."""
    d = _BY_NP.get(np.dtype(np_dtype))
    if d is None:
        if np.dtype(np_dtype) == np.float16:
            raise unsupported_dtype(float16)
        raise TypeError(f"derivgen: unsupported dtype {np.dtype(np_dtype)} (supported: {_SUPPORTED})")
    return d


def scalar_type_name(np_dtype):
    """torch's ScalarType name of a numpy dtype (Float, Double, Long, Int, Short, Char, Byte, Bool), as its error texts
    spell it; a dtype derivgen does not support keeps numpy's name."""
    d = _BY_NP.get(np.dtype(np_dtype))
    return d._scalar_type if d is not None else np.dtype(np_dtype).name


# the C++ type names torch's error texts give a tensor's dtype in (``caffe2::TypeMeta::name``)
_TYPE_META_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int", "int16": "short int",
                    "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def type_meta_name(np_dtype):
    name = np.dtype(np_dtype).name
    return _TYPE_META_NAMES.get(name, name)


def to_numpy_dtype(d):
    if d is None:
        return None
    if isinstance(d, dtype):
        if d.np is None:
            raise unsupported_dtype(d)
        return d.np
    return np.dtype(d)


def get_default_dtype():
    return _BY_NP[_cfg.default_float]


def set_default_dtype(d):
    if d is float16 or d is bfloat16:
        raise unsupported_dtype(d)
    if d not in (float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _cfg.default_float = d.np
