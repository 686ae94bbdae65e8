"""NaN and infinity: torch propagates NaN through relu, maximum/minimum, clamp, hardtanh, max/min
reductions and their backward; infinities through exp, sigmoid, tanh, softmax, logsumexp. sign(NaN) is 0,
so abs's gradient at NaN is 0."""
import math

import pytest

from tests.support.edge import Case, check, grad_of, inf, nan, ok

NAN = math.nan
INF = math.inf

CASES = [
    Case("relu", lambda t: t.relu(t.tensor([NAN, -1., 1.]))),
    Case("relu_backward", lambda t: grad_of(t, lambda x: x.relu(), [NAN, 0., 1.])),
    Case("relu_inplace", lambda t: t.tensor([NAN, -2.]).relu_()),
    Case("maximum", lambda t: t.maximum(t.tensor([NAN, 1.]), t.tensor([1., NAN]))),
    Case("minimum", lambda t: t.minimum(t.tensor([NAN, 1.]), t.tensor([1., NAN]))),
    Case("maximum_backward", lambda t: grad_of(t, lambda x: t.maximum(x, t.tensor([1., 1., 2.], dtype=t.float64)),
                                               [NAN, 1., 3.])),
    Case("minimum_backward_other_nan", lambda t: grad_of(t, lambda x: t.minimum(x, t.tensor([NAN, 1.], dtype=t.float64)),
                                                         [0., 2.])),
    Case("clamp", lambda t: t.tensor([NAN, 5.]).clamp(0, 1)),
    Case("clamp_backward", lambda t: grad_of(t, lambda x: x.clamp(0, 1), [NAN, 0., 1., .5])),
    Case("clamp_min", lambda t: t.tensor([NAN, -1.]).clamp(min=0)),
    Case("clamp_max_backward", lambda t: grad_of(t, lambda x: x.clamp(max=0), [NAN, -1., 1.])),
    Case("max", lambda t: t.tensor([1., NAN, 2.]).max()),
    Case("min", lambda t: t.tensor([1., NAN, 2.]).min()),
    Case("amax_dim", lambda t: t.tensor([[1., NAN], [2., 3.]]).amax(1)),
    Case("amin_dim", lambda t: t.tensor([[1., NAN], [2., 3.]]).amin(0)),
    Case("max_dim", lambda t: t.tensor([[1., NAN, 3.], [2., 3., 1.]]).max(1)),
    Case("argmax", lambda t: t.tensor([1., NAN, 2.]).argmax()),
    Case("max_backward", lambda t: grad_of(t, lambda x: x.max(), [1., NAN, 2.])),
    Case("amax_backward", lambda t: grad_of(t, lambda x: x.amax(), [1., NAN, 2.])),
    Case("amax_dim_backward", lambda t: grad_of(t, lambda x: x.amax(1), [[1., NAN], [2., 3.]])),
    Case("hardtanh", lambda t: t.nn.functional.hardtanh(t.tensor([NAN, 3.]))),
    Case("hardtanh_backward", lambda t: grad_of(t, lambda x: t.nn.functional.hardtanh(x), [NAN, 1., -1., 0.])),
    Case("relu6", lambda t: t.nn.functional.relu6(t.tensor([NAN, 7.]))),
    Case("leaky_relu_backward", lambda t: grad_of(t, lambda x: t.nn.functional.leaky_relu(x), [NAN, -1.])),
    Case("sum_with_nan", lambda t: t.tensor([NAN, 1.]).sum()),
    Case("inf_minus_inf", lambda t: t.tensor([INF]) - t.tensor([INF])),
    Case("exp_backward_inf", lambda t: grad_of(t, lambda x: x.exp(), [INF, -INF])),
    Case("log_backward_zero", lambda t: grad_of(t, lambda x: x.log(), [0.])),
    Case("sigmoid_backward_inf", lambda t: grad_of(t, lambda x: x.sigmoid(), [INF, -INF])),
    Case("tanh_backward_inf", lambda t: grad_of(t, lambda x: x.tanh(), [INF, -INF])),
    Case("softmax_inf", lambda t: t.softmax(t.tensor([INF, 1.]), 0)),
    Case("softmax_all_neg_inf", lambda t: t.softmax(t.tensor([-INF, -INF]), 0)),
    Case("log_softmax_neg_inf", lambda t: t.log_softmax(t.tensor([-INF, 0.]), 0)),
    Case("logsumexp_inf", lambda t: t.tensor([INF, INF]).logsumexp(0)),
    Case("logsumexp_neg_inf", lambda t: t.tensor([-INF, -INF]).logsumexp(0)),
    Case("div_by_zero_float", lambda t: t.tensor([1., -1., 0.]) / 0),
    Case("sign_nan", lambda t: t.sign(t.tensor([NAN, -2., 0., 3.]))),
    Case("abs_backward_nan", lambda t: grad_of(t, lambda x: x.abs(), [NAN, -1., 2.])),
]

EXPECTED = {
    'relu': ok(('float32', [3], [nan, 0.0, 1.0])),
    'relu_backward': ok(('float64', [3], [nan, 0.0, 1.0]), ('float64', [3], [1.0, 0.0, 1.0])),
    'relu_inplace': ok(('float32', [2], [nan, 0.0])),
    'maximum': ok(('float32', [2], [nan, nan])),
    'minimum': ok(('float32', [2], [nan, nan])),
    'maximum_backward': ok(('float64', [3], [nan, 1.0, 3.0]), ('float64', [3], [1.0, 0.5, 1.0])),
    'minimum_backward_other_nan': ok(('float64', [2], [nan, 1.0]), ('float64', [2], [1.0, 0.0])),
    'clamp': ok(('float32', [2], [nan, 1.0])),
    'clamp_backward': ok(('float64', [4], [nan, 0.0, 1.0, 0.5]), ('float64', [4], [0.0, 1.0, 1.0, 1.0])),
    'clamp_min': ok(('float32', [2], [nan, 0.0])),
    'clamp_max_backward': ok(('float64', [3], [nan, -1.0, 0.0]), ('float64', [3], [0.0, 1.0, 0.0])),
    'max': ok(('float32', [], nan)),
    'min': ok(('float32', [], nan)),
    'amax_dim': ok(('float32', [2], [nan, 3.0])),
    'amin_dim': ok(('float32', [2], [1.0, nan])),
    'max_dim': ok(('float32', [2], [nan, 3.0]), ('int64', [2], [1, 1])),
    'argmax': ok(('int64', [], 1)),
    'max_backward': ok(('float64', [], nan), ('float64', [3], [0.0, 1.0, 0.0])),
    'amax_backward': ok(('float64', [], nan), ('float64', [3], [nan, nan, nan])),
    'amax_dim_backward': ok(('float64', [2], [nan, 3.0]), ('float64', [2, 2], [[nan, nan], [0.0, 1.0]])),
    'hardtanh': ok(('float32', [2], [nan, 1.0])),
    'hardtanh_backward': ok(('float64', [4], [nan, 1.0, -1.0, 0.0]), ('float64', [4], [1.0, 0.0, 0.0, 1.0])),
    'relu6': ok(('float32', [2], [nan, 6.0])),
    'leaky_relu_backward': ok(('float64', [2], [nan, -0.01]), ('float64', [2], [0.01, 0.01])),
    'sum_with_nan': ok(('float32', [], nan)),
    'inf_minus_inf': ok(('float32', [1], [nan])),
    'exp_backward_inf': ok(('float64', [2], [inf, 0.0]), ('float64', [2], [inf, 0.0])),
    'log_backward_zero': ok(('float64', [1], [-inf]), ('float64', [1], [inf])),
    'sigmoid_backward_inf': ok(('float64', [2], [1.0, 0.0]), ('float64', [2], [0.0, 0.0])),
    'tanh_backward_inf': ok(('float64', [2], [1.0, -1.0]), ('float64', [2], [0.0, 0.0])),
    'softmax_inf': ok(('float32', [2], [nan, nan])),
    'softmax_all_neg_inf': ok(('float32', [2], [nan, nan])),
    'log_softmax_neg_inf': ok(('float32', [2], [-inf, 0.0])),
    'logsumexp_inf': ok(('float32', [], inf)),
    'logsumexp_neg_inf': ok(('float32', [], -inf)),
    'div_by_zero_float': ok(('float32', [3], [inf, -inf, nan])),
    'sign_nan': ok(('float32', [4], [0.0, -1.0, 0.0, 1.0])),
    'abs_backward_nan': ok(('float64', [3], [nan, 1.0, 2.0]), ('float64', [3], [0.0, -1.0, 1.0])),
}


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_nan_inf(torch, case):
    check(torch, case, EXPECTED[case.id])
