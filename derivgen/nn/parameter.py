"""``derivgen.nn.Parameter``: a Tensor that a Module registers as one of its parameters; ``Buffer``; and the
uninitialized parameters and buffers of lazy modules."""
import numpy as np

from derivgen.core import dtypes
from derivgen.core.tensor import Tensor, shared_version


class Parameter(Tensor):
    """torch's ``nn.Parameter``: shares ``data``'s values (and version counter), is a leaf, and requires
    grad by default. Assigning one as a Module attribute registers it (see ``Module.__setattr__``)."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = Tensor._make(np.empty((0,), dtypes.get_default_dtype().np))
        p = object.__new__(cls)
        p._init(data._array, vc=shared_version(data))
        p.requires_grad = requires_grad
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happened in __new__

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(Tensor._make(self._array.copy()), self.requires_grad)  # torch copies no grad
        memo[id(self)] = result
        return result

    def __reduce__(self):
        return (_rebuild_parameter, (self._array, self.requires_grad))


def _rebuild_parameter(array, requires_grad):
    return Parameter(Tensor._make(array), requires_grad)


class Buffer(Tensor):
    """torch's ``nn.Buffer``: a Tensor that registers itself as a buffer when assigned as a Module attribute
    (``persistent=False`` keeps it out of ``state_dict``); it shares ``data``'s values, without history."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = Tensor._make(np.empty((0,), dtypes.get_default_dtype().np))
        b = object.__new__(cls)
        b._init(data._array, vc=shared_version(data))
        b._requires_grad = data.requires_grad
        b.persistent = persistent
        return b

    def __init__(self, data=None, *, persistent=True):
        pass  # everything happened in __new__


class UninitializedTensorMixin:
    """What ``UninitializedParameter`` and ``UninitializedBuffer`` share: no shape until ``materialize``,
    which gives the tensor its storage and turns it into ``cls_to_become`` in place (so every module that
    holds it sees the change)."""
    __slots__ = ()
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        np_dtype = self._array.dtype if dtype is None else dtypes.to_numpy_dtype(dtype)
        self._array = np.empty(tuple(shape), np_dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
                           "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, dtype=self.dtype)
        return memo[id(self)]

    def __reduce_ex__(self, proto):
        return (_rebuild_uninitialized, (type(self), self.requires_grad, self._array.dtype.str))


def _rebuild_uninitialized(cls, requires_grad, np_dtype):
    return cls(requires_grad, dtype=dtypes.from_numpy_dtype(np.dtype(np_dtype)))


def _empty_of(dtype):
    return np.empty((0,), (dtype or dtypes.get_default_dtype()).np)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (a lazy module's, until its first forward)."""
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        p = object.__new__(cls)
        p._init(_empty_of(dtype))
        p.requires_grad = requires_grad
        return p

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass  # everything happened in __new__


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet; it becomes a plain Tensor when materialised."""
    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        b = object.__new__(cls)
        b._init(_empty_of(dtype))
        b._requires_grad = requires_grad
        return b

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass  # everything happened in __new__


def is_lazy(param):
    """Whether ``param`` is an ``UninitializedParameter`` or ``UninitializedBuffer``."""
    return isinstance(param, UninitializedTensorMixin)
