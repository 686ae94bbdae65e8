"""Ported from PyTorch's test/test_autograd.py (TestAutograd): custom ``autograd.Function`` tests."""
import pytest

from tests.support.torch_assert import assert_equal


# derivgen's copy_ is a table row (CopyBackward0) where torch hand-writes CopyBackwards: the one node name
# that differs (tests/support/parity.py maps it the same way)
_NODE_NAMES = {"CopyBackward0": "CopyBackwards"}


def graph_desc(fn):
    if fn is None:
        return "None"
    name = type(fn).__name__
    result = _NODE_NAMES.get(name, name) + "("
    next_functions = fn.next_functions
    for next_fn, _ in next_functions:
        result += graph_desc(next_fn)
        result += ", "
    if next_functions:
        result = result[:-2]
    return result + ")"


def _function_test(torch, cls):
    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5, 5, requires_grad=True)
    result = cls.apply(x, 2, y)
    go = torch.ones((), requires_grad=True)
    result.sum().backward(go, create_graph=True)
    assert_equal(x.grad, y + torch.ones(5, 5))
    assert_equal(y.grad, x + torch.ones(5, 5) * 2)
    assert x.grad.grad_fn is not None
    assert y.grad.grad_fn is not None
    return x, y


def test_function(torch):
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, tensor1, pyscalar, tensor2):
            ctx.pyscalar = pyscalar
            ctx.save_for_backward(tensor1, tensor2)
            return tensor1 + pyscalar * tensor2 + tensor1 * tensor2

        @staticmethod
        def backward(ctx, grad_output):
            var1, var2 = ctx.saved_tensors
            assert isinstance(var1, torch.Tensor)
            assert isinstance(var2, torch.Tensor)
            assert isinstance(grad_output, torch.Tensor)
            return (grad_output + grad_output * var2, None,
                    grad_output * ctx.pyscalar + grad_output * var1)

    x, y = _function_test(torch, MyFunction)
    assert graph_desc(x.grad.grad_fn).startswith("CopyBackwards(None, AddBackward0(")
    assert graph_desc(y.grad.grad_fn).startswith("CopyBackwards(None, AddBackward0(")


def test_once_differentiable(torch):
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, tensor1, pyscalar, tensor2):
            ctx.pyscalar = pyscalar
            ctx.save_for_backward(tensor1, tensor2)
            return tensor1 + pyscalar * tensor2 + tensor1 * tensor2

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, grad_output):
            assert not torch.is_grad_enabled()
            t1, t2 = ctx.saved_tensors
            return (grad_output + grad_output * t2, None,
                    grad_output * ctx.pyscalar + grad_output * t1)

    x, y = _function_test(torch, MyFunction)
    assert graph_desc(x.grad.grad_fn) == "CopyBackwards(None, Error(AccumulateGrad(), None, AccumulateGrad()))"
    assert graph_desc(y.grad.grad_fn) == "CopyBackwards(None, Error(AccumulateGrad(), None, AccumulateGrad()))"


def test_function_returns_input(torch):
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    for shape in [(1,), ()]:
        v = torch.ones(shape, requires_grad=True)
        MyFunction.apply(v).backward()
        assert_equal(v.grad, torch.full(shape, 2.0))
        with torch.no_grad():
            v.grad.zero_()
        MyFunction.apply(v.clone()).backward()
        assert_equal(v.grad, torch.full(shape, 2.0))


def test_function_returns_undefined_tensor(torch):
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return None

    x = torch.ones(1, requires_grad=True)
    MyFunction.apply(x).backward()
    assert x.grad is None
    MyFunction.apply(x ** 2).backward()
    assert x.grad is None
    MyFunction.apply(x).sum().backward()
    assert x.grad is None
    assert torch.autograd.grad(MyFunction.apply(x), x, allow_unused=True)[0] is None


def test_custom_function_exception(torch):
    class SimulateBackwardError(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            return input.clone()

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, input):
            raise Exception("Simulate error on backward pass")

    t1 = torch.rand((3, 3), requires_grad=True)
    t2 = torch.rand((3, 3), requires_grad=True)
    tmp = (t1 + t2) * (t1 + t2)
    t3 = SimulateBackwardError.apply(tmp)
    with pytest.raises(Exception, match="Simulate error on backward pass"):
        t3.sum().backward()


def test_invalid_gradients(torch):
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return torch.randn(10, dtype=torch.float)

    with pytest.raises(RuntimeError, match="expected shape"):
        input = torch.randn(5, 5, dtype=torch.float, requires_grad=True)
        MyFunction.apply(input).sum().backward()


def test_mark_non_differentiable(torch):
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            output = input > 0
            ctx.mark_non_differentiable(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            return (grad_output * 0).to(torch.double)

    x = torch.randn(5, 5, requires_grad=True)
    mask = MyFunction.apply(x)
    assert not mask.requires_grad
    y = x.masked_fill(mask, 0)
    y.sum().backward()


def test_mark_non_differentiable_mixed(torch):
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            a = input + 1
            b = input + 2
            ctx.mark_non_differentiable(a)
            return a, b

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            assert (grad_a == 0).all()
            assert (grad_b == 1).all()
            return grad_b

    x = torch.randn(5, 5, requires_grad=True)
    a, b = MyFunction.apply(x)
    assert not a.requires_grad
    assert b.requires_grad
    b.sum().backward()
    assert_equal(x.grad, torch.ones(5, 5))


def test_mark_non_differentiable_none(torch):
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            output = input.clone()
            ctx.mark_non_differentiable(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            return None

    x = torch.randn(5, 5, requires_grad=True)
    r = MyFunction.apply(x * x)
    (r * x).sum().backward()


def test_return_duplicate(torch):
    class DoubleDuplicate(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            output = x * 2
            return output, output

        @staticmethod
        def backward(ctx, grad1, grad2):
            return grad1 * 2 + grad2 * 2

    def fn(x):
        a, b = DoubleDuplicate.apply(x)
        assert a is b
        return a + b

    x = torch.randn(5, 5, dtype=torch.double, requires_grad=True)
    torch.autograd.gradcheck(fn, [x])
    torch.autograd.gradgradcheck(fn, [x])


def test_return_duplicate_inplace(torch):
    class DoubleInplace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x, x

        @staticmethod
        def backward(ctx, grad1, grad2):
            return grad1 * 2 + grad2 * 2

    def inplace_fn(x):
        a, b = DoubleInplace.apply(x.clone())
        assert a is b
        return a + b

    x = torch.randn(5, 5, dtype=torch.double, requires_grad=True)
    torch.autograd.gradcheck(inplace_fn, [x])
    torch.autograd.gradgradcheck(inplace_fn, [x])
    with pytest.raises(RuntimeError):
        DoubleInplace.apply(x)


def test_save_output_nr(torch):
    x = torch.randn(10, requires_grad=True)

    class MultiOutputFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:5], x[5:]

        @staticmethod
        def backward(ctx, *grad):
            return torch.cat(grad)

    a, b = MultiOutputFn.apply(x)
    assert b.output_nr == 1

    class TestFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, b):
            ctx.save_for_backward(b)
            return b * 2

        @staticmethod
        def backward(ctx, grad_b):
            b, = ctx.saved_tensors
            assert b.output_nr == 1

    TestFn.apply(b).sum().backward()

def test_hook_none(torch):
    class NoneGradientFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            assert ctx.needs_input_grad[0]
            assert not ctx.needs_input_grad[1]
            return x, y

        @staticmethod
        def backward(ctx, grad_x, grad_y):
            return grad_x, None

    was_called = [False]

    def hook(grad):
        assert grad is not None
        was_called[0] = True

    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5, 5)
    rx, ry = NoneGradientFunction.apply(x, y)
    rx.register_hook(hook)
    ry.register_hook(hook)
    sum(rx, ry).sum().backward()
    assert was_called[0]


def test_function_saved_tensors_after_backward(torch):
    class MyFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g

    x = torch.randn(3, requires_grad=True)
    y = MyFn.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors


def test_custom_function_no_tensors(torch):
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t1, t2, scale, t3):
            t4 = t1 + t2 * t3
            t5 = t1 * t2 + t3
            t4 *= scale
            t5 *= scale
            return scale, t4, None, True, t5, "bar", t1

        @staticmethod
        def backward(ctx, *grads):
            return (grads[0], grads[1], None, grads[2])

    t1 = 3.0
    t2 = 4.0
    t3 = 5.0
    scale = 2.0
    res = MyFunction.apply(t1, t2, scale, t3)
    assert scale == res[0]
    assert (t1 + t2 * t3) * scale == res[1]
    assert res[2] is None
    assert res[3] is True
    assert (t1 * t2 + t3) * scale == res[4]
    assert "bar" == res[5]
    assert t1 == res[6]


def test_mark_dirty_leaf_error(torch):
    class Inplace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g

    x = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        Inplace.apply(x)


def test_custom_function_return_view_in_nograd(torch):
    class Alias(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:]

        @staticmethod
        def backward(ctx, gx):
            return gx

    inp = torch.rand(2, requires_grad=True)
    with torch.no_grad():
        output = Alias.apply(inp)
    with torch.no_grad():
        expected_output = inp[:]
    assert output.requires_grad == expected_output.requires_grad


def test_custom_function_save_for_forward_is_optional(torch):
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, gO):
            x, y = ctx.saved_tensors
            return gO * y, gO * x

    a = torch.tensor(1.0, requires_grad=True)
    b = torch.tensor(2.0, requires_grad=True)
    Func.apply(a, b).backward()
    assert_equal(a.grad, torch.tensor(2.0))
    assert_equal(b.grad, torch.tensor(1.0))


def test_needs_input_grad(torch):
    seen = []

    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, c):
            seen.append(ctx.needs_input_grad)
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g, None

    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2)
    Fn.apply(a, b, 3)
    assert seen[0] == (True, False, False)


def test_function_backward_returns_too_many(torch):
    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="function FnBackward returned an incorrect number of gradients"
                                           r" \(expected 1, got 2\)"):
        Fn.apply(x).sum().backward()


def test_function_backward_extra_none_allowed(torch):
    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    x = torch.ones(2, requires_grad=True)
    Fn.apply(x).sum().backward()
    assert_equal(x.grad, torch.ones(2))


def test_set_materialize_non_diff_grads(torch):
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out0 = x.clone()
            out1 = x.clone()
            ctx.mark_non_differentiable(out1)
            ctx._materialize_non_diff_grads = False
            return out0, out1

        @staticmethod
        def backward(ctx, g0, g1):
            assert g1 is None
            return g0

    a = torch.tensor(1.0, requires_grad=True)
    out = Func.apply(a)[0]
    out.backward()


def test_dont_materialize_grads(torch):
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            assert g2 is None
            return g1

    x = torch.ones(1, requires_grad=True)
    a, b = MyFunction.apply(x)
    a.sum().backward()
    assert_equal(x.grad, torch.ones(1))


def test_materialize_grads(torch):
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            assert_equal(g2, torch.zeros(1))
            return g1 + g2

    x = torch.ones(1, requires_grad=True)
    a, b = MyFunction.apply(x)
    a.sum().backward()
    assert_equal(x.grad, torch.ones(1))


def test_gradcheck_custom_function(torch):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    x = torch.randn(4, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(Square.apply, (x,))
    assert torch.autograd.gradgradcheck(Square.apply, (x,))


def test_custom_function_local_inplace(torch):
    class MyFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp, inplace):
            view = inp.clone()[:3]
            if inplace:
                view += 2
            return view

        @staticmethod
        def backward(ctx, grad):
            return grad, None

    base = torch.rand(10, requires_grad=True)
    foo = MyFn.apply(base, False)
    assert foo.grad_fn.__class__.__name__ == "MyFnBackward"
    foo = MyFn.apply(base, True)
    assert foo.grad_fn.__class__.__name__ == "MyFnBackward"


def test_function_inplace_modify_input_dirty(torch):
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    version = b._version
    c = Double.apply(b)
    assert c is b
    assert b._version > version
    c.sum().backward()
    assert_equal(a.grad, torch.full((3,), 2.0))
    assert_equal(c, torch.full((3,), 2.0))


def test_custom_function_error_in_forward_kept_graph_clean(torch):
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            raise ValueError("forward failed")

        @staticmethod
        def backward(ctx, g):
            return g

    x = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="forward failed"):
        Bad.apply(x)
    assert torch.is_grad_enabled()


def test_saved_tensors_in_forward_saved_output(torch):
    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y

    x = torch.randn(4, requires_grad=True)
    y = Exp.apply(x)
    y.sum().backward()
    assert_equal(x.grad, x.detach().exp())


def test_function_output_requires_grad_only_if_input_does(torch):
    class Id(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    assert not Id.apply(torch.ones(2)).requires_grad
    assert Id.apply(torch.ones(2, requires_grad=True)).requires_grad
