"""``nn.utils.parametrizations.orthogonal``: torch's ``_Orthogonal`` parametrization (maps ``matrix_exp``,
``cayley``, ``householder``; ``use_trivialization``), and the linear algebra it needs, composed of
derivgen's differentiable ops (derivgen has no ``matrix_exp``, ``linalg.solve`` or
``linalg.householder_product`` rows, so the nodes inside the map are matmuls, adds and slices where torch
has one ``LinalgMatrixExpBackward0`` ...; the weight's own node is torch's, as are values and gradients).
Real tensors only: derivgen has no complex dtypes."""
import math

import numpy as np

from derivgen.core.grad_mode import no_grad
from derivgen.core.tensor import Tensor
from derivgen.nn.modules.module import Module
from derivgen.nn.utils import parametrize
from derivgen.ops.factories import eye, randn
from derivgen.core.registry import aten

_MAPS = ("matrix_exp", "cayley", "householder")
_TAYLOR_DEGREE = 18  # terms of exp's series after scaling the matrix to norm <= 1/2: error below 1e-20


def _identity_like(A):
    n = A.shape[-1]
    return eye(n, dtype=A.dtype).expand(*A.shape)


def _matrix_exp(A):
    """exp(A) by scaling and squaring: the series of A / 2**s (1-norm at most 1/2), then s squarings;
    every step a differentiable op, so the gradient is that of the computed value."""
    norm = float(np.abs(A.detach().numpy()).sum(axis=-2).max()) if A.numel() else 0.0
    s = max(0, math.ceil(math.log2(norm)) + 1) if norm > 0 else 0
    X = A / (2.0 ** s)
    Id = _identity_like(A)
    E = Id
    for k in range(_TAYLOR_DEGREE, 0, -1):  # Horner: I + X/1 (I + X/2 (I + ...))
        E = Id + (X @ E) / k
    for _ in range(s):
        E = E @ E
    return E


def _solve(A, B):
    """A^-1 B for the Cayley map, by Gauss-Jordan elimination with partial pivoting (the pivot rows are
    chosen on the values; the eliminations are differentiable ops)."""
    n = A.shape[-1]
    M = aten.cat([A, B], dim=-1)
    rows = [M[..., i:i + 1, :] for i in range(n)]
    for col in range(n):
        values = np.abs(np.stack([r.detach().numpy()[..., 0, col] for r in rows[col:]]))
        pivot = col + int(values.reshape(len(rows) - col, -1).max(axis=1).argmax())
        rows[col], rows[pivot] = rows[pivot], rows[col]
        rows[col] = rows[col] / rows[col][..., :, col:col + 1]
        for r in range(n):
            if r != col:
                rows[r] = rows[r] - rows[r][..., :, col:col + 1] * rows[col]
    return aten.cat(rows, dim=-2)[..., :, n:]


def _householder_product(A, tau):
    """torch's ``linalg.householder_product``: the first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T,
    v_i being column i of A below the diagonal with a 1 on it."""
    m, n = A.shape[-2], A.shape[-1]
    Q = eye(m, n, dtype=A.dtype).expand(*A.shape[:-2], m, n)
    below = np.tril(np.ones((m, n)), -1).astype(A.detach().numpy().dtype)
    unit = np.eye(m, n).astype(below.dtype)
    V = A * Tensor._make(below) + Tensor._make(unit)
    for i in range(tau.shape[-1] - 1, -1, -1):
        v = V[..., :, i:i + 1]
        Q = Q - (v * tau[..., i:i + 1].unsqueeze(-1)) @ (v.mT @ Q)
    return Q


def _geqrf(A):
    """LAPACK's geqrf (torch's ``geqrf``): the Householder reflectors below R's diagonal, and tau."""
    h, tau = np.linalg.qr(A.detach().numpy(), mode="raw")
    return Tensor._make(np.ascontiguousarray(np.swapaxes(h, -1, -2))), Tensor._make(np.ascontiguousarray(tau))


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * float(np.finfo(Q.detach().numpy().dtype).eps)
    return bool(np.allclose((Q.mT @ Q).detach().numpy(), np.eye(k), rtol=1e-5, atol=eps))


def _make_orthogonal(A):
    """The Q of A = QR with R's diagonal non-negative (A tall)."""
    X, tau = _geqrf(A)
    Q = _householder_product(X, tau)
    signs = np.sign(np.diagonal(X.numpy(), axis1=-2, axis2=-1))[..., None, :]
    return Q * Tensor._make(signs.astype(X.numpy().dtype))


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                X = aten.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == "matrix_exp":
                Q = _matrix_exp(A)
            else:
                Id = eye(n, dtype=A.dtype)
                Q = _solve(Id - A * 0.5, Id + A * 0.5)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in ("cayley", "matrix_exp"):
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            A, tau = _geqrf(Q)
            a = A.numpy()
            diag = np.sign(np.diagonal(a, axis1=-2, axis2=-1)).copy()
            diag[tau.numpy() == 0.0] *= -1
            idx = np.arange(min(a.shape[-2], a.shape[-1]))
            a[..., idx, idx] = diag
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            N = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(aten.cat([Q, N], dim=-1))
        self.base = Q
        neg_id = np.zeros(tuple(Q_init.shape), Q_init.detach().numpy().dtype)
        idx = np.arange(min(Q_init.shape[-2:]))
        neg_id[..., idx, idx] = -1.0
        return Tensor._make(neg_id)


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """torch's ``orthogonal``: ``module.<name>`` (a matrix or batch of matrices) parametrized as an
    orthogonal one."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
