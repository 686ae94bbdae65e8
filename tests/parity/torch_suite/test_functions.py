"""Ported from PyTorch's test/test_autograd.py (TestAutograd): custom ``autograd.Function`` tests."""
import gc
import weakref

import pytest

from tests.support.torch_assert import assert_equal


def graph_desc(fn):
    if fn is None:
        return "None"
    name = type(fn).__name__
    result = name + "("
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


def test_custom_function_mark_output_view_of_intermediate(torch):
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            out = inp.clone().view_as(inp)
            ctx.mark_dirty(out)
            return out

        @staticmethod
        def backward(ctx, gO):
            pass

    a = torch.tensor([1.0], requires_grad=True)
    a_clone = a.clone()

    with pytest.raises(RuntimeError, match="received a tensor that was not an input."):
        Func.apply(a_clone)


def test_custom_function_inplace_on_non_default_view(torch):
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            inp.add_(1)
            ctx.mark_dirty(inp)
            return inp

        @staticmethod
        def backward(ctx, gO):
            pass

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    a_clone = a.clone()
    b, c = a.split_with_sizes([1, 1], dim=0)

    with pytest.raises(RuntimeError, match="output of a function that returns multiple view"):
        Func.apply(b)


def test_custom_function_inplace_on_view_of_leaf(torch):
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            inp.add_(1)
            ctx.mark_dirty(inp)
            return inp

        @staticmethod
        def backward(ctx, gO):
            pass

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a.view_as(a)

    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        Func.apply(b)


def test_autograd_python_custom_function_inplace(torch):
    import warnings
    Function = torch.autograd.Function
    bw_called = [0]

    # I) Single output
    class MyAdder(Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, grad):
            bw_called[0] += 1
            return grad, grad

    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)

    # No extra inplace
    c = MyAdder.apply(a.clone(), b)
    c.sum().backward()
    assert bw_called[0] == 1

    # With extra inplace on the output
    bw_called[0] = 0
    c = MyAdder.apply(a.clone(), b)
    c += 2
    c.sum().backward()
    assert bw_called[0] == 1

    # The input is a view
    bw_called[0] = 0
    c = MyAdder.apply(a.clone().view_as(a), b)
    c.sum().backward()
    assert bw_called[0] == 1

    # Should not give non-inputs to mark_dirty
    class MyAdderBad(Function):
        @staticmethod
        def forward(ctx, a, b):
            c = 3 * a
            c.add_(b)
            ctx.mark_dirty(c)
            return c

        @staticmethod
        def backward(ctx, grad):
            bw_called[0] += 1
            grad = 3 * grad
            return grad, grad

    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        MyAdderBad.apply(a.clone(), b)
    assert len(w) == 1

    # II) Multiple outputs
    class MyBadAdder(Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a, a + b

        @staticmethod
        def backward(ctx, ga, gab):
            bw_called[0] += 1
            return ga + gab, ga + gab

    # No extra inplace
    bw_called[0] = 0
    c, d = MyBadAdder.apply(a.clone(), b)
    (c * d).sum().backward()
    assert bw_called[0] == 1

    # With extra inplace on the output
    bw_called[0] = 0
    c, d = MyBadAdder.apply(a.clone(), b)
    c += 2
    (c * d).sum().backward()
    assert bw_called[0] == 1

    # The input is a view
    inplace_on_view_err = "your Function modifies inplace an input that is a view of another Tensor"
    with pytest.raises(RuntimeError, match=inplace_on_view_err):
        c, d = MyBadAdder.apply(a.clone().view_as(a), b)

    # III) Inplace + other op
    class MyOutPlaceAdder(Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a.clone(), a + b

        @staticmethod
        def backward(ctx, ga, gab):
            bw_called[0] += 1
            return ga + gab, ga + 2 * gab

    # We don't reuse the input
    def fn(a, b):
        orig_a = a.clone().view_as(a)
        c, d = MyOutPlaceAdder.apply(orig_a, b)
        return (c * d).sum()

    bad_mark_dirty_err = "Some elements marked as dirty during the forward method were not returned as output."
    with pytest.raises(RuntimeError, match=bad_mark_dirty_err):
        fn(a, b)


def test_custom_function_saving_mutated_view_no_leak(torch):
    import weakref

    class Test(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            pass

    def scope():
        x = torch.tensor(1.0, requires_grad=True).clone()
        x = x.view_as(x)
        Test.apply(x)
        return weakref.ref(x)

    ref = scope()
    import gc
    gc.collect()  # derivgen's graph holds reference cycles that only the collector frees
    assert ref() is None


def test_custom_function_non_tensor_inputs_outputs(torch):
    import random
    Function = torch.autograd.Function
    once_differentiable = torch.autograd.function.once_differentiable

    class MyFunction(Function):
        @staticmethod
        def forward(ctx, t1, t2, scale, t3):
            t4 = t1 + t2 * t3
            t5 = t1 * t2 + t3
            t4 *= scale
            t5 *= scale

            # Save scale
            ctx.scale = scale
            ctx.save_for_backward(t1, t2, t3)
            return scale, t4, None, True, t5, "bar", t1

        @staticmethod
        @once_differentiable
        def backward(ctx, *grads):
            # Verify grads
            assert 7 == len(grads)
            assert grads[0] is None
            assert grads[2] is None
            assert grads[3] is None
            assert grads[5] is None

            scale = ctx.scale
            var1, var2, var3 = ctx.saved_tensors
            return (
                grads[1] * scale + grads[4] * var2 * scale + grads[6],
                grads[1] * var3 * scale + grads[4] * var1 * scale,
                None,
                grads[1] * var2 * scale + grads[4] * scale,
            )

    t1 = torch.rand(10, dtype=torch.double, requires_grad=True)
    t2 = torch.rand(10, dtype=torch.double, requires_grad=True)
    t3 = torch.rand(10, dtype=torch.double)
    scale = random.randint(0, 10)
    res = MyFunction.apply(t1, t2, scale, t3)
    assert scale == res[0]
    assert_equal((t1 + t2 * t3) * scale, res[1])
    assert res[2] is None
    assert res[3] is True
    assert_equal((t1 * t2 + t3) * scale, res[4])
    assert "bar" == res[5]
    assert_equal(t1, res[6])

    # Validate running backward.
    torch.autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])
    assert t1.grad is not None
    assert t2.grad is not None
    assert t3.grad is None

    # Test gradcheck
    def foo(t1, t2, t3):
        res = MyFunction.apply(t1, t2, scale, t3)
        return res[1], res[4], res[6]

    torch.autograd.gradcheck(foo, (t1, t2, t3))


def test_autograd_multiple_views_python(torch):
    bw_called = [0]

    class ComplexView(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, idx):
            res = a.narrow(0, idx, 1)
            res = a.select(0, idx)
            ctx.save_for_backward(a)
            ctx.idx = idx
            return res

        @staticmethod
        def backward(ctx, grad):
            bw_called[0] += 1
            (a,) = ctx.saved_tensors
            res = torch.zeros_like(a)
            res.select(0, ctx.idx).copy_(grad)
            return res, None

    a = torch.ones(2, requires_grad=True)
    idx = 1

    bw_called[0] = 0
    out = ComplexView.apply(a.clone(), idx)
    out.sum().backward()
    assert bw_called[0] == 1

    out = ComplexView.apply(a.clone(), idx)
    with pytest.raises(RuntimeError, match="Output 0 of ComplexView is a view and is being modified inplace"):
        out += 1


def test_inplace_not_requires_grad(torch):
    class MyFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.view_as(inp)

        @staticmethod
        def backward(ctx, grad):
            return grad

    # Original Tensor does not require grad
    a = torch.rand(1, 2)

    # Tensor being written does require grad
    b = torch.rand(1, requires_grad=True)

    # Take an invalid view on 'a' that should raise an error (warns during deprecation)
    view_a = MyFn.apply(a)

    with pytest.raises(RuntimeError, match="This view was created inside a custom Function"):
        view_a += b

    # Extra test for copy_ that is a manual implementation and could be easily
    # forgotten when the codegen is updated (warns during deprecation)
    a = torch.rand(1, 2)
    b = torch.rand(1, requires_grad=True)
    view_a = MyFn.apply(a)

    with pytest.raises(RuntimeError, match="This view was created inside a custom Function"):
        view_a.copy_(b)

    # Functions that should throw must properly throw
    a = torch.rand(1, 2)
    b = torch.rand(1, requires_grad=True)
    view_a = a.unbind()[0]
    with pytest.raises(RuntimeError, match="This view is the output of a function that returns multiple views."):
        view_a.copy_(b)

    # Sanity check that views that should work still work
    a = torch.rand(1, 2)
    b = torch.rand(1, requires_grad=True)
    a.select(1, 0).copy_(b)


def test_custom_function_vmap_defaults(torch):
    class MySquare(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, gO):
            (x,) = ctx.saved_tensors
            return gO * 2 * x

    assert not MySquare.generate_vmap_rule
    assert hasattr(MySquare, "vmap")


def test_custom_function_setup_context_simple(torch):
    class MySquare(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, gO):
            (x,) = ctx.saved_tensors
            return gO * 2 * x

    x = torch.randn([], requires_grad=True)
    y = MySquare.apply(x)
    (gx,) = torch.autograd.grad(y, x)
    assert_equal(gx, 2 * x)


def test_custom_function_setup_context_multi_output(torch):
    class MySquare(torch.autograd.Function):
        @staticmethod
        def forward(x):
            two_x = x.item() * 2
            return x**2, two_x

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            _, two_x = output
            ctx.two_x = two_x

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, gO, _):
            return gO * ctx.two_x

    x = torch.randn([], requires_grad=True)
    y, _ = MySquare.apply(x)
    (gx,) = torch.autograd.grad(y, x)
    assert_equal(gx, 2 * x)


def test_custom_function_setup_context_multi_input(torch):
    class MyReshape(torch.autograd.Function):
        @staticmethod
        def forward(x, shape, scale_forward, scale_backward):
            return x.reshape(shape) * scale_forward

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, shape, scale_forward, scale_backward = inputs
            ctx.scale_backward = scale_backward
            ctx.x_shape = x.shape

        @staticmethod
        def backward(ctx, gO):
            return gO.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

    class MyReshapeRef(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, shape, scale_forward, scale_backward):
            ctx.scale_backward = scale_backward
            ctx.x_shape = x.shape
            return x.reshape(shape) * scale_forward

        @staticmethod
        def backward(ctx, gO):
            return gO.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

    def test(x, shape, scale_forward, scale_backward):
        y = MyReshape.apply(x, shape, scale_forward, scale_backward).sum()
        (gx,) = torch.autograd.grad(y, x)
        y_expected = MyReshapeRef.apply(x, shape, scale_forward, scale_backward).sum()
        (gx_expected,) = torch.autograd.grad(y_expected, x)
        assert_equal(y_expected, y)
        assert_equal(gx_expected, gx)

    test(torch.randn(24, requires_grad=True), (3, 8), 7, 11)
    test(torch.randn(2, 3, 4, requires_grad=True), (6, 4), -1, 2)


def test_clear_saved_tensors_on_access(torch):
    class MyFn(torch.autograd.Function):
        clear_saved_tensors_on_access = True

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            ref = weakref.ref(x)
            del x
            assert ref() is None
            return grad_output

    x = torch.randn(3, requires_grad=True)
    y = MyFn.apply(x.clone())
    y.sum().backward()


def test_clear_saved_tensors_on_access_double_access_error(torch):
    class MyFn(torch.autograd.Function):
        clear_saved_tensors_on_access = True

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def backward(ctx, grad_output):
            _ = ctx.saved_tensors
            _ = ctx.saved_tensors
            return grad_output

    x = torch.randn(3, requires_grad=True)
    y = MyFn.apply(x)
    with pytest.raises(RuntimeError, match="can only be accessed once"):
        y.sum().backward()


def test_custom_autograd_repeated_grad_grad(torch):
    def mult1(x):
        return x.prod(dim=-1).prod(dim=-1)

    class Mult(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = mult1(x)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return (grad_output * y)[:, None, None] / x

    mult2 = Mult.apply

    def check_gradgrad_repeated(x, y):
        (gy,) = torch.autograd.grad(y[0], x, create_graph=True)
        (ggy_1,) = torch.autograd.grad(gy[0, 0, 0], x, retain_graph=True)
        (gy,) = torch.autograd.grad(y[0], x, create_graph=True)
        (ggy_2,) = torch.autograd.grad(gy[0, 0, 0], x, retain_graph=True)
        assert_equal(ggy_1[0, 0, 1], ggy_2[0, 0, 1])

    x = torch.ones(2, 4, 4).requires_grad_()
    check_gradgrad_repeated(x, mult1(x))
    check_gradgrad_repeated(x, mult2(x))


def test_custom_autograd_no_early_free(torch):
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x**2
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            x, _ = ctx.saved_tensors
            return grad_output * 2 * x

    class Double2(Double):
        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return grad_output * 2 * y / x

    double = Double.apply
    double2 = Double2.apply
    x = torch.tensor(2).double().requires_grad_()
    assert torch.autograd.gradcheck(double, x)
    assert torch.autograd.gradgradcheck(double, x)
    assert torch.autograd.gradcheck(double2, x)
    assert torch.autograd.gradgradcheck(double2, x)

    y = double(x)
    torch.autograd.grad(y, x, create_graph=True)
    torch.autograd.grad(y, x)

    y = double2(x)
    torch.autograd.grad(y, x, create_graph=True)
    torch.autograd.grad(y, x)


def test_return_leaf(torch):
    class Identity(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a, a + b

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            return grad_a + grad_b, grad_b

    hook_called = [False]
    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5, 5, requires_grad=True)
    q, p = Identity.apply(x, y)

    def hook(grad):
        hook_called[0] = True
        assert_equal(grad, torch.ones(5, 5))

    q.register_hook(hook)
    (q + p + x).sum().backward()
    assert_equal(x.grad, torch.ones(5, 5) * 3)
    assert_equal(y.grad, torch.ones(5, 5))
    assert hook_called[0]


def test_return_leaf_inplace(torch):
    class Inplace(torch.autograd.function.InplaceFunction):
        @staticmethod
        def forward(ctx, a, b):
            ctx.mark_dirty(a)
            return a.add_(b), b + 2

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            return grad_a, grad_a + grad_b

    x = torch.randn(5, 5)
    y = torch.randn(5, 5, requires_grad=True)
    q, p = Inplace.apply(x, y)
    assert q is x
    assert q.grad_fn.__class__ is Inplace._backward_cls
    assert q.requires_grad
    q.sum().backward()
    assert_equal(y.grad, torch.ones(5, 5))


def test_save_none_for_backward(torch):
    class MyFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(None, input, None)
            return input * input

        @staticmethod
        def backward(ctx, grad_output):
            n1, input, n2 = ctx.saved_tensors
            assert n1 is None
            assert n2 is None
            return 2 * input * grad_output

    x = torch.randn(5, 5, requires_grad=True)
    y = MyFn.apply(x)
    y.sum().backward()
    assert_equal(x.grad, 2 * x)


def test_too_many_grads(torch):
    class MyFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            return input

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, None, None

    x = torch.randn(5, 5, requires_grad=True)
    y = MyFn.apply(x)
    y.sum().backward()
    assert_equal(x.grad, torch.ones_like(x))


def test_dep_nograd(torch):
    class F1(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            out = torch.randn(input.size())
            ctx.mark_non_differentiable(out)
            return input, out

        @staticmethod
        def backward(ctx, grad_output, ignored):
            return grad_output

    class F2(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, ignored):
            return input

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, None

    x = torch.randn(5, requires_grad=True)
    a, b = F1.apply(x)
    b = b + 1
    assert a.requires_grad
    assert not b.requires_grad
    c = F2.apply(a, b)
    c.backward(torch.ones(c.size()))
    assert_equal(x.grad, torch.ones(x.size()))


def test_setup_context_when_forward_has_default_args(torch):
    class PowFunction(torch.autograd.Function):
        @staticmethod
        def forward(x, y=3):
            return torch.pow(x, y)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x)
            ctx.y = y

        @staticmethod
        def backward(ctx, gO):
            (x,) = ctx.saved_tensors
            y = ctx.y
            return gO * y * torch.pow(x, y - 1), None

    class PowFunctionWithClassmethod(torch.autograd.Function):
        @classmethod
        def forward(cls, x, y=3):
            return torch.pow(x, y)

        @classmethod
        def setup_context(cls, ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x)
            ctx.y = y

        @classmethod
        def backward(cls, ctx, gO):
            (x,) = ctx.saved_tensors
            y = ctx.y
            return gO * y * torch.pow(x, y - 1), None

    x = torch.tensor(2.0, requires_grad=True)
    y = torch.tensor(8.0)
    y_expected = torch.tensor(12.0)
    y1 = PowFunction.apply(x)
    (y1_expected,) = torch.autograd.grad(y1, x)
    y2 = PowFunctionWithClassmethod.apply(x)
    (y2_expected,) = torch.autograd.grad(y2, x)
    assert_equal(y, y1)
    assert_equal(y_expected, y1_expected)
    assert_equal(y, y2)
    assert_equal(y_expected, y2_expected)


def test_custom_function_cycle(torch):
    class MyFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, metadata):
            x = x.clone()
            ctx.meta = metadata
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, gO):
            (x,) = ctx.saved_tensors
            assert_equal(x, torch.tensor(3.14))
            assert_equal(ctx.meta["foo"], torch.tensor(3.14))
            return gO * x, None

    def get_refs(with_backward):
        a = torch.tensor(3.14, requires_grad=True)
        metadata = {}
        out = MyFn.apply(a, metadata)
        metadata["foo"] = out
        if with_backward:
            out.sum().backward()
            assert_equal(a.grad, a)
        return weakref.ref(out)

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        ref = get_refs(False)
        assert ref() is not None
    finally:
        if was_enabled:
            gc.enable()
    gc.collect()
    assert ref() is None

    gc.disable()
    try:
        ref = get_refs(True)
        assert ref() is not None
    finally:
        if was_enabled:
            gc.enable()
    gc.collect()
    assert ref() is None
