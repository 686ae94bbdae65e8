"""``load_library``: check a built op library against the installed derivgen, then register its ops."""
import hashlib
import importlib
import importlib.util
import json
import os

from derivgen import ops as _ops_package
from derivgen.core import registry
from derivgen.core.tensor import Tensor
from derivgen.kernels.kernel_cache import register_cache_source
from derivgen.version import __version__

MANIFEST_FILE = "library.json"
_SHIPPED_TABLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "formulas.yaml")
_loaded = {}


class LibraryError(RuntimeError):
    """A library that cannot be loaded: missing, built for another derivgen, or shadowing an op."""


def _shipped_sha():
    with open(_SHIPPED_TABLE, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def read_manifest(package):
    """The built library's manifest (``library.json``), read without importing any of its code."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"no op library named '{package}': build it with `derivgen library build "
                                  f"ops.yaml --package {package}` and make it importable", name=package)
    folder = list(spec.submodule_search_locations)[0]
    path = os.path.join(folder, MANIFEST_FILE)
    try:
        with open(path, encoding="utf-8") as fh:
            return folder, json.load(fh)
    except OSError:
        raise LibraryError(f"'{package}' is not a derivgen op library (no {MANIFEST_FILE}): build it with "
                           f"`derivgen library build ops.yaml --package {package}`") from None


def _check_build(package, manifest):
    version, sha = manifest.get("derivgen_version"), manifest.get("shipped_table_sha256")
    if version != __version__ or sha != _shipped_sha():
        raise LibraryError(
            f"op library '{package}' was built by derivgen {version} (formula table sha256 {str(sha)[:12]}), "
            f"but derivgen {__version__} (formula table sha256 {_shipped_sha()[:12]}) is installed: rebuild "
            f"with `derivgen library build {manifest.get('table_file', 'ops.yaml')} --package {package}`")


def _check_shadowing(package, manifest):
    methods = manifest.get("methods", False)
    for row in manifest["rows"]:
        name = row["base"]
        if row.get("override"):
            continue
        if name in registry.aten or (methods and hasattr(Tensor, name)):
            raise LibraryError(f"op library '{package}': '{name}' shadows an existing op; mark its row "
                               f"'override: true' and rebuild to replace it")


def load_library(package):
    """Import the built op library ``package`` and register its ops; return its op namespace
    (also ``derivgen.ops.<namespace>``). Loading it again returns the same namespace."""
    if package in _loaded:
        return _loaded[package]
    folder, manifest = read_manifest(package)
    _check_build(package, manifest)
    _check_shadowing(package, manifest)
    namespace = registry.namespace(manifest["namespace"])
    existing = getattr(_ops_package, manifest["namespace"], None)
    if existing is not None and existing is not namespace:
        raise LibraryError(f"op library '{package}': namespace '{manifest['namespace']}' clashes with "
                           f"derivgen.ops.{manifest['namespace']}, which is not an op namespace")
    register_cache_source(folder)
    ops = importlib.import_module(f"{package}.ops")
    if manifest.get("methods"):
        for name, fn in ops.METHODS.items():
            setattr(Tensor, name, fn)
    setattr(_ops_package, manifest["namespace"], namespace)
    _loaded[package] = namespace
    return namespace


def loaded_libraries():
    """{package: namespace} of the libraries loaded in this process."""
    return dict(_loaded)

