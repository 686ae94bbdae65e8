"""``derivgen.backends.mkldnn``: torch's oneDNN switches. derivgen has no oneDNN library; ``enabled``
chooses, as torch's flag does on CPU, whether a float32 ``nn.LSTM`` runs each layer and direction as one
fused node (``MkldnnRnnLayerBackward0``) or as the composite cell. ``deterministic``, ``allow_tf32`` and
``fp32_precision`` are kept and reported but change nothing: derivgen's float32 products are plain float32."""
import contextlib
import sys
import types

_flags = {"enabled": True, "deterministic": False, "allow_tf32": True, "fp32_precision": "none"}


def is_available():
    """True: the fused recurrent layer torch runs through oneDNN exists here."""
    return True


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none"):
    orig_flags = (_flags["enabled"], _flags["deterministic"], _flags["allow_tf32"], _flags["fp32_precision"])
    for key, value in (("enabled", _enabled), ("deterministic", _deterministic), ("allow_tf32", _allow_tf32),
                       ("fp32_precision", _fp32_precision)):
        if value is not None:
            _flags[key] = value
    return orig_flags


@contextlib.contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    orig_flags = set_flags(enabled, deterministic, allow_tf32, fp32_precision)
    try:
        yield
    finally:
        set_flags(*orig_flags)


class _MkldnnModule(types.ModuleType):
    """Reads and assignments of ``enabled``, ``deterministic``, ``allow_tf32`` go to the flags, as torch's
    module properties do."""

    def __getattr__(self, name):
        if name in ("enabled", "deterministic", "allow_tf32"):
            return _flags[name]
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name in ("enabled", "deterministic", "allow_tf32"):
            _flags[name] = bool(value)
        else:
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _MkldnnModule
