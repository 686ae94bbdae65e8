"""Zero-size dimensions through reductions, softmax, elementwise, linear algebra and losses, with
their backward; torch's refusals of max/min-like reductions over no elements."""
import pytest

from tests.support.edge import Case, check, grad_of, inf, nan, ok, raises

CASES = [
    Case("softmax_zero_size_dim", lambda t: t.softmax(t.zeros(2, 0), 1)),
    Case("softmax_zero_size_other_dim", lambda t: t.softmax(t.zeros(0, 3), 1)),
    Case("log_softmax_zero_size_dim", lambda t: t.log_softmax(t.zeros(2, 0), 1)),
    Case("softmax_zero_size_backward", lambda t: grad_of(t, lambda x: t.softmax(x, 1), [[]])),
    Case("log_softmax_zero_size_backward", lambda t: grad_of(t, lambda x: t.log_softmax(x, 0), [])),
    Case("sum_empty", lambda t: t.zeros(0).sum()),
    Case("sum_zero_size_dim", lambda t: t.zeros(2, 0).sum(1)),
    Case("sum_empty_backward", lambda t: grad_of(t, lambda x: x.sum(0), [[], []])),
    Case("mean_empty", lambda t: t.zeros(0).mean()),
    Case("prod_empty", lambda t: t.zeros(0).prod()),
    Case("max_empty", lambda t: t.zeros(0).max()),
    Case("min_empty", lambda t: t.zeros(0).min()),
    Case("amax_empty", lambda t: t.zeros(0).amax()),
    Case("amin_zero_size_dim", lambda t: t.zeros(2, 0).amin(1)),
    Case("amax_nonempty_dim_of_empty", lambda t: t.zeros(0, 2).amax(1)),
    Case("max_dim_zero_size", lambda t: t.zeros(2, 0).max(1)),
    Case("argmax_empty", lambda t: t.zeros(0).argmax()),
    Case("argmin_zero_size_dim", lambda t: t.zeros(0, 2).argmin(0)),
    Case("logsumexp_zero_size_dim", lambda t: t.zeros(2, 0).logsumexp(1)),
    Case("cumsum_empty", lambda t: t.zeros(0).cumsum(0)),
    Case("mm_zero_inner", lambda t: t.zeros(2, 0).mm(t.zeros(0, 3))),
    Case("matmul_zero_inner_backward", lambda t: grad_of(t, lambda x: x @ t.ones(0, 3, dtype=t.float64), [[], []])),
    Case("sin_empty_backward", lambda t: grad_of(t, lambda x: x.sin(), [])),
    Case("mul_broadcast_zero_rows", lambda t: t.zeros(0, 3) * t.ones(3)),
    Case("cat_with_empty", lambda t: t.cat([t.zeros(0), t.ones(2)])),
    Case("layer_norm_zero_rows", lambda t: t.nn.functional.layer_norm(t.zeros(0, 3), (3,))),
    Case("mse_loss_empty", lambda t: t.nn.functional.mse_loss(t.zeros(0), t.zeros(0))),
    Case("reshape_empty", lambda t: t.zeros(0, 3).reshape(3, 0, -1).shape),
]

EXPECTED = {
    'softmax_zero_size_dim': ok(('float32', [2, 0], [[], []])),
    'softmax_zero_size_other_dim': ok(('float32', [0, 3], [])),
    'log_softmax_zero_size_dim': ok(('float32', [2, 0], [[], []])),
    'softmax_zero_size_backward': ok(('float64', [1, 0], [[]]), ('float64', [1, 0], [[]])),
    'log_softmax_zero_size_backward': ok(('float64', [0], []), ('float64', [0], [])),
    'sum_empty': ok(('float32', [], 0.0)),
    'sum_zero_size_dim': ok(('float32', [2], [0.0, 0.0])),
    'sum_empty_backward': ok(('float64', [0], []), ('float64', [2, 0], [[], []])),
    'mean_empty': ok(('float32', [], nan)),
    'prod_empty': ok(('float32', [], 1.0)),
    'max_empty': raises('RuntimeError', "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."),
    'min_empty': raises('RuntimeError', "min(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."),
    'amax_empty': raises('RuntimeError', "amax(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."),
    'amin_zero_size_dim': raises('IndexError', 'amin(): Expected reduction dim 1 to have non-zero size.'),
    'amax_nonempty_dim_of_empty': ok(('float32', [0], [])),
    'max_dim_zero_size': raises('IndexError', 'max(): Expected reduction dim 1 to have non-zero size.'),
    'argmax_empty': raises('IndexError', 'argmax(): Expected reduction dim to be specified for input.numel() == 0.'),
    'argmin_zero_size_dim': raises('IndexError', 'argmin(): Expected reduction dim 0 to have non-zero size.'),
    'logsumexp_zero_size_dim': ok(('float32', [2], [-inf, -inf])),
    'cumsum_empty': ok(('float32', [0], [])),
    'mm_zero_inner': ok(('float32', [2, 3], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])),
    'matmul_zero_inner_backward': ok(('float64', [2, 3], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), ('float64', [2, 0], [[], []])),
    'sin_empty_backward': ok(('float64', [0], []), ('float64', [0], [])),
    'mul_broadcast_zero_rows': ok(('float32', [0, 3], [])),
    'cat_with_empty': ok(('float32', [2], [1.0, 1.0])),
    'layer_norm_zero_rows': ok(('float32', [0, 3], [])),
    'mse_loss_empty': ok(('float32', [], nan)),
    'reshape_empty': raises('RuntimeError', 'cannot reshape tensor of 0 elements into shape [3, 0, -1] because the unspecified dimension size -1 can be any value and is ambiguous'),
}


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_empty(torch, case):
    check(torch, case, EXPECTED[case.id])
