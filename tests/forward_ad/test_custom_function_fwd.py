"""Forward mode through custom ``autograd.Function``s: the forward runs without tangent tracking, the
outputs' tangents come from ``jvp`` (with ``ctx.save_for_forward``, also from ``setup_context``), and
torch's checks on what ``jvp`` returns. One body runs on derivgen and on PyTorch (the oracle)."""
import numpy as np
import pytest


def _x(torch, *shape, seed=0):
    return torch.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=torch.float64)


def _np(t):
    return np.asarray(t.tolist())


def test_forward_sees_no_tangents(torch):
    """Inside forward and jvp, dual inputs look plain and ops make no tangents (torch's forward grad mode
    is off there); the output's tangent is jvp's."""
    fwAD = torch.autograd.forward_ad
    seen = {}

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen["input"] = fwAD.unpack_dual(x).tangent
            seen["op"] = fwAD.unpack_dual(x * 3).tangent
            inner = fwAD.make_dual(x.detach(), torch.ones_like(x))
            seen["made"] = fwAD.unpack_dual(inner * 3).tangent
            ctx.save_for_forward(x)
            return x * 2

        @staticmethod
        def jvp(ctx, x_t):
            x, = ctx.saved_tensors
            seen["saved"] = fwAD.unpack_dual(x).tangent
            return x_t * 2

    x, t = _x(torch, 3, seed=1), _x(torch, 3, seed=2)
    with fwAD.dual_level():
        out = Double.apply(fwAD.make_dual(x, t))
        np.testing.assert_allclose(_np(fwAD.unpack_dual(out).tangent), 2 * _np(t))
        assert fwAD.unpack_dual(Double.apply(x)).tangent is None
    assert seen == {"input": None, "op": None, "made": None, "saved": None}


def test_tangent_made_in_forward(torch):
    """A dual made inside forward keeps its tangent when no input has one; with a dual input the jvp's
    tangent cannot replace it."""
    fwAD = torch.autograd.forward_ad

    class MakesDual(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return fwAD.make_dual(x.clone(), torch.full_like(x, 7.0))

        @staticmethod
        def jvp(ctx, x_t):
            return x_t * 5

    x, t = _x(torch, 3, seed=3), _x(torch, 3, seed=4)
    with fwAD.dual_level():
        np.testing.assert_allclose(_np(fwAD.unpack_dual(MakesDual.apply(x)).tangent), np.full(3, 7.0))
        with pytest.raises(RuntimeError, match="Only inplace operations can re-set the forward grad of a Tensor "
                                               "that already has one."):
            MakesDual.apply(fwAD.make_dual(x, t))


def test_setup_context_and_save_for_forward(torch):
    fwAD = torch.autograd.forward_ad

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.k = k
            ctx.save_for_forward(x, output)
            ctx.save_for_backward(x)

        @staticmethod
        def jvp(ctx, x_t, k_t):
            assert k_t is None
            x, out = ctx.saved_tensors
            return x_t * ctx.k + 0 * out

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * ctx.k, None

    x, t = _x(torch, 3, seed=5), _x(torch, 3, seed=6)
    with fwAD.dual_level():
        leaf = x.clone().requires_grad_()
        out = Scale.apply(fwAD.make_dual(leaf, t), 3.0)
        np.testing.assert_allclose(_np(fwAD.unpack_dual(out).tangent), 3 * _np(t))
        out.sum().backward()  # backward reads save_for_backward's tensors, jvp read save_for_forward's
    np.testing.assert_allclose(_np(leaf.grad), np.full(3, 3.0))


def test_missing_tangent_is_zeros(torch):
    fwAD = torch.autograd.forward_ad

    class Mul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_forward(x, y)
            return x * y

        @staticmethod
        def jvp(ctx, x_t, y_t):
            x, y = ctx.saved_tensors
            assert _np(y_t).tolist() == [0.0, 0.0, 0.0]
            return x_t * y + x * y_t

    x, y, t = _x(torch, 3, seed=7), _x(torch, 3, seed=8), _x(torch, 3, seed=9)
    with fwAD.dual_level():
        out = Mul.apply(fwAD.make_dual(x, t), y)
        np.testing.assert_allclose(_np(fwAD.unpack_dual(out).tangent), _np(t) * _np(y))


def test_inplace_function(torch):
    """mark_dirty: the jvp must modify the input's tangent in place and return it as-is."""
    fwAD = torch.autograd.forward_ad

    def make(jvp):
        class Inplace(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x
        Inplace.jvp = staticmethod(jvp)
        return Inplace

    def in_place(ctx, t):
        t.mul_(2)
        return t

    x, t = _x(torch, 3, seed=10), _x(torch, 3, seed=11)
    with fwAD.dual_level():
        d = fwAD.make_dual(x.clone(), t.clone())
        out = make(in_place).apply(d)
        np.testing.assert_allclose(_np(fwAD.unpack_dual(out).tangent), 2 * _np(t))
        np.testing.assert_allclose(_np(fwAD.unpack_dual(d).tangent), 2 * _np(t))
        with pytest.raises(RuntimeError, match="An inplace custom Function is not modifying the forward mode "
                                               "gradients inplace."):
            make(lambda ctx, t: t * 2).apply(fwAD.make_dual(x.clone(), t.clone()))

        def modified_copy(ctx, t):
            t.mul_(2)
            out = t.clone()
            out.add_(0)
            return out
        with pytest.raises(RuntimeError, match="An inplace custom Function is not returning the forward mode "
                                               "gradients as-is."):
            make(modified_copy).apply(fwAD.make_dual(x.clone(), t.clone()))


def test_view_outputs(torch):
    fwAD = torch.autograd.forward_ad

    def make(fwd, jvp):
        class F(torch.autograd.Function):
            forward = staticmethod(fwd)
        F.jvp = staticmethod(jvp)
        return F

    x, t = _x(torch, 2, seed=12), _x(torch, 2, seed=13)
    with fwAD.dual_level():
        d = fwAD.make_dual(x.clone(), t)
        out = make(lambda ctx, x: x.view(2, 1), lambda ctx, t: t.view(2, 1)).apply(d)
        np.testing.assert_allclose(_np(fwAD.unpack_dual(out).tangent), _np(t).reshape(2, 1))
        with pytest.raises(RuntimeError, match="A custom Function is returning a view but the jvp is not returning "
                                               "a view of the given grad input."):
            make(lambda ctx, x: x.view(2, 1), lambda ctx, t: t.clone().view(2, 1)).apply(d)
        with pytest.raises(RuntimeError, match=r"A custom Function's forward is returning a view \(or an input "
                                               r"as-is\) but the jvp is not returning a view."):
            make(lambda ctx, x: x, lambda ctx, t: t).apply(d)
        same = make(lambda ctx, x: x, lambda ctx, t: t.view_as(t)).apply(d)
        np.testing.assert_allclose(_np(fwAD.unpack_dual(same).tangent), _np(t))


def test_jvp_result_errors(torch):
    fwAD = torch.autograd.forward_ad

    class TwoOut(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def jvp(ctx, t):
            return t

    class IndexOut(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            i = torch.tensor([1, 2])
            ctx.mark_non_differentiable(i)
            return x * 2, i

        @staticmethod
        def jvp(ctx, t):
            return t * 2, t

    class SavesNumber(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x, 3)
            return x * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    x, t = _x(torch, 2, seed=14), _x(torch, 2, seed=15)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        with pytest.raises(RuntimeError, match=r"Function's jvp returned an invalid number of forward gradients "
                                               r"\(expected 2 but got 1\)"):
            TwoOut.apply(d)
        with pytest.raises(RuntimeError, match="Function's jvp returned a gradient at position 1, but  the "
                                               "corresponding forward output is not a differentiable Tensor."):
            IndexOut.apply(d)
        with pytest.raises(AssertionError, match="save_for_forward expects all arguments to be tensors; you should "
                                                 "save non-tensors as attributes on ctx."):
            SavesNumber.apply(d)
