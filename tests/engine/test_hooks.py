"""Hooks: Tensor.register_hook, retain_grad, register_post_accumulate_grad_hook, Node.register_hook and
Node.register_prehook, their order, handles and error messages, checked against real torch too."""
import re

import numpy as np
import pytest


def _val(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def _x(torch, values=(0.5, -1.0, 2.0), requires_grad=True):
    return torch.tensor(list(values), dtype=torch.float64, requires_grad=requires_grad)


# ---- Tensor.register_hook ----------------------------------------------------------------------------

def test_nonleaf_hook_sees_and_replaces_the_gradient(torch):
    x = _x(torch)
    y = x * 2
    seen = []

    def hook(g):
        seen.append(_val(g))
        return g * 10
    y.register_hook(hook)
    (y * y).sum().backward()
    np.testing.assert_allclose(seen[0], 2 * _val(y))
    np.testing.assert_allclose(_val(x.grad), 10 * 2 * _val(y) * 2)


def test_leaf_hook_runs_before_accumulation_and_can_replace(torch):
    x = _x(torch)
    seen = []

    def hook(g):
        seen.append((_val(g), x.grad))
        return g + 1
    x.register_hook(hook)  # registered before any graph uses x
    (x * 3).sum().backward()
    g, grad_then = seen[0]
    np.testing.assert_allclose(g, [3.0, 3.0, 3.0])
    assert grad_then is None  # the hook ran before .grad was written
    np.testing.assert_allclose(_val(x.grad), [4.0, 4.0, 4.0])


def test_leaf_hook_registered_after_the_graph_exists(torch):
    x = _x(torch)
    y = (x * 3).sum()
    x.register_hook(lambda g: g * 2)
    y.backward()
    np.testing.assert_allclose(_val(x.grad), [6.0, 6.0, 6.0])


def test_hooks_chain_in_registration_order_and_remove(torch):
    x = _x(torch)
    y = x * 1
    order = []
    h1 = y.register_hook(lambda g: order.append("first") or g * 2)
    y.register_hook(lambda g: order.append(("second", float(g[0]))))
    y.sum().backward(retain_graph=True)
    assert order == ["first", ("second", 2.0)]
    np.testing.assert_allclose(_val(x.grad), [2.0, 2.0, 2.0])
    h1.remove()
    order.clear()
    x.grad = None
    y.sum().backward()
    assert order == [("second", 1.0)]
    np.testing.assert_allclose(_val(x.grad), [1.0, 1.0, 1.0])


def test_hook_on_unused_output_of_a_multi_output_node_gets_none(torch):
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64, requires_grad=True)
    a, b = (x * 1).split(2)
    seen = []
    a.register_hook(lambda g: seen.append(("a", g)))
    b.register_hook(lambda g: seen.append(("b", _val(g))))
    b.sum().backward()
    assert seen[0] == ("a", None) or seen[1] == ("a", None)
    assert len(seen) == 2
    np.testing.assert_allclose(_val(x.grad), [0.0, 0.0, 1.0, 1.0])


def test_hook_under_create_graph_gets_a_differentiable_gradient(torch):
    x = _x(torch)
    y = x * x
    seen = []
    y.register_hook(lambda g: seen.append(g.requires_grad))
    g, = torch.autograd.grad(y, x, torch.ones(3, dtype=torch.float64, requires_grad=True), create_graph=True)
    assert seen == [True]
    assert g.requires_grad


def test_register_hook_errors(torch):
    c = _x(torch, requires_grad=False)
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        c.register_hook(lambda g: g)

    def run(hook, leaf=False):
        x = _x(torch)
        if leaf:
            x.register_hook(hook)
            (x * 2).sum().backward()
        else:
            y = x * 2
            y.register_hook(hook)
            y.sum().backward()

    def shape_hook(g):
        return torch.ones(2, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="hook 'shape_hook' has changed the size of value"):
        run(shape_hook)
    with pytest.raises(RuntimeError, match="hook 'shape_hook' has changed the size of value"):
        run(shape_hook, leaf=True)

    def dtype_hook(g):
        return g.float()
    with pytest.raises(RuntimeError, match=r"hook 'dtype_hook' has changed the type of value \(was \w+\.DoubleTensor "
                                           r"got \w+\.FloatTensor\)"):
        run(dtype_hook)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        run(lambda g: 3)


# ---- retain_grad -----------------------------------------------------------------------------------------

def test_retain_grad_on_a_non_leaf(torch):
    x = _x(torch)
    y = x * 2
    y.retain_grad()
    assert y.retains_grad
    z = (y * y).sum()
    z.backward(retain_graph=True)
    np.testing.assert_allclose(_val(y.grad), 2 * _val(y))
    z.backward()  # accumulates like a leaf
    np.testing.assert_allclose(_val(y.grad), 4 * _val(y))


def test_retain_grad_sees_the_hook_modified_gradient(torch):
    x = _x(torch)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 3)  # tensor hooks run before the retains_grad hook
    y.sum().backward()
    np.testing.assert_allclose(_val(y.grad), [3.0, 3.0, 3.0])


def test_retain_grad_on_a_leaf_is_a_no_op(torch):
    x = _x(torch)
    x.retain_grad()
    assert not x.retains_grad
    (x * 2).sum().backward()
    np.testing.assert_allclose(_val(x.grad), [2.0, 2.0, 2.0])
    c = _x(torch, requires_grad=False)
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        c.retain_grad()


def test_retain_grad_also_fills_under_autograd_grad(torch):
    x = _x(torch)
    y = x * 2
    y.retain_grad()
    torch.autograd.grad((y * y).sum(), x)
    np.testing.assert_allclose(_val(y.grad), 2 * _val(y))


# ---- post-accumulate-grad hooks -------------------------------------------------------------------------

def test_post_accumulate_grad_hook(torch):
    x = _x(torch)
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x, _val(t.grad))))
    (x * 2).sum().backward()
    assert seen[0][0] is True
    np.testing.assert_allclose(seen[0][1], [2.0, 2.0, 2.0])
    handle.remove()
    (x * 2).sum().backward()
    assert len(seen) == 1
    y = x * 2
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        y.register_post_accumulate_grad_hook(lambda t: None)


def test_post_accumulate_grad_hook_can_step_an_optimizer(torch):
    w = _x(torch)

    def sgd(p):
        with torch.no_grad():
            p -= 0.5 * p.grad
        p.grad = None
    w.register_post_accumulate_grad_hook(sgd)
    before = _val(w)
    (w * w).sum().backward()
    np.testing.assert_allclose(_val(w), before - 0.5 * 2 * before)
    assert w.grad is None


# ---- Node hooks ----------------------------------------------------------------------------------------

def test_node_post_hook_sees_grad_inputs_and_grad_outputs(torch):
    x = _x(torch)
    w = _x(torch, (2.0, 3.0, 4.0))
    y = x * w
    seen = []

    def hook(grad_inputs, grad_outputs):
        seen.append(([_val(g) for g in grad_inputs], [_val(g) for g in grad_outputs]))
    handle = y.grad_fn.register_hook(hook)
    y.backward(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))
    (gi_x, gi_w), (go,) = seen[0]
    np.testing.assert_allclose(go, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(gi_x, _val(w) * go)
    np.testing.assert_allclose(gi_w, _val(x) * go)
    handle.remove()
    assert len(seen) == 1


def test_node_post_hook_replaces_grad_inputs(torch):
    x = _x(torch)
    w = _x(torch, (2.0, 3.0, 4.0))
    y = x * w
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0, gi[1]))
    y.sum().backward()
    np.testing.assert_allclose(_val(x.grad), [0.0, 0.0, 0.0])
    np.testing.assert_allclose(_val(w.grad), _val(x))


def test_node_prehook_replaces_grad_outputs(torch):
    x = _x(torch)
    y = x.exp()
    seen = []

    def pre(grad_outputs):
        seen.append(_val(grad_outputs[0]))
        return (grad_outputs[0] * 2,)
    handle = y.grad_fn.register_prehook(pre)
    y.sum().backward(retain_graph=True)
    np.testing.assert_allclose(seen[0], [1.0, 1.0, 1.0])
    np.testing.assert_allclose(_val(x.grad), 2 * np.exp(_val(x)))
    handle.remove()
    x.grad = None
    y.sum().backward()
    np.testing.assert_allclose(_val(x.grad), np.exp(_val(x)))


def test_node_hook_errors(torch):
    x = _x(torch)
    w = _x(torch, (2.0, 3.0, 4.0))

    def bad_count(gi, go):
        return (gi[0],)
    y = x * w
    y.grad_fn.register_hook(bad_count)
    with pytest.raises(RuntimeError, match=re.escape("hook 'bad_count' has returned an incorrect number of values "
                                                     "(got 1, but expected 2)")):
        y.sum().backward()
    y = x * w
    y.grad_fn.register_prehook(lambda go: [go[0]])
    with pytest.raises(TypeError, match="expected tuple, but hook returned 'list'"):
        y.sum().backward()
    y = x * 2  # the wrapped number 2 has no edge: its grad_input is None
    y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="can't replace a None gradient with a non-None value"):
        y.sum().backward()


def test_hook_order(torch):
    """PyTorch's documented order: tensor pre-hooks, then retain_grad, then node pre-hooks, then the node,
    then node post-hooks; a leaf's tensor hooks run before its gradient is accumulated, and
    post-accumulate-grad hooks after."""
    x = _x(torch)
    events = []
    x.register_hook(lambda g: events.append(("leaf hook", x.grad is None)))
    x.register_post_accumulate_grad_hook(lambda t: events.append(("post accumulate", t.grad is not None)))
    y = x.exp()
    y.retain_grad()
    y.register_hook(lambda g: events.append(("tensor hook", y.grad is None)))
    y.grad_fn.register_prehook(lambda go: events.append(("node prehook", y.grad is not None)))
    y.grad_fn.register_hook(lambda gi, go: events.append(("node hook",)))
    y.sum().backward()
    assert events == [("tensor hook", True), ("node prehook", True), ("node hook",), ("leaf hook", True),
                      ("post accumulate", True)]


def test_hooks_on_accumulate_grad_node(torch):
    x = _x(torch)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    assert acc.name().endswith("::autograd::AccumulateGrad") and acc.variable is x
    seen = []
    acc.register_prehook(lambda go: seen.append(("pre", _val(go[0]))))
    acc.register_hook(lambda gi, go: seen.append(("post", gi, _val(go[0]))))
    y.sum().backward()
    assert seen[0][0] == "pre" and seen[1][0] == "post" and seen[1][1] == ()
    np.testing.assert_allclose(seen[1][2], [2.0, 2.0, 2.0])


def test_in_place_op_moves_retain_grad_but_not_earlier_hooks(torch):
    """torch's rebase_history: after ``y.mul_(3)`` the retained ``y.grad`` is the gradient of the new value;
    a hook registered before the in-place op sees the gradient of the old value, one registered after
    sees the new one."""
    x = _x(torch)
    y = x * 2
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(("old", _val(g))))
    y.mul_(3)
    y.register_hook(lambda g: seen.append(("new", _val(g))))
    (y * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    assert y.retains_grad
    np.testing.assert_allclose(_val(y.grad), [1.0, 2.0, 3.0])
    assert [s[0] for s in seen] == ["new", "old"]
    np.testing.assert_allclose(seen[0][1], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(seen[1][1], [3.0, 6.0, 9.0])
    np.testing.assert_allclose(_val(x.grad), [6.0, 12.0, 18.0])


def test_tensor_hooks_under_autograd_grad(torch):
    """autograd.grad runs tensor hooks too: a leaf's or an unexecuted node's hooks change what is
    returned; a node that must also run (it leads to another input) is captured before its hooks."""
    x = _x(torch)
    x.register_hook(lambda g: g * 2)
    gx, = torch.autograd.grad((x * 3).sum(), x)
    np.testing.assert_allclose(_val(gx), [6.0, 6.0, 6.0])
    assert x.grad is None
    z = x * 1
    z.register_hook(lambda g: g * 5)
    w = z * 1
    gz, gx = torch.autograd.grad((w * 3).sum(), [z, x])
    np.testing.assert_allclose(_val(gz), [3.0, 3.0, 3.0])
    np.testing.assert_allclose(_val(gx), [30.0, 30.0, 30.0])
