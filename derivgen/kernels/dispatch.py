"""The Python side of the generated elementwise kernels: dtype rules, broadcasting, and the choice
between a kernel's 1-D contiguous and 2-D strided variants. Kernels never see broadcasting.

This is on every op's hot path, so the common cases (same shapes, one dtype) are decided without
calling into numpy's broadcasting machinery.
"""
import threading

import numpy as np

from derivgen.config import OFF as _OFF
from derivgen.config import settings as _cfg
from derivgen.kernels import blas as _blas
from derivgen.kernels import interpreted as _interpreted
from derivgen.kernels import threads as _threads
from derivgen.kernels.buffers import empty as _empty
from derivgen.kernels.errors import translate_kernel_call
from derivgen.kernels.promotion import array_result_dtype

# Arrays of at least settings.parallel_threshold elements (DERIVGEN_PARALLEL_THRESHOLD, default 262144)
# run through the prange variants of a kernel; DERIVGEN_PARALLEL=0 keeps every kernel serial. Measured on the 2-core machine
# (benchmarks/README.md): 2x faster than serial on a quiet machine from 64k elements up. numba's OpenMP pool
# keeps OpenMP's default waiting (its idle workers spin for a few milliseconds before they sleep): with
# passive waiting a sleeping worker took 0.2-0.5 ms to wake on the 2-core virtual machine, and a 1 ms
# parallel loop run after a 2 ms pause took as long as the serial one. A worker that spins beside
# another process's busy core would slow both; derivgen computes on one thread then (kernels/threads.py).
#
# Elementwise ops on at least settings.fusion_threshold float elements (DERIVGEN_FUSION_THRESHOLD,
# default 131072) are deferred and fused (derivgen/engine/fusion.py). Measured crossover of fused vs
# eager (add + relu, forward and backward): eager wins at 65,536 elements (113 vs 101 us), fusion from
# 131,072 (143 vs 158 us).

_THREADS = [False]
# numba's thread count is per calling thread: the count last given to numba from each Python thread
_numba_threads = threading.local()


def pick(serial, parallel, size, rows=2):
    """The prange variant of a kernel for ``size`` elements past _cfg.parallel_threshold (over more than one
    row) while derivgen may use more than one thread (kernels/threads.py: the cores other processes leave
    free, at most ``set_num_threads``), with numba's thread pool started and set to that many threads;
    else the serial one."""
    if size >= _cfg.parallel_threshold and parallel is not None and rows > 1 and parallel_threads() > 1:
        return parallel
    return serial


def parallel_threads():
    """How many threads a prange kernel may use now (kernels/threads.py), with numba's pool started and
    set to that many; 1 when derivgen computes on one thread (or parallel kernels are off)."""
    if _cfg.parallel_threshold >= _OFF:
        return 1
    _threads.adapt()
    if not _threads.state.parallel:
        return 1
    start_threads()
    n = _threads.state.threads
    if getattr(_numba_threads, "n", None) != n:
        _set_numba_threads(n)
    return _numba_threads.limit


def _set_numba_threads(n):
    import numba
    _numba_threads.limit = min(n, numba.config.NUMBA_NUM_THREADS)
    numba.set_num_threads(_numba_threads.limit)
    _numba_threads.n = n


def start_threads():
    """Start numba's thread pool (called before the first parallel kernel; a no-op afterwards). From then
    on derivgen's products also run on this pool where OpenBLAS lets them (products.py), and OpenBLAS
    computes on one thread: two pools on two cores wait for each other's spinning idle workers. (A pool
    of one thread, NUMBA_NUM_THREADS=1, splits nothing, and OpenBLAS keeps its threads.)"""
    if _THREADS[0]:
        return
    _THREADS[0] = True
    import numba
    lib = _blas.find()
    if lib is not None and lib.gemm and numba.config.NUMBA_NUM_THREADS > 1:
        _threads.own_blas_threads()


_BOOL = np.dtype(np.bool_)
_INT64 = np.dtype(np.int64)


def broadcast_shape(shapes):
    """The broadcast of ``shapes``, operand by operand as torch's TensorIterator does, with its error."""
    shape = tuple(shapes[0])
    for other in shapes[1:]:
        ndim = max(len(shape), len(other))
        out = [1] * ndim
        for i in range(ndim - 1, -1, -1):
            da, db = i - ndim + len(shape), i - ndim + len(other)
            a = shape[da] if da >= 0 else 1
            b = other[db] if db >= 0 else 1
            if a != b and a != 1 and b != 1:
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                                   f"non-singleton dimension {i}")
            out[i] = a if b == 1 else b
        shape = tuple(out)
    return shape


_ZERO = {}
# The zero (which also types a kernel's literals) of each float dtype; the fixed-arity fast paths use
# a dict lookup as their dtype check: anything not in it takes the general path.
_FLOAT_ZERO = {np.dtype(t): np.dtype(t).type(0) for t in (np.float16, np.float32, np.float64)}
# The dtypes whose compiled kernels the fixed-arity fast paths call directly (Elementwise._entry).
_ENTRY_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Below this many elements an op neither fuses nor runs in parallel: the fast paths' size bound.


def _typed(scalars, dt):
    """Python numbers as the kernel's compute type (a float32 kernel gets float32 scalars)."""
    if not scalars:
        return ()
    ctype = dt.type
    if len(scalars) == 1:
        return (ctype(scalars[0]),)
    return [ctype(v) for v in scalars]


_PLAIN_NUMBERS = (int, float)


def _entry_scalars(scalars, dt):
    """Scalars for a compiled entry point: one plain Python int/float passes as it is (the entry point
    converts it to the kernel's dtype, rounding as ``dt.type(v)`` does, without the 0.25 µs of making
    a NumPy scalar); anything else is converted here."""
    if len(scalars) == 1 and type(scalars[0]) in _PLAIN_NUMBERS:
        return scalars
    return _typed(scalars, dt)


def compiled_entry(kernel, args):
    """The compiled function Numba's dispatcher ``kernel`` has just run for ``args``, to be called directly
    with arguments of the same types, or None. The dispatcher types every argument on each call to pick
    the compiled version, which costs about as much again as the kernel on a few elements; a caller that
    has checked the types already can skip it. Only for mutable arrays: a read-only one types differently.
    None too when ``kernel`` ran its array form (interpreted.py): Numba is not loaded then."""
    if not getattr(kernel, "compiled", True):
        return None
    try:
        import numba  # loaded by the dispatcher's call
        signature = tuple(numba.typeof(v) for v in args)
        compiled = kernel.overloads.get(signature)
        if compiled is not None and all(t.mutable for t in signature if isinstance(t, numba.types.Array)):
            return compiled.entry_point
    except Exception:  # noqa: BLE001 - without it, calls keep going through the dispatcher
        pass
    return None


def call_cached(entries, key, kernel, args):
    """``kernel(*args)``, through the compiled function kept in ``entries[key]`` once Numba's dispatcher
    has run it (``compiled_entry``). ``key`` must fix the types of ``args`` (the callers' checks ensure
    it: C-contiguous 1-D arrays and numbers of the key's dtypes)."""
    entry = entries.get(key)
    if entry is not None:
        entry(*args)
        return
    kernel(*args)
    entry = compiled_entry(kernel, args)
    if entry is not None:
        entries[key] = entry


def _zero_of(dtype):
    z = _ZERO.get(dtype)
    if z is None:
        z = _ZERO[dtype] = dtype.type(0)
    return z


# One-element operands of these dtypes reach a kernel's 1-D variants as numbers (see
# derivgen/kernels/operands.py); others (float16, complex) keep a stride-0 array.
_NUMBER_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16, np.int32,
                                                 np.int64, np.uint8, np.bool_))


def _as_number(a):
    """The value of a one-element array as a NumPy scalar of its dtype, or None if it must stay an array."""
    if a.dtype in _NUMBER_DTYPES:
        return a.dtype.type(a.item(0))
    return None


def _one_value_contiguous(a):
    """``a`` if C-contiguous; a C-contiguous copy of a broadcast single value (all strides 0: what
    ``sum``'s backward hands on, the expanded gradient); else None. For a small operand of a fixed-arity
    call, the copy costs less than the general path's broadcasting, and the result is the same array
    (C-contiguous, as the general path makes it for such operands)."""
    if a.flags.c_contiguous:
        return a
    if not any(a.strides):
        return np.ascontiguousarray(a)
    return None


_PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to "
                    "a single memory location. Please clone() the tensor before performing the operation.")


def _dense(a):
    return a.flags.c_contiguous or a.flags.f_contiguous


def check_no_partial_overlap(out, arrays):
    """torch's refusal of an input that shares part of its memory with the output (``x[1:].add_(x[:-1])``):
    the result would depend on the loop order. As torch, only dense arrays are compared (others are
    "too hard" and run in order), and an input that is exactly the output (``x.add_(x)``) is allowed."""
    for a in arrays:
        if a is out or not np.may_share_memory(a, out) or not a.size or not _dense(a) or not _dense(out):
            continue
        a_begin = a.__array_interface__["data"][0]
        o_begin = out.__array_interface__["data"][0]
        a_end, o_end = a_begin + a.nbytes, o_begin + out.nbytes
        if a_begin == o_begin and a_end == o_end:
            if a.strides == out.strides:
                continue
            raise RuntimeError(_PARTIAL_OVERLAP)
        if a_begin < o_end and o_begin < a_end:
            raise RuntimeError(_PARTIAL_OVERLAP)


def run_elementwise(k1d, k2d, arrays, scalars, compute, out_dtype, out=None, k1d_parallel=None,
                    k2d_parallel=None, k_rows=None, k_inplace=None):
    """Run a generated elementwise kernel over broadcast ``arrays``.

    ``compute`` is the dtype the kernel computes in (inputs of another float/int dtype are cast to it;
    bool inputs stay bool), ``scalars`` are cast to ``compute`` too. Returns the output array. When
    ``out`` is the first operand itself, ``k_inplace`` (the variant that writes into its first operand)
    runs instead of ``k1d`` (another overlap between ``out`` and an input keeps ``k1d``, which reads and
    writes element by element in order).
    """
    if out is not None:
        check_no_partial_overlap(out, arrays)
    shape = arrays[0].shape if arrays else ()
    simple = out is None
    for a in arrays:
        # (bool inputs reach the kernel as they are on either path)
        if (a.dtype != compute and a.dtype is not _BOOL) or a.shape != shape or not a.flags.c_contiguous:
            simple = False
            break
    zero = _zero_of(compute)
    if simple:
        # the common case: same shape, same dtype, contiguous
        out = _empty(shape, out_dtype)
        size = out.size
        k1d = pick(k1d, k1d_parallel, size)
        typed_scalars = _typed(scalars, compute)
        if len(shape) == 1:
            k1d(out, *arrays, *typed_scalars, zero)
        else:
            k1d(out.reshape(-1), *[a.reshape(-1) for a in arrays], *typed_scalars, zero)
        return out
    arrs = []
    for a in arrays:
        if a.dtype != compute and a.dtype.kind != "b":
            a = a.astype(compute)
        arrs.append(a)
    for a in arrs:
        if a.shape != shape:
            if a.ndim == 0:
                continue  # a single value never changes the broadcast shape
            if not shape:
                shape = a.shape
                continue
            shape = broadcast_shape([x.shape for x in arrs])
            break
    if out is None:
        out = _empty(shape, out_dtype)
    elif out.shape != shape:
        raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape {list(shape)}")
    typed_scalars = _typed(scalars, compute)
    if out.flags.c_contiguous:
        # 1-D path: every input is the full shape and contiguous, or a single element read with stride 0
        size = out.size
        flat = []
        for a in arrs:
            if a.shape == shape and a.flags.c_contiguous:
                flat.append(a.reshape(-1))
            elif a.size == 1 or (a.shape == shape and not any(a.strides)):
                # one value (a wrapped number; or broadcast everywhere, e.g. the gradient of a sum):
                # passed as a number, so the loop reads only contiguous arrays and vectorizes
                number = _as_number(a)
                flat.append(number if number is not None else
                            np.ndarray((size,), a.dtype, np.array(a.item(0), a.dtype), 0, (0,)))
            else:
                break
        else:
            if k_inplace is not None and arrays and out is arrs[0] and size < _cfg.parallel_threshold:
                # an in-place op (``w.sub_(g)``: out is the first operand, uncast): with out passed
                # separately Numba's loop cannot be vectorized, as out and the operand overlap
                k_inplace(out.reshape(-1), *flat[1:], *typed_scalars, zero)
                return out
            k1d = pick(k1d, k1d_parallel, size)
            k1d(out.reshape(-1), *flat, *typed_scalars, zero)
            return out
    if len(shape) == 2 and out.flags.c_contiguous:
        if k_rows is not None and out.size < _cfg.parallel_threshold:
            args = _row_operands(arrs, shape)
            if args is not None:
                # a matrix with bias rows: contiguous inner loops (the strided _2d variant does not
                # vectorize, ~3x slower on (256, 256) float32)
                k_rows(out, *args, *typed_scalars, zero)
                return out
        views = _matrix_views(arrs, shape)
        if views is not None:
            # a matrix with row/column/scalar operands (a linear layer's bias): no general broadcasting
            pick(k2d, k2d_parallel, out.size, shape[0])(out, *views, *typed_scalars, zero)
            return out
    views = [out] + [a if a.shape == shape else np.broadcast_to(a, shape) for a in arrs]
    collapsed = _collapse_2d(views)
    if collapsed is None:
        flat_out = np.empty(shape, out_dtype) if not out.flags.c_contiguous else out
        ins = [np.ascontiguousarray(v).reshape(-1) for v in views[1:]]
        k1d(flat_out.reshape(-1), *ins, *typed_scalars, zero)
        if flat_out is not out:
            out[...] = flat_out
        return out
    pick(k2d, k2d_parallel, out.size, collapsed[0].shape[0])(*collapsed, *typed_scalars, zero)
    return out


def matrix_kinds(arrays, shape):
    """How each contiguous operand broadcasts over the 2-D ``shape`` (R, C): "ij" (it is (R, C)), "j"
    (a row: (C,) or (1, C)), "i" (a column: (R, 1)), "" (one value); None if any operand is another form
    (then the general path broadcasts and collapses dims)."""
    rows, cols = shape
    kinds = []
    for a in arrays:
        if not a.flags.c_contiguous:
            return None
        s = a.shape
        if s == shape:
            kinds.append("ij")
        elif s == (cols,) or s == (1, cols):
            kinds.append("j")
        elif s == (rows, 1):
            kinds.append("i")
        elif a.size == 1:
            kinds.append("")
        else:
            return None
    return kinds


def _row_operands(arrays, shape):
    """(matrix, row step) pairs for a kernel's ``_rows`` variant when every operand is the full
    (R, C) matrix, a row ((C,) or (1, C)) or one value (spread into a row here); None otherwise (a
    column operand, or anything not contiguous)."""
    kinds = matrix_kinds(arrays, shape)
    if kinds is None or "i" in kinds:
        return None
    cols = shape[1]
    args = []
    for a, kind in zip(arrays, kinds):
        if kind == "ij":
            args += (a, 1)
        elif kind == "j":
            args += (a.reshape(1, cols), 0)
        else:
            args += (np.full((1, cols), a.reshape(-1)[0], a.dtype), 0)
    return args


_KIND_STRIDES = {"j": lambda it: (0, it), "i": lambda it: (it, 0), "": lambda it: (0, 0)}


def _matrix_views(arrays, shape):
    """(R, C) strided views of operands that ``matrix_kinds`` accepts, made without np.broadcast_to."""
    kinds = matrix_kinds(arrays, shape)
    if kinds is None:
        return None
    return [a if kind == "ij" else np.ndarray(shape, a.dtype, a, 0, _KIND_STRIDES[kind](a.itemsize))
            for a, kind in zip(arrays, kinds)]


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
    shape = tuple(shape)
    return [_view_as(v, shape, tuple(st)) for v, st in zip(views, strides)]


def _view_as(v, shape, strides):
    """``v`` seen with ``shape`` (its dims merged as ``_collapse_2d`` decided): ``v`` itself when nothing
    merged, else numpy's reshape, which makes the same view without copying where the dims merge; an
    ``as_strided`` view (about 8 µs against 0.5) only if numpy would copy."""
    if v.shape == shape:
        return v
    r = v.reshape(shape)
    if not r.flags.owndata:
        return r
    return np.lib.stride_tricks.as_strided(v, shape=shape, strides=strides)


class Elementwise:
    """A generated kernel pair (1-D contiguous, 2-D strided) with its dtype rules.

    ``int_closed`` kernels compute integers exactly in int64; other kernels compute integer inputs in
    the default float dtype. ``returns_bool`` kernels (comparisons) write a bool array. ``array`` is the
    kernel's expression over whole arrays, which its loops run until Numba is loaded (interpreted.py).
    """
    __slots__ = ("k1d", "k2d", "k1d_parallel", "k2d_parallel", "int_closed", "returns_bool", "n_arrays",
                 "n_scalars", "scalar", "_entry", "_entry_number", "rows", "inplace", "name")

    def __init__(self, k1d, k2d, k1d_parallel, k2d_parallel, int_closed, returns_bool, n_arrays, n_scalars,
                 rows=None, inplace=None, array=None, name="kernel"):
        self.name = name              # the generated kernel's name (mul_Tensor_backward_self), for errors
        self.k1d = k1d
        self.rows = rows              # the _rows variant (kernels of two or more arrays)
        self.inplace = inplace        # the _inplace variant: writes into its first array operand
        self.k2d = k2d
        self.k1d_parallel = k1d_parallel
        self.k2d_parallel = k2d_parallel
        self.int_closed = int_closed
        self.returns_bool = returns_bool
        self.n_arrays = n_arrays      # array inputs, then scalar inputs: what `derivgen warmup` needs
        self.n_scalars = n_scalars
        self.scalar = None            # the one-element forward (set by forward kernels): fusable
        # dtype -> (compiled 1-D kernel for C-contiguous arrays and scalars of that dtype, its zero); see
        # _remember_entry. Filled by the general path (_fast) on the first call for a dtype.
        self._entry = {}
        # the same for a 1-D array operand and a number operand (``lr * g``): see call_number
        self._entry_number = {}
        if array is not None:
            _interpreted.attach(array, (k1d, k2d, k1d_parallel, k2d_parallel), rows, inplace, n_arrays)

    def _compute(self, dt):
        if dt.kind == "f":
            return dt
        if self.returns_bool or (self.int_closed and dt.kind in "iu"):
            return dt
        if self.int_closed and dt.kind == "b":
            return _INT64  # bool arithmetic (torch: True + True is True) computes in int64, stored as bool
        return _cfg.default_float

    def _out_dtype(self, dt, compute):
        # bool in, bool out only where the op is closed over integers (True + True is True); sin(True)
        # is a float, as in torch
        return _BOOL if self.returns_bool or (dt.kind == "b" and self.int_closed) else compute

    def _fast(self, arrays, scalars):
        """The common case in one place: float arrays of one dtype and shape, contiguous, below the
        parallel threshold. Returns None when the general path is needed."""
        a0 = arrays[0]
        dt = a0.dtype
        zero = _FLOAT_ZERO.get(dt)
        if zero is None or self.returns_bool:
            return None
        shape = a0.shape
        for a in arrays:
            if a.dtype is not dt or a.shape != shape or not a.flags.c_contiguous:
                return None
        if a0.size >= _cfg.parallel_threshold:
            return None
        out = np.empty(shape, dt)
        if scalars:
            scalars = _typed(scalars, dt)
        if len(shape) == 1:
            flat_out, flat = out, arrays
        else:
            flat_out, flat = out.reshape(-1), [a.reshape(-1) for a in arrays]
        self.k1d(flat_out, *flat, *scalars, zero)
        if dt not in self._entry and dt in _ENTRY_DTYPES:
            self._remember_entry(self._entry, flat_out, *flat, *scalars, zero)
        return out

    def call_number(self, out, a, number, scalars, dt):
        """``k1d(out, a, number, *scalars, zero)`` for C-contiguous 1-D ``out`` and ``a`` of float32 or
        float64 ``dt``, ``number`` and ``scalars`` plain Python numbers: a tensor and a wrapped number
        (``lr * g``), with the compiled kernel called directly after the first call. The compiled
        function converts the numbers to ``dt`` itself, rounding as ``dt.type`` does (``_entry_scalars``);
        the dispatcher is handed them converted, or it would compile a version for Python numbers."""
        zero = _FLOAT_ZERO[dt]
        entry = self._entry_number.get(dt)
        if entry is not None:
            if scalars:
                entry[0](out, a, number, *_entry_scalars(scalars, dt), zero)
            else:
                entry[0](out, a, number, zero)
            return
        number = dt.type(number)
        scalars = _typed(scalars, dt)
        self.k1d(out, a, number, *scalars, zero)
        self._remember_entry(self._entry_number, out, a, number, *scalars, zero)

    def _remember_entry(self, entries, *args):
        """Keep the compiled 1-D kernel that Numba's dispatcher just ran for these arguments (C-contiguous
        1-D arrays and scalars of one float dtype), so that the fixed-arity methods below can call it
        without the dispatcher (see ``compiled_entry``), with the zero it takes."""
        entry = compiled_entry(self.k1d, args)
        if entry is not None:
            entries[args[0].dtype] = (entry, args[-1])

    # Fixed-arity entry points for the generated code (a node's kernel call, an op's forward): the same
    # as ``self((a, b), ())`` / ``self.forward((t, u), scalars)``. Per-node overhead is what limits
    # graphs of many small ops (benchmarks/PROFILE.md) and these run twice per node there, so the small
    # same-shape float case costs a dict lookup (the dtype has a compiled entry: float32/float64, not a
    # comparison), the shape and contiguity checks, and the compiled kernel. Anything else, and the
    # first call for a dtype (which compiles or loads the kernel), takes the general path. forwardN
    # repeats callN's test rather than calling it: their fallbacks differ (Tensor promotion rules,
    # fusion), and a shared helper would cost every op one more Python call (~1.5 % of W1).
    def call1(self, a, scalars=()):
        """``self((a,), scalars)``."""
        dt = a.dtype
        entry = self._entry.get(dt)
        if entry is not None and a.flags.c_contiguous and a.size < _cfg.small_array:
            out = flat = np.empty(a.shape, dt)
            if a.ndim != 1:
                flat, a = out.reshape(-1), a.reshape(-1)
            if scalars:
                entry[0](flat, a, *_entry_scalars(scalars, dt), entry[1])
            else:
                entry[0](flat, a, entry[1])
            return out
        if a.size < _cfg.small_array:
            a2 = _one_value_contiguous(a)
            if a2 is not None:
                return self.call1(a2, scalars) if entry is not None else self((a2,), scalars)
        return self((a,), scalars)

    def call2(self, a, b, scalars=()):
        """``self((a, b), scalars)``."""
        dt = a.dtype
        entry = self._entry.get(dt)
        if (entry is not None and b.dtype is dt and a.shape == b.shape and a.flags.c_contiguous
                and b.flags.c_contiguous and a.size < _cfg.small_array):
            out = flat = np.empty(a.shape, dt)
            if a.ndim != 1:
                flat, a, b = out.reshape(-1), a.reshape(-1), b.reshape(-1)
            if scalars:
                entry[0](flat, a, b, *_entry_scalars(scalars, dt), entry[1])
            else:
                entry[0](flat, a, b, entry[1])
            return out
        if b.dtype is dt and a.shape == b.shape and a.size < _cfg.small_array:
            a2, b2 = _one_value_contiguous(a), _one_value_contiguous(b)
            if a2 is not None and b2 is not None:
                return self.call2(a2, b2, scalars) if entry is not None else self((a2, b2), scalars)
        return self((a, b), scalars)

    def call3(self, a, b, c, scalars=()):
        """``self((a, b, c), scalars)``."""
        dt = a.dtype
        entry = self._entry.get(dt)
        if (entry is not None and b.dtype is dt and c.dtype is dt and a.shape == b.shape == c.shape
                and a.flags.c_contiguous and b.flags.c_contiguous and c.flags.c_contiguous and a.size < _cfg.small_array):
            out = flat = np.empty(a.shape, dt)
            if a.ndim != 1:
                flat, a, b, c = out.reshape(-1), a.reshape(-1), b.reshape(-1), c.reshape(-1)
            if scalars:
                entry[0](flat, a, b, c, *_entry_scalars(scalars, dt), entry[1])
            else:
                entry[0](flat, a, b, c, entry[1])
            return out
        if b.dtype is dt and c.dtype is dt and a.shape == b.shape == c.shape and a.size < _cfg.small_array:
            a2, b2, c2 = _one_value_contiguous(a), _one_value_contiguous(b), _one_value_contiguous(c)
            if a2 is not None and b2 is not None and c2 is not None:
                return self.call3(a2, b2, c2, scalars) if entry is not None else self((a2, b2, c2), scalars)
        return self((a, b, c), scalars)

    def __call__(self, arrays, scalars=(), out=None):
        """Backward use: numpy arrays in, the promoted dtype out (0-dim arrays do not promote).

        Every call of a generated kernel outside an op's forward (a node's backward) ends here (the
        fixed-arity methods above fall back to it for anything but their checked fast case, which
        cannot fail): this is where an exception escaping Numba or numpy becomes torch's RuntimeError
        naming the kernel and its arrays (a try costs nothing when nothing is raised)."""
        try:
            if out is None:
                res = self._fast(arrays, scalars)
                if res is not None:
                    return res
            dt = arrays[0].dtype
            for a in arrays:
                if a.dtype != dt:
                    dt = array_result_dtype(arrays)
                    break
            compute = self._compute(dt)
            return run_elementwise(self.k1d, self.k2d, arrays, scalars, compute, self._out_dtype(dt, compute),
                                   out, self.k1d_parallel, self.k2d_parallel, self.rows, self.inplace)
        except Exception as exc:
            translate_kernel_call(exc, self.name, arrays)
            raise
