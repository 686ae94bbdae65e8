"""``derivgen.nn.Parameter``: a Tensor that a Module registers as one of its parameters; ``Buffer``; and the
uninitialized parameters and buffers of lazy modules."""
import sys

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


_ARRAY_SLOT = Tensor._array  # the slot itself, which the mixin's ``_array`` property shadows


def _uninitialized_use(what, cls_name):
    return (f"Attempted to use an uninitialized parameter in {what}. This error happens when you are using a "
            f"`LazyModule` or explicitly manipulating `derivgen.nn.parameter.{cls_name}` objects. When using "
            "LazyModules Call `forward` with a dummy batch to initialize the parameters before calling torch "
            "functions")


def _entry_point(frame, tensor):
    """Where the program used ``tensor``, for the message: the outermost derivgen frame, as a Tensor method
    (``<method 'numel' of 'derivgen.Tensor' objects>``, operators by their op: ``__radd__`` is ``add``) when
    its code is exactly one Tensor attribute's and ``tensor`` is its ``self``, else as a function."""
    entry = frame
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("derivgen."):
            entry = frame
        frame = frame.f_back
    code = entry.f_code
    first = entry.f_locals.get(code.co_varnames[0]) if code.co_argcount else None
    names = [n for n in dir(Tensor) if getattr(getattr(Tensor, n), "__code__", None) is code]
    if first is tensor and (code.co_name in names or len(names) == 1):
        name = code.co_name if code.co_name in names else names[0]
        if name.startswith("__") and name != "__len__":
            bare = name.strip("_")
            name = next((op for op in (bare, bare[1:]) if hasattr(Tensor, op)), name)
        return f"<method '{name}' of 'derivgen.Tensor' objects>"
    return f"<function {code.co_name}>"


class UninitializedTensorMixin:
    """What ``UninitializedParameter`` and ``UninitializedBuffer`` share: no shape until ``materialize``,
    which gives the tensor its storage and turns it into ``cls_to_become`` in place (so every module that
    holds it sees the change).

    Until then every op refuses it with torch's ValueError: ops read a tensor's values through ``_array``,
    which this class turns into a property that raises, naming the function that tried (a Tensor method
    by torch's ``<method 'numel' of ...>`` spelling). The few things torch allows on it (``size()``,
    ``ndim``, ``dtype``, ``data``, ``requires_grad``, repr, the dtype casts a module's ``_apply`` makes)
    read the slot directly."""
    __slots__ = ()
    cls_to_become = None

    @property
    def _array(self):
        raise ValueError(_uninitialized_use(_entry_point(sys._getframe(1), self), type(self).__name__))

    @_array.setter
    def _array(self, value):
        _ARRAY_SLOT.__set__(self, value)

    def materialize(self, shape, device=None, dtype=None):
        np_dtype = _ARRAY_SLOT.__get__(self).dtype if dtype is None else dtypes.to_numpy_dtype(dtype)
        _ARRAY_SLOT.__set__(self, np.empty(tuple(shape), np_dtype))
        self.__class__ = self.cls_to_become

    # what torch lets an uninitialized tensor answer: an empty 1-d tensor's metadata
    def size(self, dim=None):
        return Tensor.size(self._empty(), dim)

    @property
    def ndim(self):
        return 1

    @property
    def dtype(self):
        return dtypes.from_numpy_dtype(_ARRAY_SLOT.__get__(self).dtype)

    @property
    def data(self):
        return Tensor._make(_ARRAY_SLOT.__get__(self))

    def _empty(self):
        return Tensor._make(_ARRAY_SLOT.__get__(self))

    # torch lets dtype conversions through (a module's ``.double()`` before its first forward): the result
    # is still uninitialized, of the new dtype
    def to(self, *args, **kwargs):
        converted = Tensor.to(self._empty(), *args, **kwargs)
        if converted.dtype == self.dtype:
            return self
        return type(self)(self.requires_grad, dtype=converted.dtype)

    def _cast(self, dtype):
        return self if dtype == self.dtype else type(self)(self.requires_grad, dtype=dtype)

    def double(self, memory_format=None):
        return self._cast(dtypes.float64)

    def float(self, memory_format=None):
        return self._cast(dtypes.float32)

    def cpu(self, memory_format=None):
        return self

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return False

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
        return (_rebuild_uninitialized, (type(self), self.requires_grad, _ARRAY_SLOT.__get__(self).dtype.str))


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
