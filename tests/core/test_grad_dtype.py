"""``Tensor.grad_dtype``: the dtype AccumulateGrad casts a leaf's gradients to (None: none) and ``.grad`` must
have, beyond the ported upstream test. Each test runs on PyTorch 2.13 and on derivgen."""
import pytest

from tests.support.torch_assert import assert_equal


def test_grad_returns_the_leaf_grad_dtype(torch):
    r = torch.ones(2, requires_grad=True)
    r.grad_dtype = torch.float64
    (g,) = torch.autograd.grad((r * 2).sum(), r)
    assert g.dtype == torch.float64
    assert_equal(g, torch.full((2,), 2.0, dtype=torch.float64))


def test_accumulation_keeps_the_grad_dtype(torch):
    y = torch.ones(2, requires_grad=True)
    y.grad_dtype = torch.float64
    (y * 2).sum().backward()
    (y * 2).sum().backward()
    assert y.grad.dtype == torch.float64
    assert_equal(y.grad, torch.full((2,), 4.0, dtype=torch.float64))


def test_grad_dtype_with_create_graph(torch):
    m = torch.ones(2, requires_grad=True)
    m.grad_dtype = torch.float64
    (m * m).sum().backward(create_graph=True)
    assert m.grad.dtype == torch.float64
    assert_equal(m.grad, torch.full((2,), 2.0, dtype=torch.float64))


def test_new_tensors_take_the_default(torch):
    import copy
    q = torch.ones(2, requires_grad=True)
    q.grad_dtype = torch.float64
    assert q.detach().grad_dtype == torch.float32
    assert copy.deepcopy(q).grad_dtype == torch.float32


def test_assigned_grad_size_and_dtype_errors(torch):
    z = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"attempting to assign a gradient of size '\[3\]' to a tensor of size "
                                           r"'\[2\]'. Please ensure that the gradient and the tensor are the same size"):
        z.grad = torch.ones(3)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype 'double' to a tensor with "
                                           "grad_dtype 'Float'"):
        z.grad = torch.ones(2, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="grad_dtype must be a torch.dtype or None, but got int"):
        z.grad_dtype = 3
