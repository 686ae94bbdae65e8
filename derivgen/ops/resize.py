"""``Tensor.resize_`` / ``resize_as_``: change a tensor's shape in place, keeping its leading values in
row-major order (new trailing elements are uninitialised, as torch's). Not differentiable: torch refuses
to resize a tensor that requires grad. The version counter moves only when the shape changes."""
import numpy as np

from derivgen.core.tensor import bump_version, replace_array
from derivgen.ops.inplace import check_inplace


def resize_(self, *sizes, memory_format=None):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    shape = tuple(int(s) for s in sizes)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    check_inplace(self)
    if shape == self._array.shape:
        return self
    flat = np.ravel(self._array)
    n = int(np.prod(shape, dtype=np.int64))
    data = np.empty(n, self._array.dtype)
    keep = min(n, flat.size)
    data[:keep] = flat[:keep]
    replace_array(self, data.reshape(shape))
    bump_version(self)
    return self


def resize_as_(self, the_template, memory_format=None):
    return resize_(self, the_template.shape)
