"""``autograd.Function``: custom forward/backward with ctx, as in torch (the same bodies run on torch)."""
import re

import numpy as np
import pytest


def _val(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def _x(torch, values=(0.5, -1.0, 2.0), requires_grad=True):
    return torch.tensor(list(values), dtype=torch.float64, requires_grad=requires_grad)


def make_exp(torch):
    class MyExp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            y, = ctx.saved_tensors
            return grad * y
    return MyExp


def make_scale(torch):
    class Scale(torch.autograd.Function):
        """Non-tensor argument; saves an input; differentiable backward."""
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            ctx.save_for_backward(x)
            return x * x * k

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 2 * ctx.k * x, None
    return Scale


def test_apply_forward_backward_and_node_shape(torch):
    MyExp = make_exp(torch)
    x = _x(torch)
    y = MyExp.apply(x)
    node = y.grad_fn
    assert type(node).__name__ == "MyExpBackward" and node.name() == "MyExpBackward"  # no index
    assert isinstance(node, torch.autograd.graph.Node)
    assert node.next_functions[0][0].name().endswith("::autograd::AccumulateGrad")
    assert node.next_functions[0][0].variable is x and len(node.next_functions) == 1
    np.testing.assert_allclose(_val(y), np.exp(_val(x)))
    y.sum().backward()
    np.testing.assert_allclose(_val(x.grad), np.exp(_val(x)))


def test_sequence_number_is_taken_before_forward(torch):
    MyExp = make_exp(torch)
    x = _x(torch)
    a = x * 2
    y = MyExp.apply(a)
    b = y * 3
    assert y.grad_fn._sequence_nr() == a.grad_fn._sequence_nr() + 1
    assert b.grad_fn._sequence_nr() == y.grad_fn._sequence_nr() + 1
    n = torch.autograd._get_sequence_nr()
    MyExp.apply(_x(torch, requires_grad=False))  # a Function takes a number even when nothing requires grad
    assert torch.autograd._get_sequence_nr() == n + 1


def test_ctx_attributes_non_tensor_args_and_needs_input_grad(torch):
    seen = []

    class Lin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, k):
            seen.append(ctx.needs_input_grad)
            ctx.save_for_backward(x, w)
            ctx.k = k
            return x * w * k

        @staticmethod
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            gx = grad * w * ctx.k if ctx.needs_input_grad[0] else None
            gw = grad * x * ctx.k if ctx.needs_input_grad[1] else None
            return gx, gw, None

    x = _x(torch)
    c = _x(torch, (1.0, 2.0, 3.0), requires_grad=False)
    y = Lin.apply(x, c, 2.0)
    assert seen == [(True, False, False)]
    assert len(y.grad_fn.next_functions) == 2 and y.grad_fn.next_functions[1] == (None, 0)
    y.sum().backward()
    np.testing.assert_allclose(_val(x.grad), 2.0 * _val(c))


def test_backward_result_count_and_type_errors(torch):
    x = _x(torch)

    def fn(backward_result):
        class Bad(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, grad):
                return backward_result(grad)
        return Bad

    with pytest.raises(RuntimeError, match=re.escape("function BadBackward returned an incorrect number of gradients "
                                                     "(expected 2, got 1)")):
        fn(lambda g: g).apply(x, 2.0).sum().backward()
    with pytest.raises(RuntimeError, match=re.escape("function BadBackward returned an incorrect number of gradients "
                                                     "(expected 2, got 3)")):
        fn(lambda g: (g, None, g)).apply(x, 2.0).sum().backward()
    with pytest.raises(RuntimeError, match=re.escape("function BadBackward returned a gradient different than None at "
                                                     "position 2, but the corresponding forward input was not a "
                                                     "Variable")):
        fn(lambda g: (g, g)).apply(x, 2.0).sum().backward()
    with pytest.raises(RuntimeError, match=re.escape("expected Variable or None (got int)")):
        fn(lambda g: (3, None)).apply(x, 2.0).sum().backward()
    with pytest.raises(RuntimeError, match=re.escape("Function BadBackward returned an invalid gradient at index 0 - "
                                                     "got [4] but expected shape compatible with [3]")):
        fn(lambda g: (torch.ones(4, dtype=torch.float64), None)).apply(x, 2.0).sum().backward()
    # extra trailing Nones are fine
    x.grad = None
    fn(lambda g: (g, None, None)).apply(x, 2.0).sum().backward()
    np.testing.assert_allclose(_val(x.grad), [1.0, 1.0, 1.0])


def test_saved_tensors_are_version_checked_and_freed(torch):
    Scale = make_scale(torch)
    x = _x(torch)
    a = x * 1
    y = Scale.apply(a, 3.0)
    with torch.no_grad():
        a.add_(1)
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient computation has been modified "
                                           r"by an inplace operation: \[\w+\.DoubleTensor \[3\]\], which is output 0 "
                                           r"of Mul, is at version 1; expected version 0 instead"):
        y.sum().backward()

    y = Scale.apply(x, 3.0)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()
    y = Scale.apply(x, 3.0)
    y.sum().backward(retain_graph=True)
    assert y.grad_fn.saved_tensors[0] is x  # a saved input comes back as the same tensor


def test_saved_output_rejoins_the_graph(torch):
    MyExp = make_exp(torch)
    x = _x(torch)
    y = MyExp.apply(x)
    (saved,) = y.grad_fn.saved_tensors
    assert saved.grad_fn is y.grad_fn
    np.testing.assert_allclose(_val(saved), _val(y))


def test_double_backward_through_a_differentiable_backward(torch):
    MyExp = make_exp(torch)
    Scale = make_scale(torch)
    x = _x(torch)
    g, = torch.autograd.grad(MyExp.apply(x).sum(), x, create_graph=True)
    assert g.requires_grad
    g2, = torch.autograd.grad(g.sum(), x, create_graph=True)
    g3, = torch.autograd.grad(g2.sum(), x)
    np.testing.assert_allclose(_val(g3), np.exp(_val(x)))
    g, = torch.autograd.grad(Scale.apply(x, 1.5).sum(), x, create_graph=True)
    h, = torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(_val(h), [3.0, 3.0, 3.0])


def test_backward_sees_grad_mode(torch):
    modes = []

    class P(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            modes.append(("forward", torch.is_grad_enabled()))
            return x * 2

        @staticmethod
        def backward(ctx, g):
            modes.append(("backward", torch.is_grad_enabled()))
            return g * 2
    x = _x(torch)
    P.apply(x).sum().backward()
    torch.autograd.grad(P.apply(x).sum(), x, create_graph=True)
    assert modes == [("forward", False), ("backward", False), ("forward", False), ("backward", True)]


def test_no_graph_when_nothing_requires_grad_or_under_no_grad(torch):
    MyExp = make_exp(torch)
    y = MyExp.apply(_x(torch, requires_grad=False))
    assert y.grad_fn is None and not y.requires_grad
    x = _x(torch)
    with torch.no_grad():
        y = MyExp.apply(x)
    assert y.grad_fn is None and not y.requires_grad


def test_several_outputs_non_differentiable_and_materialized_grads(torch):
    seen = []

    class Multi(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            count = (x > 0).long().sum()
            ctx.mark_non_differentiable(count)
            return x * 2, x * 3, count, "tag"

        @staticmethod
        def backward(ctx, g2, g3, gcount, gtag):
            seen.append((_val(g2), _val(g3), gcount, gtag))
            return g2 * 2 + g3 * 3

    x = _x(torch)
    a, b, count, tag = Multi.apply(x)
    assert tag == "tag"
    assert a.grad_fn is b.grad_fn and (a.output_nr, b.output_nr) == (0, 1)
    assert count.grad_fn is None and not count.requires_grad and int(count) == 2
    a.sum().backward()
    g2, g3, gcount, gtag = seen[0]
    np.testing.assert_allclose(g2, [1.0, 1.0, 1.0])
    np.testing.assert_allclose(g3, [0.0, 0.0, 0.0])  # materialized: the unused output's gradient is zeros
    assert int(gcount) == 0 and gtag is None
    np.testing.assert_allclose(_val(x.grad), [2.0, 2.0, 2.0])


def test_set_materialize_grads_false_passes_none(torch):
    seen = []

    class Two(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            seen.append(gb)
            return ga * 2 if gb is None else ga * 2 + gb * 3

    x = _x(torch)
    a, b = Two.apply(x)
    a.sum().backward()
    assert seen == [None]
    np.testing.assert_allclose(_val(x.grad), [2.0, 2.0, 2.0])


def test_mark_dirty(torch):
    class AddOne(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    leaf = _x(torch)
    y = leaf.clone()
    out = AddOne.apply(y)
    assert out is y and y._version == 2  # add_ and mark_dirty each bump the version
    assert type(y.grad_fn).__name__ == "AddOneBackward"
    assert y.grad_fn.next_functions[0][0].name() == "CloneBackward0"
    (y * y).sum().backward()
    np.testing.assert_allclose(_val(leaf.grad), 2 * (_val(leaf) + 1))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in an in-place operation."):
        AddOne.apply(_x(torch))


def test_returning_an_input_gives_a_new_tensor(torch):
    class Ident(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = _x(torch)
    y = Ident.apply(x)
    assert y is not x and y.grad_fn is not None and x.grad_fn is None
    y.sum().backward()
    np.testing.assert_allclose(_val(x.grad), [5.0, 5.0, 5.0])


def test_once_differentiable(torch):
    class Sq(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g):
            assert not torch.is_grad_enabled()
            x, = ctx.saved_tensors
            return 2 * x * g

    x = _x(torch)
    Sq.apply(x).sum().backward()
    np.testing.assert_allclose(_val(x.grad), 2 * _val(x))
    v = torch.ones(3, dtype=torch.float64, requires_grad=True)
    g, = torch.autograd.grad(Sq.apply(x), x, v, create_graph=True)
    np.testing.assert_allclose(_val(g), 2 * _val(x))
    assert g.grad_fn.name().endswith("::autograd::Error") and type(g.grad_fn).__name__ == "Error"
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        g.sum().backward()


def test_setup_context_style(torch):
    class Mul(torch.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x

    x = _x(torch)
    w = _x(torch, (2.0, 3.0, 4.0))
    Mul.apply(x, w).sum().backward()
    np.testing.assert_allclose(_val(x.grad), _val(w))
    np.testing.assert_allclose(_val(w.grad), _val(x))


def test_function_node_hooks_and_gradcheck(torch):
    MyExp = make_exp(torch)
    x = _x(torch)
    y = MyExp.apply(x)
    seen = []
    y.grad_fn.register_prehook(lambda go: seen.append("pre"))
    y.grad_fn.register_hook(lambda gi, go: seen.append("post"))
    y.sum().backward()
    assert seen == ["pre", "post"]
    assert torch.autograd.gradcheck(MyExp.apply, (_x(torch),))
    assert torch.autograd.gradgradcheck(MyExp.apply, (_x(torch),))


def test_function_must_not_be_instantiated(torch):
    MyExp = make_exp(torch)
    with pytest.warns(DeprecationWarning):
        inst = MyExp()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward method is deprecated"):
        inst(_x(torch))


def test_backward_returning_a_tensor_it_does_not_own(torch):
    """A backward may return a tensor that lives elsewhere (a constant, a saved input): accumulating
    gradients must never write into it."""
    w = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)

    class ScaleBy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * w

        @staticmethod
        def backward(ctx, g):
            return w

    x = _x(torch)
    ScaleBy.apply(x).sum().backward()
    ScaleBy.apply(x).sum().backward()
    y = x * 1
    (ScaleBy.apply(y) + ScaleBy.apply(y)).sum().backward()
    np.testing.assert_allclose(_val(x.grad), [4.0, 8.0, 12.0])
    np.testing.assert_allclose(_val(w), [1.0, 2.0, 3.0])
