"""In-place rows: each returns the result; the Python-facing ``fill_``/``zero_``/``copy_``
writes it into ``self``."""
import numpy as np

from derivgen.core.scalars import check_fill



# ---- in-place rows: row functions return the result; squeeze_/zero_/fill_ commit it ------------

def fill_Scalar(self, value):
    return np.full_like(self, check_fill(value, self.dtype))


def _fill_value(value):
    if value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions.")
    return value.item()


def fill_Tensor(self, value):
    return np.full_like(self, _fill_value(value))


# The in-place rows return one value broadcast (stride 0) over self's shape: committing it
# into self is then a single fill pass, where a full result array cost an allocation, its fill and a copy.
def _filled(self, value):
    one = np.asarray(value, self.dtype)
    filled = np.ndarray(self.shape, self.dtype, one, 0, (0,) * self.ndim)
    filled.flags.writeable = False  # every element is one memory location
    return filled


def fill__Scalar(self, value):
    return _filled(self, check_fill(value, self.dtype))


def fill__Tensor(self, value):
    return _filled(self, _fill_value(value))


def zero_(self):
    return _filled(self, 0)


def _reshape_alias(self, size, stride):
    """reshape's view of a non-contiguous tensor (ReshapeAliasBackward0); ``stride`` is implied by numpy."""
    return np.reshape(self, tuple(size), copy=False)


def copy_(self, src, non_blocking=False):
    """The values ``self`` holds after ``self.copy_(src)``: ``src`` broadcast to ``self`` in its dtype."""
    try:
        out = np.broadcast_to(src, self.shape)
    except ValueError:
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(np.broadcast_shapes(self.shape, src.shape)) if _bcastable(self, src) else list(src.shape)}"
                           ) from None
    return out.astype(self.dtype, copy=True)


def _bcastable(a, b):
    try:
        np.broadcast_shapes(a.shape, b.shape)
        return True
    except ValueError:
        return False


def as_strided(self, size, stride, storage_offset=None):
    """A strided view of a C-contiguous ``self`` (sizes, element strides and offset into its elements)."""
    if not self.flags.c_contiguous:
        raise RuntimeError("derivgen: as_strided needs a contiguous tensor")
    flat = self.reshape(-1)
    off = storage_offset or 0
    _check_in_bounds(self, size, stride, off)
    return np.lib.stride_tricks.as_strided(flat[off:] if flat.size else flat, tuple(size),
                                           tuple(s * self.itemsize for s in stride))


def as_strided_(self, size, stride, storage_offset=None):
    return as_strided(self, size, stride, storage_offset)


def _check_in_bounds(self, size, stride, offset):
    """torch's refusal of a geometry reaching past the memory (here ``self``'s elements)."""
    itemsize = self.itemsize
    last = 0 if any(n == 0 for n in size) else sum((n - 1) * st for n, st in zip(size, stride)) + 1
    needed = 0 if last == 0 else (offset + last) * itemsize
    if needed > self.nbytes:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {itemsize} requiring a storage size of {needed} are out of bounds for storage "
                           f"of size {self.nbytes}")
