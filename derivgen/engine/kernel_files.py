"""Kernel modules the engine writes at run time: fused regions (fusion.py) and backward tapes
(tape_kernels.py).

Each is written once, under a name hashed from its source, to the fused-kernel directory
(``DERIVGEN_FUSION_DIR``, else ``~/.cache/derivgen/fused``; a private temp directory when that is not
writable), and imported from there. That directory is one of the folders whose kernels Numba caches in
the user cache directory (kernel_cache.py), so a module written by an earlier process loads its compiled
kernels instead of compiling them. Each module's header carries the stamps of the generated kernel modules
it calls (``stamps``), so editing the table gives it another name.
"""
import hashlib
import importlib.util
import os
import sys
import tempfile
import threading

from derivgen.config import settings as _cfg
from derivgen.kernels.kernel_cache import _writable

_DIR = None
_STAMPS = {}


def directory():
    global _DIR
    if _DIR is None:
        for d in (_cfg.fusion_dir,
                  os.path.join(tempfile.gettempdir(), f"derivgen-fused-{os.getuid()}")):
            if d and _writable(d):
                _DIR = d
                break
        else:
            _DIR = tempfile.mkdtemp(prefix="derivgen-fused-")
    return _DIR


def module_name(source, prefix):
    """The module name of ``source``: ``prefix`` and a hash of the text."""
    return prefix + hashlib.sha256(source.encode()).hexdigest()[:24]


def written(source, prefix):
    """Whether ``source`` has been written before (by this process or an earlier one)."""
    return os.path.exists(os.path.join(directory(), module_name(source, prefix) + ".py"))


def load(source, prefix):
    """Write ``source`` (unless it is there) and import it as a module."""
    name = module_name(source, prefix)
    path = os.path.join(directory(), name + ".py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "w") as fh:
            fh.write(source)
        os.replace(tmp, path)  # atomic: a concurrent process never imports half a file
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # Numba's cache finds a kernel's globals through its module's name
    spec.loader.exec_module(mod)
    return mod


def stamps(module_name):
    """The generator stamps of a kernel module (row and runtime-helper hashes), from its header."""
    s = _STAMPS.get(module_name)
    if s is None:
        with open(sys.modules[module_name].__file__) as fh:
            s = [ln.strip() for _, ln in zip(range(6), fh) if "sha256" in ln]
        _STAMPS[module_name] = s
    return s
