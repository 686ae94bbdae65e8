"""torch's subgradient conventions at kinks and singular points: relu/abs/clamp at the kink, ties of
max/amax/maximum, pow at 0 ** 0, sqrt and norm at 0."""
import pytest

from tests.support.edge import Case, check, grad_of, inf, ok


def _pow_both(t, base, exponent):
    x = t.tensor(base, dtype=t.float64, requires_grad=True)
    e = t.tensor(exponent, dtype=t.float64, requires_grad=True)
    t.pow(x, e).sum().backward()
    return x.grad, e.grad


def _pow_number_base(t, base, exponent):
    e = t.tensor(exponent, dtype=t.float64, requires_grad=True)
    t.pow(base, e).sum().backward()
    return e.grad


CASES = [
    Case("pow_zero_to_zero_both_grads", lambda t: _pow_both(t, 0., 0.)),
    Case("pow_zero_base_tensor_exponents", lambda t: _pow_both(t, [0., 0., 0.], [0., 1., 2.])),
    Case("pow_zero_base_negative_exponent", lambda t: _pow_both(t, [0.], [-1.])),
    Case("pow_number_zero_base", lambda t: _pow_number_base(t, 0., [0., 1., -1.])),
    Case("pow_number_base", lambda t: _pow_number_base(t, 2., [0., 1.])),
    Case("pow_scalar_exponent_zero", lambda t: grad_of(t, lambda x: x ** 0, [0., 1.])),
    Case("pow_half_at_zero", lambda t: grad_of(t, lambda x: x ** 0.5, [0.])),
    Case("abs_at_zero", lambda t: grad_of(t, lambda x: x.abs(), [0., -1.])),
    Case("relu_at_zero", lambda t: grad_of(t, lambda x: x.relu(), [0.])),
    Case("sqrt_at_zero", lambda t: grad_of(t, lambda x: x.sqrt(), [0.])),
    Case("sign", lambda t: grad_of(t, lambda x: x.sign(), [0., 1.])),
    Case("max_ties", lambda t: grad_of(t, lambda x: x.max(), [1., 2., 2.])),
    Case("amax_ties", lambda t: grad_of(t, lambda x: x.amax(), [1., 2., 2.])),
    Case("max_dim_ties", lambda t: grad_of(t, lambda x: x.max(0)[0], [2., 2.])),
    Case("maximum_ties", lambda t: grad_of(t, lambda x: t.maximum(x, t.ones(2, dtype=t.float64)), [1., 2.])),
    Case("minimum_ties", lambda t: grad_of(t, lambda x: t.minimum(x, t.ones(2, dtype=t.float64)), [1., 0.])),
    Case("clamp_at_bounds", lambda t: grad_of(t, lambda x: x.clamp(0., 1.), [0., 1.])),
    Case("hardtanh_at_bounds", lambda t: grad_of(t, lambda x: t.nn.functional.hardtanh(x), [-1., 1.])),
    Case("norm_at_zero", lambda t: grad_of(t, lambda x: x.norm(), [0., 0.])),
    Case("leaky_relu_at_zero", lambda t: grad_of(t, lambda x: t.nn.functional.leaky_relu(x, 0.1), [0.])),
]

EXPECTED = {
    'pow_zero_to_zero_both_grads': ok(('float64', [], 0.0), ('float64', [], 0.0)),
    'pow_zero_base_tensor_exponents': ok(('float64', [3], [0.0, 1.0, 0.0]), ('float64', [3], [0.0, 0.0, 0.0])),
    'pow_zero_base_negative_exponent': ok(('float64', [1], [-inf]), ('float64', [1], [-inf])),
    'pow_number_zero_base': ok(('float64', [3], [0.0, 0.0, -inf])),
    'pow_number_base': ok(('float64', [2], [0.6931471805599453, 1.3862943611198906])),
    'pow_scalar_exponent_zero': ok(('float64', [2], [1.0, 1.0]), ('float64', [2], [0.0, 0.0])),
    'pow_half_at_zero': ok(('float64', [1], [0.0]), ('float64', [1], [inf])),
    'abs_at_zero': ok(('float64', [2], [0.0, 1.0]), ('float64', [2], [0.0, -1.0])),
    'relu_at_zero': ok(('float64', [1], [0.0]), ('float64', [1], [0.0])),
    'sqrt_at_zero': ok(('float64', [1], [0.0]), ('float64', [1], [inf])),
    'sign': ok(('float64', [2], [0.0, 1.0]), ('float64', [2], [0.0, 0.0])),
    'max_ties': ok(('float64', [], 2.0), ('float64', [3], [0.0, 0.5, 0.5])),
    'amax_ties': ok(('float64', [], 2.0), ('float64', [3], [0.0, 0.5, 0.5])),
    'max_dim_ties': ok(('float64', [], 2.0), ('float64', [2], [1.0, 0.0])),
    'maximum_ties': ok(('float64', [2], [1.0, 2.0]), ('float64', [2], [0.5, 1.0])),
    'minimum_ties': ok(('float64', [2], [1.0, 0.0]), ('float64', [2], [0.5, 1.0])),
    'clamp_at_bounds': ok(('float64', [2], [0.0, 1.0]), ('float64', [2], [1.0, 1.0])),
    'hardtanh_at_bounds': ok(('float64', [2], [-1.0, 1.0]), ('float64', [2], [0.0, 0.0])),
    'norm_at_zero': ok(('float64', [], 0.0), ('float64', [2], [0.0, 0.0])),
    'leaky_relu_at_zero': ok(('float64', [1], [0.0]), ('float64', [1], [0.1])),
}


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_kinks(torch, case):
    check(torch, case, EXPECTED[case.id])
