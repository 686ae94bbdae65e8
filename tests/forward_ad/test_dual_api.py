"""Dual tensors, levels, errors and func transforms: one body runs on derivgen and on PyTorch (the oracle)."""
import numpy as np
import pytest


def _x(torch, *shape, seed=0):
    return torch.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=torch.float64)


def _np(t):
    return np.asarray(t.tolist())


def test_mlp_tangent(torch):
    fwAD = torch.autograd.forward_ad
    x, t = _x(torch, 5, 3, seed=1), _x(torch, 5, 3, seed=2)
    W1, b1, W2 = _x(torch, 4, 3, seed=3), _x(torch, 4, seed=4), _x(torch, 2, 4, seed=5)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        h = torch.tanh(torch.nn.functional.linear(d, W1, b1))
        h = torch.sigmoid(h) * h + torch.relu(h - 0.1)
        out = torch.nn.functional.log_softmax(h @ W2.t(), dim=1).mean()
        primal, tangent = fwAD.unpack_dual(out)
    # central difference along t
    def f(v):
        h = torch.tanh(torch.nn.functional.linear(v, W1, b1))
        h = torch.sigmoid(h) * h + torch.relu(h - 0.1)
        return torch.nn.functional.log_softmax(h @ W2.t(), dim=1).mean().item()
    eps = 1e-6
    numeric = (f(x + eps * t) - f(x - eps * t)) / (2 * eps)
    assert abs(tangent.item() - numeric) < 1e-6
    assert abs(primal.item() - f(x)) < 1e-12


@pytest.mark.parametrize("op", ["cat", "stack", "index", "slice", "select", "permute", "expand", "sum_dim",
                                "mean", "softmax", "addmm", "mm", "view", "squeeze"])
def test_shape_and_linear_ops(torch, op):
    fwAD = torch.autograd.forward_ad
    x, t = _x(torch, 3, 4, seed=6), _x(torch, 3, 4, seed=7)
    fns = {
        "cat": lambda d: torch.cat([d, d * 2], dim=1),
        "stack": lambda d: torch.stack([d, d.exp()], dim=0),
        "index": lambda d: d[torch.tensor([2, 0])],
        "slice": lambda d: d[:, 1:4:2],
        "select": lambda d: d[1],
        "permute": lambda d: d.permute(1, 0),
        "expand": lambda d: d.unsqueeze(0).expand(2, 3, 4),
        "sum_dim": lambda d: d.sum(dim=1, keepdim=True),
        "mean": lambda d: d.mean(),
        "softmax": lambda d: torch.softmax(d, dim=0),
        "addmm": lambda d: torch.addmm(d[:, :2], d, d.t()[:, :2], beta=0.5, alpha=2.0),
        "mm": lambda d: d.mm(d.t()),
        "view": lambda d: d.view(2, 6).transpose(0, 1),
        "squeeze": lambda d: d.unsqueeze(1).squeeze(1),
    }
    with fwAD.dual_level():
        y = fns[op](fwAD.make_dual(x, t))
        tangent = fwAD.unpack_dual(y).tangent
    eps = 1e-6
    numeric = (_np(fns[op](x + eps * t)) - _np(fns[op](x - eps * t))) / (2 * eps)
    np.testing.assert_allclose(_np(tangent), numeric, rtol=1e-6, atol=1e-7)
    assert tuple(tangent.shape) == tuple(y.shape)


def test_level_lifetime_and_unpack(torch):
    fwAD = torch.autograd.forward_ad
    x = _x(torch, 3)
    assert fwAD.unpack_dual(x).tangent is None
    with fwAD.dual_level():
        d = fwAD.make_dual(x, torch.ones(3, dtype=torch.float64))
        p, t = fwAD.unpack_dual(d)
        assert fwAD.unpack_dual(p).tangent is None
        assert t.tolist() == [1.0, 1.0, 1.0]
        assert type(fwAD.unpack_dual(d)).__name__ == "UnpackedDualTensor"
        assert fwAD.unpack_dual(d).primal is not None
    assert fwAD.unpack_dual(d).tangent is None  # cleared when the level exits
    lvl = fwAD.enter_dual_level()
    assert lvl == 0
    fwAD.exit_dual_level()


def test_errors(torch, monkeypatch):
    fwAD = torch.autograd.forward_ad
    x = _x(torch, 3)
    with pytest.raises(RuntimeError, match="Trying to create a dual Tensor for forward AD but no level exists, "
                                           "make sure to enter_dual_level\\(\\) first."):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"Trying to set a forward gradient that has a different size than "
                                               r"that of the original Tensor, this is not supported. Tensor is of "
                                               r"size \[3\] while the given forward gradient is of size \[4\]."):
            fwAD.make_dual(x, _x(torch, 4))
        with pytest.raises(ValueError, match="Expected tangent to be floating point or complex, but got: "):
            fwAD.make_dual(x, torch.ones(3, dtype=torch.int64))
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex, but got: "):
            fwAD.make_dual(torch.ones(3, dtype=torch.int64), x)
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the moment"):
            fwAD.enter_dual_level()
        d = fwAD.make_dual(x, x)
        if torch.__name__ == "torch":  # an op without a forward rule in PyTorch
            name, op = "multi_margin_loss", lambda: torch._C._nn.multi_margin_loss(
                d.view(1, 3), torch.zeros(1, dtype=torch.long))
        else:  # every row of derivgen's table has a forward rule: take cumprod's away for this check
            from derivgen.generated import jvp as generated_jvp
            monkeypatch.delitem(generated_jvp.RULES, "cumprod_default")
            name, op = "cumprod", lambda: d.cumprod(0)
        with pytest.raises(NotImplementedError) as info:
            op()
        assert str(info.value).startswith(f"Trying to use forward AD with {name} that does not support it because "
                                          "it has not been implemented yet.\nPlease file an issue to PyTorch")


def test_func_transforms(torch):
    F = pytest.importorskip("torch.func") if torch.__name__ == "torch" else torch.func
    x = _x(torch, 4, seed=8)
    f = lambda v: (torch.sin(v) * v.exp()).sum()  # noqa: E731
    g = lambda v: torch.tanh(v) * v  # noqa: E731
    out, tangent = F.jvp(g, (x,), (torch.ones(4, dtype=torch.float64),))
    np.testing.assert_allclose(_np(tangent), np.diag(_np(F.jacrev(g)(x))), rtol=1e-12)
    np.testing.assert_allclose(_np(F.jacfwd(g)(x)), _np(F.jacrev(g)(x)), rtol=1e-12)
    gr, value = F.grad_and_value(f)(x)
    np.testing.assert_allclose(_np(gr), _np(F.grad(f)(x)))
    assert abs(value.item() - f(x).item()) < 1e-12
    _, vjp_fn = F.vjp(g, x)
    (v,) = vjp_fn(torch.ones(4, dtype=torch.float64))
    np.testing.assert_allclose(_np(v), _np(F.jacrev(g)(x)).sum(0), rtol=1e-12)
    H = _np(F.hessian(f)(x))
    xs = np.asarray(x.tolist())
    expected = np.diag(np.exp(xs) * 2 * np.cos(xs))  # d2/dx2 of sin(x) e^x
    np.testing.assert_allclose(H, expected, rtol=1e-10, atol=1e-12)


def test_gradcheck_forward_ad(torch):
    x = _x(torch, 3, 2, seed=9).requires_grad_(True)
    W = _x(torch, 2, 4, seed=10).requires_grad_(True)
    fn = lambda a, b: torch.nn.functional.log_softmax(torch.tanh(a @ b), dim=1)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x, W), check_forward_ad=True)


def test_functional_jvp(torch):
    x, v = _x(torch, 3, seed=11), _x(torch, 3, seed=12)
    out, jvp = torch.autograd.functional.jvp(lambda a: a.exp() * a.sin(), x, v)
    xs, vs = np.asarray(x.tolist()), np.asarray(v.tolist())
    np.testing.assert_allclose(_np(jvp), (np.exp(xs) * np.sin(xs) + np.exp(xs) * np.cos(xs)) * vs, rtol=1e-12)


def _function_classes(torch):
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.k = k
            return x * y * k

        @staticmethod
        def jvp(ctx, x_t, y_t, k_t):
            assert k_t is None
            x, y = ctx.saved_tensors
            return (x_t * y + x * y_t) * ctx.k

    class NoJvp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.exp()

    class WrongShape(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.exp()

        @staticmethod
        def jvp(ctx, x_t):
            return x_t[:1]
    return Scale, NoJvp, WrongShape


def test_function_jvp(torch):
    fwAD = torch.autograd.forward_ad
    Scale, NoJvp, WrongShape = _function_classes(torch)
    x, y, t = _x(torch, 3, seed=13), _x(torch, 3, seed=14), _x(torch, 3, seed=15)
    with fwAD.dual_level():
        out = Scale.apply(fwAD.make_dual(x, t), y, 3.0)
        tangent = fwAD.unpack_dual(out).tangent
        np.testing.assert_allclose(_np(tangent), _np(t) * _np(y) * 3.0, rtol=1e-12)
        d = fwAD.make_dual(x, t)
        with pytest.raises(NotImplementedError, match="You must implement the jvp function for custom "
                                                      "autograd.Function to use it with forward mode AD."):
            NoJvp.apply(d)
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[3\] while the given forward gradient is of "
                                               r"size \[1\]."):
            WrongShape.apply(d)
    # without a level the Function runs as before (no jvp call)
    assert _np(Scale.apply(x, y, 2.0)) == pytest.approx(_np(x) * _np(y) * 2.0)


def test_hessian_forward_over_reverse_matches_torch():
    """func.hessian is jacfwd(jacrev(f)): the reverse pass inside the dual level carries tangents,
    also through saved outputs (exp, tanh, sigmoid, log_softmax use their result)."""
    T = pytest.importorskip("torch")
    import derivgen
    rng = np.random.default_rng(0)
    W1, b1, W2, x = rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal((2, 4)), \
        rng.standard_normal(3)

    def make(lib):
        w1, bb, w2 = lib.tensor(W1), lib.tensor(b1), lib.tensor(W2)

        def f(v):
            h = lib.tanh(w1 @ v + bb)
            return lib.nn.functional.log_softmax(w2 @ (h * lib.sigmoid(h)), dim=0)[0] + (v.exp() * v).mean()
        return f
    ours = derivgen.func.hessian(make(derivgen))(derivgen.tensor(x))
    theirs = T.func.hessian(make(T))(T.tensor(x))
    np.testing.assert_allclose(_np(ours), theirs.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("op", ["max_ties", "clamp", "amax", "norm_inf", "norm_2", "logsumexp", "std", "chunk",
                                "vector_matmul", "batched_matmul"])
def test_reductions_and_masks(torch, op):
    """Rows whose JVP goes through the backward helpers' graph versions (masks, ties) and composites."""
    fwAD = torch.autograd.forward_ad
    x = torch.tensor([[1.0, 3.0, 3.0], [-3.0, 0.5, 2.0]], dtype=torch.float64)
    t = _x(torch, 2, 3, seed=16)
    B = _x(torch, 4, 3, 2, seed=17)
    fns = {
        "max_ties": lambda d: d.max(),
        "clamp": lambda d: d.clamp(-1.0, 2.5),
        "amax": lambda d: d.amax(1),
        "norm_inf": lambda d: torch.linalg.vector_norm(d, float("inf"), dim=1),
        "norm_2": lambda d: torch.linalg.vector_norm(d),
        "logsumexp": lambda d: torch.logsumexp(d, 1),
        "std": lambda d: d.std(0),
        "chunk": lambda d: d.chunk(3, dim=1)[1],
        "vector_matmul": lambda d: d[0] @ B[0],
        "batched_matmul": lambda d: d @ B,
    }
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(fns[op](fwAD.make_dual(x, t))).tangent
    if op in ("max_ties", "amax", "norm_inf"):  # ties: torch spreads the tangent evenly over the maxima
        expected = {"max_ties": (_np(t)[0, 1] + _np(t)[0, 2]) / 2,
                    "amax": [(_np(t)[0, 1] + _np(t)[0, 2]) / 2, _np(t)[1, 2]],
                    "norm_inf": [(_np(t)[0, 1] + _np(t)[0, 2]) / 2, -_np(t)[1, 0]]}[op]
    else:
        eps = 1e-6
        expected = (_np(fns[op](x + eps * t)) - _np(fns[op](x - eps * t))) / (2 * eps)
    np.testing.assert_allclose(_np(tangent), expected, rtol=1e-6, atol=1e-8)


def test_layer_norm_tangent(torch):
    fwAD = torch.autograd.forward_ad
    x, t = _x(torch, 2, 3, 4, seed=23), _x(torch, 2, 3, 4, seed=24)
    w, wt, b, bt = _x(torch, 3, 4, seed=25), _x(torch, 3, 4, seed=26), _x(torch, 3, 4, seed=27), _x(torch, 3, 4, seed=28)
    with fwAD.dual_level():
        y = torch.nn.functional.layer_norm(fwAD.make_dual(x, t), (3, 4), fwAD.make_dual(w, wt), fwAD.make_dual(b, bt))
        tangent = fwAD.unpack_dual(y).tangent
    eps = 1e-6

    def f(s):
        return _np(torch.nn.functional.layer_norm(x + s * t, (3, 4), w + s * wt, b + s * bt))
    np.testing.assert_allclose(_np(tangent), (f(eps) - f(-eps)) / (2 * eps), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("loss", ["cross_entropy", "mse", "bce_logits", "huber"])
def test_loss_tangents(torch, loss):
    fwAD = torch.autograd.forward_ad
    F = torch.nn.functional
    x, t = _x(torch, 4, 3, seed=18), _x(torch, 4, 3, seed=19)
    target = {"cross_entropy": torch.tensor([0, 2, 1, 2]), "mse": _x(torch, 4, 3, seed=20),
              "bce_logits": torch.tensor(np.random.default_rng(21).uniform(size=(4, 3))),
              "huber": _x(torch, 4, 3, seed=22)}[loss]
    fn = {"cross_entropy": lambda v: F.cross_entropy(v, target, label_smoothing=0.1),
          "mse": lambda v: F.mse_loss(v, target, reduction="sum"),
          "bce_logits": lambda v: F.binary_cross_entropy_with_logits(v, target),
          "huber": lambda v: F.huber_loss(v, target, delta=0.5)}[loss]
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(fn(fwAD.make_dual(x, t))).tangent
    eps = 1e-6
    numeric = (fn(x + eps * t).item() - fn(x - eps * t).item()) / (2 * eps)
    assert abs(tangent.item() - numeric) < 1e-6


def test_tangents_alias_like_primals(torch):
    """In-place ops write tangents through views, as torch's tangents are views of their base's."""
    fwAD = torch.autograd.forward_ad
    with fwAD.dual_level():
        t = torch.ones(3, dtype=torch.float64)
        x = fwAD.make_dual(torch.ones(3, dtype=torch.float64), t)
        x.mul_(2)
        assert t.tolist() == [2.0, 2.0, 2.0]  # the tangent given to make_dual is x's tangent itself
        base = fwAD.make_dual(torch.zeros(4, dtype=torch.float64), torch.zeros(4, dtype=torch.float64)).clone()
        src = fwAD.make_dual(torch.ones(2, dtype=torch.float64), torch.full((2,), 3.0, dtype=torch.float64))
        v = base[1:3]
        v.mul_(2.0)
        v.copy_(src)
        assert fwAD.unpack_dual(base).tangent.tolist() == [0.0, 3.0, 3.0, 0.0]
        plain = torch.zeros(4, dtype=torch.float64)
        plain[1:3].copy_(src)  # a base without a tangent gets one: zeros outside the view
        assert fwAD.unpack_dual(plain).tangent.tolist() == [0.0, 3.0, 3.0, 0.0]
        buf = torch.zeros(2, 3, dtype=torch.float64)
        buf[0] = fwAD.make_dual(torch.ones(3, dtype=torch.float64), torch.full((3,), 5.0, dtype=torch.float64))
        assert fwAD.unpack_dual(buf).tangent.tolist() == [[5.0, 5.0, 5.0], [0.0, 0.0, 0.0]]
        w = base.view(2, 2)
        base.add_(src.repeat(2))  # the base's in-place update reaches the view's tangent
        assert fwAD.unpack_dual(w).tangent.tolist() == [[3.0, 6.0], [6.0, 3.0]]
