"""Activation modules with ``inplace=True`` against torch: the result is the input tensor itself, its
version moves by one, values and gradients equal torch's, the printed form, and the node torch records
torch records, node by node: ELU, SELU, CELU, LeakyReLU and Threshold have in-place rows of their own
(EluBackward1, ...: the backward reads the result), SiLU, Mish, Hardswish and Hardsigmoid record their
out-of-place node over the saved original input."""
import pytest

from tests.support.torch_assert import assert_equal

CASES = [("ReLU", (), "ReluBackward0"), ("Hardtanh", (-0.5, 0.5), "HardtanhBackward0"),
         ("ReLU6", (), "HardtanhBackward0"), ("ELU", (0.7,), "EluBackward1"), ("LeakyReLU", (0.2,), "LeakyReluBackward1"),
         ("SiLU", (), "SiluBackward0"), ("Mish", (), "MishBackward0"), ("CELU", (1.5,), "CeluBackward1"),
         ("SELU", (), "EluBackward1"), ("Hardswish", (), "HardswishBackward0"),
         ("Hardsigmoid", (), "HardsigmoidBackward0"), ("Threshold", (0.1, -2.0), "ThresholdBackward1")]


@pytest.mark.parametrize("name,args,node", CASES, ids=[c[0] for c in CASES])
def test_inplace_activation(torch, name, args, node):
    x = torch.tensor([[-4.0, -1.0, -0.25], [0.0, 0.3, 3.5]], dtype=torch.float64, requires_grad=True)
    m = getattr(torch.nn, name)(*args, inplace=True)
    ref = getattr(torch.nn, name)(*args)(x)
    y = x.clone()
    out = m(y)
    assert out is y and y._version == 1
    assert_equal(out, ref)
    assert out.grad_fn.name() == node
    assert [f.name() for f, _ in out.grad_fn.next_functions] == ["CloneBackward0"]
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


# torch's saved values of each in-place node: the result (or, for threshold_, the original input)
SAVED = [("elu", dict(alpha=0.7), ["_saved_alpha", "_saved_input_scale", "_saved_result", "_saved_scale"]),
         ("celu", dict(alpha=1.5), ["_saved_alpha", "_saved_result"]),
         ("leaky_relu", dict(negative_slope=0.2), ["_saved_negative_slope", "_saved_result"]),
         ("threshold", dict(threshold=0.1, value=-2.0), ["_saved_self", "_saved_threshold"])]


@pytest.mark.parametrize("fn,kwargs,saved", SAVED, ids=[c[0] for c in SAVED])
def test_inplace_node_saves_what_torch_saves(torch, fn, kwargs, saved):
    x = torch.tensor([-2.0, -0.5, 0.05, 0.4, 3.0], dtype=torch.float64, requires_grad=True)
    y = x.clone()
    out = getattr(torch.nn.functional, fn + "_")(y, **kwargs)
    assert out is y
    assert sorted(k for k in dir(out.grad_fn) if k.startswith("_saved_") and k != "_saved_tensor_slots") \
        == saved
    if "_saved_result" in saved:
        assert_equal(out.grad_fn._saved_result, out.detach())
    else:
        assert_equal(out.grad_fn._saved_self, x.detach())


@pytest.mark.parametrize("fn,kwargs", [("elu", dict(alpha=0.7)), ("celu", dict(alpha=1.5)), ("selu", {}),
                                       ("leaky_relu", dict(negative_slope=0.2)),
                                       ("threshold", dict(threshold=0.1, value=-2.0)), ("silu", {}), ("mish", {})])
def test_inplace_double_backward_matches_out_of_place(torch, fn, kwargs):
    x = torch.tensor([-2.0, -0.5, 0.05, 0.4, 3.0], dtype=torch.float64, requires_grad=True)
    f = getattr(torch.nn.functional, fn)
    grads = []
    for inplace in (False, True):
        out = f(x.clone(), inplace=inplace, **kwargs)
        (g,) = torch.autograd.grad((out * out).sum(), x, create_graph=True)
        (gg,) = torch.autograd.grad((g * g).sum(), x)
        grads.append((g.detach(), gg))
    assert_equal(grads[1][0], grads[0][0])
    assert_equal(grads[1][1], grads[0][1])


@pytest.mark.parametrize("fn,kwargs,text", [
    ("elu", dict(alpha=-1.0), "In-place elu backward calculation is triggered with a negative slope"),
    ("celu", dict(alpha=-1.0), "In-place elu backward calculation is triggered with a negative slope"),
    ("leaky_relu", dict(negative_slope=-0.1), "In-place leakyReLu backward calculation is triggered with a "
                                              "negative slope")])
def test_negative_slope_in_place_backward_is_refused(torch, fn, kwargs, text):
    x = torch.tensor([-2.0, 1.0], dtype=torch.float64, requires_grad=True)
    out = getattr(torch.nn.functional, fn)(x.clone(), inplace=True, **kwargs)
    with pytest.raises(RuntimeError, match=text):
        out.sum().backward()


def test_saved_result_modified_in_place_is_detected(torch):
    x = torch.tensor([-2.0, 1.0], dtype=torch.float64, requires_grad=True)
    y = torch.nn.functional.elu(x.clone(), inplace=True)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been "
                                           "modified by an inplace operation"):
        y.sum().backward()


def test_threshold_function_and_node(torch):
    x = torch.tensor([-2.0, 0.1, 0.5], dtype=torch.float64, requires_grad=True)
    out = torch.threshold(x, 0.1, 7.0)
    assert out.grad_fn.name() == "ThresholdBackward0"
    assert_equal(out, torch.tensor([7.0, 7.0, 0.5], dtype=torch.float64))
    assert_equal(torch.threshold(torch.tensor([1, 2, 3]), 1, 7), torch.tensor([7, 2, 3]))
    (g,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    assert_equal(g, torch.tensor([0.0, 0.0, 1.0], dtype=torch.float64))
