"""Reuse of large output buffers between steps.

glibc serves blocks past its mmap threshold with fresh ``mmap`` pages and unmaps them on free, so a
loop over big arrays faults every output's memory in again on every step: on the 2-core benchmark
machine a fresh 16 MiB array costs ~3 ms of page faults before a 0.7 ms kernel can fill it (numpy's
own cache only keeps small blocks). derivgen's kernels therefore take their outputs of at least
``POOL_MIN`` bytes from here.

A buffer is a raw byte array that every array made from it references (numpy's ``base`` chain
always ends at the owner of the memory, even through views of views). So a buffer whose only
reference is this module's list is free, whatever views were made and dropped: that is checked by
reference count when the next large buffer is asked for. Free buffers are kept up to
``settings.pool_bytes`` in all (``DERIVGEN_POOL_MB``, default 256 MiB); past that they go back to the system. ``empty_cache()``
returns them all. DERIVGEN_POOL_MB=0 turns the pool off.
"""
import sys

import numpy as np

from derivgen.config import settings as _cfg

POOL_MIN = 1 << 20
# pooled arrays start on a 64-byte boundary (a cache line; the widest vector): the fused kernels may
# then write them with non-temporal stores (kernels/stream.py)
ALIGN = 64

_lent = {}          # id -> buffer handed out (it may have been dropped since)
_free = {}          # nbytes -> [buffer, ...]
_free_bytes = 0


def empty(shape, dtype):
    """``np.empty(shape, dtype)``, from a reused buffer when it is large."""
    dtype = np.dtype(dtype)
    n = dtype.itemsize
    for s in shape:
        n *= s
    if n < POOL_MIN or _cfg.pool_bytes <= 0:
        return np.empty(shape, dtype)
    _reclaim()
    global _free_bytes
    same = _free.get(n)
    if same:
        raw = same.pop()
        _free_bytes -= n
    else:
        raw = np.empty(n + ALIGN, np.uint8)
    _lent[id(raw)] = raw
    start = -raw.ctypes.data % ALIGN
    return raw[start:start + n].view(dtype).reshape(shape)


def _reclaim():
    global _free_bytes
    if not _lent:
        return
    for key, raw in list(_lent.items()):
        # references: _lent, the list above, the loop variable, getrefcount's argument; any array on
        # the buffer (views included: numpy's base chain ends at the buffer) adds one
        if sys.getrefcount(raw) > _REFS_FREE:
            continue
        del _lent[key]
        n = raw.nbytes - ALIGN
        if _free_bytes + n <= _cfg.pool_bytes:
            _free.setdefault(n, []).append(raw)
            _free_bytes += n


def sole_owner(a):
    """True when no other array shares ``a``'s memory: it owns it, or it is the only array on a
    pooled buffer (so the engine may add into it in place)."""
    b = a.base
    if b is None:
        return True
    # references to a pooled b: _lent's entry, a's base pointer, the name b, getrefcount's argument
    return _lent.get(id(b)) is b and b.nbytes - ALIGN == a.nbytes and sys.getrefcount(b) == _REFS_SOLE


def _calibrate_reference_counts():
    """The counts of an unused pooled buffer (``_reclaim``) and of one with a single array on it
    (``sole_owner``), measured with the same code shapes (4 and 4 on CPython 3.11). An interpreter that
    skips reference counting for some local loads (CPython 3.14 can) reports fewer; if the counts look
    wrong the pool never reuses a buffer and never calls one solely owned (slower, never wrong)."""
    lent = {0: np.empty(4, np.uint8)}
    for _, raw in list(lent.items()):
        free = sys.getrefcount(raw)
    del raw
    a = lent[0].view(np.float32)  # one array on the buffer, as empty() hands out
    b = a.base
    sole = sys.getrefcount(b)
    if not (3 <= free <= 4 and 3 <= sole <= 4):
        return -1, -1
    return free, sole


def empty_cache():
    """Give every free buffer back to the system (arrays in use are not affected)."""
    global _free_bytes
    _reclaim()
    _free.clear()
    _free_bytes = 0


def stats():
    """(bytes lent out and possibly still in use, bytes free in the pool)."""
    return sum(r.nbytes for r in _lent.values()), _free_bytes


_REFS_FREE, _REFS_SOLE = _calibrate_reference_counts()
