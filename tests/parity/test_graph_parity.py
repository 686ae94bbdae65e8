"""Graph parity with torch: the same Python expression builds the same graph in torch and derivgen.

For each expression the breadth-first walk of (node name, edges as (name or None, input_nr)) from the
result's grad_fn must be equal (``torch::`` in AccumulateGrad's name reads ``derivgen::``), the forward
values equal and the gradients (from a random upstream gradient) equal. Skipped without torch.
"""
import numpy as np
import pytest

import derivgen

_rng = np.random.default_rng(7)
DATA = {
    "x": _rng.uniform(0.5, 2.0, (3, 4)),
    "y": _rng.uniform(0.5, 2.0, (3, 4)) * _rng.choice([-1, 1], (3, 4)),
    "w": _rng.standard_normal((4, 5)),
    "v": _rng.standard_normal(4),
    "r": _rng.standard_normal(4),
    "b1": _rng.standard_normal((2, 3, 4)),
    "b2": _rng.standard_normal((2, 4, 2)),
    "s": np.array(1.5),
    "c": _rng.standard_normal((3, 1)),
    "u": _rng.uniform(0.5, 2.0, 6),
}


def _inplace_add(lib, x, y):
    z = x * 1
    z.add_(y)
    return z


def _inplace_mul(lib, x, y):
    z = x.sin()
    z.mul_(y)
    return z


def _inplace_scalar(lib, x):
    z = x.sin()
    z.mul_(3)
    z.sub_(1.5)
    return z


EXPRESSIONS = {
    "mul": (lambda lib, x, y: x * y, "x y"),
    "mul_number": (lambda lib, x: x * 2, "x"),
    "rmul_number": (lambda lib, x: 2 * x, "x"),
    "mul_shared_leaf": (lambda lib, x: x * x, "x"),
    "add_number": (lambda lib, x: x + 1, "x"),
    "radd_number": (lambda lib, x: 1 + x, "x"),
    "add": (lambda lib, x, y: x + y, "x y"),
    "add_alpha": (lambda lib, x, y: x.add(y, alpha=2), "x y"),
    "sub": (lambda lib, x, y: x - y, "x y"),
    "sub_number": (lambda lib, x: x - 1, "x"),
    "rsub_number": (lambda lib, x: 2 - x, "x"),
    "div": (lambda lib, x, y: x / y, "x y"),
    "div_number": (lambda lib, x: x / 2, "x"),
    "rdiv_number": (lambda lib, x: 2 / x, "x"),
    "pow_number": (lambda lib, x: x ** 2, "x"),
    "pow_float": (lambda lib, x: x ** 1.5, "x"),
    "rpow_number": (lambda lib, x: 2 ** x, "x"),
    "pow_tensor": (lambda lib, x, y: x ** y, "x y"),
    "neg": (lambda lib, x: -x, "x"),
    "abs": (lambda lib, y: y.abs(), "y"),
    "exp": (lambda lib, x: x.exp(), "x"),
    "log": (lambda lib, x: x.log(), "x"),
    "sqrt": (lambda lib, x: x.sqrt(), "x"),
    "reciprocal": (lambda lib, x: x.reciprocal(), "x"),
    "sin": (lambda lib, x: x.sin(), "x"),
    "cos": (lambda lib, x: x.cos(), "x"),
    "tanh": (lambda lib, x: x.tanh(), "x"),
    "sigmoid": (lambda lib, x: x.sigmoid(), "x"),
    "relu": (lambda lib, y: y.relu(), "y"),
    "sign": (lambda lib, y: y.sign() * y, "y"),
    "maximum": (lambda lib, x, y: lib.maximum(x, y), "x y"),
    "minimum": (lambda lib, x, y: lib.minimum(x, y), "x y"),
    "where": (lambda lib, x, y: lib.where(y > 0, x, y), "x y"),
    "broadcast_mul": (lambda lib, x, v: x * v, "x v"),
    "broadcast_add_column": (lambda lib, x, c: x + c, "x c"),
    "zero_dim_mul": (lambda lib, x, s: x * s, "x s"),
    "sum": (lambda lib, x: x.sum(), "x"),
    "sum_dim": (lambda lib, x: x.sum(0), "x"),
    "sum_keepdim": (lambda lib, x: x.sum(1, keepdim=True), "x"),
    "mean": (lambda lib, x: x.mean(), "x"),
    "mean_dim": (lambda lib, x: x.mean(1), "x"),
    "mm": (lambda lib, x, w: x.mm(w), "x w"),
    "matmul_2d": (lambda lib, x, w: x @ w, "x w"),
    "matmul_mv": (lambda lib, x, v: x @ v, "x v"),
    "matmul_dot": (lambda lib, v, r: v @ r, "v r"),
    "bmm": (lambda lib, b1, b2: lib.bmm(b1, b2), "b1 b2"),
    "t": (lambda lib, x: x.t(), "x"),
    "transpose": (lambda lib, x: x.transpose(0, 1), "x"),
    "permute": (lambda lib, b1: b1.permute(2, 0, 1), "b1"),
    "view": (lambda lib, x: x.view(2, 6), "x"),
    "view_minus_one": (lambda lib, x: x.view(-1), "x"),
    "reshape_contiguous": (lambda lib, x: x.reshape(4, 3), "x"),
    "reshape_non_contiguous": (lambda lib, x: x.t().reshape(12), "x"),
    "expand": (lambda lib, v: v.expand(3, 4), "v"),
    "clone": (lambda lib, x: x.clone(), "x"),
    "to_float32": (lambda lib, x: x.float(), "x"),
    "unsqueeze": (lambda lib, x: x.unsqueeze(1), "x"),
    "squeeze_dim": (lambda lib, c: c.squeeze(1), "c"),
    "split": (lambda lib, u: u.split(4), "u"),
    "split_one_used": (lambda lib, u: u.split(3)[1] * 2, "u"),
    "split_with_sizes": (lambda lib, u: u.split([2, 4]), "u"),
    "unbind": (lambda lib, x: x.unbind(), "x"),
    "unbind_add": (lambda lib, v: v.unbind()[0] + v.unbind()[3], "v"),
    "cat": (lambda lib, x, y: lib.cat([x, y], 1), "x y"),
    "stack": (lambda lib, x, y: lib.stack([x, y]), "x y"),
    "index_int": (lambda lib, x: x[0], "x"),
    "index_slice": (lambda lib, x: x[1:3], "x"),
    "index_column": (lambda lib, x: x[:, 2], "x"),
    "index_none": (lambda lib, x: x[..., None], "x"),
    "index_mixed": (lambda lib, b1: b1[1, :, 1:3], "b1"),
    "inplace_add_on_non_leaf": (_inplace_add, "x y"),
    "inplace_mul_on_non_leaf": (_inplace_mul, "x y"),
    "inplace_scalars_on_non_leaf": (_inplace_scalar, "x"),
    "chain": (lambda lib, x, y, w: ((x * y).exp() + y.sin()).mm(w).sum(0), "x y w"),
}


def _name(n):
    return None if n is None else n.name().replace("torch::", "derivgen::")


def graph_walk(roots):
    out, seen, queue = [], set(), [r for r in roots if r is not None]
    while queue:
        n = queue.pop(0)
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append((_name(n), tuple((_name(m), k) for m, k in n.next_functions)))
        queue.extend(m for m, _ in n.next_functions if m is not None)
    return out


def _build(lib, fn, names):
    leaves = [lib.tensor(DATA[n], dtype=lib.float64, requires_grad=True) for n in names]
    out = fn(lib, *leaves)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return leaves, outs


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_graph_values_and_gradients_match_torch(name):
    torch = pytest.importorskip("torch")
    fn, names = EXPRESSIONS[name]
    names = names.split()
    ours_leaves, ours = _build(derivgen, fn, names)
    theirs_leaves, theirs = _build(torch, fn, names)
    assert len(ours) == len(theirs)
    assert graph_walk([o.grad_fn for o in ours]) == graph_walk([t.grad_fn for t in theirs])
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape)
        assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert o.output_nr == t.output_nr and o.requires_grad == t.requires_grad
        np.testing.assert_allclose(o.detach()._array, t.detach().numpy(), rtol=1e-6, atol=1e-6)
    rng = np.random.default_rng(0)
    gs = [rng.standard_normal(tuple(t.shape)) for t in theirs]
    derivgen.autograd.backward([o for o in ours], [derivgen.tensor(g, dtype=o.dtype) for o, g in zip(ours, gs)])
    torch.autograd.backward(theirs, [torch.tensor(g, dtype=t.dtype) for t, g in zip(theirs, gs)])
    for n, a, b in zip(names, ours_leaves, theirs_leaves):
        assert (a.grad is None) == (b.grad is None), n
        if b.grad is not None:
            np.testing.assert_allclose(a.grad._array, b.grad.numpy(), rtol=1e-6, atol=1e-6, err_msg=n)


def test_graph_walk_sees_a_difference():
    """The walk is sensitive to edge order and input_nr (so the comparison above can fail)."""
    x = derivgen.ones(3, requires_grad=True)
    y = derivgen.ones(3, requires_grad=True)
    a = graph_walk([(x * 2 + y).grad_fn])
    b = graph_walk([(y + x * 2).grad_fn])
    assert a != b
    lo, hi = derivgen.ones(4, requires_grad=True).split(2)
    assert graph_walk([(lo * 1).grad_fn]) != graph_walk([(hi * 1).grad_fn])
