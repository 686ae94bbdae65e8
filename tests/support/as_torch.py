"""Run a script with ``torch`` resolved to derivgen: ``python -m tests.support.as_torch script.py``.

An import hook in front of every other finder answers ``import torch`` and ``import torch.X.Y`` (also
``from torch.X import Y``) with ``derivgen`` and ``derivgen.X.Y``, the same module objects, so the script
runs unchanged, as if derivgen had been installed under torch's name. A ``torch`` module derivgen does
not have is a ``ModuleNotFoundError`` naming the torch module (nothing of the real torch is loaded).
"""
import importlib
import importlib.abc
import importlib.util
import runpy
import sys

_ALIAS = "torch"
_TARGET = "derivgen"


class _Loader(importlib.abc.Loader):
    def __init__(self, module):
        self._module = module

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        pass


class _TorchIsDerivgen(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != _ALIAS and not fullname.startswith(_ALIAS + "."):
            return None
        real = _TARGET + fullname[len(_ALIAS):]
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as exc:
            if exc.name != real and not real.startswith(exc.name + "."):
                raise
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname) from None
        return importlib.util.spec_from_loader(fullname, _Loader(module),
                                               is_package=hasattr(module, "__path__"))


def install():
    """Make ``import torch`` (and its submodules) import derivgen from now on in this interpreter."""
    for name in [n for n in sys.modules if n == _ALIAS or n.startswith(_ALIAS + ".")]:
        del sys.modules[name]
    sys.meta_path.insert(0, _TorchIsDerivgen())


def main(argv):
    if len(argv) != 1:
        raise SystemExit("usage: python -m tests.support.as_torch SCRIPT")
    install()
    sys.argv = [argv[0]]
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
