"""Ported from PyTorch's test/autograd/test_functional.py (TestAutogradFunctional), the tests of ``jvp``
and ``hvp`` that derivgen answers with forward mode (``jvp`` by dual tensors, ``hvp`` forward over
reverse): strict mode, no_grad, create_graph (gradcheck and gradgradcheck through the tangents). Names
kept; one body runs on derivgen and on PyTorch."""
import pytest

from tests.support.torch_assert import assert_equal


@pytest.fixture(autouse=True)
def _double_default(torch):
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


def test_jvp_err_check_strict(torch):
    autogradF = torch.autograd.functional

    def foo(a):
        return a.detach()

    def bar(a):
        # Make a non-leaf Tensor that requires_grad but that is not connected to the input
        return a.long().float().requires_grad_().clone()

    inp = torch.rand(4)
    v = torch.rand(4)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        autogradF.jvp(foo, inp, v, strict=True)
    res = autogradF.jvp(foo, inp, v, strict=False)
    assert res[1].shape == res[0].shape
    assert res[1].abs().sum().item() == 0.0

    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 0"):
        autogradF.jvp(bar, inp, v, strict=True)
    res = autogradF.jvp(bar, inp, v, strict=False)
    assert res[1].shape == res[0].shape
    assert res[1].abs().sum().item() == 0.0

    # The Jacobian does not depend on the input
    def foo(a):  # noqa: F811 - as upstream
        return a.clone()

    inp.requires_grad_()
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function is independent of input 0."):
        autogradF.jvp(foo, inp, v, create_graph=True, strict=True)
    res = autogradF.jvp(foo, inp, v, create_graph=True, strict=False)
    assert res[1].shape == inp.shape
    assert_equal(res[1], v)


def test_jvp_no_grad(torch):
    autogradF = torch.autograd.functional

    def reducer(x):
        return x.sum(dim=1)

    inputs = torch.rand(4, 4)
    v = torch.ones(4, 4)
    with torch.no_grad():
        res = autogradF.jvp(reducer, inputs, v)
    assert res[0].grad_fn is None
    assert res[1].grad_fn is None
    assert res[1].abs().sum().item() != 0

    inputs.requires_grad_()
    v.requires_grad_()
    with torch.no_grad():
        res = autogradF.jvp(reducer, inputs, v, create_graph=True)
    assert res[0].grad_fn is not None
    assert res[1].grad_fn is not None
    assert res[1].abs().sum().item() != 0


def test_jvp_create_graph(torch):
    autogradF = torch.autograd.functional
    gradcheck, gradgradcheck = torch.autograd.gradcheck, torch.autograd.gradgradcheck

    def reducer(x):
        return x.sum(dim=1)

    inputs = torch.rand(2, 2, dtype=torch.double)
    v = torch.ones(2, 2, dtype=torch.double)
    inputs.requires_grad_()
    v.requires_grad_()
    res = autogradF.jvp(reducer, inputs, v, create_graph=True)
    assert res[1].shape == res[0].shape
    assert res[0].grad_fn is not None
    assert res[1].grad_fn is not None
    gradcheck(lambda inp, v: autogradF.jvp(reducer, inp, v, create_graph=True), (inputs, v))
    gradgradcheck(lambda inp, v: autogradF.jvp(reducer, inp, v, create_graph=True), (inputs, v))

    def adder(x, y):
        return 2 * x + 3 * y, x * y

    inputs = (torch.rand(2, dtype=torch.double, requires_grad=True),
              torch.rand(2, dtype=torch.double, requires_grad=True))
    v = (torch.tensor([1.0, 0.0], dtype=torch.double, requires_grad=True),
         torch.tensor([1.0, 0.0], dtype=torch.double, requires_grad=True))
    gradcheck(lambda *args: autogradF.jvp(adder, args[:2], args[2:], create_graph=True)[1], inputs + v)
    gradgradcheck(lambda *args: autogradF.jvp(adder, args[:2], args[2:], create_graph=True)[1], inputs + v)

    def foo(*args):
        x, y = args[:2]
        v = args[2:]
        x = x.cos()
        val, grad = autogradF.jvp(adder, (x, y), v, create_graph=True)
        return val[0].exp() + val[1].exp() + grad[0].exp() + grad[1].exp() + x.exp() + y.exp()

    gradcheck(foo, inputs + v)
    gradgradcheck(foo, inputs + v)


def test_hvp_create_graph(torch):
    autogradF = torch.autograd.functional
    gradcheck, gradgradcheck = torch.autograd.gradcheck, torch.autograd.gradgradcheck

    def foo(a):
        return 3 * a.narrow(0, 0, 3).exp().sum()

    inputs = torch.rand(4, 4, dtype=torch.double, requires_grad=True)
    v = torch.ones(4, 4, dtype=torch.double, requires_grad=True)
    res = autogradF.hvp(foo, inputs, v, create_graph=True)
    assert res[1].shape == inputs.shape
    assert res[0].grad_fn is not None
    assert res[1].grad_fn is not None
    gradcheck(lambda inp, v: autogradF.hvp(foo, inp, v, create_graph=True), (inputs, v))
    gradgradcheck(lambda inp, v: autogradF.hvp(foo, inp, v, create_graph=True), (inputs, v))

    def bar(a, b):
        return (a + 3 * b.narrow(0, 0, 3)).exp().sum()

    inputs = (torch.rand(3, dtype=torch.double, requires_grad=True),
              torch.rand(4, dtype=torch.double, requires_grad=True))
    v = (torch.ones(3, dtype=torch.double, requires_grad=True),
         torch.ones(4, dtype=torch.double, requires_grad=True))
    out, hvp_val = autogradF.hvp(bar, inputs, v, create_graph=True)
    assert out.grad_fn is not None
    assert hvp_val[0].grad_fn is not None
    assert hvp_val[1].grad_fn is not None
    gradcheck(lambda *args: autogradF.hvp(bar, args[:2], args[2:], create_graph=True)[1], inputs + v)
    gradgradcheck(lambda *args: autogradF.hvp(bar, args[:2], args[2:], create_graph=True)[1], inputs + v)

    def foo(*args):  # noqa: F811 - as upstream
        x, y = args[:2]
        v = args[2:]
        x = x.cos()
        val, grad = autogradF.hvp(bar, (x, y), v, create_graph=True)
        return val.cos() + grad[0].cos().sum() + grad[1].cos() + x.cos().sum() + y.cos()

    gradcheck(foo, inputs + v)
    gradgradcheck(foo, inputs + v)


def test_hessian_match_vhp_hvp(torch):
    autogradF = torch.autograd.functional

    def foo(a):
        return 3 * a.narrow(0, 0, 3).exp().sum()

    inputs = torch.rand(4)
    v = torch.rand(4)
    hes = autogradF.hessian(foo, inputs)
    hvp = autogradF.hvp(foo, inputs, v)[1]
    vhp = autogradF.vhp(foo, inputs, v)[1]
    assert_equal(hvp, torch.mm(hes, v.unsqueeze(1)).squeeze(1))
    assert_equal(vhp, torch.mm(v.unsqueeze(0), hes).squeeze(0))


def test_func_jvp_strict(torch):
    """torch.func.jvp(strict=True) refuses an output independent of the primals (no tangent)."""
    x, t = torch.rand(2), torch.ones(2)
    for independent in (lambda a: torch.ones(2), lambda a: a.detach() * 2):
        with pytest.raises(RuntimeError, match=r"jvp\(f, primals, tangents, strict=True\): The output of f is "
                                               r"independent of the inputs. This is not allowed with strict=True."):
            torch.func.jvp(independent, (x,), (t,), strict=True)
    out, tangent = torch.func.jvp(lambda a, b: a * 2, (x, x), (t, t), strict=True)
    assert_equal(tangent, 2 * t)
