"""Forwards of the reflection and replication padding rows (``reflection_pad1d``..``replication_pad3d``).

Padding is separable: along each padded axis, output position ``o`` (counted from the input's first
element, so it runs from ``-left`` to ``size + right``) reads one input position, mirrored about the edge
for reflection, clamped to the edge for replication. The forward gathers with those index vectors; the
backward (``formula_fns/padding.py``) sums ``grad`` back through the same vectors as one-hot matrices.
Negative padding crops, as in torch.
"""
import numpy as np

_AXES = ("W", "H", "D")


def pad_sources(size, left, right, reflect):
    """Input position read by each output position along one axis of length ``size``."""
    o = np.arange(-left, size + right)
    if reflect:
        o = np.abs(o)
        o = np.where(o >= size, 2 * (size - 1) - o, o)
        return o
    return np.clip(o, 0, size - 1)


def pad_matrix(size, left, right, reflect, dtype):
    """(out, size) one-hot matrix of ``pad_sources``: the forward as a matmul, its transpose the backward."""
    src = pad_sources(size, left, right, reflect)
    m = np.zeros((src.size, size), dtype)
    m[np.arange(src.size), src] = 1
    return m


def check_pad(self, padding, dims, name, reflect):
    """torch's checks for a ``dims``-dimensional reflection/replication pad; returns the (left, right) pairs,
    last axis first."""
    padding = list(padding)
    if len(padding) != 2 * dims:
        detail = f", but got: {len(padding)}" if reflect else ""
        raise RuntimeError(f"padding size is expected to be {2 * dims}{detail}")
    lo, hi = dims + 1, dims + 2
    if self.ndim not in (lo, hi) or 0 in self.shape[-(dims + 1) + (self.ndim == lo):]:
        raise RuntimeError(f"Expected {lo}D or {hi}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {list(self.shape)}")
    if self.dtype == np.bool_:
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")
    pairs = [(padding[2 * k], padding[2 * k + 1]) for k in range(dims)]
    for k, (left, right) in enumerate(pairs):
        axis = self.ndim - 1 - k
        size = self.shape[axis]
        if reflect and (left >= size or right >= size):
            raise RuntimeError(f"Argument #{4 + 2 * k}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({left}, {right}) at dimension {axis} of input "
                               f"{list(self.shape)}")
        if size + left + right < 1:
            raise RuntimeError(f"input ({_AXES[k]}: {size}) is too small. Calculated output {_AXES[k]}: "
                               f"{size + left + right}")
    return pairs


def _pad(self, padding, dims, name, reflect):
    pairs = check_pad(self, padding, dims, name, reflect)
    out = self
    for k, (left, right) in enumerate(pairs):
        axis = self.ndim - 1 - k
        out = np.take(out, pad_sources(self.shape[axis], left, right, reflect), axis=axis)
    return np.ascontiguousarray(out)


def reflection_pad1d(self, padding):
    return _pad(self, padding, 1, "reflection_pad1d", True)


def reflection_pad2d(self, padding):
    return _pad(self, padding, 2, "reflection_pad2d", True)


def reflection_pad3d(self, padding):
    return _pad(self, padding, 3, "reflection_pad3d", True)


def replication_pad1d(self, padding):
    return _pad(self, padding, 1, "replication_pad1d", False)


def replication_pad2d(self, padding):
    return _pad(self, padding, 2, "replication_pad2d", False)


def replication_pad3d(self, padding):
    return _pad(self, padding, 3, "replication_pad3d", False)
