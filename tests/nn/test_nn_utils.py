"""nn.utils against torch: clip_grad_norm_ (every norm type, the returned norm, gradients scaled in
place, no scaling below the limit, parameters without gradients, the non-finite error),
clip_grad_value_, get_total_norm, parameters_to_vector / vector_to_parameters. Each body runs on
derivgen and on torch (the ``torch`` fixture)."""
import math

import pytest

from tests.support.torch_assert import assert_equal


def _params(torch):
    a = torch.nn.Parameter(torch.tensor([[3.0, -4.0], [1.0, 2.0]], dtype=torch.float64))
    b = torch.nn.Parameter(torch.tensor([0.5, -12.0], dtype=torch.float64))
    c = torch.nn.Parameter(torch.tensor([7.0], dtype=torch.float64))  # no gradient
    a.grad = torch.tensor([[3.0, -4.0], [1.0, 2.0]], dtype=torch.float64)
    b.grad = torch.tensor([0.5, -12.0], dtype=torch.float64)
    return [a, b, c]


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm(torch, norm_type, max_norm):
    params = _params(torch)
    before = [p.grad.clone() for p in params[:2]]
    total = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
    flat = torch.cat([g.reshape(-1) for g in before])
    expected = torch.linalg.vector_norm(flat, float(norm_type))
    assert_equal(total, expected)
    coef = min(max_norm / (float(expected) + 1e-6), 1.0)
    for p, g in zip(params[:2], before):
        assert_equal(p.grad, g * coef)
    assert params[2].grad is None


def test_clip_grad_norm_single_tensor_and_nonfinite(torch):
    p = torch.nn.Parameter(torch.ones(4))
    p.grad = torch.full((4,), 2.0)
    total = torch.nn.utils.clip_grad_norm_(p, 1.0)
    assert_equal(total, torch.tensor(4.0))
    assert_equal(p.grad, torch.full((4,), 2.0) * (1.0 / (4.0 + 1e-6)))
    p.grad = torch.tensor([1.0, float("inf"), 0.0, 0.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite, "
                                           "so it cannot be clipped."):
        torch.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert_equal(torch.nn.utils.clip_grad_norm_([], 1.0), torch.tensor(0.0))
    with pytest.warns(FutureWarning, match="`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                                           "`torch.nn.utils.clip_grad_norm_`."):
        torch.nn.utils.clip_grad_norm([p], 1.0)


def test_clip_grad_value_and_total_norm(torch):
    params = _params(torch)
    torch.nn.utils.clip_grad_value_(params, 2.5)
    assert_equal(params[0].grad, torch.tensor([[2.5, -2.5], [1.0, 2.0]], dtype=torch.float64))
    assert_equal(params[1].grad, torch.tensor([0.5, -2.5], dtype=torch.float64))
    total = torch.nn.utils.get_total_norm([params[0].grad, params[1].grad], norm_type=1)
    assert_equal(total, torch.tensor(11.0, dtype=torch.float64))


def test_parameters_to_vector_and_back(torch):
    m = torch.nn.Linear(3, 2)
    vec = torch.nn.utils.parameters_to_vector(m.parameters())
    assert vec.shape == (8,)
    assert_equal(vec[:6], m.weight.reshape(-1))
    new = torch.arange(8.0)
    torch.nn.utils.vector_to_parameters(new, m.parameters())
    assert_equal(m.weight, torch.arange(6.0).reshape(2, 3))
    assert_equal(m.bias, torch.tensor([6.0, 7.0]))
    assert isinstance(m.weight, torch.nn.Parameter) and m.weight.requires_grad
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        torch.nn.utils.vector_to_parameters([1.0], m.parameters())
