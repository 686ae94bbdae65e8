"""``nn.utils.parametrize``: a tensor of a module computed by modules from an ``original`` one, as torch's.

``register_parametrization`` moves ``module.<name>`` to ``module.parametrizations.<name>.original`` and
swaps the module's class for a subclass whose property ``<name>`` runs the chain of parametrizations, so
state_dict keys, ``named_parameters`` and the class name (``ParametrizedLinear``) read as torch's. Assigning
to the property runs the chain's ``right_inverse`` backwards into ``original``. A first parametrization whose
``right_inverse`` returns a sequence keeps ``original0``, ``original1``, ... and receives them all.
"""
from contextlib import contextmanager

from derivgen.core.grad_mode import no_grad
from derivgen.core.tensor import Tensor
from derivgen.nn.modules.container import ModuleDict, ModuleList
from derivgen.nn.parameter import Parameter

_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    """Inside this context each parametrized tensor is computed once, on first use, and reused."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


class ParametrizationList(ModuleList):
    """The chain of parametrizations of one tensor, holding the ``original`` it starts from."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass  # as torch: a right_inverse that cannot run at registration is the identity
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if not self.is_tensor and not all(isinstance(t, Tensor) for t in new):
            raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        for name, value in ([("original", new)] if self.is_tensor else
                            [(f"original{i}", t) for i, t in enumerate(new)]):
            if isinstance(original, Parameter):
                self.register_parameter(name, Parameter(value.detach(), original.requires_grad))
            else:
                self.register_buffer(name, value.detach())
        if not unsafe:
            _check_output(self(), original)

    def right_inverse(self, value):
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if not self.is_tensor:
                for i, t in enumerate(value):
                    getattr(self, f"original{i}").copy_(t)
                return
            if value.dtype != self.original.dtype:
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {self.original.dtype}\nright_inverse(original).dtype: {value.dtype}")
            if tuple(value.shape) != tuple(self.original.shape):
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the shape.\n"
                                 f"original.shape: {self.original.shape}\n"
                                 f"right_inverse(original).shape: {value.shape}")
            self.original.copy_(value)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _check_output(out, original):
    if not isinstance(out, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(out).__name__}.")
    if out.dtype != original.dtype:
        raise ValueError(f"Registering a parametrization may not change the dtype of the tensor, unless `unsafe` "
                         f"flag is enabled.\nunparametrized dtype: {original.dtype}\n"
                         f"parametrized dtype: {out.dtype}")
    if tuple(out.shape) != tuple(original.shape):
        raise ValueError(f"Registering a parametrization may not change the shape of the tensor, unless `unsafe` "
                         f"flag is enabled.\nunparametrized shape: {original.shape}\n"
                         f"parametrized shape: {out.shape}")


def _inject_new_class(module):
    cls = module.__class__
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {"__module__": cls.__module__})


def _inject_property(module, tensor_name):
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        if key not in _cache:
            _cache[key] = parametrization()
        return _cache[key]

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def is_parametrized(module, tensor_name=None):
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module):
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        chain = module.parametrizations[tensor_name]
        if not unsafe:
            _check_output(parametrization(getattr(module, tensor_name)), getattr(module, tensor_name))
        chain.append(parametrization)
        chain.unsafe |= unsafe
        return module
    if tensor_name not in module._buffers and tensor_name not in module._parameters:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
                         f"with name '{tensor_name}'")
    original = getattr(module, tensor_name)
    chain = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_new_class(module)
        module.parametrizations = ModuleDict()
    _inject_property(module, tensor_name)
    module.parametrizations[tensor_name] = chain
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if not chain.is_tensor and not leave_parametrized:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized "
                         "in terms of a sequence of tensors.")
    first = chain.original if chain.is_tensor else chain.original0
    original = first
    if leave_parametrized:
        with no_grad():
            value = getattr(module, tensor_name)
            if chain.is_tensor and tuple(value.shape) == tuple(first.shape) and value.dtype == first.dtype:
                first.copy_(value)
            else:
                original = Parameter(value.detach(), first.requires_grad) if isinstance(first, Parameter) \
                    else value.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module
