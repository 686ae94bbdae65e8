"""``derivgen.device``, spelled and compared as torch's, and the checks that make every non-cpu device
fail as it does in a CPU-only build of PyTorch (derivgen computes on the CPU only).

``device("cuda")`` can be made, printed and compared (as in torch); creating or moving a tensor
there raises ``AssertionError: Torch not compiled with CUDA enabled``, the text of a CPU-only torch.
"""
import re

DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_BACKEND_NAMES = {"mps": "MPS", "meta": "Meta", "xla": "XLA", "xpu": "XPU", "hpu": "HPU", "ipu": "IPU",
                  "mtia": "MTIA", "maia": "MAIA", "lazy": "Lazy", "vulkan": "Vulkan", "ve": "VE", "fpga": "FPGA",
                  "mkldnn": "MkldnnCPU", "opengl": "OpenGL", "opencl": "OpenCL", "ideep": "IDEEP",
                  "privateuseone": "PrivateUse1"}
_DEVICE_STRING = re.compile(r"^([a-z_]+)(?::(\d+))?$")


class device:
    __slots__ = ("type", "index")

    def __init__(self, type_or_device, index=None):  # noqa: A002 - torch spells the argument `type`
        if isinstance(type_or_device, device):
            if index is not None:
                raise TypeError("device(): a device object takes no index")
            self.type, self.index = type_or_device.type, type_or_device.index
            return
        if isinstance(type_or_device, int) and not isinstance(type_or_device, bool):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if not isinstance(type_or_device, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({type(type_or_device).__name__}), but expected one of:\n * (derivgen.device device)\n"
                            " * (str type, int index = -1)")
        text = type_or_device
        if not text:
            raise RuntimeError("Device string must not be empty")
        kind = re.match(r"^[a-z_]*", text).group(0)
        if kind not in DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: "
                               f"{text}")
        match = _DEVICE_STRING.match(text)
        if match is None:
            raise RuntimeError(f"Invalid device string: '{text}'")
        parsed = int(match.group(2)) if match.group(2) is not None else None
        if index is not None:
            if parsed is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: "
                                   f"{text}")
            if index < 0:
                raise RuntimeError("Device index must not be negative")
            parsed = int(index)
        self.type, self.index = kind, parsed

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


CPU = device("cpu")
_default = [CPU]


def check_device(dev):
    """None for a cpu device (or None, meaning the default device); a CPU-only torch's error otherwise."""
    if dev is None:
        dev = _default[0]
    if dev.__class__ is str and dev == "cpu":  # x.to("cpu") in every step of a training loop
        return
    if not isinstance(dev, device):
        dev = device(dev)
    if dev.type == "cpu":
        return
    if dev.type in ("cuda", "hip"):
        raise AssertionError("Torch not compiled with CUDA enabled")
    name = _BACKEND_NAMES.get(dev.type, dev.type)
    raise NotImplementedError(f"Could not run 'aten::empty.memory_format' with arguments from the '{name}' backend. "
                              "This could be because the operator doesn't exist for this backend, or was omitted "
                              "during the selective/custom build process (if using custom build).")


def set_default_device(dev):
    """The device factories use when given none; as in torch, a non-cpu one fails when a tensor is made."""
    _default[0] = CPU if dev is None else device(dev)


def get_default_device():
    return _default[0]


class layout:  # noqa: N801 - torch spelling
    """torch.layout: how a tensor's elements are laid out; derivgen's tensors are all ``strided``."""
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"derivgen.{self._name}"


strided = layout("strided")
layout.__module__ = "derivgen"  # prints as <class 'derivgen.layout'>, torch's as torch.layout
