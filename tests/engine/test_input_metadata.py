"""What a node knows of the gradients it receives (torch's ``Node._input_metadata``: the shape and dtype of
each forward output), and its use: a ``GradientEdge`` given as a root without a gradient gets implicit
ones of that shape, as a tensor does. Each test runs on PyTorch 2.13 and on derivgen."""
import pytest

from tests.support.torch_assert import assert_equal


def _meta(node):
    return [(tuple(m.shape), m.dtype) for m in node._input_metadata]


def test_one_output_node_records_its_output(torch):
    a = torch.ones(2, 3, requires_grad=True)
    b = torch.ones(3, dtype=torch.float64, requires_grad=True)
    assert _meta((a * b).grad_fn) == [((2, 3), torch.float64)]
    assert _meta(a.sum().grad_fn) == [((), torch.float32)]
    assert _meta(a.t().grad_fn) == [((3, 2), torch.float32)]


def test_in_place_node_records_the_written_tensor(torch):
    x = torch.ones(2, 3, requires_grad=True).clone()
    x.mul_(torch.ones(3, dtype=torch.float64))
    assert _meta(x.grad_fn) == [((2, 3), torch.float32)]


def test_multi_output_nodes_record_each_differentiable_output(torch):
    a = torch.ones(5, 2, requires_grad=True)
    assert _meta(a.split(2)[0].grad_fn) == [((2, 2), torch.float32), ((2, 2), torch.float32),
                                            ((1, 2), torch.float32)]
    values, _ = a.max(dim=0)
    assert _meta(values.grad_fn) == [((2,), torch.float32)]


def test_custom_function_records_its_outputs(torch):
    class Two(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x.sum()

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2

    out, total = Two.apply(torch.ones(3, requires_grad=True))
    assert _meta(out.grad_fn) == [((3,), torch.float32), ((), torch.float32)]


def test_accumulate_grad_records_the_leaf(torch):
    leaf = torch.ones(2, 2, requires_grad=True)
    leaf.grad_dtype = torch.float64  # the cast to grad_dtype is AccumulateGrad's, not its metadata's
    acc = (leaf * 1).grad_fn.next_functions[0][0]
    assert _meta(acc) == [((2, 2), torch.float32)]


def test_gradient_edge_root_without_gradient_gets_ones(torch):
    leaf = torch.tensor([3.0], requires_grad=True)
    out = (leaf * leaf).sum()
    edge = torch.autograd.graph.get_gradient_edge(out)
    del out
    torch.autograd.backward(edge)
    assert_equal(leaf.grad, torch.tensor([6.0]))
    (g,) = torch.autograd.grad(torch.autograd.graph.get_gradient_edge(leaf * 4), leaf)
    assert_equal(g, torch.tensor([4.0]))


def test_gradient_edge_root_without_gradient_must_be_one_element(torch):
    leaf = torch.ones(3, requires_grad=True)
    edge = torch.autograd.graph.get_gradient_edge(leaf * 2)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        torch.autograd.backward(edge)


def test_gradient_edge_root_gradient_shape_is_checked(torch):
    leaf = torch.ones(3, requires_grad=True)
    edge = torch.autograd.graph.get_gradient_edge(leaf * 2)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of .*Size\(\[2\]\) and "
                                           r"output\[0\] has a shape of .*Size\(\[3\]\)"):
        torch.autograd.backward(edge, torch.ones(2))
