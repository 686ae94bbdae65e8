"""``torch.set_num_threads`` and its relatives: the user's ceiling on derivgen's threads.

derivgen computes with the fewer of this ceiling and the cores other processes leave free
(``derivgen/kernels/threads.py``): prange kernels run multi-threaded only with two or more threads, and
OpenBLAS gets the same count. derivgen has no inter-op thread pool; the inter-op count is kept and
checked as PyTorch does (it may be set once), so programs that set it run unchanged.
"""
import numpy as np

from derivgen.kernels import threads as _threads

_INT32_MAX = 2**31 - 1


def _thread_count(fn, n):
    """``n`` as PyTorch's binding takes it: a Python int other than bool, or a NumPy integer scalar;
    positive, within int32."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise RuntimeError(f"{fn} expects an int, but got {_type_name(n)}")
    n = int(n)
    if n > _INT32_MAX or n < -_INT32_MAX - 1:
        raise ValueError("Overflow when unpacking long")
    if n <= 0:
        raise RuntimeError(f"{fn} expects a positive integer")
    return n


def _type_name(value):
    """The type's name as CPython's ``tp_name`` gives it: bare for Python classes and builtins, with the
    module for compiled ones (``numpy.float64``)."""
    cls = type(value)
    if cls.__module__ == "builtins" or cls.__flags__ & _HEAP_TYPE:
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python


def set_num_threads(n, /):
    """Sets the number of threads used for intraop parallelism on CPU (derivgen's prange kernels and
    OpenBLAS); more than the machine's cores uses every core."""
    _threads.set_limit(_thread_count("set_num_threads", n))


def get_num_threads():
    """Returns the number of threads used for parallelizing CPU operations (the last
    ``set_num_threads``, else ``OMP_NUM_THREADS`` or the number of usable cores)."""
    return _threads.state.limit


class _Interop:
    __slots__ = ("threads", "set")

    def __init__(self):
        self.threads = _threads.state.cores
        self.set = False


_interop = _Interop()


def set_num_interop_threads(n, /):
    """Sets the number of threads used for interop parallelism; once per process, as in PyTorch."""
    n = _thread_count("set_num_interop_threads", n)
    if _interop.set:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _interop.threads = n
    _interop.set = True


def get_num_interop_threads():
    """Returns the number of threads used for inter-op parallelism on CPU."""
    return _interop.threads
