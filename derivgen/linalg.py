"""``derivgen.linalg``: the vector norms of torch.linalg (LinalgVectorNormBackward0)."""
from derivgen.ops.composites import vector_norm


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm for vectors and the Frobenius norm (ord None or 'fro'); matrix norms are not
    supported."""
    if ord is None or ord == "fro":
        if ord == "fro" and (dim is None and A.dim() != 2):
            raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D.")
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if isinstance(ord, str) or (dim is None and A.dim() == 2) or (isinstance(dim, (tuple, list)) and len(dim) == 2):
        raise NotImplementedError("derivgen: matrix norms (ord on 2 dims) are not supported")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


__all__ = ["vector_norm", "norm"]
