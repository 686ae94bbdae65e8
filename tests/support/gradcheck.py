"""A small float64 central-difference gradient checker for derivgen (no torch needed).

``check_gradients(fn, args, kwargs, leaves)`` calls ``fn(*args, **kwargs)`` (whose differentiable inputs
are the leaf Tensors ``leaves``, requiring grad), weighs every output that requires grad with a random
upstream gradient ``g_k`` and compares, for every leaf, the analytic gradient of ``sum_k <out_k, g_k>``
(``derivgen.autograd.grad``) with central differences (eps 1e-6) of the same function evaluated without
grad. With ``graph=True`` it also checks that ``create_graph=True`` (the Tensor-op path of every node)
gives the same first-order gradients. Returns the analytic gradients (a list of numpy arrays).
"""
import numpy as np

import derivgen
from derivgen.core.tensor import Tensor

EPS = 1e-6
ATOL = 1e-5
RTOL = 1e-4


def flat_outputs(out):
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [o for o in out if isinstance(o, Tensor)]
    raise TypeError(f"op returned {type(out).__name__}, not Tensor(s)")


def _replace(value, leaf_ids, arrays):
    if isinstance(value, Tensor) and id(value) in leaf_ids:
        return Tensor._make(arrays[leaf_ids[id(value)]])
    if isinstance(value, list) and any(isinstance(x, Tensor) and id(x) in leaf_ids for x in value):
        return [_replace(x, leaf_ids, arrays) for x in value]
    return value


def _weighted(fn, args, kwargs, leaf_ids, arrays, positions, gouts):
    a = tuple(_replace(v, leaf_ids, arrays) for v in args)
    k = {n: _replace(v, leaf_ids, arrays) for n, v in kwargs.items()}
    with derivgen.no_grad():
        outs = flat_outputs(fn(*a, **k))
    return float(sum(np.sum(outs[p]._array.astype(np.float64) * g) for p, g in zip(positions, gouts)))


def _describe(name, analytic, numeric):
    diff = np.abs(analytic - numeric)
    i = np.unravel_index(np.argmax(diff), diff.shape) if diff.ndim else ()
    return (f"gradient of input {name} disagrees with central differences: at index {tuple(int(v) for v in i)}"
            f" analytic {analytic[i]!r} vs numeric {numeric[i]!r} (max abs diff {diff.max():.3g})\n"
            f"analytic:\n{analytic}\nnumeric:\n{numeric}")


def check_gradients(fn, args, kwargs, leaves, *, seed=0, graph=True, eps=EPS, atol=ATOL, rtol=RTOL):
    rng = np.random.default_rng(seed)
    outs = flat_outputs(fn(*args, **kwargs))
    positions = [i for i, o in enumerate(outs) if o.requires_grad]
    assert positions, "no output requires grad although a differentiable input does"
    for p in positions:
        assert outs[p].grad_fn is not None, f"output {p} requires grad but has no grad_fn"
    gouts = [rng.standard_normal(outs[p]._array.shape) for p in positions]
    g_tensors = [Tensor._make(g.astype(outs[p]._array.dtype)) for p, g in zip(positions, gouts)]
    diff_outs = [outs[p] for p in positions]
    analytic = derivgen.autograd.grad(diff_outs, leaves, g_tensors, retain_graph=True, allow_unused=True)
    results = []
    leaf_ids = {id(t): i for i, t in enumerate(leaves)}
    for li, (leaf, g) in enumerate(zip(leaves, analytic)):
        a = np.zeros(leaf._array.shape) if g is None else g._array
        if g is not None:
            assert g._array.shape == leaf._array.shape, \
                f"gradient of input {li} has shape {g._array.shape}, expected {leaf._array.shape}"
            assert g._array.dtype == leaf._array.dtype, \
                f"gradient of input {li} has dtype {g._array.dtype}, expected {leaf._array.dtype}"
        numeric = np.zeros(leaf._array.shape)
        arrays = [t._array.copy() for t in leaves]
        flat = arrays[li].reshape(-1)
        num_flat = numeric.reshape(-1)
        for j in range(flat.size):
            orig = flat[j]
            flat[j] = orig + eps
            fp = _weighted(fn, args, kwargs, leaf_ids, arrays, positions, gouts)
            flat[j] = orig - eps
            fm = _weighted(fn, args, kwargs, leaf_ids, arrays, positions, gouts)
            flat[j] = orig
            num_flat[j] = (fp - fm) / (2 * eps)
        assert np.allclose(a, numeric, atol=atol, rtol=rtol), _describe(li, np.asarray(a), numeric)
        results.append(np.asarray(a))
    if graph:
        g2 = [Tensor._make(g._array.copy()) for g in g_tensors]
        second = derivgen.autograd.grad(diff_outs, leaves, g2, retain_graph=True, create_graph=True,
                                        allow_unused=True)
        for li, (first, g) in enumerate(zip(results, second)):
            b = np.zeros(first.shape) if g is None else g._array
            assert np.shape(b) == first.shape, f"create_graph gradient of input {li} has shape {np.shape(b)}"
            assert np.allclose(b, first, atol=1e-10, rtol=1e-9), \
                f"create_graph=True gives a different gradient for input {li}:\n{b}\nvs\n{first}"
    return results
