"""vmap's API on derivgen and on PyTorch (the ``torch`` fixture runs each body on both): in_dims and
out_dims as ints, None and pytrees, nesting, chunk_size, torch's error texts, composition with grad,
per-sample gradients of an MLP, and the per-example fallback's warning."""
import re

import numpy as np
import pytest

from tests.func.support import arr, check


def _np(t):
    return np.asarray(t.tolist())


def test_in_dims_pytree_and_out_dims(torch):
    x, y = arr(torch, 2, 3, seed=1), arr(torch, 3, 2, seed=2)
    out = torch.vmap(lambda d, t: (d["a"] * t[0], t[1].sum()), in_dims=({"a": 0}, (1, None)),
                     out_dims=(1, 0))({"a": x}, (y, y))
    assert tuple(out[0].shape) == (3, 2) and tuple(out[1].shape) == (2,)
    np.testing.assert_allclose(_np(out[0]), (_np(x) * _np(y).T).T)
    np.testing.assert_allclose(_np(out[1]), np.full(2, _np(y).sum()))


def test_negative_in_dim_out_dim_none_and_unbatched_output(torch):
    x = arr(torch, 3, 4)
    out, const = torch.vmap(lambda a: (a * 2, torch.ones(2)), in_dims=-1, out_dims=(-1, None))(x)
    assert tuple(out.shape) == (3, 4) and tuple(const.shape) == (2,)
    expanded = torch.vmap(lambda a: torch.ones(2), in_dims=0)(x)  # an unbatched output is expanded
    assert tuple(expanded.shape) == (3, 2)


def test_kwargs_pass_through_unbatched(torch):
    x = arr(torch, 3, 4)
    out = torch.vmap(lambda a, scale=1.0: a * scale)(x, scale=3.0)
    np.testing.assert_allclose(_np(out), _np(x) * 3)


def test_nested_vmap_outer_product(torch):
    x, y = arr(torch, 3, seed=1), arr(torch, 4, seed=2)
    out = torch.vmap(torch.vmap(torch.mul, in_dims=(None, 0)), in_dims=(0, None))(x, y)
    np.testing.assert_allclose(_np(out), np.outer(_np(x), _np(y)))


def test_nested_vmap_with_reductions_and_matmul(torch):
    x, w = arr(torch, 2, 3, 4, seed=3), arr(torch, 4, 5, seed=4)
    out = torch.vmap(torch.vmap(lambda r: torch.softmax(r @ w, 0).sum() + r.mean()))(x)
    ref = [[(torch.softmax(x[i, j] @ w, 0).sum() + x[i, j].mean()).item() for j in range(3)] for i in range(2)]
    np.testing.assert_allclose(_np(out), np.array(ref))


def test_nested_in_dims_inner_and_outer(torch):
    x = arr(torch, 2, 3, 4, seed=5)
    out = torch.vmap(torch.vmap(lambda r: r.sum(), in_dims=1), in_dims=2)(x)
    np.testing.assert_allclose(_np(out), _np(x).sum(0).T)


def test_chunk_size(torch):
    x, y = arr(torch, 7, 3, seed=6), arr(torch, 3, seed=7)
    full = torch.vmap(lambda a, b: (a * b).sum(), in_dims=(0, None))(x, y)
    for chunk in (1, 2, 3, 7, 10):
        chunked = torch.vmap(lambda a, b: (a * b).sum(), in_dims=(0, None), chunk_size=chunk)(x, y)
        np.testing.assert_allclose(_np(chunked), _np(full))
    out = torch.vmap(lambda a: a.t(), in_dims=1, out_dims=2, chunk_size=2)(arr(torch, 3, 5, 2))
    assert tuple(out.shape) == (2, 3, 5)


def test_inplace_on_batched_self(torch):
    x, y = arr(torch, 3, 4, seed=1), arr(torch, 4, seed=2)

    def f(a, b):
        c = a.clone()
        c.mul_(b)
        c.add_(1)
        return c
    out = torch.vmap(f, in_dims=(0, None))(x, y)
    np.testing.assert_allclose(_np(out), _np(x) * _np(y) + 1)


ERRORS = [
    ("in_dims_type", lambda torch, x: torch.vmap(torch.sin, in_dims=[0])(x), ValueError),
    ("no_inputs", lambda torch, x: torch.vmap(lambda: x)(), ValueError),
    ("structure", lambda torch, x: torch.vmap(torch.sin, in_dims=(0, 0))(x), ValueError),
    ("in_dim_float", lambda torch, x: torch.vmap(torch.sin, in_dims=(0.5,))(x), ValueError),
    ("in_dim_non_tensor", lambda torch, x: torch.vmap(lambda a, b: a, in_dims=(0, 0))(x, 3), ValueError),
    ("in_dim_range", lambda torch, x: torch.vmap(torch.sin, in_dims=2)(x), ValueError),
    ("no_tensor_mapped", lambda torch, x: torch.vmap(torch.sin, in_dims=None)(x), ValueError),
    ("sizes", lambda torch, x: torch.vmap(torch.mul)(x, x.t()), ValueError),
    ("non_tensor_output", lambda torch, x: torch.vmap(lambda a: 1)(x), ValueError),
    ("out_dims_type", lambda torch, x: torch.vmap(torch.sin, out_dims="a")(x), ValueError),
    ("out_dims_structure", lambda torch, x: torch.vmap(torch.sin, out_dims=(0, 0))(x), ValueError),
    ("batched_out_dim_none", lambda torch, x: torch.vmap(torch.sin, out_dims=None)(x), ValueError),
    ("randomness", lambda torch, x: torch.vmap(torch.sin, randomness="sometimes")(x), RuntimeError),
    ("item", lambda torch, x: torch.vmap(lambda a: a.sum().item())(x), RuntimeError),
    ("control_flow", lambda torch, x: torch.vmap(lambda a: a if a.sum() > 0 else -a)(x), RuntimeError),
    ("inplace_unbatched_self", lambda torch, x: torch.vmap(lambda a: torch.ones(4, dtype=torch.float64).add_(a))(x),
     RuntimeError),
    ("view_of_moved_dim", lambda torch, x: torch.vmap(lambda a: a.view(-1), in_dims=1)(x.reshape(2, 3, 2)),
     RuntimeError),
]


@pytest.mark.parametrize("name", [e[0] for e in ERRORS])
def test_errors_match_torch(name):
    import torch as real
    import derivgen
    body, exc = next((b, e) for n, b, e in ERRORS if n == name)
    messages = []
    for m in (derivgen, real):
        x = arr(m, 3, 4)
        with pytest.raises(exc) as info:
            body(m, x)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def _mlp_loss(torch):
    def loss(params, x, y):
        w1, b1, w2, b2 = params
        h = torch.tanh(torch.nn.functional.linear(x, w1, b1))
        out = torch.nn.functional.linear(h, w2, b2)
        return torch.nn.functional.mse_loss(out, y)
    return loss


@pytest.mark.parametrize("chunk_size", [None, 3])
def test_per_sample_grads_of_an_mlp(chunk_size):
    def body(m):
        params = (arr(m, 8, 4, seed=1), arr(m, 8, seed=2), arr(m, 3, 8, seed=3), arr(m, 3, seed=4))
        x, y = arr(m, 6, 4, seed=5), arr(m, 6, 3, seed=6)
        grads = m.func.vmap(m.func.grad(_mlp_loss(m)), in_dims=(None, 0, 0), chunk_size=chunk_size)(params, x, y)
        return list(grads)
    check(body)


def test_vmap_grad_and_value_with_aux_and_argnums():
    def body(m):
        x, w = arr(m, 5, 3, seed=1), arr(m, 3, seed=2)

        def f(w, x):
            out = (m.sin(x * w)).sum()
            return out, x.sum()
        (gw, gx), (value, aux) = m.func.vmap(m.func.grad_and_value(f, argnums=(0, 1), has_aux=True),
                                            in_dims=(None, 0))(w, x)
        return [gw, gx, value, aux]
    check(body)


def test_vmap_of_vjp_and_jacrev():
    def body(m):
        x, v = arr(m, 4, 3, seed=1), arr(m, 4, 3, seed=2)
        vjps = m.func.vmap(lambda a, c: m.func.vjp(m.tanh, a)[1](c)[0])(x, v)
        jac = m.func.vmap(m.func.jacrev(lambda a: m.sin(a) * a.sum()))(x)
        return [vjps, jac]
    check(body)


def test_nested_vmap_of_grad():
    def body(m):
        x = arr(m, 2, 3, 4, seed=1)
        return m.vmap(m.vmap(m.func.grad(lambda a: (a.exp() * a).sum())))(x)
    check(body)


def test_grad_of_vmap():
    def body(m):
        x = arr(m, 3, 4, seed=1)
        return m.func.grad(lambda a: m.vmap(lambda r: (r.sin() * r).sum())(a).pow(2).sum())(x)
    check(body)


def test_op_without_rule_loops_with_torchs_warning():
    import derivgen
    x = arr(derivgen, 3, 4)
    idx = derivgen.tensor([[0, 1], [2, 3], [1, 1]])
    with pytest.warns(UserWarning, match=re.escape("There is a performance drop because we have not yet implemented "
                                                   "the batching rule for aten::scatter_add.")):
        out = derivgen.vmap(lambda a, i: derivgen.zeros(4, dtype=derivgen.float64).scatter_add(0, i, a[:2]))(x, idx)
    for b in range(3):
        ref = derivgen.zeros(4, dtype=derivgen.float64).scatter_add(0, idx[b], x[b, :2])
        np.testing.assert_allclose(out[b].numpy(), ref.numpy())


def test_batched_tensor_repr_and_metadata():
    import derivgen
    seen = {}

    def f(a):
        seen["repr"] = repr(a)
        seen["meta"] = (tuple(a.shape), a.dim(), a.numel(), a.dtype, len(a))
        return a
    derivgen.vmap(f, in_dims=1)(arr(derivgen, 2, 3))
    assert seen["repr"].startswith("BatchedTensor(lvl=1, bdim=0, value=")
    assert seen["meta"] == ((2,), 1, 2, derivgen.float64, 2)


def test_torch_vmap_alias():
    import derivgen
    assert derivgen.vmap is derivgen.func.vmap


def test_jacrev_argnums_aux_and_scalar_output():
    def body(m):
        x, y = arr(m, 3, seed=1), arr(m, 2, 3, seed=2)

        def f(a, b):
            return (b @ a).sin(), (a * 2).sum()
        (ja, jb), aux = m.func.jacrev(f, argnums=(0, 1), has_aux=True)(x, y)
        scalar = m.func.jacrev(lambda a: (a ** 3).sum())(x)
        return [ja, jb, aux, scalar]
    check(body)


def test_vmap_of_jacfwd_and_hessian():
    def body(m):
        x, w = arr(m, 4, 3, seed=1), arr(m, 3, seed=2)
        jf = m.func.vmap(m.func.jacfwd(lambda a: m.sin(a) * a.sum()))(x)
        jw = m.func.vmap(m.func.jacfwd(lambda v, a: (a * v).sin(), argnums=0), in_dims=(None, 0))(w, x)
        hs = m.func.vmap(m.func.hessian(lambda a: (a ** 3).sum() * a[0]))(x)
        return [jf, jw, hs]
    check(body)


def test_nested_vmap_of_vjp_fn_over_batched_cotangents():
    def body(m):
        x, cts = arr(m, 2, 3, seed=1), arr(m, 2, 4, 3, seed=2)

        def per_row(a, c):
            _, vjp_fn = m.func.vjp(lambda t: t.exp() * t.sum(), a)
            return m.func.vmap(vjp_fn)(c)[0]
        return m.func.vmap(per_row)(x, cts)
    check(body)


def test_dual_of_a_batched_tensor_is_refused():
    import derivgen
    fw = derivgen.autograd.forward_ad

    def f(a):
        with fw.dual_level():
            d = fw.make_dual(a, derivgen.ones(3, dtype=derivgen.float64))
            return fw.unpack_dual(d.sin()).tangent
    with pytest.raises(RuntimeError, match=re.escape("vmap: dual tensors (forward_ad.make_dual) of batched tensors "
                                                     "are not supported")):
        derivgen.vmap(f)(arr(derivgen, 2, 3))
