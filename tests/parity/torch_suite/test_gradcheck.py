"""Ported from PyTorch's test/test_autograd.py (TestAutograd): gradcheck / gradgradcheck behaviour."""
import pytest



def test_gradcheck_nondeterministic(torch):
    class NonDetFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, jitter=0.0):
            ctx._jitter = jitter
            return x

        @staticmethod
        def backward(ctx, grad_out):
            return NonDetFunc.apply(grad_out, ctx._jitter) * (1 + torch.rand_like(grad_out) * ctx._jitter), None

    def check(fast_mode):
        inp = torch.randn(5, 5, dtype=torch.double, requires_grad=True)
        torch.autograd.gradcheck(lambda x: NonDetFunc.apply(x, 0.0), inp, check_batched_grad=False,
                                 fast_mode=fast_mode)
        with pytest.raises(RuntimeError, match="Backward is not reentrant"):
            torch.autograd.gradcheck(lambda x: NonDetFunc.apply(x, 1e-6), inp, check_batched_grad=False,
                                     fast_mode=fast_mode)
        with pytest.raises(RuntimeError, match="Backward is not reentrant"):
            torch.autograd.gradgradcheck(lambda x: NonDetFunc.apply(x, 1e-12), inp, check_batched_grad=False,
                                         fast_mode=fast_mode)
        torch.autograd.gradcheck(lambda x: NonDetFunc.apply(x, 0.0), inp, nondet_tol=1e-5,
                                 check_batched_grad=False, fast_mode=fast_mode)
        torch.autograd.gradcheck(lambda x: NonDetFunc.apply(x, 1e-6), inp, nondet_tol=1e-5,
                                 check_batched_grad=False, fast_mode=fast_mode)
        torch.autograd.gradgradcheck(lambda x: NonDetFunc.apply(x, 1e-12), inp, nondet_tol=1e-5,
                                     check_batched_grad=False, fast_mode=fast_mode)

    check(fast_mode=True)
    check(fast_mode=False)


def test_gradcheck_test_outputs(torch):
    def check(fast_mode):
        x = torch.rand(10, dtype=torch.double, requires_grad=True)
        y = torch.zeros(10, dtype=torch.double, requires_grad=True)
        assert torch.autograd.gradcheck(lambda x: x * 2, (x,), fast_mode=fast_mode)

    check(fast_mode=True)
    check(fast_mode=False)


def test_gradcheck_check_no_differentiable_outputs(torch):
    def check(fast_mode):
        x = torch.ones((1,), requires_grad=True)
        with pytest.raises(RuntimeError, match="Numerical gradient for function expected to be zero"):
            torch.autograd.gradcheck(lambda x: torch.tensor([x]), x)
        assert not torch.autograd.gradcheck(lambda x: torch.tensor([x]), x, raise_exception=False,
                                            fast_mode=fast_mode)
        assert torch.autograd.gradcheck(lambda x: (), (x,), fast_mode=fast_mode)

    check(fast_mode=True)
    check(fast_mode=False)


def test_gradcheck_undefined_grad(torch):
    def check(fast_mode):
        def fn(x):
            class UndefinedGrad(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x.clone()

                @staticmethod
                def backward(ctx, g):
                    return None
            return UndefinedGrad.apply(x)

        x = torch.ones(1, dtype=torch.double, requires_grad=True)
        with pytest.raises(RuntimeError, match="Jacobian mismatch"):
            torch.autograd.gradcheck(fn, (x,), fast_mode=fast_mode)

    check(fast_mode=False)


def test_gradcheck_jacobian_mismatch(torch):
    def check(fast_mode):
        def fn(x):
            y = x.clone()
            y.register_hook(lambda x: x + 1e-2)
            return y

        x = torch.ones(2, 2, requires_grad=True)
        with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
            torch.autograd.gradcheck(fn, (x,), fast_mode=fast_mode)
        assert not torch.autograd.gradcheck(fn, (x,), raise_exception=False, fast_mode=fast_mode)

    check(fast_mode=True)
    check(fast_mode=False)


def test_gradcheck_get_numerical_jacobian_mismatch_sign(torch):
    x = torch.ones(3, dtype=torch.double, requires_grad=True)

    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return -2 * g

    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(Wrong.apply, (x,))


def test_gradcheck_backward_mul_by_grad_output(torch):
    def check(fast_mode):
        def fn(x):
            def hook(grad):
                if grad is not None:
                    return grad.new_zeros(grad.shape) if hasattr(grad, "new_zeros") else grad * 0
                return grad

            y = x.clone()
            y.register_hook(hook)
            return y

        x = torch.ones((2, 2), dtype=torch.double, requires_grad=True)
        with pytest.raises(RuntimeError, match="Jacobian mismatch"):
            torch.autograd.gradcheck(fn, (x,), fast_mode=fast_mode)

    check(fast_mode=False)


def test_gradgradcheck_simple(torch):
    x = torch.randn(3, 3, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda x: (x ** 3).sum(), (x,))
    assert torch.autograd.gradgradcheck(lambda x: x.exp() * x.sin(), (x,))


def test_gradcheck_multiple_inputs(torch):
    a = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
    b = torch.randn(3, 4, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: a @ b, (a, b))
    assert torch.autograd.gradgradcheck(lambda a, b: a @ b, (a, b))


def test_gradcheck_non_tensor_args(torch):
    a = torch.randn(4, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, k: a * k, (a, 3.0))


def test_gradcheck_raise_exception_false(torch):
    x = torch.ones(2, dtype=torch.double, requires_grad=True)

    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    assert torch.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False) is False


def test_gradcheck_single_input(torch):
    def check(fast_mode):
        def f(inp):
            return inp.mul(5)

        torch.autograd.gradcheck(f, torch.rand(10, dtype=torch.float64, requires_grad=True), fast_mode=fast_mode)
        torch.autograd.gradgradcheck(f, torch.rand(10, dtype=torch.float64, requires_grad=True), fast_mode=fast_mode)

    check(fast_mode=True)
    check(fast_mode=False)


def test_gradcheck_output_shape_or_dtype_depend_on_values(torch):
    def check(fast_mode):
        def fn(x):
            if torch.all(x >= 1):
                return torch.cat([x, x])
            else:
                return x

        a = torch.ones(1, dtype=torch.double, requires_grad=True)
        with pytest.raises(AssertionError, match="return outputs with the same shape when inputs are perturbed"):
            assert torch.autograd.gradcheck(fn, (a,), fast_mode=fast_mode)

        def fn2(x):
            if torch.all(x >= 1):
                return x.to(torch.float32)
            else:
                return x

        with pytest.raises(AssertionError, match="return outputs with the same dtype when inputs are perturbed"):
            assert torch.autograd.gradcheck(fn2, (a,), fast_mode=fast_mode)

    check(fast_mode=True)
    check(fast_mode=False)


def test_gradcheck_custom_error(torch):
    from importlib import import_module
    GradcheckError = import_module(torch.__name__ + ".autograd.gradcheck").GradcheckError

    def check(fast_mode):
        def fn(x):
            y = x.clone()
            y.register_hook(lambda x: x + 1e-2)
            return y

        x = torch.ones(2, 2, requires_grad=True)
        with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
            torch.autograd.gradcheck(fn, (x,), fast_mode=fast_mode)
        with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
            torch.autograd.gradcheck(fn, (x,), fast_mode=fast_mode)
        assert not torch.autograd.gradcheck(fn, (x,), raise_exception=False, fast_mode=fast_mode)

        def fn2(x):
            raise RuntimeError("Not a GradcheckError!")

        # Checks that when raise_exception=False, non-GradcheckErrors are not caught by gradcheck
        with pytest.raises(RuntimeError, match="Not a GradcheckError!"):
            torch.autograd.gradcheck(fn2, (x,), fast_mode=fast_mode, raise_exception=False)

    check(fast_mode=True)
    check(fast_mode=False)


def test_unrelated_inputs(torch):
    def my_function(x, y):
        return x * x

    x = torch.rand(10, dtype=torch.double, requires_grad=True)
    y = torch.rand(10, dtype=torch.double, requires_grad=True)
    torch.autograd.gradcheck(my_function, (x, y))
    torch.autograd.gradgradcheck(my_function, (x, y))
