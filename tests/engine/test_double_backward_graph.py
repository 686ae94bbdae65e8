"""Double-backward graphs against PyTorch: the node names a create_graph backward records through helper
rows (``threshold_backward``) and through CopySlices, and the second-order values. Each test runs on
PyTorch 2.13 (the oracle) and on derivgen."""
import pytest

from tests.support.torch_assert import assert_equal


def _name(fn):
    """A node's name without the library prefix (``torch::autograd::`` / ``derivgen::autograd::``)."""
    return None if fn is None else fn.name().split("::")[-1]


def _names(fn, depth):
    """The node names of the graph under ``fn``, ``depth`` levels deep, in edge order."""
    if fn is None or depth == 0:
        return [_name(fn)]
    return [_name(fn), [_names(f, depth - 1) for f, _ in fn.next_functions]]


@pytest.mark.parametrize("name", ["relu", "threshold", "relu_inplace", "threshold_inplace"])
def test_helper_row_node_in_double_backward(torch, name):
    F = torch.nn.functional
    fns = {"relu": torch.relu, "threshold": lambda t: F.threshold(t, 0.25, 2.0),
           "relu_inplace": lambda t: F.relu(t * 1, inplace=True),
           "threshold_inplace": lambda t: F.threshold(t * 1, 0.25, 2.0, True)}
    x = torch.tensor([-1.0, 0.5, 2.0, 0.25], dtype=torch.float64, requires_grad=True)
    y = fns[name](x)
    (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    # torch: relu and threshold's backward is threshold_backward, whose node is ThresholdBackwardBackward0
    assert "ThresholdBackwardBackward0" in repr(_names(g.grad_fn, 3))
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert_equal(gg, {"relu": torch.tensor([0.0, 2.0, 2.0, 2.0], dtype=torch.float64),
                      "threshold": torch.tensor([0.0, 2.0, 2.0, 0.0], dtype=torch.float64)}[name.split("_")[0]])


def test_threshold_backward_passes_nan_gradient(torch):
    x = torch.tensor([float("nan"), 1.0, -1.0], dtype=torch.float64, requires_grad=True)
    torch.relu(x).sum().backward()
    assert_equal(x.grad, torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64))


def test_copyslices_create_graph_records_torch_graph(torch):
    # an in-place op on a view: the base's CopySlices, differentiated with create_graph, gives a gradient
    # whose grad_fn is CopySlices (the region copied back) with the wrapped op's double backward as edge 1
    x = torch.tensor([[-1.0, 0.5], [2.0, -0.5]], dtype=torch.float64, requires_grad=True)
    base = x + 1
    view = base.view_as(base)[1]
    torch.nn.functional.threshold(view, 0.75, 0.0, True)
    p = torch.sigmoid(base)
    (g,) = torch.autograd.grad(p, x, grad_outputs=torch.ones_like(p), create_graph=True)
    assert _name(g.grad_fn) == "CopySlices"
    assert _name(g.grad_fn.next_functions[1][0]) == "ThresholdBackwardBackward0"
    (gg,) = torch.autograd.grad(g.sum(), x)
    s = torch.sigmoid((x.detach() + 1))
    expected = s * (1 - s) * (1 - 2 * s)
    expected[1] = torch.tensor([0.0, 0.0], dtype=torch.float64) + (s * (1 - s) * (1 - 2 * s))[1] * \
        ((x.detach()[1] + 1) > 0.75)
    assert_equal(gg, expected)


def test_saved_output_of_inplace_view_op_rejoins_view_history(torch):
    # relu_ on a view saves its output; unpacked in the graph path, it belongs to the view's new history
    # (AsStrided/View -> CopySlices), not to the wrapped ReluBackward0 node, which only CopySlices runs
    x = torch.tensor([[[[1.0, -2.0, 3.0]]]], dtype=torch.float64, requires_grad=True)
    base = x * 2
    out = torch.nn.functional.relu(base.view(3), inplace=True)
    (g,) = torch.autograd.grad(out.pow(2).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert_equal(gg, torch.tensor([[[[8.0, 0.0, 8.0]]]], dtype=torch.float64))


def test_copyslices_gradgradcheck(torch):
    def f(a):
        b = a * 1.5
        torch.nn.functional.relu(b[1:], inplace=True)
        return (b * b).sum(0)
    x = torch.tensor([[0.3, -0.7], [-1.1, 0.9], [0.4, 1.3]], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradgradcheck(f, (x,))
