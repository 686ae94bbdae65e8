"""``autograd.grad`` and ``Tensor.backward`` as a PyTorch user relies on them.

Every test takes the ``torch`` fixture: it runs once with ``derivgen`` and once with real ``torch`` (when
installed; skipped loudly otherwise), so each expectation is shown to be PyTorch's own behaviour.
"""
import re
import warnings

import numpy as np
import pytest

from tests.support.runner import run_python


ERR_TWICE = "Trying to backward through the graph a second time"


def _val(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t, dtype=np.float64)


def _x(torch, values=(0.5, -1.0, 2.0), requires_grad=True):
    return torch.tensor(list(values), dtype=torch.float64, requires_grad=requires_grad)


# ---- autograd.grad ---------------------------------------------------------------------------------

def test_grad_returns_gradients_and_never_writes_dot_grad(torch):
    x = _x(torch)
    w = _x(torch, (1.5, 2.0, -0.5))
    y = (x * w).sin().sum()
    gx, gw = torch.autograd.grad(y, [x, w])
    expect = np.cos(_val(x) * _val(w))
    np.testing.assert_allclose(_val(gx), expect * _val(w))
    np.testing.assert_allclose(_val(gw), expect * _val(x))
    assert x.grad is None and w.grad is None
    assert not gx.requires_grad and gx.grad_fn is None


def test_grad_single_tensor_input_gives_one_tuple(torch):
    x = _x(torch)
    res = torch.autograd.grad((x * x).sum(), x)
    assert isinstance(res, tuple) and len(res) == 1
    np.testing.assert_allclose(_val(res[0]), 2 * _val(x))


def test_grad_frees_the_graph_by_default(torch):
    x = _x(torch)
    y = x.exp().sum()
    torch.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match=re.escape(ERR_TWICE)):
        torch.autograd.grad(y, x)


def test_retain_graph_keeps_the_graph(torch):
    x = _x(torch)
    y = x.exp().sum()
    g1, = torch.autograd.grad(y, x, retain_graph=True)
    g2, = torch.autograd.grad(y, x)
    np.testing.assert_allclose(_val(g1), _val(g2))


def test_retain_graph_defaults_to_create_graph(torch):
    x = _x(torch)
    y = x.exp().sum()
    g1, = torch.autograd.grad(y, x, create_graph=True)
    assert g1.requires_grad and g1.grad_fn is not None
    g2, = torch.autograd.grad(y, x)  # the graph was kept because create_graph=True
    np.testing.assert_allclose(_val(g1), _val(g2))


def test_unused_input_message(torch):
    x = _x(torch)
    z = _x(torch, (1.0, 1.0, 1.0))
    y = (x * x).sum()
    msg = ("The differentiated Tensor at index 1 appears to not have been used in the graph. "
           "Set allow_unused=True if this is the desired behavior.")
    with pytest.raises(RuntimeError, match=re.escape(msg)):
        torch.autograd.grad(y, [x, z])


def test_allow_unused_gives_none_and_materialize_grads_gives_zeros(torch):
    x = _x(torch)
    z = _x(torch, (1.0, 1.0, 1.0))
    gx, gz = torch.autograd.grad((x * x).sum(), [x, z], retain_graph=True, allow_unused=True)
    assert gz is None
    np.testing.assert_allclose(_val(gx), 2 * _val(x))
    y = (x * x).sum()
    gx, gz = torch.autograd.grad(y, [x, z], materialize_grads=True)
    np.testing.assert_array_equal(_val(gz), np.zeros(3))
    assert tuple(gz.shape) == (3,)
    with pytest.raises(ValueError, match="materialize_grads=True"):
        torch.autograd.grad((x * x).sum(), [x, z], materialize_grads=True, allow_unused=False)


def test_grad_argument_errors(torch):
    x = _x(torch)
    c = _x(torch, requires_grad=False)
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        torch.autograd.grad((x * c).sum(), [x, c])
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        torch.autograd.grad(c.sum(), [x])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        torch.autograd.grad(x * 2, [x])
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of \w+\.Size\(\[2\]\) "
                                           r"and output\[0\] has a shape of \w+\.Size\(\[3\]\)"):
        torch.autograd.grad(x * 2, [x], torch.ones(2, dtype=torch.float64))


def test_grad_with_grad_outputs_and_several_outputs(torch):
    x = _x(torch)
    a = x * 3
    b = x.sin()
    va = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    vb = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64)
    g, = torch.autograd.grad([a, b], x, [va, vb])
    np.testing.assert_allclose(_val(g), 3 * _val(va) + np.cos(_val(x)) * _val(vb))


def test_grad_with_respect_to_a_non_leaf_and_the_output_itself(torch):
    x = _x(torch)
    y = x * 2
    z = (y * y).sum()
    gy, = torch.autograd.grad(z, y, retain_graph=True)
    np.testing.assert_allclose(_val(gy), 2 * _val(y))
    gz, = torch.autograd.grad(z, z)
    assert float(gz) == 1.0


def test_grad_of_the_same_input_twice(torch):
    x = _x(torch)
    g1, g2 = torch.autograd.grad((x * x).sum(), [x, x])
    np.testing.assert_allclose(_val(g1), 2 * _val(x))
    np.testing.assert_allclose(_val(g2), 2 * _val(x))


def test_broadcast_gradients_are_reduced_to_the_input_shape(torch):
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    m = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64, requires_grad=True)
    gx, gm = torch.autograd.grad((x * m).sum(), [x, m])
    assert tuple(gx.shape) == (3,) and tuple(gm.shape) == (2, 3)
    np.testing.assert_allclose(_val(gx), [5.0, 7.0, 9.0])


# ---- only what is needed runs ---------------------------------------------------------------------------

def _counting_prehook(node, counter, key):
    def hook(grad_outputs):
        counter[key] = counter.get(key, 0) + 1
    return node.register_prehook(hook)


def test_grad_runs_only_the_part_of_the_graph_it_needs(torch):
    a = _x(torch)
    b = _x(torch, (3.0, 1.0, -2.0))
    branch_a = a.exp()
    branch_b = b.sin()
    out = (branch_a + branch_b).sum()
    calls = {}
    _counting_prehook(branch_a.grad_fn, calls, "a")
    _counting_prehook(branch_b.grad_fn, calls, "b")
    _counting_prehook(out.grad_fn, calls, "sum")
    ga, = torch.autograd.grad(out, a)
    np.testing.assert_allclose(_val(ga), np.exp(_val(a)))
    assert calls == {"a": 1, "sum": 1}  # SinBackward0 (only leads to b) never ran
    assert a.grad is None and b.grad is None


def test_grad_of_a_non_leaf_does_not_run_its_grad_fn(torch):
    x = _x(torch)
    y = x.exp()
    z = (y * 2).sum()
    calls = {}
    _counting_prehook(y.grad_fn, calls, "exp")
    _counting_prehook(z.grad_fn, calls, "sum")
    gy, = torch.autograd.grad(z, y)
    np.testing.assert_allclose(_val(gy), [2.0, 2.0, 2.0])
    assert calls == {"sum": 1}


def test_backward_inputs_accumulates_only_into_those_inputs(torch):
    a = _x(torch)
    b = _x(torch, (3.0, 1.0, -2.0))
    branch_b = b.sin()
    calls = {}
    _counting_prehook(branch_b.grad_fn, calls, "b")
    out = (a.exp() + branch_b).sum()
    out.backward(inputs=[a])
    np.testing.assert_allclose(_val(a.grad), np.exp(_val(a)))
    assert b.grad is None
    assert calls == {}
    with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be empty."):
        (a * 2).sum().backward(inputs=[])


def test_backward_inputs_with_a_non_leaf_fills_its_grad(torch):
    x = _x(torch)
    y = x * 2
    (y * y).sum().backward(inputs=[y])
    np.testing.assert_allclose(_val(y.grad), 2 * _val(y))
    assert x.grad is None


# ---- Tensor.backward ----------------------------------------------------------------------------------

def test_backward_accumulates_into_leaves(torch):
    x = _x(torch)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    np.testing.assert_allclose(_val(x.grad), 2 * _val(x))
    y.backward()
    np.testing.assert_allclose(_val(x.grad), 4 * _val(x))
    assert x.grad.grad_fn is None and not x.grad.requires_grad


def test_backward_twice_without_retain_graph_raises(torch):
    x = _x(torch)
    y = x.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError, match=re.escape(ERR_TWICE)):
        y.backward()
    with pytest.raises(RuntimeError, match=re.escape(ERR_TWICE)):
        y.grad_fn.next_functions[0][0]._saved_result


def test_backward_through_nodes_without_saved_tensors_can_repeat(torch):
    x = _x(torch)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(_val(x.grad), [2.0, 2.0, 2.0])


def test_backward_with_gradient_argument(torch):
    x = _x(torch)
    y = x * x
    v = torch.tensor([1.0, 0.0, -2.0], dtype=torch.float64)
    y.backward(gradient=v)
    np.testing.assert_allclose(_val(x.grad), 2 * _val(x) * _val(v))
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * x).backward()


@pytest.mark.parametrize("lib", ["derivgen", "torch"])
def test_backward_create_graph_warns(lib):
    # torch warns once per process (TORCH_WARN_ONCE): a fresh interpreter sees the first warning
    if lib == "torch":
        pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed")
    code = (f"import warnings, {lib} as torch\n"
            "x = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64, requires_grad=True)\n"
            "with warnings.catch_warnings(record=True) as rec:\n"
            "    warnings.simplefilter('always')\n"
            "    (x * x * x).sum().backward(create_graph=True)\n"
            "print([str(r.message)[:82] for r in rec])\n")
    out = run_python(code)
    assert out.returncode == 0, out.stderr
    assert "Using backward() with create_graph=True will create a reference cycle" in out.stdout


def test_backward_create_graph_builds_a_differentiable_grad(torch):
    x = _x(torch)
    y = (x * x * x).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y.backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    np.testing.assert_allclose(_val(x.grad), 3 * _val(x) ** 2)
    g2, = torch.autograd.grad(x.grad.sum(), x)
    np.testing.assert_allclose(_val(g2), 6 * _val(x))


def test_backward_of_several_roots(torch):
    x = _x(torch)
    a = (x * 2).sum()
    b = x.sin().sum()
    torch.autograd.backward([a, b])
    np.testing.assert_allclose(_val(x.grad), 2 + np.cos(_val(x)))
    x.grad = None
    torch.autograd.backward([x * 3], [torch.ones(3, dtype=torch.float64)])
    np.testing.assert_allclose(_val(x.grad), [3.0, 3.0, 3.0])


def test_nonleaf_grad_is_none_with_a_warning(torch):
    x = _x(torch)
    y = x * 2
    y.sum().backward()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert y.grad is None
    assert any("is not a leaf Tensor is being accessed" in str(w.message) for w in rec)


def test_get_gradient_edge(torch):
    from importlib import import_module
    graph = import_module(torch.__name__ + ".autograd.graph")
    x = _x(torch)
    y = x * 2
    edge = graph.get_gradient_edge(y)
    assert edge.node is y.grad_fn and edge.output_nr == 0
    leaf_edge = graph.get_gradient_edge(x)
    assert leaf_edge.node.name().endswith("::autograd::AccumulateGrad") and leaf_edge.node.variable is x
    with pytest.raises(RuntimeError, match="It is not possible to get the gradient edge for a Tensor that does not "
                                           "require gradients"):
        graph.get_gradient_edge(_x(torch, requires_grad=False))


def test_grad_with_a_dict_of_inputs(torch):
    x = _x(torch)
    w = _x(torch, (1.5, 2.0, -0.5))
    res = torch.autograd.grad((x * w).sum(), {"x": x, "w": w})
    assert isinstance(res, dict) and list(res) == ["x", "w"]
    np.testing.assert_allclose(_val(res["x"]), _val(w))
    np.testing.assert_allclose(_val(res["w"]), _val(x))


def test_autograd_backward_positional_order(torch):
    x = _x(torch)
    y = x * 2
    # torch.autograd.backward(tensors, grad_tensors, retain_graph, create_graph, grad_variables, inputs)
    torch.autograd.backward([y], [torch.ones(3, dtype=torch.float64)], None, False, None, [x])
    np.testing.assert_allclose(_val(x.grad), [2.0, 2.0, 2.0])
