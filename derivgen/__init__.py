"""derivgen: a symbolic autograd compiler with PyTorch's autograd surface.

``import derivgen as torch`` gives tensors, ops generated from ``formulas.yaml`` (functions and Tensor
methods), ``*Backward0`` nodes with torch's names and graph shapes, and ``derivgen.autograd``.
"""
from derivgen.version import __version__  # noqa: F401

from derivgen.core.dtypes import float32, float64, int64, int32, double, long, get_default_dtype, set_default_dtype  # noqa: F401
from derivgen.core.dtypes import int16, int8, short, uint8  # noqa: F401
from derivgen.core.dtypes import bool_ as bool  # noqa: A001,F401
from derivgen.core.dtypes import dtype  # noqa: F401
from derivgen.core.dtypes import bfloat16, float16, half  # noqa: F401
from derivgen.core.device import device, get_default_device, layout, set_default_device, strided  # noqa: F401
from derivgen.core.generator import (Generator, default_generator, get_rng_state, initial_seed,  # noqa: F401
                                     seed, set_rng_state)
from derivgen.core.dtypes import float as float  # noqa: A001,F401,PLC0414
from derivgen.core.dtypes import int as int  # noqa: A001,F401,PLC0414
from derivgen.ops.factories import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like,  # noqa: F401
                                linspace, manual_seed, multinomial, normal, ones, ones_like, rand, rand_like,
                                randint, randint_like, randn, randn_like, randperm, tensor, zeros, zeros_like)
from derivgen.core.type_info import finfo, iinfo  # noqa: F401
from derivgen.core.tensor_str import set_printoptions  # noqa: F401
from derivgen.core.grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,  # noqa: F401
                                no_grad, set_grad_enabled)
from derivgen.core.anomaly import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: F401
from derivgen.parallelism import (get_num_interop_threads, get_num_threads, set_num_interop_threads,  # noqa: F401
                                  set_num_threads)
from derivgen.core.tensor import Size, Tensor  # noqa: F401
from derivgen.core.legacy_types import LEGACY_CLASSES as _LEGACY_CLASSES

from derivgen import config  # noqa: F401

globals().update(_LEGACY_CLASSES)  # FloatTensor, DoubleTensor, LongTensor, ...

try:
    from derivgen.generated import jvp as _generated_jvp  # noqa: F401  (imports ops too; node and kernel modules load on first use)
    from derivgen.generated import ops as _generated_ops
except (ImportError, SyntaxError, AttributeError, NameError) as _exc:
    # The generator's command line lives in this package too: a missing, broken or stale generated/ (one
    # generated module naming what another no longer has) must not stop `derivgen generate` from
    # rebuilding it. Any use of the library then says what to do.
    _generated_error = _exc
else:
    _generated_error = None
    from derivgen import tensor_methods as _tensor_methods
    from derivgen.ops import closeness as _closeness
    from derivgen.ops import sorting as _sorting
    from derivgen.ops import bitwise as _bitwise
    from derivgen.ops import type_promotion as _type_promotion
    from derivgen.ops.division import floor_divide  # noqa: F401
    from derivgen.ops import composites as _composites
    from derivgen.ops import aliases as _aliases
    from derivgen.ops import structural as _structural
    from derivgen.ops import linalg as _linalg_ops
    from derivgen.ops import scatter_modes as _scatter_modes
    from derivgen.ops.keywords import accept_input_keyword as _accept_input_keyword

    _tensor_methods.install(_generated_ops)
    globals().update(_generated_ops.FUNCTIONS)
    # composites accept torch's keyword names (input=, other=) like the generated ops
    globals().update({_name: _accept_input_keyword(_fn) for _name, _fn in _composites.FUNCTIONS.items()})
    globals().update(_closeness.FUNCTIONS)
    globals().update(_sorting.FUNCTIONS)
    globals().update(_bitwise.FUNCTIONS)
    globals().update(_type_promotion.FUNCTIONS)
    globals().update(_aliases.FUNCTIONS)
    globals().update({_name: _accept_input_keyword(_fn) for _name, _fn in _structural.FUNCTIONS.items()})
    globals().update({_name: _accept_input_keyword(_fn) for _name, _fn in _linalg_ops.FUNCTIONS.items()})
    globals().update({_name: _accept_input_keyword(_fn) for _name, _fn in _scatter_modes.FUNCTIONS.items()})
    is_tensor = _composites.is_tensor
    numel = _composites.numel

    from derivgen import autograd  # noqa: F401,E402

    def is_inference(t):
        return t.is_inference()


# Imported on first access (``derivgen.nn``, ``from derivgen import optim``), so that ``import derivgen``
# pays only for the tensor library: attribute -> (module, name in it or None for the module itself).
# They register nothing that the core needs.
_LAZY = {name: (f"derivgen.{name}", None)
         for name in ("func", "linalg", "nn", "optim", "utils", "distributed", "cuda", "backends", "library",
                      "accelerator", "return_types", "profiler")}
_LAZY.update({"load": ("derivgen.serialization", "load"), "save": ("derivgen.serialization", "save"),
              "vmap": ("derivgen.func", "vmap"),
              "load_library": ("derivgen.library", "load_library")})


def __getattr__(name):
    if _generated_error is not None and not _is_submodule(name):
        raise ImportError(f"derivgen.generated failed to import ({_generated_error!r}); run `derivgen generate` "
                          f"to rebuild it from formulas.yaml") from _generated_error
    lazy = _LAZY.get(name)
    if lazy is not None:
        import importlib
        module = importlib.import_module(lazy[0])
        value = module if lazy[1] is None else getattr(module, lazy[1])
        globals()[name] = value
        return value
    raise AttributeError(f"module 'derivgen' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def _is_submodule(name):
    # ``from derivgen import cachedir`` asks this module first: a submodule must still import (the
    # generator's command line needs its own modules to rebuild a broken generated/)
    import importlib.util
    return importlib.util.find_spec(f"{__name__}.{name}") is not None
