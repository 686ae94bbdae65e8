"""numpy's OpenBLAS, found in this process: its thread-count functions and its cblas GEMM entry points.

derivgen computes its matrix products with the BLAS numpy already loaded (no BLAS of its own to
install or build). It needs two things from that library beyond what numpy exposes: the thread count
(kernels/threads.py sets it) and the addresses of ``cblas_sgemm`` and ``cblas_dgemm``, which derivgen's
own multi-threaded kernels call block by block (kernels/products.py, loop_helpers._gemm).

Only builds whose integers are 64-bit (ILP64: numpy's wheels since 2.0 ship ``scipy_openblas64_``, whose
symbols end in ``64_``) give GEMM addresses: the compiled call passes every size as a 64-bit integer.
Any other BLAS (MKL, Accelerate, a 32-bit-integer OpenBLAS) gives none, and derivgen hands its products
to numpy as they are.
"""
import ctypes

import numpy as np

# (prefix of the thread functions, prefix of the cblas functions, suffix of both) of the builds known
_BUILDS = (("scipy_openblas", "scipy_cblas", "64_"), ("scipy_openblas", "scipy_cblas", "_64_"),
           ("openblas", "cblas", "64_"), ("openblas", "cblas", ""), ("scipy_openblas", "scipy_cblas", ""))


class OpenBLAS:
    """The functions derivgen uses of one loaded OpenBLAS: ``get_threads()`` / ``set_threads(n)``, and
    ``gemm``, {numpy dtype: address of the row-major cblas GEMM} for float32 and float64 (empty unless
    the build's integers are 64-bit)."""
    __slots__ = ("path", "get_threads", "set_threads", "gemm")

    def __init__(self, path, get_threads, set_threads, gemm):
        self.path = path
        self.get_threads = get_threads
        self.set_threads = set_threads
        self.gemm = gemm


def _loaded_paths():
    try:
        with open("/proc/self/maps") as fh:
            return sorted({line.split()[-1] for line in fh if "openblas" in line.lower() and ".so" in line})
    except OSError:
        return []


def _address(lib, name):
    fn = getattr(lib, name, None)
    return None if fn is None else ctypes.cast(fn, ctypes.c_void_p).value


def _open(path):
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    for threads_prefix, cblas_prefix, suffix in _BUILDS:
        get = getattr(lib, f"{threads_prefix}_get_num_threads{suffix}", None)
        put = getattr(lib, f"{threads_prefix}_set_num_threads{suffix}", None)
        if get is None or put is None:
            continue
        get.restype = ctypes.c_int
        put.argtypes = (ctypes.c_int,)
        gemm = {}
        if suffix.endswith("64_"):
            for dtype, letter in ((np.float32, "s"), (np.float64, "d")):
                address = _address(lib, f"{cblas_prefix}_{letter}gemm{suffix}")
                if address:
                    gemm[np.dtype(dtype)] = address
        return OpenBLAS(path, get, put, gemm)
    return None


_found = []


def find():
    """numpy's OpenBLAS (loaded with numpy), or None: another BLAS, or no ``/proc`` to find it in."""
    if not _found:
        lib = None
        for path in _loaded_paths():
            lib = _open(path)
            if lib is not None:
                break
        _found.append(lib)
    return _found[0]
