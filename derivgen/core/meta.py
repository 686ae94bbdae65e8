"""The metadata a node records per input and output: ``(shape, dtype)`` of an array, one shared tuple
per distinct pair. A graph of many ops on same-shaped tensors then holds one tuple instead of two new
ones per input, and Python's cyclic GC, which scans every tracked object that survives while the graph
lives, has less to scan (0.3 us less per node in benchmark W1 when this was introduced).

A Tensor over a C-contiguous array also caches its ``ContiguousMeta`` (the slots ``_cmeta`` and
``_cmeta_of``, the array it describes): the elementwise ops' fast paths and the node recording read
shape, dtype and size from it instead of from the array, each read of which builds a new object in
numpy. The cache is valid while ``t._cmeta_of is t._array``: an ndarray's shape, dtype and strides do
not change in place (derivgen never reshapes an array it keeps in place and hands users views of it),
and holding the array keeps its identity from being reused. A deferred (lazy) tensor has none.
"""

# Each table is cleared when it reaches this many entries: programs with ever-new shapes stay bounded.
_TABLE_LIMIT = 4096

_SHARED_META = {}       # (shape, dtype) -> the same tuple
_SHARED_OUT_META = {}   # (shape, dtype) -> ((shape, dtype),): a one-output node's output metadata
_SHARED_META2 = {}      # (shape, dtype, shape, dtype) -> ((shape, dtype), (shape, dtype))
_CONTIGUOUS = {}        # (shape, dtype) -> ContiguousMeta


def _share(meta):
    if len(_SHARED_META) >= _TABLE_LIMIT:
        _SHARED_META.clear()
    _SHARED_META[meta] = meta
    return meta


def shared_meta(shape, dtype):
    """The shared ``(shape, dtype)`` tuple."""
    meta = (shape, dtype)
    shared = _SHARED_META.get(meta)
    return shared if shared is not None else _share(meta)


def meta(t):
    """``(shape, dtype)`` of tensor ``t``'s value (a deferred value is not computed)."""
    d = t._pending if t._lazy else t._array
    return shared_meta(d.shape, d.dtype)


def out_meta_of(shape, dtype):
    """The shared ``((shape, dtype),)``: a one-output node's output metadata."""
    key = (shape, dtype)
    shared = _SHARED_OUT_META.get(key)
    if shared is None:
        if len(_SHARED_OUT_META) >= _TABLE_LIMIT:
            _SHARED_OUT_META.clear()
        shared = _SHARED_OUT_META[key] = (shared_meta(shape, dtype),)
    return shared


def out_meta(d):
    """``out_meta_of`` of ``d``, a node's one output (an array, or the Pending of a deferred value)."""
    shared = _SHARED_OUT_META.get((d.shape, d.dtype))
    return shared if shared is not None else out_meta_of(d.shape, d.dtype)


def outs_meta(outputs):
    """The output metadata of a node with several outputs (arrays)."""
    return tuple(shared_meta(d.shape, d.dtype) for d in outputs)


class ContiguousMeta:
    """What the fast paths need to know of a C-contiguous array, shared by all arrays of one shape and
    dtype: ``pair`` is the shared ``(shape, dtype)``, ``one`` the shared ``(pair,)`` (a one-input
    node's input metadata) and ``same2`` the shared ``(pair, pair)`` (two inputs that agree)."""
    __slots__ = ("shape", "dtype", "size", "one_dim", "pair", "one", "same2")

    def __init__(self, shape, dtype, size):
        self.shape = shape
        self.dtype = dtype
        self.size = size
        self.one_dim = len(shape) == 1
        self.one = out_meta_of(shape, dtype)
        self.pair = self.one[0]
        self.same2 = (self.pair, self.pair)

    def __repr__(self):
        return f"ContiguousMeta({self.shape}, {self.dtype})"


def contiguous_meta(t):
    """``t``'s ContiguousMeta, cached on ``t``; None for a deferred value or an array that is not
    C-contiguous. (Generated code reads the cache inline and calls this when it is not valid.)"""
    m = t._cmeta
    if m is not None and t._cmeta_of is t._array:
        return m
    if t._lazy:
        return None
    a = t._array
    if not a.flags.c_contiguous:
        return None
    m = shared_contiguous_meta(a.shape, a.dtype, a.size)
    t._cmeta = m
    t._cmeta_of = a
    return m


def shared_contiguous_meta(shape, dtype, size):
    """The ContiguousMeta of every C-contiguous array of ``shape`` and ``dtype`` (``size`` elements)."""
    m = _CONTIGUOUS.get((shape, dtype))
    if m is None:
        if len(_CONTIGUOUS) >= _TABLE_LIMIT:
            _CONTIGUOUS.clear()
        m = _CONTIGUOUS[(shape, dtype)] = ContiguousMeta(shape, dtype, size)
    return m


def meta1(t):
    """``(meta(t),)``: a one-input node's input metadata, one shared tuple (the same as ``out_meta``'s)."""
    m = t._cmeta
    if m is None or t._cmeta_of is not t._array:
        m = contiguous_meta(t)
        if m is None:
            return out_meta(t._pending if t._lazy else t._array)
    return m.one


def meta2(t, u):
    """``(meta(t), meta(u))``, one shared tuple per distinct pair of metadata."""
    m = t._cmeta
    if m is None or t._cmeta_of is not t._array:
        m = contiguous_meta(t)
    n = u._cmeta
    if n is None or u._cmeta_of is not u._array:
        n = contiguous_meta(u)
    if m is not None and m is n:
        return m.same2
    d = t._pending if t._lazy else t._array
    e = u._pending if u._lazy else u._array
    key = (d.shape, d.dtype, e.shape, e.dtype)
    shared = _SHARED_META2.get(key)
    if shared is None:
        if len(_SHARED_META2) >= _TABLE_LIMIT:
            _SHARED_META2.clear()
        shared = _SHARED_META2[key] = (shared_meta(key[0], key[1]), shared_meta(key[2], key[3]))
    return shared
