"""torch.linalg's functions over the table's rows: vector and Frobenius norms (LinalgVectorNormBackward0),
``inv`` / ``inv_ex`` (the ``linalg_inv_ex`` row: LinalgInvExBackward0, its info checked as torch does),
``det`` (the ``_linalg_det`` row: LinalgDetBackward0), ``matrix_norm`` ('fro'), ``matrix_power`` and
``vecdot`` as torch composes them, and ``LinAlgError``. ``derivgen.linalg`` exposes them; ``inverse``
and ``det`` are also ``derivgen.*`` functions and Tensor methods."""
from derivgen.core.registry import aten
from derivgen.ops.composites import matmul as _matmul, vector_norm
from derivgen.ops.factories import eye as _eye


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a linear-algebra routine met a singular (or otherwise unsuitable) input."""


_LinAlgError.__module__ = "derivgen._C"
LinAlgError = _LinAlgError


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002 - torch spelling
    """torch.linalg.norm for vectors and the Frobenius norm (ord None or 'fro'); other matrix norms are not
    supported."""
    if ord is None or ord == "fro":
        if ord == "fro" and (dim is None and A.dim() != 2):
            raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D.")
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if isinstance(ord, str) or (dim is None and A.dim() == 2) or (isinstance(dim, (tuple, list)) and len(dim) == 2):
        raise NotImplementedError("derivgen: matrix norms (ord on 2 dims) other than 'fro' are not supported")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):  # noqa: A002
    """torch.linalg.matrix_norm: the Frobenius norm is the vector 2-norm over the two dims."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if ord != "fro":
        raise NotImplementedError(f"derivgen: linalg.matrix_norm(ord={ord!r}) is not supported (ord='fro' is)")
    return vector_norm(A, 2, tuple(dim), keepdim, dtype=dtype)


def inv_ex(A, *, check_errors=False, out=None):
    result = aten.linalg_inv_ex(A, check_errors=check_errors)
    if check_errors:
        _raise_singular(result[1])
    return result


def _raise_singular(info):
    bad = info._array.reshape(-1)
    for batch, value in enumerate(bad):
        if value > 0:
            where = f"(Batch element {batch}): " if info.dim() else ""
            raise _LinAlgError(f"linalg.inv: {where}The diagonal element {int(value)} is zero, the inversion could "
                               "not be completed because the input matrix is singular.")


def inv(A, *, out=None):
    """torch.linalg.inv: ``linalg_inv_ex`` then its info checked (LinAlgError for a singular matrix)."""
    inverse, info = aten.linalg_inv_ex(A)
    _raise_singular(info)
    return inverse


def det(A, *, out=None):
    return aten._linalg_det(A)


def matrix_power(A, n):
    """torch's linalg_matrix_power: identity, inverse for n < 0, clone for 1, matmuls by binary
    decomposition (two factors as (A @ A) @ A for 3), so the graph is torch's MmBackward0 chain."""
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.dim() >= 2 else 1} by {A.shape[-1] if A.dim() else 1} matrices")
    if n == 0:
        return aten.clone(aten.expand(_eye(A.shape[-1], dtype=A.dtype), tuple(A.shape)))
    if n < 0:
        A = inv(A)
        n = -n
    if n == 1:
        return aten.clone(A)
    if n == 2:
        return _matmul(A, A)
    if n == 3:
        return _matmul(_matmul(A, A), A)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else _matmul(z, z)
        if bit:
            result = z if result is None else _matmul(result, z)
    return result


def vecdot(x, y, *, dim=-1):
    """torch.linalg.vecdot for real tensors: ``(x * y).sum(dim)`` (SumBackward1)."""
    return aten.sum(aten.mul(x, y), [dim])


def inverse(self):
    """torch.inverse: linalg.inv."""
    return inv(self)


FUNCTIONS = {"inverse": inverse, "det": det}
METHODS = {"inverse": inverse, "det": det}
