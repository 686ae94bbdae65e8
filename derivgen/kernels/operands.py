"""How a generated kernel's loop reads an operand: ``_elem(a, i)`` is ``a[i]`` for an array and ``a``
itself for a number. The dispatcher passes a one-element operand (a wrapped Python number, a 0-dim
tensor, ``lr`` in ``lr * w.grad``) as a number, so the loop reads only contiguous arrays and
vectorizes; a stride-0 array in its place kept the loop scalar (about 3x slower on 100k floats).
Numba compiles one version of a kernel per combination of array and number operands (the compiled
overload is in numba_backend.py, so that importing kernels does not import Numba).
"""


def _elem(a, i):
    """``a[i]``, or ``a`` when it is a number (Python semantics of the compiled version)."""
    return a if getattr(a, "ndim", 0) == 0 else a[i]
