"""Backward and forward-mode helpers of the selection and structure rows (``masked_select``, ``trace``,
``glu``, ``norm``, ``_embedding_bag``) and of the linear-algebra rows ``linalg_inv_ex`` and
``_linalg_det``: an array version (``name``) and a graph version (``name_graph``, differentiable Tensor
ops) each, as torch's ``FunctionsManual.cpp`` has them."""
import numpy as np

from derivgen.core.registry import aten
from derivgen.core.sizes import sum_to as _sum_to, sum_to_graph as _sum_to_graph, wrap_dim
from derivgen.ops.composites import matmul as _matmul, mT as _mT, reshape as _reshape
from derivgen.ops.formula_fns.pointwise import _mask_tensor
from derivgen.ops.formula_fns.reductions import linalg_vector_norm_backward, linalg_vector_norm_backward_graph
from derivgen.ops.formula_fns.shapes import _T


# ---- masked_select, trace -----------------------------------------------------------------------------------

def masked_select_backward(grad, self, mask):
    """``grad`` put back where the (broadcast) mask selected, summed to self's shape."""
    shape = np.broadcast_shapes(self.shape, mask.shape)
    out = np.zeros(shape, grad.dtype)
    out[np.broadcast_to(mask, shape)] = grad
    return _sum_to(out, self.shape)


def masked_select_backward_graph(grad, self, mask):
    shape = np.broadcast_shapes(tuple(self.shape), tuple(mask.shape))
    zeros = _T(np.zeros(shape, grad._array.dtype))
    full = aten.index_put(zeros, [_mask_tensor(np.broadcast_to(mask._array, shape))], grad, False)
    return _sum_to_graph(full, tuple(self.shape))


def trace_backward(grad, sizes):
    return np.eye(sizes[0], sizes[1], dtype=grad.dtype) * grad


def trace_backward_graph(grad, sizes):
    return aten.mul(_T(np.eye(sizes[0], sizes[1], dtype=grad._array.dtype)), grad)


# ---- glu ----------------------------------------------------------------------------------------------------

def _halves(x, dim):
    d = wrap_dim(dim, x.ndim)
    return np.split(x, 2, axis=d), d


def glu_backward(grad, self, dim):
    (a, b), d = _halves(self, dim)
    s = 1 / (1 + np.exp(-b))
    return np.concatenate([grad * s, grad * a * s * (1 - s)], axis=d)


def glu_backward_graph(grad, self, dim):
    d = wrap_dim(dim, self.dim())
    n = self.shape[d] // 2
    a, b = aten.slice(self, d, 0, n, 1), aten.slice(self, d, n, 2 * n, 1)
    s = aten.sigmoid(b)
    return aten.cat([grad * s, grad * a * s * (1 - s)], d)


def glu_jvp(result, x, dx, dim):
    """torch's glu_jvp: ``da * sigmoid(b) + result * (1 - sigmoid(b)) * db``."""
    (_, b), d = _halves(x, dim)
    da, db = np.split(dx, 2, axis=d)
    s = 1 / (1 + np.exp(-b))
    return da * s + result * (1 - s) * db


def glu_jvp_graph(result, x, dx, dim):
    d = wrap_dim(dim, x.dim())
    n = x.shape[d] // 2
    s = aten.sigmoid(aten.slice(x, d, n, 2 * n, 1))
    return aten.slice(dx, d, 0, n, 1) * s + result * (1 - s) * aten.slice(dx, d, n, 2 * n, 1)


# ---- norm ---------------------------------------------------------------------------------------------------

def norm_backward(grad, self, p, result, dim, keepdim):
    """torch's norm_backward: linalg_vector_norm's, ``p`` None being 2."""
    return linalg_vector_norm_backward(grad, self, 2 if p is None else p, result, dim, keepdim)


def norm_backward_graph(grad, self, p, result, dim, keepdim):
    return linalg_vector_norm_backward_graph(grad, self, 2 if p is None else p, result, dim, keepdim)


# ---- _embedding_bag -----------------------------------------------------------------------------------------

def _bag_rows(grad, indices, offset2bag, bag_size, mode, per_sample_weights, padding_idx):
    """Per index position: the weight row it receives (the bag's gradient, scaled) and whether it counts."""
    keep = indices != padding_idx if padding_idx >= 0 else np.ones(indices.shape, bool)
    rows = grad[offset2bag]
    if mode == 1:
        rows = rows / np.maximum(bag_size, 1)[offset2bag][:, None].astype(grad.dtype)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    return rows, keep


def _freq_scale(indices, keep, scale_grad_by_freq, dtype):
    if not scale_grad_by_freq:
        return None
    _, inverse, counts = np.unique(indices, return_inverse=True, return_counts=True)
    return (1.0 / counts[inverse]).astype(dtype)


def embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, max_indices, weight_sizes,
                           scale_grad_by_freq, mode, per_sample_weights, padding_idx):
    """Gradient of _embedding_bag for the weight: each bag's gradient added to the rows it reduced (the
    rows that gave the maximum, for mode max)."""
    out = np.zeros((weight_sizes[0], grad.shape[1]), grad.dtype)
    if mode == 2:
        bags = np.nonzero(bag_size > 0)[0]
        cols = np.arange(grad.shape[1])
        for b in bags:
            np.add.at(out, (max_indices[b], cols), grad[b])
        return out
    rows, keep = _bag_rows(grad, indices, offset2bag, bag_size, mode, per_sample_weights, padding_idx)
    scale = _freq_scale(indices, keep, scale_grad_by_freq, grad.dtype)
    if scale is not None:
        rows = rows * scale[:, None]
    np.add.at(out, indices[keep], rows[keep])
    return out


def embedding_bag_backward_graph(grad, indices, offsets, offset2bag, bag_size, max_indices, weight_sizes,
                                 scale_grad_by_freq, mode, per_sample_weights, padding_idx):
    dtype = grad._array.dtype
    zeros = _T(np.zeros((weight_sizes[0], grad.shape[1]), dtype))
    if mode == 2:
        bags = np.nonzero(bag_size._array > 0)[0]
        flat = np.asarray(max_indices._array)[bags].reshape(-1) * grad.shape[1] + \
            np.tile(np.arange(grad.shape[1]), len(bags))
        picked = aten.index_select(grad, 0, _T(bags.astype(np.int64)))
        return aten.put(zeros, _T(flat.astype(np.int64)), _reshape(picked, (-1,)), True)
    idx = indices._array
    keep = idx != padding_idx if padding_idx >= 0 else np.ones(idx.shape, bool)
    rows = aten.index_select(grad, 0, offset2bag)
    if mode == 1:
        rows = rows / _T(np.maximum(bag_size._array, 1)[offset2bag._array][:, None].astype(dtype))
    if per_sample_weights is not None:
        rows = rows * aten.unsqueeze(per_sample_weights, 1)
    scale = _freq_scale(idx, keep, scale_grad_by_freq, dtype)
    if scale is not None:
        rows = rows * _T(scale[:, None])
    kept = _T(np.nonzero(keep)[0].astype(np.int64))
    return aten.index_add(zeros, 0, _T(idx[keep].astype(np.int64)), aten.index_select(rows, 0, kept))


def embedding_bag_per_sample_weights_backward(grad, weight, indices, offset2bag, mode, padding_idx):
    """Gradient for ``per_sample_weights`` (mode sum only): each index's weight row against its bag's
    gradient, zero at ``padding_idx``."""
    if mode != 0:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for mode='sum'")
    out = np.sum(grad[offset2bag] * weight[indices], axis=1)
    if padding_idx >= 0:
        out = np.where(indices == padding_idx, out.dtype.type(0), out)
    return out


def embedding_bag_per_sample_weights_backward_graph(grad, weight, indices, offset2bag, mode, padding_idx):
    if mode != 0:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for mode='sum'")
    out = aten.sum(aten.index_select(grad, 0, offset2bag) * aten.index_select(weight, 0, indices), [1])
    if padding_idx >= 0:
        out = aten.where(_mask_tensor(indices._array == padding_idx), _T(np.zeros((), out._array.dtype)), out)
    return out


# ---- linalg_inv_ex, _linalg_det -----------------------------------------------------------------------------

def _mt(a):
    return np.swapaxes(a, -1, -2)


def linalg_inv_backward(grad, inverse):
    """``-inverse^T @ grad @ inverse^T``."""
    return -(_mt(inverse) @ grad @ _mt(inverse))


def linalg_inv_backward_graph(grad, inverse):
    return aten.neg(_matmul(_mT(inverse), _matmul(grad, _mT(inverse))))


def linalg_inv_jvp(A_t, inverse):  # noqa: N803 - torch's spelling
    return -(inverse @ A_t @ inverse)


def linalg_inv_jvp_graph(A_t, inverse):  # noqa: N803
    return aten.neg(_matmul(inverse, _matmul(A_t, inverse)))


def _adjugate_t(A):
    """The transposed adjugate (the gradient of det), from the SVD, so singular matrices have one too."""
    u, s, vh = np.linalg.svd(A)
    n = s.shape[-1]
    prods = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)], axis=-1)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return (u * prods[..., None, :]) @ vh * sign[..., None, None]


def linalg_det_backward(grad, result, A):  # noqa: N803
    with np.errstate(all="ignore"):
        return (np.asarray(grad)[..., None, None] * _adjugate_t(A)).astype(A.dtype)


def linalg_det_backward_graph(grad, result, A):  # noqa: N803
    inv = aten.linalg_inv_ex(A)[0]
    scale = aten.unsqueeze(aten.unsqueeze(grad * result, -1), -1)
    return scale * _mT(inv)


def linalg_det_jvp(A_t, A, result):  # noqa: N803
    """``d det = sum(adj(A)^T * A_t)``."""
    with np.errstate(all="ignore"):
        return np.sum(_adjugate_t(A) * A_t, axis=(-2, -1)).astype(A.dtype)


def linalg_det_jvp_graph(A_t, A, result):  # noqa: N803
    inv = aten.linalg_inv_ex(A)[0]
    return result * aten.sum(_mT(inv) * A_t, [-2, -1])


TENSOR_FUNCTIONS = {
    "masked_select_backward": (masked_select_backward, masked_select_backward_graph),
    "trace_backward": (trace_backward, trace_backward_graph),
    "glu_backward": (glu_backward, glu_backward_graph),
    "glu_jvp": (glu_jvp, glu_jvp_graph),
    "norm_backward": (norm_backward, norm_backward_graph),
    "embedding_bag_backward": (embedding_bag_backward, embedding_bag_backward_graph),
    "embedding_bag_per_sample_weights_backward": (embedding_bag_per_sample_weights_backward,
                                                  embedding_bag_per_sample_weights_backward_graph),
    "linalg_inv_backward": (linalg_inv_backward, linalg_inv_backward_graph),
    "linalg_inv_jvp": (linalg_inv_jvp, linalg_inv_jvp_graph),
    "linalg_det_backward": (linalg_det_backward, linalg_det_backward_graph),
    "linalg_det_jvp": (linalg_det_jvp, linalg_det_jvp_graph),
}
