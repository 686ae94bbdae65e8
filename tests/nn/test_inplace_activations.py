"""Activation modules with ``inplace=True`` against torch: the result is the input tensor itself, its
version moves by one, values and gradients equal torch's, the printed form, and the node torch records
where derivgen records the same one (ReLU, Hardtanh, ReLU6: one in-place node)."""
import pytest

from tests.support.torch_assert import assert_equal

CASES = [("ReLU", (), "ReluBackward0"), ("Hardtanh", (-0.5, 0.5), "HardtanhBackward0"),
         ("ReLU6", (), "HardtanhBackward0"), ("ELU", (0.7,), None), ("LeakyReLU", (0.2,), None),
         ("SiLU", (), None), ("Mish", (), None), ("CELU", (1.5,), None), ("SELU", (), None),
         ("Hardswish", (), None), ("Hardsigmoid", (), None), ("Threshold", (0.1, -2.0), None)]


@pytest.mark.parametrize("name,args,node", CASES, ids=[c[0] for c in CASES])
def test_inplace_activation(torch, name, args, node):
    x = torch.tensor([[-4.0, -1.0, -0.25], [0.0, 0.3, 3.5]], dtype=torch.float64, requires_grad=True)
    m = getattr(torch.nn, name)(*args, inplace=True)
    ref = getattr(torch.nn, name)(*args)(x)
    y = x.clone()
    out = m(y)
    assert out is y and y._version == 1
    assert_equal(out, ref)
    if node is not None:
        assert out.grad_fn.name() == node
    w = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64)
    (gx,) = torch.autograd.grad((out * w).sum(), x)
    (gref,) = torch.autograd.grad((ref * w).sum(), x)
    assert_equal(gx, gref)
    assert "inplace=True" in repr(m) or name in ("Hardswish", "Hardsigmoid")


def test_inplace_on_a_leaf_is_refused(torch):
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place "
                                           "operation."):
        torch.nn.ReLU(inplace=True)(x)
