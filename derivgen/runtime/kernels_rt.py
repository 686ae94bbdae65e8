"""Runtime support for the generated Numba kernels: the decorator (with a cache directory that is
known to be writable), the dtype-preserving literal helper ``_l`` and the broadcasting dispatcher.

The generated kernel files stamp a hash of this file in their header, so editing it invalidates the
Numba cache of every kernel (Numba freezes callees from other files into a cached kernel).
"""
import functools
import os
import tempfile

import numba
import numpy as np
from numba import types
from numba.extending import overload

_GENERATED_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                              "generated")


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


def _choose_cache():
    """Numba raises at decoration time when no cache locator can write; pick a place or turn caching off."""
    if os.environ.get("DERIVGEN_NO_CACHE"):
        return False
    if os.environ.get("NUMBA_CACHE_DIR"):
        return _writable(os.environ["NUMBA_CACHE_DIR"])
    try:
        import derivgen.generated as gen
        here = os.path.dirname(os.path.abspath(gen.__file__))
    except Exception:  # noqa: BLE001 - generated package missing during generation
        here = _GENERATED_DIR
    for sub in ("__pycache__", os.path.join("kernels", "__pycache__")):
        if not _writable(os.path.join(here, sub)):
            break
    else:
        return True
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if _writable(os.path.join(xdg, "numba")):
        return True
    tmp = os.path.join(tempfile.gettempdir(), "derivgen-numba-cache")
    if _writable(tmp):
        numba.config.CACHE_DIR = tmp
        return True
    return False


CACHE = _choose_cache()

# One decorator for every generated loop: numpy error model (no ZeroDivisionError checks that block
# SIMD), cached on disk, compiled lazily on first use for each dtype / layout.
kernel = functools.partial(numba.njit, cache=CACHE, error_model="numpy")


def _l(value, like):
    """A literal typed like ``like`` (so float32 kernels never compute in float64)."""
    return value


@overload(_l, inline="always")
def _ol_l(value, like):
    if isinstance(like, (types.Float, types.Integer)):
        ty = like

        def impl(value, like):
            return ty(value)
        return impl
    if isinstance(like, types.Boolean):
        return lambda value, like: value


def sign(x):
    return np.sign(x)


def heaviside0(x):
    """Step with torch's convention at 0 (relu'(0) == 0)."""
    return x > 0


# ---------------------------------------------------------------------------------------------
# Dispatcher: broadcasting happens here, kernels only ever see 1-D contiguous or 2-D strided arrays.

def run_elementwise(k1d, k2d, arrays, scalars, compute, out_dtype, out=None):
    """Run a generated elementwise kernel over broadcast ``arrays``.

    ``compute`` is the dtype the kernel computes in (inputs of another float/int dtype are cast to it;
    bool inputs stay bool), ``scalars`` are cast to ``compute`` too. Returns the output array.
    """
    cast = []
    for a in arrays:
        if a.dtype != compute and a.dtype.kind != "b":
            a = a.astype(compute)
        cast.append(a)
    arrays = cast
    if len(arrays) == 1:
        shape = arrays[0].shape
    else:
        shape = np.broadcast_shapes(*[a.shape for a in arrays])
    if out is None:
        out = np.empty(shape, out_dtype)
    elif out.shape != shape:
        raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape {list(shape)}")
    typed_scalars = [compute.type(s) for s in scalars]
    zero = compute.type(0)
    if out.flags.c_contiguous and all(a.shape == shape and a.flags.c_contiguous for a in arrays):
        k1d(out.reshape(-1), *[a.reshape(-1) for a in arrays], *typed_scalars, zero)
        return out
    views = [out] + [np.broadcast_to(a, shape) for a in arrays]
    collapsed = _collapse_2d(views)
    if collapsed is None:
        flat_out = np.empty(shape, out_dtype) if not out.flags.c_contiguous else out
        ins = [np.ascontiguousarray(v).reshape(-1) for v in views[1:]]
        k1d(flat_out.reshape(-1), *ins, *typed_scalars, zero)
        if flat_out is not out:
            out[...] = flat_out
        return out
    k2d(*collapsed, *typed_scalars, zero)
    return out


def _collapse_2d(views):
    """Merge adjacent dims that every operand can merge (as torch's TensorIterator does); return 2-D
    strided views of all operands, or None if more than two dims remain."""
    shape = list(views[0].shape)
    strides = [list(v.strides) for v in views]
    i = len(shape) - 2
    while i >= 0:
        mergeable = all(st[i] == st[i + 1] * shape[i + 1] or shape[i] == 1 for st in strides) \
            or shape[i + 1] == 1
        if mergeable:
            if shape[i + 1] == 1:
                for st in strides:
                    st[i + 1] = st[i]
            shape[i] *= shape[i + 1]
            del shape[i + 1]
            for st in strides:
                st[i] = st[i + 1]
                del st[i + 1]
        i -= 1
    if len(shape) > 2:
        return None
    while len(shape) < 2:
        shape.insert(0, 1)
        for st in strides:
            st.insert(0, 0)
    return [np.lib.stride_tricks.as_strided(v, shape=tuple(shape), strides=tuple(st))
            for v, st in zip(views, strides)]


class Elementwise:
    """A generated kernel pair (1-D contiguous, 2-D strided) with its dtype rules.

    ``int_closed`` kernels compute integers exactly in int64; other kernels compute integer inputs in
    the default float dtype. ``returns_bool`` kernels (comparisons) write a bool array.
    """
    __slots__ = ("k1d", "k2d", "int_closed", "returns_bool", "n_arrays", "n_scalars")

    def __init__(self, k1d, k2d, int_closed, returns_bool, n_arrays, n_scalars):
        self.k1d = k1d
        self.k2d = k2d
        self.int_closed = int_closed
        self.returns_bool = returns_bool
        self.n_arrays = n_arrays      # array inputs, then scalar inputs: what `derivgen warmup` needs
        self.n_scalars = n_scalars

    def _compute(self, dt):
        if dt.kind != "f" and (not self.int_closed or dt.kind == "b"):
            from .dtypes import get_default_dtype
            if not (self.returns_bool and dt.kind in "biu"):
                return get_default_dtype().np
        return dt

    def __call__(self, arrays, scalars=(), out=None):
        """Backward use: numpy arrays in, the promoted dtype out (0-dim arrays do not promote)."""
        from .tensor import result_dtype
        compute = self._compute(result_dtype(*arrays))
        return run_elementwise(self.k1d, self.k2d, arrays, scalars, compute,
                               np.dtype(np.bool_) if self.returns_bool else compute, out)

    def forward(self, tensors, scalars=(), out=None):
        """Forward use: Tensors in, so that wrapped Python numbers follow torch's promotion."""
        from .tensor import result_dtype
        compute = self._compute(result_dtype(*tensors))
        return run_elementwise(self.k1d, self.k2d, [t.data for t in tensors], scalars, compute,
                               np.dtype(np.bool_) if self.returns_bool else compute, out)
