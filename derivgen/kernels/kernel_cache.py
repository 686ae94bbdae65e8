"""Where Numba keeps derivgen's compiled kernels: a directory that is known to be writable (the user
cache directory, else a private temp directory, else no caching), and the source folders it serves.
numba_backend's cache locator reads ``cache_dirs``; nothing here imports Numba."""
import functools
import hashlib
import importlib.util
import os
import tempfile

from derivgen.config import settings as _cfg


def _writable(path):
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, f".derivgen-probe-{os.getpid()}")
        with open(probe, "w"):
            pass
        os.remove(probe)
        return True
    except OSError:
        return False


class cache_dirs:
    """Where Numba keeps the compiled kernels of derivgen's own source folders: ``root`` (None when
    caching is off) and ``sources``, the folders whose kernels are served from it (the package, the
    generated library, fused kernels, built op libraries). numba_backend's cache locator reads both."""
    root = None
    sources = ()


@functools.lru_cache(maxsize=None)
def _helpers_stamp():
    here = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256()
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            with open(os.path.join(here, name), "rb") as fh:
                h.update(name.encode() + b"\0" + fh.read())
    return h.hexdigest()


def _choose_cache():
    """Where compiled kernels are kept: the user cache directory, else a private temp directory; caching
    is off when neither is writable (Numba would raise at decoration time) or DERIVGEN_NO_CACHE is set."""
    if not _cfg.kernel_cache:
        return False
    for root in (os.path.join(_cfg.cache_dir, "numba"),
                 os.path.join(tempfile.gettempdir(), f"derivgen-numba-{os.getuid() if hasattr(os, 'getuid') else 0}")):
        if _writable(root):
            cache_dirs.root = root
            package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            generated = importlib.util.find_spec("derivgen.generated")
            cache_dirs.sources = tuple(os.path.abspath(p) for p in (
                package, _cfg.fusion_dir,
                os.path.dirname(generated.origin) if generated and generated.origin else package))
            return True
    return False


CACHE = _choose_cache()


def register_cache_source(folder):
    """Serve the kernels of ``folder`` (a built op library) from the user cache directory too, never from
    a ``__pycache__`` beside the installed library. Call before the library's kernels are imported."""
    if CACHE:
        folder = os.path.abspath(folder)
        if folder not in cache_dirs.sources:
            cache_dirs.sources = cache_dirs.sources + (folder,)
