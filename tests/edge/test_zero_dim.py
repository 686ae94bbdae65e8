"""0-dim tensors: reductions and dim-taking ops accept dim 0 and -1 (and refuse others), forward and
backward."""
import pytest

from tests.support.edge import Case, check, grad_of, ok, raises

CASES = [
    Case("sum_dim0", lambda t: t.tensor(3.).sum(0)),
    Case("sum_dim_minus1", lambda t: t.tensor(3.).sum(-1)),
    Case("sum_dim1_refused", lambda t: t.tensor(3.).sum(1)),
    Case("sum_dim0_keepdim", lambda t: t.tensor(3.).sum(0, keepdim=True)),
    Case("sum_dim0_backward", lambda t: grad_of(t, lambda x: x.sum(0), 3.)),
    Case("mean_dim0", lambda t: t.tensor(3.).mean(0)),
    Case("mean_dim_list", lambda t: t.tensor(3.).mean([0])),
    Case("mean_dim0_backward", lambda t: grad_of(t, lambda x: x.mean(-1), 2.)),
    Case("softmax_dim0", lambda t: t.tensor(3.).softmax(0)),
    Case("log_softmax_dim_minus1", lambda t: t.tensor(3.).log_softmax(-1)),
    Case("max_dim0", lambda t: t.tensor(3.).max(0)),
    Case("amax_dim0", lambda t: t.tensor(3.).amax(0)),
    Case("amax_dim0_backward", lambda t: grad_of(t, lambda x: x.amax(0), 3.)),
    Case("argmax_dim0", lambda t: t.tensor(3.).argmax(0)),
    Case("cumsum_dim0", lambda t: t.tensor(3.).cumsum(0)),
    Case("prod_dim0", lambda t: t.tensor(3.).prod(0)),
    Case("prod_dim0_backward", lambda t: grad_of(t, lambda x: x.prod(0), 3.)),
    Case("logsumexp_dim0", lambda t: t.tensor(3.).logsumexp(0)),
    Case("logsumexp_dim0_backward", lambda t: grad_of(t, lambda x: x.logsumexp(0), 3.)),
    Case("unsqueeze_dim0", lambda t: t.tensor(3.).unsqueeze(0)),
    Case("squeeze_dim0", lambda t: t.tensor(3.).squeeze(0)),
    Case("transpose_0_minus1", lambda t: t.tensor(3.).transpose(0, -1)),
    Case("flatten", lambda t: t.tensor(3.).flatten()),
    Case("var_dim0_backward", lambda t: grad_of(t, lambda x: x.var(0, correction=0), 3.)),
    Case("norm_dim0", lambda t: t.tensor(-3.).norm(dim=0)),
    Case("mul_0dim_by_vector_backward", lambda t: grad_of(t, lambda x: x * t.ones(3, dtype=t.float64), 2.)),
]

EXPECTED = {
    'sum_dim0': ok(('float32', [], 3.0)),
    'sum_dim_minus1': ok(('float32', [], 3.0)),
    'sum_dim1_refused': raises('IndexError', 'Dimension out of range (expected to be in range of [-1, 0], but got 1)'),
    'sum_dim0_keepdim': ok(('float32', [], 3.0)),
    'sum_dim0_backward': ok(('float64', [], 3.0), ('float64', [], 1.0)),
    'mean_dim0': ok(('float32', [], 3.0)),
    'mean_dim_list': ok(('float32', [], 3.0)),
    'mean_dim0_backward': ok(('float64', [], 2.0), ('float64', [], 1.0)),
    'softmax_dim0': ok(('float32', [], 1.0)),
    'log_softmax_dim_minus1': ok(('float32', [], 0.0)),
    'max_dim0': ok(('float32', [], 3.0), ('int64', [], 0)),
    'amax_dim0': ok(('float32', [], 3.0)),
    'amax_dim0_backward': ok(('float64', [], 3.0), ('float64', [], 1.0)),
    'argmax_dim0': ok(('int64', [], 0)),
    'cumsum_dim0': ok(('float32', [], 3.0)),
    'prod_dim0': ok(('float32', [], 3.0)),
    'prod_dim0_backward': ok(('float64', [], 3.0), ('float64', [], 1.0)),
    'logsumexp_dim0': ok(('float32', [], 3.0)),
    'logsumexp_dim0_backward': ok(('float64', [], 3.0), ('float64', [], 1.0)),
    'unsqueeze_dim0': ok(('float32', [1], [3.0])),
    'squeeze_dim0': ok(('float32', [], 3.0)),
    'transpose_0_minus1': ok(('float32', [], 3.0)),
    'flatten': ok(('float32', [1], [3.0])),
    'var_dim0_backward': ok(('float64', [], 0.0), ('float64', [], 0.0)),
    'norm_dim0': ok(('float32', [], 3.0)),
    'mul_0dim_by_vector_backward': ok(('float64', [3], [2.0, 2.0, 2.0]), ('float64', [], 3.0)),
}


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_zero_dim(torch, case):
    check(torch, case, EXPECTED[case.id])
