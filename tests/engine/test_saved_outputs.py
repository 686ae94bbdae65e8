"""The output an op saves for its backward (``exp``: ``grad * result``) is kept as its array and version
counter when the op returns one fresh Tensor and no saved-tensor hooks are set (no SavedVariable object
until one is asked for). What can be observed must stay torch's: the saved value, its grad_fn, version
errors, release, hooks on the raw saved value, double backward. Bodies run against derivgen and PyTorch
(the ``torch`` fixture)."""
import gc
import re

import numpy as np
import pytest

import derivgen


def _leaf(torch):
    return torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid"])
def test_saved_result_is_the_output_with_the_nodes_grad_fn(torch, op):
    x = _leaf(torch)
    y = getattr(x, op)()
    saved = y.grad_fn._saved_result
    assert saved is not y  # torch too returns a new Tensor over the output's data
    assert saved.grad_fn is y.grad_fn and saved.output_nr == 0
    assert saved._version == y._version == 0
    np.testing.assert_array_equal(saved.detach().numpy(), y.detach().numpy())
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.grad_fn._saved_result


def test_output_modified_in_place_raises_torchs_version_error(torch):
    x = _leaf(torch)
    y = x.exp()
    z = y * 2
    y.add_(1)  # y is now output 0 of AddBackward0, at version 1
    text = ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            "[{}.DoubleTensor [3]], which is output 0 of Exp, is at version 1; expected version 0 "
            "instead.").format(torch.__name__)
    with pytest.raises(RuntimeError, match=re.escape(text)):
        z.sum().backward()


def test_output_modified_through_a_view_raises(torch):
    x = _leaf(torch)
    y = x.tanh()
    v = y[1:]
    with torch.no_grad():
        v.mul_(3)  # shares y's version counter
    with pytest.raises(RuntimeError, match=re.escape("is at version 1; expected version 0 instead")):
        y.sum().backward()
    with pytest.raises(RuntimeError, match=re.escape("is at version 1; expected version 0 instead")):
        y.grad_fn._saved_result


def test_gradient_uses_the_saved_output_and_retain_graph(torch):
    x = _leaf(torch)
    y = x.sigmoid()
    y.sum().backward(retain_graph=True)
    first = x.grad.clone()
    y.sum().backward()
    s = 1 / (1 + np.exp(-np.array([0.5, -1.0, 2.0])))
    np.testing.assert_allclose(first.numpy(), s * (1 - s), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), 2 * s * (1 - s), rtol=1e-12)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


def test_raw_saved_output_is_one_object_and_takes_hooks(torch):
    x = _leaf(torch)
    y = x.exp()
    raw = y.grad_fn._raw_saved_result
    assert raw is y.grad_fn._raw_saved_result
    seen = []
    raw.register_hooks(lambda t: seen.append("pack") or t * 2, lambda t: seen.append("unpack") or t)
    y.sum().backward()
    assert seen == ["pack", "unpack"]
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([0.5, -1.0, 2.0]), rtol=1e-12)


def test_saved_tensor_hooks_see_the_output(torch):
    x = _leaf(torch)
    packed = []

    def pack(t):
        packed.append(t.detach().clone())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = x.exp()
    assert len(packed) == 1
    np.testing.assert_array_equal(packed[0].numpy(), y.detach().numpy())
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, -1.0, 2.0]), rtol=1e-12)


def test_double_backward_through_a_saved_output(torch):
    x = _leaf(torch)
    y = x.tanh()
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    g.sum().backward()
    t = np.tanh([0.5, -1.0, 2.0])
    np.testing.assert_allclose(g.detach().numpy(), 1 - t * t, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), -2 * t * (1 - t * t), rtol=1e-12)


def test_forward_over_reverse_through_a_saved_output(torch):
    fwad = torch.autograd.forward_ad
    x = _leaf(torch)
    with fwad.dual_level():
        xd = fwad.make_dual(x, torch.ones_like(x))
        y = xd.exp()
        (g,) = torch.autograd.grad(y.sum(), xd, create_graph=True)
        tangent = fwad.unpack_dual(g).tangent
    np.testing.assert_allclose(tangent.detach().numpy(), np.exp([0.5, -1.0, 2.0]), rtol=1e-12)


def test_a_recorded_exp_leaves_four_tracked_objects():
    # the result Tensor, its node, the node's tuple of next nodes and the output's version counter
    x = derivgen.ones(8, requires_grad=True)
    h = x * 1
    keep = []
    gc.collect()
    gc.disable()
    try:
        before = gc.get_count()[0]
        for _ in range(1000):
            h = h.exp() if len(keep) % 2 else h.tanh()
            keep.append(h)
        tracked = (gc.get_count()[0] - before) / 1000
    finally:
        gc.enable()
    assert tracked < 4.5  # a SavedVariable per saved output would make it 5
