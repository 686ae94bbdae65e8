"""``autograd.gradcheck`` / ``gradgradcheck`` and ``autograd.functional`` (vjp, jvp, jacobian, hessian,
hvp, vhp), with the same test bodies run on torch when it is installed."""
import re

import numpy as np
import pytest


def _val(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def _t(torch, arr, requires_grad=False):
    return torch.tensor(np.asarray(arr, dtype=np.float64), dtype=torch.float64, requires_grad=requires_grad)


X = np.array([[0.2, -0.4, 0.9], [1.1, 0.3, -0.8]])
W = np.array([[0.5, -1.2], [0.7, 0.1], [-0.3, 0.9]])


def _wrong_backward(torch):
    class WrongSin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.cos() * 1.01  # 1% off
    return WrongSin


# ---- gradcheck / gradgradcheck ---------------------------------------------------------------------------

def test_gradcheck_and_gradgradcheck_pass(torch):
    x = _t(torch, X, True)
    w = _t(torch, W, True)

    def f(x, w):
        return x.mm(w).tanh() * 2
    assert torch.autograd.gradcheck(f, (x, w))
    assert torch.autograd.gradgradcheck(f, (x, w))
    assert torch.autograd.gradcheck(f, (x, w), fast_mode=True)
    assert torch.autograd.gradgradcheck(f, (x, w), fast_mode=True)
    assert x.grad is None and w.grad is None


def test_gradcheck_reports_the_mismatch(torch):
    WrongSin = _wrong_backward(torch)
    x = _t(torch, X, True)
    with pytest.raises(RuntimeError, match=r"(?s)Jacobian mismatch for output 0 with respect to input 0,\nnumerical:"
                                           r"tensor\(.*\nanalytical:tensor\(") as info:
        torch.autograd.gradcheck(WrongSin.apply, (x,))
    assert type(info.value).__name__ == "GradcheckError"
    assert torch.autograd.gradcheck(WrongSin.apply, (x,), raise_exception=False) is False
    assert torch.autograd.gradcheck(WrongSin.apply, (x,), atol=0.02, rtol=0.0)  # within a loose tolerance
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(WrongSin.apply, (x,), fast_mode=True)


def test_gradcheck_report_names_the_worst_element():
    import derivgen
    WrongSin = _wrong_backward(derivgen)
    x = _t(derivgen, X, True)
    with pytest.raises(derivgen.autograd.GradcheckError) as info:
        derivgen.autograd.gradcheck(WrongSin.apply, (x,))
    msg = str(info.value)
    # the largest |cos| is at X[0, 0] = 0.2: output element [0, 0] with respect to input element [0, 0]
    assert re.search(r"The worst element is d\(output 0\)\[0, 0\] / d\(input 0\)\[0, 0\] \(input shape \[2, 3\], "
                     r"output shape \[2, 3\]\): numerical 0\.98006\d*, analytical 0\.98986\d*", msg), msg


def test_gradgradcheck_catches_a_wrong_second_derivative(torch):
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x.detach() * x  # right value, but half of the x-dependence is hidden from autograd

    x = _t(torch, X, True)
    assert torch.autograd.gradcheck(Cube.apply, (x,))
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
        torch.autograd.gradgradcheck(Cube.apply, (x,))


def _cube_with_hidden_dependence(torch):
    """x**3 with a right jvp and a backward whose value is right but hides half of its x-dependence."""
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x.detach() * x

        @staticmethod
        def jvp(ctx, t):
            x, = ctx.saved_tensors
            return 3 * x * x * t
    return Cube


def test_gradgradcheck_forward_over_reverse(torch):
    """check_fwd_over_rev differentiates the backward pass in forward mode: the tangent through it is
    compared with central differences of the first derivative, and catches what the backward hides."""
    x, w = _t(torch, X, True), _t(torch, W, True)
    assert torch.autograd.gradgradcheck(lambda a, b: a.mm(b).tanh() * 2, (x, w), check_fwd_over_rev=True)
    assert torch.autograd.gradgradcheck(lambda a, b: a.mm(b).tanh() * 2, (x, w), check_fwd_over_rev=True,
                                        check_rev_over_rev=False, check_undefined_grad=False)
    Cube = _cube_with_hidden_dependence(torch)
    assert torch.autograd.gradcheck(Cube.apply, (x,), check_forward_ad=True)
    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch for output 0 with respect "
                                           "to input 0"):
        torch.autograd.gradgradcheck(Cube.apply, (x,), check_fwd_over_rev=True, check_rev_over_rev=False,
                                     check_undefined_grad=False)
    assert not torch.autograd.gradgradcheck(Cube.apply, (x,), check_fwd_over_rev=True, check_rev_over_rev=False,
                                            check_undefined_grad=False, raise_exception=False)
    assert x.grad is None and w.grad is None
    with pytest.raises(AssertionError, match="Expected at least one of check_fwd_over_rev or check_rev_over_rev"):
        torch.autograd.gradgradcheck(Cube.apply, (x,), check_rev_over_rev=False)
    with pytest.raises(AssertionError, match="Setting check_undefined_grad=True requires check_rev_over_rev"):
        torch.autograd.gradgradcheck(Cube.apply, (x,), check_fwd_over_rev=True, check_rev_over_rev=False)


def test_forward_gradcheck_skips_outputs_marked_non_differentiable(torch):
    """native_layer_norm's mean and rstd do not require grad (and get no tangent): the forward-mode check,
    as the backward one, compares only the normalized output."""
    x = _t(torch, X, True)
    if torch.__name__ == "torch":
        def f(a):
            return torch.ops.aten.native_layer_norm(a, [3], None, None, 1e-5)
    else:
        from derivgen.generated import ops

        def f(a):
            return ops.native_layer_norm_default(a, [3], None, None, 1e-5)
    assert [o.requires_grad for o in f(x)] == [True, False, False]
    assert torch.autograd.gradcheck(f, (x,), check_forward_ad=True)


def test_gradcheck_argument_checks(torch):
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to require gradient"):
        torch.autograd.gradcheck(lambda x: x * 2, (_t(torch, X),))
    x32 = torch.tensor(X.tolist(), dtype=torch.float32, requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision floating point"):
        torch.autograd.gradcheck(lambda x: x * 2, (x32,), eps=1e-3, atol=1e-2, rtol=1e-2)


def test_gradcheck_with_non_tensor_arguments_and_several_outputs(torch):
    x = _t(torch, X, True)

    def f(x, k):
        return x * k, (x * x).sum(1)
    assert torch.autograd.gradcheck(f, (x, 3.0))
    assert torch.autograd.gradgradcheck(f, (x, 3.0))


# ---- autograd.functional --------------------------------------------------------------------------------

def _f(x, w):
    return x.mm(w).tanh()


def _jac_numpy(x, w):
    """d tanh(x @ w) / dx and / dw as (2, 2, 2, 3) and (2, 2, 3, 2) arrays."""
    s = 1 - np.tanh(x @ w) ** 2
    jx = np.zeros((2, 2, 2, 3))
    jw = np.zeros((2, 2, 3, 2))
    for i in range(2):
        for j in range(2):
            jx[i, j, i, :] = s[i, j] * w[:, j]
            jw[i, j, :, j] = s[i, j] * x[i, :]
    return jx, jw


def test_vjp_and_jvp(torch):
    F = torch.autograd.functional
    x, w = _t(torch, X), _t(torch, W)
    jx, jw = _jac_numpy(X, W)
    v = np.array([[1.0, -2.0], [0.5, 3.0]])
    out, (gx, gw) = F.vjp(_f, (x, w), _t(torch, v))
    np.testing.assert_allclose(_val(out), np.tanh(X @ W))
    np.testing.assert_allclose(_val(gx), np.einsum("ij,ijkl->kl", v, jx), rtol=1e-12)
    np.testing.assert_allclose(_val(gw), np.einsum("ij,ijkl->kl", v, jw), rtol=1e-12)
    assert not out.requires_grad and not gx.requires_grad
    u = np.array([[0.3, 0.1, -0.2], [1.0, -1.0, 0.5]])
    out, jv = F.jvp(lambda x: _f(x, w), x, _t(torch, u))
    np.testing.assert_allclose(_val(jv), np.einsum("ijkl,kl->ij", jx, u), rtol=1e-12)
    _, single = F.vjp(lambda x: (x * x).sum(), x)
    np.testing.assert_allclose(_val(single), 2 * X)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided function returns a "
                                           "single Tensor with a single element."):
        F.vjp(lambda x: x * 2, x)


def test_jacobian_shapes_and_values(torch):
    F = torch.autograd.functional
    x, w = _t(torch, X), _t(torch, W)
    jx, jw = _jac_numpy(X, W)
    J = F.jacobian(_f, (x, w))
    assert isinstance(J, tuple) and len(J) == 2
    assert tuple(J[0].shape) == (2, 2, 2, 3) and tuple(J[1].shape) == (2, 2, 3, 2)
    np.testing.assert_allclose(_val(J[0]), jx, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(_val(J[1]), jw, rtol=1e-12, atol=1e-15)
    Jx = F.jacobian(lambda x: _f(x, w), x)
    assert not isinstance(Jx, tuple) and tuple(Jx.shape) == (2, 2, 2, 3)
    Jt = F.jacobian(lambda x: (x * 2, x.sum()), x)
    assert isinstance(Jt, tuple) and tuple(Jt[0].shape) == (2, 3, 2, 3) and tuple(Jt[1].shape) == (2, 3)
    Ju = F.jacobian(lambda x, z: x * 2, (x, _t(torch, W)))
    np.testing.assert_array_equal(_val(Ju[1]), np.zeros((2, 3, 3, 2)))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 1. This "
                                           "is not allowed in strict mode."):
        F.jacobian(lambda x, z: x * 2, (x, _t(torch, W)), strict=True)


def test_hessian_hvp_vhp(torch):
    F = torch.autograd.functional
    x = _t(torch, [0.3, -0.5, 1.2])

    def f(x):
        return (x * x * x).sum() + (x[0] * x[1] * x[2])
    xs = np.array([0.3, -0.5, 1.2])
    H = np.diag(6 * xs) + np.array([[0, xs[2], xs[1]], [xs[2], 0, xs[0]], [xs[1], xs[0], 0]])
    h = F.hessian(f, x)
    assert tuple(h.shape) == (3, 3)
    np.testing.assert_allclose(_val(h), H, rtol=1e-12, atol=1e-15)
    v = np.array([1.0, -2.0, 0.5])
    out, hv = F.hvp(f, x, _t(torch, v))
    np.testing.assert_allclose(_val(out), np.sum(xs ** 3) + np.prod(xs))
    np.testing.assert_allclose(_val(hv), H @ v, rtol=1e-12)
    out, vh = F.vhp(f, x, _t(torch, v))
    np.testing.assert_allclose(_val(vh), v @ H, rtol=1e-12)
    with pytest.raises(RuntimeError, match="The function given to hessian should return a single Tensor"):
        F.hessian(lambda x: (x.sum(), x.sum()), x)
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hessian should contain a "
                                           "single element"):
        F.hessian(lambda x: x * 2, x)


def test_functional_leaves_the_callers_graph_alone_and_create_graph(torch):
    F = torch.autograd.functional
    x = _t(torch, [0.3, -0.5, 1.2], True)
    _, g = F.vjp(lambda x: (x * x).sum(), x)
    assert x.grad is None and not g.requires_grad
    _, g = F.vjp(lambda x: (x * x * x).sum(), x, create_graph=True)
    assert g.requires_grad
    g.sum().backward()  # differentiate the vjp itself: d/dx sum(3 x^2) = 6 x
    np.testing.assert_allclose(_val(x.grad), 6 * _val(x))
    h = F.hessian(lambda x: (x * x * x).sum(), x, create_graph=True)
    assert h.requires_grad
