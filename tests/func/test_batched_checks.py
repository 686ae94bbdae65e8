"""gradcheck's check_batched_grad / check_batched_forward_grad (vmap over the vector-Jacobian and
Jacobian-vector products) and autograd.functional.jacobian(vectorize=True), on derivgen and on PyTorch
(the ``torch`` fixture runs each body on both)."""
import pytest

from tests.func.support import arr, check


def _fns(torch):
    return {
        "softmax_mul": (lambda a, b: (a.sin() * b).softmax(-1), [(3, 4), (4,)]),
        "matmul_tanh": (lambda a, b: torch.tanh(a @ b), [(3, 4), (4, 2)]),
        "reductions": (lambda a, b: ((a - b) ** 2).mean(0) + a.amax(1, keepdim=True), [(3, 4), (4,)]),
        "two_outputs": (lambda a, b: (a * b, (a / (b.abs() + 1)).sum()), [(3, 4), (4,)]),
        "views": (lambda a, b: a.t()[1:, None] * b.unsqueeze(-1), [(3, 4), (4,)]),
    }


@pytest.mark.parametrize("name", ["softmax_mul", "matmul_tanh", "reductions", "two_outputs", "views"])
def test_gradcheck_batched_grad_passes(torch, name):
    fn, shapes = _fns(torch)[name]
    inputs = tuple(arr(torch, *s, seed=k).requires_grad_() for k, s in enumerate(shapes))
    assert torch.autograd.gradcheck(fn, inputs, check_batched_grad=True)
    assert torch.autograd.gradcheck(fn, inputs, check_forward_ad=True, check_batched_forward_grad=True)


def test_gradgradcheck_batched_grad(torch):
    x = arr(torch, 3, 4).requires_grad_()
    assert torch.autograd.gradgradcheck(lambda a: (a ** 3).sin().sum(1), (x,), check_batched_grad=True)


def _counting_function(torch):
    calls = [0]

    class Drifting(torch.autograd.Function):
        """A backward that is not a function of grad_output alone: each call scales differently."""
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls[0] += 1
            return g * 2 * calls[0]
    return Drifting


def test_batched_grad_failure_message():
    # torch checks reentrancy first (this function fails it there); derivgen skips that check for a negative
    # nondet_tol, so the batched check is what fails, with torch's text
    import derivgen
    from torch.autograd.gradcheck import FAILED_BATCHED_GRAD_MSG
    fn = _counting_function(derivgen)
    x = arr(derivgen, 3).requires_grad_()
    with pytest.raises(derivgen.autograd.GradcheckError) as info:
        derivgen.autograd.gradcheck(fn.apply, (x,), check_batched_grad=True, check_undefined_grad=False,
                                    nondet_tol=-1, atol=1e9)
    text = str(info.value)
    assert text.startswith(f"For output 0 and input 0:\n\n{FAILED_BATCHED_GRAD_MSG}\n\nGot:\n")
    assert "\n\nExpected:\n" in text


@pytest.mark.parametrize("vectorize", [False, True])
def test_functional_jacobian_vectorize(vectorize):
    def body(m):
        x, w = arr(m, 3, 4, seed=1), arr(m, 4, seed=2)
        jac = m.autograd.functional.jacobian(lambda a, b: ((a.sin() * b).softmax(-1), (a * b).sum()), (x, w),
                                             vectorize=vectorize)
        single = m.autograd.functional.jacobian(lambda a: a.exp() @ a.t(), x, vectorize=vectorize)
        return [list(jac[0]), list(jac[1]), single]
    check(body)


def test_vectorized_jacobian_runs_the_forward_once_per_output():
    import derivgen
    calls = []

    def f(a):
        calls.append(tuple(a.shape))
        return a.sin() * a.sum()
    derivgen.autograd.functional.jacobian(f, arr(derivgen, 5), vectorize=True)
    # one plain call for the outputs, one batched call (examples of shape (5,)) for all 5 rows
    assert calls == [(5,), (5,)]
    calls.clear()
    derivgen.autograd.functional.jacobian(f, arr(derivgen, 5), vectorize=False)
    assert calls == [(5,)]
