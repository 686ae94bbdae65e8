"""The old hook-based ``nn.utils.weight_norm`` / ``remove_weight_norm``, as torch's: ``weight`` becomes
``weight_g * weight_v / ||weight_v||`` (the norm over every dimension but ``dim``), recomputed by a forward
pre-hook from the parameters ``weight_g`` and ``weight_v``."""
import warnings

from derivgen.core.grad_mode import no_grad
from derivgen.nn.parameter import Parameter


def norm_except_dim(v, pow=2, dim=0):  # noqa: A002 - torch's argument name
    """The ``pow``-norm of ``v`` over every dimension but ``dim``, kept as size-1 dimensions (``dim=-1``: the
    norm of the whole tensor)."""
    if dim == -1:
        return v.norm(pow)
    dim = dim % v.dim()
    others = tuple(d for d in range(v.dim()) if d != dim)
    return v.norm(pow, dim=others, keepdim=True) if others else v.abs()


class WeightNorm:
    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, 2, self.dim))

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        with no_grad():
            module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).detach()))
            module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
