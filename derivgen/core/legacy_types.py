"""torch's legacy typed tensor classes (``FloatTensor``, ``LongTensor``, ...): each calls like the legacy
constructor of its dtype and answers ``isinstance`` for tensors of that dtype, while the tensors made are
plain ``Tensor`` objects (as torch's: ``type(torch.FloatTensor(2)) is torch.Tensor``)."""
from derivgen.core import dtypes as _dt
from derivgen.core.device import check_device
from derivgen.core.tensor import Tensor, legacy_new_array


class tensortype(type):  # noqa: N801 - torch's name for the metaclass
    """The metaclass of the legacy classes: calling one makes a Tensor of its dtype."""

    def __call__(cls, *args, device=None):
        check_device(device)
        data = legacy_new_array(cls.dtype, args)
        if len(args) == 1 and isinstance(args[0], Tensor) and data is args[0]._array:
            return args[0].detach()  # torch's alias of a tensor of the same type
        return Tensor._make(data)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __repr__(cls):
        return f"<class 'derivgen.{cls.__name__}'>"


def _legacy_class(d):
    return tensortype(d._legacy, (), {"dtype": d, "is_cuda": False, "is_sparse": False, "__module__": "derivgen"})


LEGACY_CLASSES = {c.__name__: c for c in map(_legacy_class, (
    _dt.float32, _dt.float64, _dt.float16, _dt.bfloat16, _dt.int64, _dt.int32, _dt.int16, _dt.int8, _dt.uint8,
    _dt.bool_))}
