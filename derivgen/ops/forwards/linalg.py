"""Linear-algebra forwards: mm, mv, dot, bmm, addmm, baddbmm, with torch's shape errors."""
import numpy as np

from derivgen.kernels import products
from derivgen.ops.forwards._common import _scalar_type_name, _tn, returns_new_array


# ---- linear algebra -------------------------------------------------------------------------

@returns_new_array
def mm(self, mat2):
    if self.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    if self.dtype != mat2.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_tn(self)} != {_tn(mat2)}")
    return products.matmul(self, mat2)


@returns_new_array
def mv(self, vec):
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.ndim}, {vec.ndim}")
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({self.shape[0]}), mat ({self.shape[0]}x{self.shape[1]}), "
                           f"vec ({vec.shape[0]})")
    if self.dtype != vec.dtype:
        raise RuntimeError(f"expected scalar type {_tn(self).title()} but found {_tn(vec).title()}")
    return self @ vec


def dot(self, tensor):
    if self.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {tensor.ndim}D tensors")
    if self.shape[0] != tensor.shape[0]:
        raise RuntimeError("inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of "
                           "elements, but got {} and {} elements respectively".format(
                               self.shape[0], tensor.shape[0], self.shape[0], tensor.shape[0]))
    if self.dtype != tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_tn(self).title()} and "
                           f"{_tn(tensor).title()}")
    return np.asarray(self @ tensor)


@returns_new_array
def bmm(self, mat2):
    if self.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (bmm: got {list(self.shape)} and {list(mat2.shape)})")
    if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{self.shape[0]}, "
                           f"{self.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    return products.bmm(self, mat2)


# ---- linear algebra --------------------------------------------------------------------------

@returns_new_array
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    if mat1.dtype != mat2.dtype:  # addmm's own check (torch's text differs from mm's)
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_scalar_type_name(mat1)} and "
                           f"{_scalar_type_name(mat2)}")
    if self.dtype != mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_scalar_type_name(self)} and "
                           f"{_scalar_type_name(mat2)}")
    prod = mm(mat1, mat2)
    out_shape = prod.shape
    try:
        np.broadcast_shapes(self.shape, out_shape)
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({out_shape[-1]}) must match the existing size "
                           f"({self.shape[-1]}) at non-singleton dimension {len(out_shape) - 1}.  Target sizes: "
                           f"{list(out_shape)}.  Tensor sizes: {list(self.shape)}") from None
    if alpha == 1 and beta == 1 and np.result_type(prod, self) == prod.dtype:
        # the common ``linear`` case: the bias added into the fresh product, no further copies
        return np.add(prod, self, out=prod)
    out = prod if alpha == 1 else prod * prod.dtype.type(alpha)
    if beta != 0:
        out = out + (self if beta == 1 else self * self.dtype.type(beta))
    return np.asarray(np.broadcast_to(out, out_shape), dtype=prod.dtype).copy()


# the C++ names torch's baddbmm prints for the dtypes
_CPP_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int", "int16": "short int",
              "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    if self.dtype != batch1.dtype and batch1.dtype == batch2.dtype:
        names = [_CPP_NAMES.get(a.dtype.name, a.dtype.name) for a in (self, batch1, batch2)]
        raise RuntimeError(f"Input dtypes must be the same, got: input {names[0]}, batch1: {names[1]}, "
                           f"batch2: {names[2]}")
    prod = bmm(batch1, batch2)
    out = prod if alpha == 1 else prod * prod.dtype.type(alpha)
    if beta != 0:
        out = out + (self if beta == 1 else self * self.dtype.type(beta))
    return np.asarray(np.broadcast_to(out, prod.shape), dtype=prod.dtype).copy()
