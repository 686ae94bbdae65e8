"""Ported from PyTorch's test/autograd/test_functional.py (TestAutogradFunctional): vjp, jvp (the
double-backward form), jacobian, hessian, vhp and hvp of ``torch.autograd.functional``."""
import pytest

from tests.support.torch_assert import assert_equal


def test_vjp_err_check(torch):
    def foo(a):
        return 3 * a.narrow(0, 0, 3)

    def bar(a):
        return 3 * a.narrow(0, 0, 3), "bar"

    inp = torch.rand(4)
    v = torch.ones(3)
    with pytest.raises(TypeError, match="The inputs given to vjp must be either a Tensor"):
        torch.autograd.functional.vjp(foo, (inp, 2), v)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to vjp must"):
        torch.autograd.functional.vjp(bar, inp, v)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided function returns"):
        torch.autograd.functional.vjp(foo, inp)
    with pytest.raises(RuntimeError, match="The given v should contain a single Tensor."):
        torch.autograd.functional.vjp(foo, inp, (torch.ones_like(inp), torch.ones_like(inp)))
    with pytest.raises(RuntimeError, match="v has invalid size: should be"):
        torch.autograd.functional.vjp(foo, inp, v[:2])
    res = torch.autograd.functional.vjp(foo, inp, v)[1]
    assert_equal(res, torch.tensor([3.0, 3.0, 3.0, 0.0]))


def test_vjp_err_check_strict(torch):
    def foo(a):
        return a.detach()

    def bar(a):
        return a.long().float().requires_grad_().clone()

    inp = torch.rand(4)
    v = torch.rand(4)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        torch.autograd.functional.vjp(foo, inp, v, strict=True)
    res = torch.autograd.functional.vjp(foo, inp, v, strict=False)
    assert_equal(res[1].abs().sum(), 0.0)
    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 0"):
        torch.autograd.functional.vjp(bar, inp, v, strict=True)
    res = torch.autograd.functional.vjp(bar, inp, v, strict=False)
    assert_equal(res[1].abs().sum(), 0.0)


def test_vjp_no_grad(torch):
    def reducer(x):
        return x.sum(dim=1)

    inputs = torch.rand(4, 4)
    v = torch.ones(4)
    with torch.no_grad():
        res = torch.autograd.functional.vjp(reducer, inputs, v)
    assert res[0].grad_fn is None
    assert res[1].grad_fn is None
    assert_not_zero = res[1].abs().sum() != 0
    assert assert_not_zero
    inputs.requires_grad_()
    v.requires_grad_()
    with torch.no_grad():
        res = torch.autograd.functional.vjp(reducer, inputs, v, create_graph=True)
    assert res[0].grad_fn is not None
    assert res[1].grad_fn is not None
    assert res[1].abs().sum() != 0


def test_vjp_output(torch):
    def reducer(x):
        return x.sum(dim=1)

    inputs = torch.rand(4, 4)
    v = torch.ones(4)
    res = torch.autograd.functional.vjp(reducer, inputs, v)
    assert res[1].grad_fn is None
    assert_equal(res[1], torch.ones(4, 4))

    def adder(x, y):
        return 2 * x + 3 * y

    inputs = (torch.rand(2), torch.rand(2))
    v = torch.ones(2)
    out, vjp_val = torch.autograd.functional.vjp(adder, inputs, v)
    assert isinstance(vjp_val, tuple)
    assert len(vjp_val) == 2
    assert_equal(vjp_val[0], 2 * torch.ones(2))
    assert_equal(vjp_val[1], 3 * torch.ones(2))

    def adder2(x, y):
        return 2 * x + 3 * y, x + y

    inputs = (torch.rand(2), torch.rand(2))
    v = (torch.tensor([1.0, 0.0]), torch.tensor([1.0, 0.0]))
    out, vjp_val = torch.autograd.functional.vjp(adder2, inputs, v)
    assert len(vjp_val) == 2
    assert_equal(vjp_val[0], torch.tensor([3.0, 0.0]))
    assert_equal(vjp_val[1], torch.tensor([4.0, 0.0]))


def test_vjp_scalar(torch):
    def reducer(x):
        return x.sum()

    inputs = torch.rand(4, 4)
    v = torch.ones([])
    res = torch.autograd.functional.vjp(reducer, inputs, v)
    assert res[0].shape == ()
    assert_equal(res[1], torch.ones(4, 4))
    res = torch.autograd.functional.vjp(reducer, inputs)
    assert_equal(res[1], torch.ones(4, 4))

    def expander(x):
        return x.unsqueeze(0).repeat(4)

    inputs = torch.rand([])
    v = torch.ones(4)
    res = torch.autograd.functional.vjp(expander, inputs, v)
    assert res[0].shape == (4,)
    assert_equal(res[1], torch.tensor(4.0))


def test_vjp_create_graph(torch):
    def reducer(x):
        return x.sum(dim=1)

    inputs = torch.rand(2, 2, dtype=torch.double)
    v = torch.ones(2, dtype=torch.double)
    inputs.requires_grad_()
    v.requires_grad_()
    res = torch.autograd.functional.vjp(reducer, inputs, v, create_graph=True)
    assert res[1].grad_fn is not None
    torch.autograd.gradcheck(lambda inp, v: torch.autograd.functional.vjp(reducer, inputs, v, create_graph=True),
                             (inputs, v))
    torch.autograd.gradgradcheck(lambda inp, v: torch.autograd.functional.vjp(reducer, inputs, v, create_graph=True),
                                 (inputs, v))

    def adder(x, y):
        return 2 * x + 3 * y, x * y

    inputs = (torch.rand(2, dtype=torch.double, requires_grad=True),
              torch.rand(2, dtype=torch.double, requires_grad=True))
    v = (torch.tensor([1.0, 0.0], dtype=torch.double, requires_grad=True),
         torch.tensor([1.0, 0.0], dtype=torch.double, requires_grad=True))
    torch.autograd.gradcheck(lambda *args: torch.autograd.functional.vjp(adder, args[:2], args[2:],
                                                                          create_graph=True)[1], inputs + v)
    torch.autograd.gradgradcheck(lambda *args: torch.autograd.functional.vjp(adder, args[:2], args[2:],
                                                                              create_graph=True)[1], inputs + v)

    def foo(*args):
        x, y = args[:2]
        v = args[2:]
        x = x.cos()
        val, grad = torch.autograd.functional.vjp(adder, (x, y), v, create_graph=True)
        return val[0].exp() + val[1].exp() + grad[0].exp() + grad[1].exp() + x.exp() + y.exp()

    torch.autograd.gradcheck(foo, inputs + v)
    torch.autograd.gradgradcheck(foo, inputs + v)


def test_jvp_err_check(torch):
    def foo(a):
        return 3 * a.narrow(0, 0, 3)

    def bar(a):
        return 3 * a.narrow(0, 0, 3), "bar"

    inp = torch.rand(4)
    v = torch.rand(4)
    with pytest.raises(TypeError, match="The inputs given to jvp must be either a Tensor"):
        torch.autograd.functional.jvp(foo, (inp, 2), v)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to jvp must"):
        torch.autograd.functional.jvp(bar, inp, v)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the input to the user-provided function"):
        torch.autograd.functional.jvp(foo, inp)
    with pytest.raises(RuntimeError, match="The given v should contain a single Tensor."):
        torch.autograd.functional.jvp(foo, inp, (v, v))
    with pytest.raises(RuntimeError, match="v has invalid size: should be"):
        torch.autograd.functional.jvp(foo, inp, v[:2])
    res = torch.autograd.functional.jvp(foo, inp, v)[1]
    assert_equal(res, foo(v))


def test_jvp_output(torch):
    def reducer(x):
        return x.sum(dim=1)

    inputs = torch.rand(4, 4)
    v = torch.ones(4, 4)
    res = torch.autograd.functional.jvp(reducer, inputs, v)
    assert res[1].grad_fn is None
    assert_equal(res[1], torch.full((4,), 4.0))

    def adder(x, y):
        return 2 * x + 3 * y

    inputs = (torch.rand(2), torch.rand(2))
    v = (torch.ones(2), torch.ones(2))
    out, jvp_val = torch.autograd.functional.jvp(adder, inputs, v)
    assert_equal(jvp_val, 5 * torch.ones(2))


def test_jvp_scalar(torch):
    def reducer(x):
        return x.sum()

    inputs = torch.rand(4, 4)
    v = torch.ones(4, 4)
    res = torch.autograd.functional.jvp(reducer, inputs, v)
    assert res[0].shape == ()
    assert_equal(res[1], torch.tensor(16.0))

    def expander(x):
        return x.unsqueeze(0).repeat(4)

    inputs = torch.rand([])
    v = torch.ones([])
    res = torch.autograd.functional.jvp(expander, inputs, v)
    assert res[0].shape == (4,)
    assert_equal(res[1], torch.ones(4))
    res = torch.autograd.functional.jvp(expander, inputs)
    assert_equal(res[1], torch.ones(4))


def test_jvp_create_graph(torch):
    def reducer(x):
        return x.sum(dim=1)

    inputs = torch.rand(2, 2, dtype=torch.double)
    v = torch.ones(2, 2, dtype=torch.double)
    inputs.requires_grad_()
    v.requires_grad_()
    res = torch.autograd.functional.jvp(reducer, inputs, v, create_graph=True)
    assert res[1].grad_fn is not None
    torch.autograd.gradcheck(lambda inp, v: torch.autograd.functional.jvp(reducer, inp, v, create_graph=True),
                             (inputs, v))
    torch.autograd.gradgradcheck(lambda inp, v: torch.autograd.functional.jvp(reducer, inp, v, create_graph=True),
                                 (inputs, v))


def test_jacobian_err_check(torch):
    def foo(a):
        return 3 * a.narrow(0, 0, 3)

    def bar(a):
        return 3 * a.narrow(0, 0, 3), "bar"

    inp = torch.rand(4)
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor"):
        torch.autograd.functional.jacobian(foo, (inp, 2))
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to jacobian must"):
        torch.autograd.functional.jacobian(bar, inp)
    res = torch.autograd.functional.jacobian(foo, inp)
    assert_equal(res, torch.cat([3 * torch.eye(3), torch.zeros(3, 1)], 1))


def test_jacobian_output(torch):
    def exp_reducer(x):
        return x.exp().sum(dim=1)

    inputs = torch.rand(4, 4)
    res = torch.autograd.functional.jacobian(exp_reducer, inputs)
    assert res.grad_fn is None
    assert res.shape == (4, 4, 4)

    def identity(x):
        return x.clone()

    inputs = torch.rand(4)
    res = torch.autograd.functional.jacobian(identity, inputs)
    assert_equal(res, torch.eye(4))

    def add_exp_reducer(x, y):
        return (x + y.exp()).sum(dim=1)

    inputs = (torch.rand(4, 4), torch.rand(4, 4))
    res = torch.autograd.functional.jacobian(add_exp_reducer, inputs)
    assert isinstance(res, tuple)
    assert len(res) == 2


def test_jacobian_scalar(torch):
    def reducer(x):
        return x.sum()

    inputs = torch.rand(4, 4)
    res = torch.autograd.functional.jacobian(reducer, inputs)
    assert_equal(res, torch.ones(4, 4))

    def expander(x):
        return x.unsqueeze(0).repeat(4)

    inputs = torch.rand([])
    res = torch.autograd.functional.jacobian(expander, inputs)
    assert_equal(res, torch.ones(4))


def test_jacobian_create_graph(torch):
    def exp_reducer(x):
        return x.exp().sum(dim=1)

    inputs = torch.rand(4, 4, dtype=torch.double, requires_grad=True)
    res = torch.autograd.functional.jacobian(exp_reducer, inputs, create_graph=True)
    assert res.grad_fn is not None
    torch.autograd.gradcheck(lambda inp: torch.autograd.functional.jacobian(exp_reducer, inp, create_graph=True),
                             inputs)
    torch.autograd.gradgradcheck(lambda inp: torch.autograd.functional.jacobian(exp_reducer, inp, create_graph=True),
                                 inputs)


def test_jacobian_match_vjp_jvp(torch):
    def foo(x):
        return x ** 3 + x.sum()

    inputs = torch.rand(4)
    v = torch.rand(4)
    jac = torch.autograd.functional.jacobian(foo, inputs)
    jvp = torch.autograd.functional.jvp(foo, inputs, v)[1]
    vjp = torch.autograd.functional.vjp(foo, inputs, v)[1]
    assert_equal(jvp, torch.mm(jac, v.unsqueeze(1)).squeeze(1))
    assert_equal(vjp, torch.mm(v.unsqueeze(0), jac).squeeze(0))


def test_jacobian_unused_inputs(torch):
    def fn(x, y):
        return x.exp()

    x = torch.rand(3)
    y = torch.rand(3)
    jx, jy = torch.autograd.functional.jacobian(fn, (x, y))
    assert_equal(jy, torch.zeros(3, 3))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 1. This is not allowed in strict mode."):
        torch.autograd.functional.jacobian(fn, (x, y), strict=True)


def test_hessian_err_check(torch):
    def foo(a):
        return 3 * a.narrow(0, 0, 3).exp().sum()

    def bar(a):
        return 3 * a.narrow(0, 0, 3), "bar"

    def bar2(a):
        return 3 * a.narrow(0, 0, 3)

    def bar3(a):
        return 3 * a.narrow(0, 0, 3), 3 * a.narrow(0, 0, 3)

    inp = torch.rand(4)
    with pytest.raises(TypeError, match="The inputs given to hessian must be either a Tensor"):
        torch.autograd.functional.hessian(foo, (inp, 2))
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to hessian must"):
        torch.autograd.functional.hessian(bar, inp)
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hessian should contain a single element"):
        torch.autograd.functional.hessian(bar2, inp)
    with pytest.raises(RuntimeError, match="The function given to hessian should return a single Tensor"):
        torch.autograd.functional.hessian(bar3, inp)
    res = torch.autograd.functional.hessian(foo, inp)
    assert res.shape == (4, 4)


def test_hessian_output(torch):
    def pow_reducer(x):
        return x.pow(3).sum()

    inputs = torch.rand(2, 2)
    res = torch.autograd.functional.hessian(pow_reducer, inputs)
    assert res.grad_fn is None
    assert res.shape == (2, 2, 2, 2)

    def add_pow_reducer(x, y):
        return (x + y).pow(3).sum()

    inputs = (torch.rand(2, 2), torch.rand(2, 2))
    res = torch.autograd.functional.hessian(add_pow_reducer, inputs)
    assert isinstance(res, tuple)
    assert len(res) == 2
    assert isinstance(res[0], tuple)
    assert_equal(res[0][0], res[1][1])


def test_hessian_scalar(torch):
    def reducer(x):
        return x.sum()

    inputs = torch.rand(4, 4)
    res = torch.autograd.functional.hessian(reducer, inputs)
    assert_equal(res, torch.zeros(4, 4, 4, 4))

    def bad_reducer(x):
        return x.sum().view(1, 1, 1)

    res = torch.autograd.functional.hessian(bad_reducer, inputs)
    assert_equal(res, torch.zeros(4, 4, 4, 4))


def test_hessian_value(torch):
    def foo(a):
        return (a ** 2).sum() + (a[0] * a[1])

    inp = torch.rand(3)
    res = torch.autograd.functional.hessian(foo, inp)
    expected = torch.tensor([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 2.0]])
    assert_equal(res, expected)


def test_vhp_err_check(torch):
    def foo(a):
        return 3 * a.narrow(0, 0, 3).exp().sum()

    def bar(a):
        return 3 * a.narrow(0, 0, 3), "bar"

    def bar2(a):
        return 3 * a.narrow(0, 0, 3)

    inp = torch.rand(4)
    v = torch.rand(4)
    res = torch.autograd.functional.vhp(foo, inp, v)
    with pytest.raises(TypeError, match="The inputs given to vhp must be either a Tensor"):
        torch.autograd.functional.vhp(foo, (inp, 2), v)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to vhp must"):
        torch.autograd.functional.vhp(bar, inp, v)
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to vhp should contain a single element"):
        torch.autograd.functional.vhp(bar2, inp, v)
    with pytest.raises(RuntimeError, match="v has invalid size:"):
        torch.autograd.functional.vhp(foo, inp, torch.rand(5))
    with pytest.raises(TypeError, match="The v given to vhp must be either a Tensor or a tuple of Tensors but the "
                                        "value at index 1 has type <class 'int'>."):
        torch.autograd.functional.vhp(foo, inp, (v, 2))
    assert res[1].shape == (4,)


def test_vhp_output(torch):
    def foo(a):
        return 3 * a.narrow(0, 0, 3).exp().sum()

    inputs = torch.rand(4, 4)
    v = torch.ones(4, 4)
    res = torch.autograd.functional.vhp(foo, inputs, v)
    assert res[1].grad_fn is None
    assert res[0].grad_fn is None
    hess = torch.autograd.functional.hessian(foo, inputs)
    assert_equal(res[1], (hess.reshape(16, 16) @ v.reshape(16)).reshape(4, 4))


def test_hvp_output(torch):
    def foo(a):
        return (a ** 3).sum()

    inputs = torch.rand(3)
    v = torch.ones(3)
    res = torch.autograd.functional.hvp(foo, inputs, v)
    assert_equal(res[1], 6 * inputs)
    res_vhp = torch.autograd.functional.vhp(foo, inputs, v)
    assert_equal(res[1], res_vhp[1])


def test_hvp_err_check(torch):
    def foo(a):
        return 3 * a.narrow(0, 0, 3).exp().sum()

    def bar(a):
        return 3 * a.narrow(0, 0, 3), "bar"

    inp = torch.rand(4)
    v = torch.rand(4)
    res = torch.autograd.functional.hvp(foo, inp, v)
    with pytest.raises(TypeError, match="The inputs given to hvp must be either a Tensor"):
        torch.autograd.functional.hvp(foo, (inp, 2), v)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to hvp must"):
        torch.autograd.functional.hvp(bar, inp, v)
    assert res[1].shape == (4,)


def test_vhp_create_graph(torch):
    def foo(a):
        return 3 * a.narrow(0, 0, 3).exp().sum()

    inputs = torch.rand(4, 4, dtype=torch.double, requires_grad=True)
    v = torch.ones(4, 4, dtype=torch.double, requires_grad=True)
    res = torch.autograd.functional.vhp(foo, inputs, v, create_graph=True)
    assert res[1].grad_fn is not None
    torch.autograd.gradcheck(lambda inp, v: torch.autograd.functional.vhp(foo, inp, v, create_graph=True), (inputs, v))
    torch.autograd.gradgradcheck(lambda inp, v: torch.autograd.functional.vhp(foo, inp, v, create_graph=True),
                                 (inputs, v))


def test_hessian_create_graph(torch):
    def pow_reducer(x):
        return x.pow(3).sum()

    inputs = torch.rand(2, 2, dtype=torch.double, requires_grad=True)
    res = torch.autograd.functional.hessian(pow_reducer, inputs, create_graph=True)
    assert res.grad_fn is not None
    torch.autograd.gradcheck(lambda inp: torch.autograd.functional.hessian(pow_reducer, inp, create_graph=True),
                             inputs)
    torch.autograd.gradgradcheck(lambda inp: torch.autograd.functional.hessian(pow_reducer, inp, create_graph=True),
                                 inputs)


# ---- vectorize=True and the forward-mode strategies ------------------------------------------------------
# torch computes these with vmap; derivgen loops over the basis (the same columns). The forward-mode
# Jacobian (and the forward-over-reverse Hessian) is accepted with vectorize=True only, as in torch.

def _check_jacobian_vectorize_correctness(torch, f, inputs, test_forward_ad=True):
    autogradF = torch.autograd.functional
    expected = autogradF.jacobian(f, inputs, vectorize=False)
    result_backward_mode = autogradF.jacobian(f, inputs, vectorize=True)
    assert_equal(result_backward_mode, expected)

    if test_forward_ad:
        result_forward_mode = autogradF.jacobian(f, inputs, strategy="forward-mode", vectorize=True)
        assert_equal(result_forward_mode, expected)


def _check_hessian_vectorize_correctness(torch, f, inputs):
    autogradF = torch.autograd.functional
    expected = autogradF.hessian(f, inputs, vectorize=False)
    result = autogradF.hessian(f, inputs, vectorize=True)
    assert_equal(result, expected)

    result_forward_mode = autogradF.hessian(f, inputs, outer_jacobian_strategy="forward-mode", vectorize=True)
    assert_equal(result_forward_mode, expected)


def _test_vectorize_raises_no_warnings(torch, api):
    import warnings

    def foo(a):
        return (a ** 2).sum()

    x = torch.randn(3)
    with warnings.catch_warnings(record=True) as wa:
        warnings.simplefilter("always")
        api(foo, x, vectorize=True)
    assert len(wa) == 0


def test_jacobian_vectorize_raises_no_warnings(torch):
    _test_vectorize_raises_no_warnings(torch, torch.autograd.functional.jacobian)


def test_hessian_vectorize_raises_no_warnings(torch):
    _test_vectorize_raises_no_warnings(torch, torch.autograd.functional.hessian)


def test_jacobian_err_check_strict_vectorize(torch):
    def foo(x):
        return x

    inp = torch.rand(4)
    with pytest.raises(RuntimeError, match="not supported together"):
        torch.autograd.functional.jacobian(foo, inp, strict=True, vectorize=True)


def test_hessian_err_check_strict_vectorize(torch):
    def foo(x):
        return (x ** 3).sum()

    inp = torch.rand(4)
    with pytest.raises(RuntimeError, match="not supported together"):
        torch.autograd.functional.hessian(foo, inp, strict=True, vectorize=True)


def test_jacobian_vectorize_correctness_simple(torch):
    def f(x):
        return 3 * x ** 2

    x = torch.randn(2, 3, 5)
    _check_jacobian_vectorize_correctness(torch, f, x)


def test_jacobian_vectorize_correctness_multi_input(torch):
    def f(x, y):
        return (x.cos() * x) @ y.sin()

    x = torch.randn(2, 3)
    y = torch.randn(3, 5)
    _check_jacobian_vectorize_correctness(torch, f, (x, y))


def test_jacobian_vectorize_correctness_multi_input_multi_output(torch):
    def f(x, y):
        return (x * x) @ y, x @ (x.sum(1) * y), y.sum()

    x = torch.randn(5, 3)
    y = torch.randn(3, 5)
    _check_jacobian_vectorize_correctness(torch, f, (x, y))


def test_jacobian_vectorize_correctness_unrelated_outputs(torch):
    def f(x, y):
        return x, y, x, y

    x = torch.randn(2)
    y = torch.randn(3)
    _check_jacobian_vectorize_correctness(torch, f, (x, y))


def test_jacobian_vectorize_correctness_zero_dim(torch):
    # zero-dim output
    def f(x, y):
        return x.sum(), y.sum(), x * y

    x = torch.randn(3)
    y = torch.randn(3)
    _check_jacobian_vectorize_correctness(torch, f, (x, y))

    # zero-dim input
    def g(x):
        return torch.stack([x, x, x])

    x = torch.randn([])
    _check_jacobian_vectorize_correctness(torch, g, x)

    # Mixed zero-dim input / zero-dim output
    def h(x, y):
        return y.sum(), x * y

    x = torch.randn([])
    y = torch.randn(1)
    _check_jacobian_vectorize_correctness(torch, h, (x, y))


def test_jacobian_vectorize_correctness_different_dtype(torch):
    def f(x, y):
        return (x * y).float(), (x * y).double()

    x = torch.randn(3)
    y = torch.randn(3)
    # The Jacobian computed using forward AD has the dtype of the output
    # but the Jacobian computed with reverse AD has dtype of input
    _check_jacobian_vectorize_correctness(torch, f, (x, y), test_forward_ad=False)


def test_hessian_vectorize_correctness_simple(torch):
    def f(x):
        return (3 * x ** 2).sum()

    x = torch.randn(2, 3, 5)
    _check_hessian_vectorize_correctness(torch, f, x)


def test_hessian_vectorize_correctness_multi_input(torch):
    def f(x, y, z):
        return ((x.relu() * x) @ y.sin() @ z).sum()

    x = torch.randn(2, 3)
    y = torch.randn(3, 5)
    z = torch.randn(5, 5)
    _check_hessian_vectorize_correctness(torch, f, (x, y, z))


def test_hessian_vectorize_correctness_unrelated_outputs(torch):
    # output unrelated to one input
    def f(x, y):
        return (x ** 2).sum()

    x = torch.randn(2)
    y = torch.randn(3)
    _check_hessian_vectorize_correctness(torch, f, (x, y))

    # output unrelated to all inputs
    def f(x, y):
        return torch.ones([])

    x = torch.randn(2)
    y = torch.randn(3)
    _check_hessian_vectorize_correctness(torch, f, (x, y))


def test_jacobian_forward_mode_strategy_errors(torch):
    autogradF = torch.autograd.functional

    def f(x):
        return x * 2

    x = torch.rand(3)
    with pytest.raises(AssertionError, match='Expected strategy to be either "forward-mode" or "reverse-mode"'):
        autogradF.jacobian(f, x, strategy="foo")
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        autogradF.jacobian(f, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match='`create_graph=True` and `strategy="forward-mode"` are not supported'):
        autogradF.jacobian(f, x, strategy="forward-mode", vectorize=True, create_graph=True)
    with pytest.raises(RuntimeError, match='`strict=True` and `strategy="forward-mode"` are not supported'):
        autogradF.jacobian(f, x, strategy="forward-mode", vectorize=True, strict=True)
    with pytest.raises(AssertionError, match='Expected strategy to be either "forward-mode" or "reverse-mode".'):
        autogradF.hessian(lambda x: x.sum(), x, outer_jacobian_strategy="foo")
    assert_equal(autogradF.jacobian(f, x, strategy="forward-mode", vectorize=True), 2 * torch.eye(3))
