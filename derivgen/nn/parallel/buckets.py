"""Gradient buckets: which parameters share one all-reduce, and the flat buffer each one reduces.

Parameters go into buckets in reverse registration order (roughly the order backward produces their
gradients), one dtype per bucket, the first bucket capped at 1 MiB so that communication starts
early and the others at ``bucket_cap_mb``, as torch's ``_compute_bucket_assignment_by_size`` (a cap
below 1 MiB applies to the first bucket too, so small models can be split into several buckets).
"""
import numpy as np

FIRST_BUCKET_BYTES = 1024 * 1024  # torch's dist._DEFAULT_FIRST_BUCKET_BYTES


class Bucket:
    """Parameters whose gradients are reduced together in ``buffer`` (their flat concatenation)."""
    __slots__ = ("index", "params", "slices", "buffer", "pending", "request")

    def __init__(self, index, params, dtype):
        self.index = index
        self.params = params
        self.slices = []
        start = 0
        for p in params:
            n = p._array.size
            self.slices.append(slice(start, start + n))
            start += n
        self.buffer = np.zeros(start, dtype)
        self.pending = len(params)
        self.request = None

    def slot(self, i):
        """Parameter ``i``'s gradient slot, shaped as the parameter."""
        return self.buffer[self.slices[i]].reshape(self.params[i]._array.shape)


def assign_buckets(params, bucket_cap_bytes, first_bucket_bytes=FIRST_BUCKET_BYTES):
    """Buckets for ``params`` (in registration order): filled from the last parameter backwards."""
    open_buckets = {}  # dtype -> (params, bytes, cap)
    closed = []
    caps = {}
    for p in reversed(params):
        a = p._array
        cap = caps.setdefault(a.dtype, min(first_bucket_bytes, bucket_cap_bytes))
        members, size = open_buckets.get(a.dtype, ([], 0))
        members.append(p)
        size += a.nbytes
        if size >= cap:
            closed.append((members, a.dtype))
            open_buckets.pop(a.dtype, None)
            caps[a.dtype] = bucket_cap_bytes
        else:
            open_buckets[a.dtype] = (members, size)
    # the partly filled buckets last, in the order they were opened
    closed.extend((members, dtype) for dtype, (members, _) in open_buckets.items())
    return [Bucket(i, members, dtype) for i, (members, dtype) in enumerate(closed)]
