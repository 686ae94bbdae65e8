"""``derivgen.nn.Parameter``: a Tensor that a Module registers as one of its parameters."""
from derivgen.core.tensor import Tensor


class Parameter(Tensor):
    """torch's ``nn.Parameter``: shares ``data``'s values (and version counter), is a leaf, and requires
    grad by default. Assigning one as a Module attribute registers it (see ``Module.__setattr__``)."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            import numpy as np
            from derivgen.core import dtypes
            data = Tensor._make(np.empty((0,), dtypes.get_default_dtype().np))
        p = object.__new__(cls)
        p._init(data._array, vc=data._vc)
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
            import numpy as np
            from derivgen.core import dtypes
            data = Tensor._make(np.empty((0,), dtypes.get_default_dtype().np))
        b = object.__new__(cls)
        b._init(data._array, vc=data._vc)
        b._requires_grad = data.requires_grad
        b.persistent = persistent
        return b

    def __init__(self, data=None, *, persistent=True):
        pass  # everything happened in __new__
