"""Ported from PyTorch's test/test_autograd.py (TestAutograd): backward(), autograd.grad() and engine
options (retain_graph, create_graph, inputs=, allow_unused, gradient edges)."""
import gc

import pytest

from tests.support.torch_assert import assert_equal


def test_accumulate_grad(torch):
    grad_output = torch.ones(5, 5)

    def compute_grad(create_graph):
        x = torch.randn(5, 5, requires_grad=True)
        y = x + 2
        y.backward(grad_output, retain_graph=True)
        x_grad = x.grad
        x_grad_clone = x.grad.clone()
        y.backward(grad_output, create_graph=create_graph)
        return x_grad, x_grad_clone

    x_grad, x_grad_clone = compute_grad(create_graph=False)
    assert_equal(x_grad, x_grad_clone * 2)
    x_grad, x_grad_clone = compute_grad(create_graph=True)
    assert_equal(x_grad, x_grad_clone)


def test_accumulate_grad_tensor_reference(torch):
    def _test_grad_tensor(params_grad_tensor, backward_grad_tensor, should_preserve_reference, create_graph):
        params = torch.tensor([1.5, 1.5]).requires_grad_()
        params.grad = params_grad_tensor
        grad_saved = params.grad
        params.backward(backward_grad_tensor, create_graph=create_graph)
        assert (id(grad_saved) == id(params.grad)) == should_preserve_reference

    for create_graph in (False, True):
        _test_grad_tensor(torch.tensor([1.5, 1.5]), torch.tensor([1.5, 1.5]), not create_graph, create_graph)


def test_sum_to_with_empty_dim_grad(torch):
    a = torch.rand(4, 0, requires_grad=True)
    b = torch.rand(4, 1, requires_grad=True)
    c = a + b
    assert c.shape == (4, 0)
    c.sum().backward()
    assert_equal(b.grad, torch.zeros(4, 1))
    assert_equal(a.grad, torch.zeros(4, 0))


def test_hessian_vector(torch):
    x = torch.randn(2, 2, requires_grad=True)
    y = torch.randn(2, 2, requires_grad=True)
    z = x ** 2 + y * x + y ** 2
    z.backward(torch.ones(2, 2), create_graph=True)
    with torch.no_grad():
        x_grad = 2 * x + y
        y_grad = x + 2 * y
    assert_equal(x.grad, x_grad)
    assert_equal(y.grad, y_grad)
    grad_sum = 2 * x.grad + y.grad
    grad_sum.backward(torch.ones(2, 2))
    x_hv = torch.ones(2, 2) * 5
    y_hv = torch.ones(2, 2) * 4
    assert_equal(x.grad, x_grad + x_hv)
    assert_equal(y.grad, y_grad + y_hv)


def test_grad(torch):
    x = torch.randn(2, 2, requires_grad=True)
    y = torch.randn(2, 2, requires_grad=True)
    z = x ** 2 + y * x + y ** 2
    z.backward(torch.ones(2, 2), create_graph=True)
    x_grad = 2 * x + y
    y_grad = x + 2 * y
    assert_equal(x.grad, x_grad)
    assert_equal(y.grad, y_grad)
    grad_sum = 2 * x.grad + y.grad
    x_hv = torch.autograd.grad(outputs=[grad_sum], grad_outputs=[torch.ones(2, 2)], inputs=[x], create_graph=True)
    expected_x_hv = torch.ones(2, 2) * 5
    assert_equal(x_hv[0], expected_x_hv)
    assert_equal(x.grad, x_grad)
    assert_equal(y.grad, y_grad)
    grad_out = torch.ones(2)
    with pytest.raises(RuntimeError) as info:
        torch.autograd.grad(outputs=[grad_sum], grad_outputs=[grad_out], inputs=[x], create_graph=True)
    assert str(info.value) == ("Mismatch in shape: grad_output[0] has a shape of " + str(grad_out.shape)
                               + " and output[0] has a shape of " + str(grad_sum.shape) + ".")


def test_grad_to_node(torch):
    def check_matches(out, inp):
        ref = torch.autograd.grad(out.sum(), inp)
        edge = torch.autograd.graph.get_gradient_edge(inp)
        new = torch.autograd.grad(out.sum(), edge)
        assert_equal(ref, new)

    x = torch.rand(2, requires_grad=True)
    out = x.clone()
    check_matches(out, x)
    x = x.clone()
    out = x.clone()
    check_matches(out, x)
    x = torch.var_mean(x)[1]
    out = x.clone()
    check_matches(out, x)


def test_grad_to_node_set(torch):
    x = torch.rand(2, requires_grad=True)
    x_edge = torch.autograd.graph.get_gradient_edge(x)
    out = x.clone()
    with torch.no_grad():
        x.set_(torch.rand_like(x))
    with pytest.raises(RuntimeError, match="to not have been used in the graph"):
        torch.autograd.grad(out.sum(), x)
    torch.autograd.grad(out.sum(), x_edge)


def test_grad_to_node_inplace(torch):
    x = torch.rand(2, requires_grad=True).clone()
    x_edge = torch.autograd.graph.get_gradient_edge(x)
    x *= 2
    g_old, g_new = torch.autograd.grad(x.sum(), (x_edge, x))
    assert_equal(g_old, 2 * torch.ones_like(x))
    assert_equal(g_new, torch.ones_like(x))


def test_grad_to_node_multi(torch):
    x = torch.rand(2, requires_grad=True).clone()
    y = torch.rand(2, requires_grad=True).clone()
    out = x + y
    ref = torch.autograd.grad(out.sum(), (x, y))
    inp_edges = (torch.autograd.graph.GradientEdge(x.grad_fn, x.output_nr),
                 torch.autograd.graph.GradientEdge(y.grad_fn, y.output_nr))
    new = torch.autograd.grad(out.sum(), inp_edges)
    assert_equal(ref, new)


def test_grad_to_node_materialize(torch):
    x = torch.rand(2, requires_grad=True).clone()
    edge_x = torch.autograd.graph.GradientEdge(x.grad_fn, x.output_nr)
    y = torch.rand(2, requires_grad=True).clone()
    edge_y = torch.autograd.graph.GradientEdge(y.grad_fn, y.output_nr)
    out = x.clone()
    torch.autograd.grad(out.sum(), (edge_x, y), allow_unused=True, materialize_grads=True)
    torch.autograd.grad(out.sum(), (x, y), allow_unused=True, materialize_grads=True)
    torch.autograd.grad(out.sum(), (x, edge_y), allow_unused=True)
    with pytest.raises(RuntimeError, match="materialize_grads cannot be used when the given input is a GradientEdge"):
        torch.autograd.grad(out.sum(), (x, edge_y), allow_unused=True, materialize_grads=True)


def test_backward_to_node(torch):
    x = torch.rand(2, requires_grad=True).clone()
    edge_x = torch.autograd.graph.GradientEdge(x.grad_fn, x.output_nr)
    y = torch.rand(2, requires_grad=True).clone()
    edge_y = torch.autograd.graph.GradientEdge(y.grad_fn, y.output_nr)
    out = x.clone()
    torch.autograd.backward(out.sum(), inputs=(edge_x, y))
    torch.autograd.backward(out.sum(), inputs=(x, y))
    torch.autograd.backward(out.sum(), inputs=(x, edge_y))
    torch.autograd.backward(out.sum(), inputs=(edge_x, edge_y))


def test_grad_nonleaf(torch):
    x_init = torch.randn(2, 2, requires_grad=True)
    x = x_init
    y = torch.randn(2, 2, requires_grad=True)
    grad_output = torch.ones(2, 2)

    def fn(x):
        return x ** 2 + y * x + y ** 2

    for _ in range(5):
        grad_x, = torch.autograd.grad(fn(x), x, grad_outputs=grad_output, create_graph=True)
        grad_x_expected = 2 * x + y
        assert y.grad is None
        assert x.grad is None
        assert_equal(grad_x, grad_x_expected)
        x = x + 0.05 * grad_x
    val_init = fn(x_init).sum()
    val_final = fn(x).sum()
    assert val_final > val_init
    x.backward(grad_output)
    assert y.grad is not None
    assert x_init.grad is not None


def test_grad_nonleaf_many_outputs(torch):
    x = torch.randn(4, 2, requires_grad=True)
    a, b = x.chunk(2)

    def hook(*grads):
        hook_called[0] = True
    hook_called = [False]
    x.register_hook(hook)
    go = torch.randn(2, 2)
    grad_a, grad_b = torch.autograd.grad((a + 2 * b), [a, b], grad_outputs=go, create_graph=True)
    assert_equal(grad_a, go)
    assert_equal(grad_b, go * 2)
    assert not hook_called[0]
    assert x.grad is None


def test_grad_nonleaf_register_hook(torch):
    x = torch.randn(5, requires_grad=True)
    x_list = x.unbind()
    x0 = x_list[0]
    hook_results = [None]

    def hook(grad):
        hook_results[0] = grad
    x0.register_hook(hook)
    x_list[0].backward()
    assert_equal(hook_results[0], torch.tensor(1.0))
    expected_grad = torch.tensor([1.0, 0, 0, 0, 0])
    assert_equal(x.grad, expected_grad)
    assert x_list[0].grad is None
    for i in range(1, 5, 1):
        x_list[i].backward()
        assert hook_results[0] is None
        expected_grad[i] = 1.0
        assert_equal(x.grad, expected_grad)
        assert x_list[i].grad is None


def test_sharded_grad(torch):
    leaves = [torch.zeros(5, 5, requires_grad=True) for _ in range(10)]
    intermediates = [l * i + l * l for i, l in enumerate(leaves)]
    loss = sum(v * i for i, v in enumerate(intermediates)).sum()

    def group(l, group_size):
        return (l[i:i + group_size] for i in range(0, len(l), group_size))

    shard_size = 2
    d_intermediates = [d_i for intermediates_batch in group(intermediates, shard_size)
                       for d_i in torch.autograd.grad(loss, intermediates_batch)]
    torch.autograd.backward(intermediates, d_intermediates)
    for i, l in enumerate(leaves):
        assert_equal(l.grad, i * i * (1 + l))


def test_backward_badcalls(torch):
    x = torch.ones(1)
    with pytest.raises(RuntimeError, match="does not require grad"):
        x.backward()


def test_grad_badcalls(torch):
    x = torch.ones(1)
    y = x ** 2
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.autograd.grad(x, y)
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.autograd.grad(y, x)
    x = torch.ones(1, requires_grad=True)
    y = x ** 2
    torch.autograd.grad(y, x)


def test_grad_empty_inputs(torch):
    x = torch.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"`inputs` argument to `grad\(\)` cannot be empty."):
        torch.autograd.grad(2 * x, [], grad_outputs=torch.tensor([1.0]))


def test_grad_fn_badcalls(torch):
    error_regex = "expected .* arguments, got .* instead"
    x = torch.ones(1, requires_grad=True)
    y = x ** 2
    with pytest.raises(TypeError, match=error_regex):
        y.grad_fn(x.detach(), x.detach())
    with pytest.raises(TypeError, match=error_regex):
        y.grad_fn()
    y.grad_fn(x.detach())


def test_grad_unreachable(torch):
    x = torch.ones(1, requires_grad=True)
    y = torch.ones(1, requires_grad=True)
    z = x * 2
    w = y * 2
    grad_x, grad_y = torch.autograd.grad(x * 2, [x, y], allow_unused=True)
    assert_equal(grad_x, x * 2)
    assert grad_y is None
    z = torch.ones(1, requires_grad=True)
    grad_x, grad_z = torch.autograd.grad(x * 2, [x, z], allow_unused=True)
    assert_equal(grad_x, x * 2)
    assert grad_z is None
    with pytest.raises(RuntimeError, match="Set allow_unused=True"):
        grad_x, grad_y = torch.autograd.grad(x * 2, [x, y], allow_unused=False)


def test_grad_unreachable_discovery(torch):
    class MyFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, x):
            pytest.fail("This node should not be executed!")

    x = MyFunc.apply(torch.randn(1, requires_grad=True) * 2)
    y = torch.randn(1, requires_grad=True)
    (gY,) = torch.autograd.grad(x, (y,), allow_unused=True)
    assert gY is None
    x = MyFunc.apply(torch.randn(1, requires_grad=True) * 2)
    y = torch.randn(1, requires_grad=True)
    z = torch.randn(1, requires_grad=True)
    (gY, gZ) = torch.autograd.grad(x + z, (y, z), allow_unused=True)
    assert gY is None
    assert gZ is not None
    x = MyFunc.apply(torch.randn(1, requires_grad=True) * 2)
    y = torch.randn(1, requires_grad=True)
    torch.autograd.backward(x, inputs=(y,))
    assert y.grad is None


def test_grad_batched_grad(torch):
    x = torch.randn(2, 2, requires_grad=True)
    out = x.clone()
    batched_grad = torch.arange(3).expand(2, 2, 3).transpose(0, 2)
    (grad,) = torch.autograd.grad(out, (x,), (batched_grad,), is_grads_batched=True)
    assert_equal(grad, torch.arange(3).expand(2, 2, 3).transpose(0, 2).to(torch.double))


def test_backward(torch):
    v = torch.randn(5, 5, requires_grad=True)
    x = torch.randn(5, 5, requires_grad=True)
    y = (torch.rand(5, 5) + 0.1).requires_grad_(True)
    z = torch.randn(5, 5, requires_grad=True)
    grad_output = torch.randn(5, 5)
    v.backward(grad_output)
    assert_equal(v.grad, grad_output)
    a = x + (y * z) + 4 * z ** 2 * x / y
    a.backward(grad_output)
    x_grad = 4 * z.pow(2) / y + 1
    y_grad = z - 4 * x * z.pow(2) / y.pow(2)
    z_grad = 8 * x * z / y + y
    assert_equal(x.grad, x_grad * grad_output)
    assert_equal(y.grad, y_grad * grad_output)
    assert_equal(z.grad, z_grad * grad_output)


def test_multi_backward(torch):
    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5, 5, requires_grad=True)
    q = torch.randn(5, 5, requires_grad=True)
    a = torch.randn(5, 5, requires_grad=True)
    b = torch.randn(5, 5, requires_grad=True)
    q2 = q * 2
    z = x + y + q2
    c = a * b + q2
    grad_z = torch.randn(5, 5)
    grad_c = torch.randn(5, 5)
    torch.autograd.backward([z, c], [grad_z, grad_c])
    assert_equal(x.grad, grad_z)
    assert_equal(y.grad, grad_z)
    assert_equal(a.grad, grad_c * b)
    assert_equal(b.grad, grad_c * a)
    assert_equal(q.grad, (grad_c + grad_z) * 2)


def test_multi_backward_no_grad(torch):
    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5, 5, requires_grad=False)
    z = x + y
    q = y * 2

    def call_backwards():
        torch.autograd.backward([z, q], [torch.ones(5, 5), torch.ones(5, 5)])
    with pytest.raises(RuntimeError):
        call_backwards()


def test_backward_with_inputs(torch):
    x = torch.randn(2, 2, dtype=torch.double, requires_grad=True)
    y = torch.randn(2, 2, dtype=torch.double, requires_grad=True)

    def fn():
        return x ** 2 + y * x + y ** 2

    gradient = torch.ones(2, 2)
    x_grad_expected = 2 * x + y
    y_grad_expected = x + 2 * y

    def reset_grad():
        x.grad.zero_()
        y.grad.zero_()

    torch.autograd.backward(fn(), gradient, inputs=[x, y])
    assert_equal(x.grad, x_grad_expected)
    assert_equal(y.grad, y_grad_expected)
    reset_grad()
    torch.autograd.backward(fn(), gradient, inputs=[x])
    assert_equal(x.grad, x_grad_expected)
    assert_equal(y.grad, torch.zeros(2, 2), exact_dtype=False)
    reset_grad()
    torch.autograd.backward(fn(), gradient, inputs=[y])
    assert_equal(y.grad, y_grad_expected)
    assert_equal(x.grad, torch.zeros(2, 2), exact_dtype=False)
    reset_grad()
    torch.autograd.backward(fn(), gradient, inputs=y)
    assert_equal(y.grad, y_grad_expected)
    assert_equal(x.grad, torch.zeros(2, 2), exact_dtype=False)
    reset_grad()
    with pytest.raises(RuntimeError, match="cannot be empty"):
        torch.autograd.backward(fn(), gradient, inputs=[])


def test_backward_with_nonleaf_inputs(torch):
    x = torch.randn(2, 2, dtype=torch.double, requires_grad=True)
    x_nonleaf = x * 1
    y = torch.randn(2, 2, dtype=torch.double, requires_grad=True)
    z = torch.randn(2, 2, dtype=torch.double, requires_grad=True)
    out = x_nonleaf ** 2 + y * x_nonleaf + y ** 2
    out.backward(torch.ones(2, 2, dtype=torch.double), create_graph=True, inputs=[x, y, x_nonleaf])
    x_grad_expected = 2 * x + y
    y_grad_expected = x + 2 * y
    x_non_leaf_expected = 2 * x_nonleaf + y
    assert_equal(y.grad, y_grad_expected)
    assert_equal(x.grad, x_grad_expected)
    assert_equal(x_nonleaf.grad, x_non_leaf_expected)
    out.backward(torch.ones(2, 2, dtype=torch.double), create_graph=True, inputs=[z])
    assert z.grad is None


def test_backward_with_inputs_accumulate_existing(torch):
    x = torch.ones(2, requires_grad=True)
    y = torch.ones(2, requires_grad=True)
    (x * y).sum().backward(inputs=[x])
    (x * y).sum().backward(inputs=[x])
    assert_equal(x.grad, 2 * torch.ones(2))
    assert y.grad is None


def test_dependent_backward(torch):
    x = torch.randn(10, requires_grad=True)
    y = x ** 2
    z = y ** 3
    go_y = torch.randn(10)
    go_z = torch.randn(10)
    torch.autograd.backward([y, z], [go_y, go_z])
    xd = x
    assert_equal(x.grad, 2 * xd * go_y + 6 * xd.pow(5) * go_z)


def test_duplicate_backward_root(torch):
    a = torch.randn(5, 5, requires_grad=True)
    b = torch.randn(5, 5, requires_grad=True)
    x = a * b
    grad_output = torch.randn_like(x)
    torch.autograd.backward([x, x], [grad_output, grad_output])
    assert_equal(a.grad, b * grad_output * 2)
    assert_equal(b.grad, a * grad_output * 2)


def test_backward_no_grad(torch):
    a = torch.randn(5, 5, requires_grad=True)
    b = a + 2
    with pytest.raises(RuntimeError):
        torch.autograd.backward([b], [None])


def test_backward_twice_with_saved_values(torch):
    b = torch.randn(3, requires_grad=True, dtype=torch.double)
    c = torch.zeros(3, dtype=torch.double)
    c[[1, 2]] = b[[1, 1]]
    c.backward(torch.tensor([1, 1, 1], dtype=torch.double))
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        c.backward(torch.tensor([1, 1, 1], dtype=torch.double))


def test_backward_twice_retained_graph_with_saved_values(torch):
    b = torch.randn(3, requires_grad=True, dtype=torch.double)
    c = torch.zeros(3, dtype=torch.double)
    c[[1, 2]] = b[[1, 1]]
    c.backward(torch.tensor([1, 1, 1], dtype=torch.double), retain_graph=True)
    c.backward(torch.tensor([1, 1, 1], dtype=torch.double))


def test_backward_twice_without_saved_values(torch):
    b = torch.randn(3, requires_grad=True, dtype=torch.double)
    c = b + 1
    c.backward(torch.tensor([1, 1, 1], dtype=torch.double))
    c.backward(torch.tensor([1, 1, 1], dtype=torch.double))


def test_backward_twice_retained_graph_without_saved_values(torch):
    b = torch.randn(3, requires_grad=True, dtype=torch.double)
    c = torch.zeros(3, dtype=torch.double)
    c[[1, 2]] = b[[1, 1]]
    c.backward(torch.tensor([1, 1, 1], dtype=torch.double), retain_graph=True)
    c.backward(torch.tensor([1, 1, 1], dtype=torch.double))


def test_next_functions(torch):
    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5, 5, requires_grad=True)
    a = x + y
    assert a.grad_fn is not None
    next_functions = a.grad_fn.next_functions
    assert len(next_functions) == 2
    assert next_functions[0][0].name().endswith("::autograd::AccumulateGrad")
    assert next_functions[0][1] == 0
    assert next_functions[1][0].name().endswith("::autograd::AccumulateGrad")
    assert next_functions[1][1] == 0
    b = a + 5
    next_functions = b.grad_fn.next_functions
    assert len(next_functions) == 2
    assert next_functions[0][0] is a.grad_fn
    assert next_functions[1][0] is None


def test_unused_output(torch):
    x = torch.randn(10, 10, requires_grad=True)
    outputs = x.chunk(5)
    o = outputs[2]
    o = o * 4 + 2
    o.sum().backward()
    expected_grad = torch.zeros(10, 10)
    expected_grad[4:6] = 4
    assert_equal(x.grad, expected_grad)
    with torch.no_grad():
        x.grad.zero_()
    grad_output = torch.randn(2, 10)
    outputs = x.chunk(5)
    outputs[0].backward(grad_output)
    expected_grad = torch.zeros(10, 10)
    expected_grad[:2] = grad_output
    assert_equal(x.grad, expected_grad)


def test_stack(torch):
    x = torch.randn(10, 10, requires_grad=True)
    y = torch.randn(10, 10, requires_grad=True)
    z = torch.randn(10, 10, requires_grad=True)
    stacked = torch.stack([x, y, z], 0)
    grad = torch.randn(3, 10, 10)
    stacked.backward(grad)
    assert_equal(x.grad, grad[0])
    assert_equal(y.grad, grad[1])
    assert_equal(z.grad, grad[2])


def test_unbind(torch):
    stacked = torch.randn(3, 10, 10, requires_grad=True)
    x, y, z = stacked.unbind()
    grad = torch.randn(3, 10, 10)
    torch.autograd.backward([x, y, z], grad.unbind())
    assert_equal(stacked.grad, grad)
    for i in range(3):
        stacked = torch.randn(3, 10, 10, requires_grad=True)
        outs = stacked.unbind()
        gi = grad.unbind()[i]
        g, = torch.autograd.grad(outs[i], stacked, gi)
        g_expected = torch.stack([gi if j == i else torch.zeros_like(gi) for j in range(3)], dim=0)
        assert_equal(g, g_expected)


def test_no_unnecessary_save(torch):
    mu = torch.ones(1, requires_grad=True)
    x = torch.empty(1)
    loss = 0
    for i in range(3):
        x.detach_()
        x.copy_(mu + i)
        ft = torch.tensor([float(i)])
        multiplied = x * ft
        s = multiplied.sum()
        loss += s
    loss.backward()


def test_requires_grad(torch):
    x = torch.randn(5, 5)
    y = torch.randn(5, 5)
    z = torch.randn(5, 5, requires_grad=True)
    a = x + y
    assert not a.requires_grad
    b = a + z
    assert b.requires_grad
    b.backward(torch.ones(5, 5))


def test_requires_grad_(torch):
    x = torch.randn(5, 5)
    y = torch.randn(5, 5, requires_grad=True)
    assert x is x.requires_grad_()
    assert x.requires_grad
    assert y is y.requires_grad_()
    assert y.requires_grad
    assert x is x.requires_grad_(True)
    assert y is y.requires_grad_(True)
    z = x * y
    with pytest.raises(RuntimeError):
        z.requires_grad_(False)
    assert z is z.requires_grad_()
    assert z.requires_grad
    assert x is x.requires_grad_(False)
    assert not x.requires_grad
    assert y is y.requires_grad_(False)
    assert not y.requires_grad


def test_attribute_deletion(torch):
    x = torch.randn((5, 5), requires_grad=True)
    del x.grad
    assert x.grad is None
    with pytest.raises(RuntimeError):
        del x.data
    with pytest.raises(TypeError):
        x.data = None
    with pytest.raises(RuntimeError):
        del x.requires_grad
    with pytest.raises(RuntimeError):
        del x._grad_fn
    with pytest.raises(RuntimeError):
        del x._backward_hooks


def test_grad_nonleaf_warning(torch):
    import warnings
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        assert y.grad is None
    assert any("is not a leaf Tensor is being accessed" in str(w.message) for w in ws)


def test_retain_grad(torch):
    input = torch.rand(1, 3, requires_grad=True)
    h1 = input * 3
    out = (h1 * h1).sum()
    h1.retain_grad()
    h1.retain_grad()
    out.backward(retain_graph=True)
    assert_equal(h1 * 2, h1.grad)
    out.backward(retain_graph=True)
    assert_equal(h1 * 4, h1.grad)
    with torch.no_grad():
        input.grad.zero_()
    input.retain_grad()
    input.retain_grad()
    out.backward()
    assert_equal(input * 18, input.grad)


def test_retain_grad_cycle(torch):
    import gc
    import weakref
    counter = [0]
    refs = [None]
    x = torch.ones(5, 5, requires_grad=True)

    def run_test():
        y = x * 2
        y.retain_grad()

        def inc(*args):
            counter[0] += 1
        refs[0] = weakref.ref(y, inc)
        return y / 2

    z = run_test()
    gc.collect()
    assert refs[0]() is None
    assert counter[0] == 1
    z.sum().backward()


def test_retain_grad_inplace(torch):
    a = torch.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.sum().backward()
    assert_equal(a.grad, torch.tensor([1.0]))
    a = torch.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.mul_(2)
    a.sum().backward()
    assert_equal(a.grad, torch.tensor([1.0]))


def test_retain_grad_inplace_over_view(torch):
    base = torch.tensor([1.0, 2.0], requires_grad=True).clone()
    view = base[1:]
    view2 = base[1:]
    view.retain_grad()
    view2.retain_grad()
    view.mul_(2)
    (view + view2).sum().backward()
    assert_equal(view.grad, view2.grad)
    assert_equal(view.grad, torch.tensor([1.0]))


def test_tensor_grad_warnings(torch):
    import warnings
    dummy = torch.empty(1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        dummy.requires_grad_()
        foo = dummy.grad
        assert len(w) == 0
        dummy = dummy.clone()
        foo = dummy.grad
        assert len(w) == 1
        dummy.retain_grad()
        foo = dummy.grad
        assert len(w) == 1


def test_gradient_edge_output(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)

    def fn(x, reduce=True):
        tmp = x.sin().cos()
        if reduce:
            tmp = tmp.sum()
        out = tmp.exp().clone().sin().sum()
        tmp_edge = torch.autograd.graph.get_gradient_edge(tmp)
        return out, tmp_edge

    out, tmp_edge = fn(x)
    (tmp_grad,) = torch.autograd.grad(out, (tmp_edge,))
    out, tmp_egde = fn(x)
    (x_grad,) = torch.autograd.grad(tmp_egde, (x,), grad_outputs=(tmp_grad,))
    out, _ = fn(x)
    (x_grad_ref,) = torch.autograd.grad(out, (x,))
    assert_equal(x_grad, x_grad_ref)

def test_reentrant_priority(torch):
    order = []

    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, x):
            order.append("MyFunction")
            return x

    class Reentrant(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with torch.enable_grad():
                ctx.x = torch.autograd.Variable(x.detach(), requires_grad=True) if hasattr(
                    torch.autograd, "Variable") else x.detach().requires_grad_()
                ctx.x = ctx.x - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, x):
            order.append("Reentrant")
            if ctx.x < 0:
                return x
            with torch.enable_grad():
                Reentrant.apply(ctx.x).backward()
            return x

    a = MyFunction.apply(torch.tensor(6.0, requires_grad=True))
    b = Reentrant.apply(torch.tensor(9.0, requires_grad=True))
    v = a * b
    v.backward()
    assert len(order) == 11
    assert order.count("Reentrant") == 10
    assert order[-1] == "MyFunction"


def test_simple_reentrant(torch):
    y_data = torch.randn(2, 2)

    class Reenter(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with torch.enable_grad():
                ctx.x = x.detach().requires_grad_()
                ctx.y = y_data.clone().requires_grad_()
                ctx.output_var = ctx.x * ctx.y
            return ctx.output_var.detach()

        @staticmethod
        def backward(ctx, grad_output):
            with torch.enable_grad():
                ctx.output_var.sum().backward()
            return ctx.x.grad * grad_output

    x = torch.randn(2, 2, requires_grad=True)
    out = Reenter.apply(x)
    out.sum().backward()
    assert_equal(x.grad, y_data)


def test_deep_reentrant(torch):
    class DeepReentrant(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with torch.enable_grad():
                ctx.x = x.detach().requires_grad_()
                ctx.x = ctx.x - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, x):
            if ctx.x < 0:
                return x
            with torch.enable_grad():
                DeepReentrant.apply(ctx.x).sum().backward()
            return x

    v = torch.tensor(200.0, requires_grad=True)
    DeepReentrant.apply(v).sum().backward()
    v2 = torch.tensor(200.0, requires_grad=True)
    DeepReentrant.apply(v2).sum().backward()


def test_free_deep_graph(torch):
    def scope():
        depth = 15000
        x = torch.randn(1, requires_grad=True)
        y = x.clone()
        for _ in range(depth):
            y = y + y * 0.000001
    scope()


def test_free_deep_graph_pyfunction(torch):
    class MyOp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, tensor1, tensor2):
            return tensor1 + tensor2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, grad_output

    def scope():
        depth = 15000
        x = torch.randn(1, requires_grad=True)
        y = x.clone()
        for _ in range(depth):
            y = MyOp.apply(y, y)
    scope()


def test_deep_backward(torch):
    x = torch.randn(1, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    y.backward()
    assert_equal(x.grad, torch.ones(1))


def test_grad_nonleaf_inputs_order(torch):
    x = torch.ones(3, requires_grad=True)
    a = x * 2
    b = a * 3
    ga, gx = torch.autograd.grad(b.sum(), [a, x])
    assert_equal(ga, torch.full((3,), 3.0))
    assert_equal(gx, torch.full((3,), 6.0))


def test_grad_materialize_grads(torch):
    x = torch.tensor(0.5, requires_grad=True)
    a = torch.tensor(1.0, requires_grad=True)
    y = x * a
    dydx = torch.autograd.grad(y, x, create_graph=True)
    d2ydx2_none = torch.autograd.grad(dydx, x, create_graph=True, allow_unused=True)
    d2ydx2 = torch.autograd.grad(dydx, x, create_graph=True, allow_unused=True, materialize_grads=True)
    d3ydx3 = torch.autograd.grad(d2ydx2, x, materialize_grads=True)
    assert d2ydx2_none[0] is None
    assert_equal(d2ydx2[0].item(), 0)
    assert_equal(d3ydx3[0].item(), 0)
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed when"):
        torch.autograd.grad(y, x, allow_unused=False, materialize_grads=True)


def test_backward_copy(torch):
    class MyFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp

        @staticmethod
        def backward(ctx, grad):
            return grad

    a = torch.rand(5, 5, requires_grad=True)
    b = MyFunc.apply(a)
    c = MyFunc.apply(a)
    (b + c).sum().backward()
    assert_equal(a.grad, torch.full((5, 5), 2.0))


def test_gradient_accumulation_sum(torch):
    x = torch.ones(3, requires_grad=True)
    for _ in range(4):
        (x * 3).sum().backward()
    assert_equal(x.grad, torch.full((3,), 12.0))


def test_pow_zero_tensor_gradient(torch):
    def run_test(input_size, exponent):
        input = torch.zeros(*input_size, requires_grad=True)
        input.pow(exponent).sum().backward()
        assert_equal(input.grad.abs().sum(), 0)

    run_test((10,), torch.zeros(10))
    run_test((10, 10), torch.zeros(10, 10))
    run_test((10,), 0)


def test_pow_scalar_base(torch):
    a = torch.arange(1, 13, dtype=torch.double).view(3, 4).requires_grad_()
    torch.autograd.gradcheck(lambda a: torch.pow(2, a), (a,))


def test_sum_to_with_broadcast(torch):
    a = torch.ones(3, 1, requires_grad=True)
    b = torch.ones(1, 4, requires_grad=True)
    (a * b).sum().backward()
    assert_equal(a.grad, torch.full((3, 1), 4.0))
    assert_equal(b.grad, torch.full((1, 4), 3.0))


def test_var_mean_differentiable(torch):
    dim = [2, 4]
    keepdim = False
    input1 = torch.randn(3, 4, 5, 6, 2, 3, requires_grad=True)
    input2 = input1.detach().clone().requires_grad_()
    var1, mean1 = torch.var_mean(input1, dim=dim, keepdim=keepdim)
    var2 = input2.var(dim=dim, keepdim=keepdim)
    mean2 = input2.mean(dim=dim, keepdim=keepdim)
    grad = torch.randn(3, 4, 6, 3, requires_grad=True)
    r1 = var1 * var1 * mean1 * mean1
    r2 = var2 * var2 * mean2 * mean2
    assert_equal(r1, r2, rtol=0.01, atol=0.0)
    torch.autograd.backward(r1, grad)
    torch.autograd.backward(r2, grad)
    assert_equal(input1.grad, input2.grad, rtol=0.01, atol=0.0)


def test_mul_out_error(torch):
    a = torch.rand(2, 2, requires_grad=True)
    b = torch.rand(2, 2, requires_grad=True)
    x = torch.zeros_like(a)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        torch.mul(a, b, out=x)
    with torch.no_grad():
        torch.mul(a, b, out=x)
        assert_equal(x, a * b)


def test_mul_out(torch):
    a = torch.randn(2, 2)
    b = torch.randn(2, 2)
    x = torch.zeros_like(a)
    torch.mul(a, b, out=x)
    assert_equal(x, a * b)
    a = torch.randn(2, 2, requires_grad=True)
    b = torch.randn(2, 2, requires_grad=True)
    x = torch.zeros(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        torch.mul(a, b, out=x)


def test_sum_out(torch):
    a = torch.ones(2, 3)
    out = torch.empty(3)
    torch.sum(a, 0, out=out)
    assert_equal(out, torch.full((3,), 2.0))


def test_set_data_tensorimpl_type(torch):
    x = torch.randn(1, 2)
    x_s = torch.ones(1, 2, dtype=torch.int64)
    x.data = x_s
    assert x.dtype == torch.int64


def test_set_data_preserve_pyobj(torch):
    a = torch.randn(1, 2)
    b = torch.randn(1, 2)
    b_id_saved = id(b)
    b.data = a
    assert b_id_saved == id(b)


def test_set_data_self_requires_grad(torch):
    a = torch.tensor(1.0, requires_grad=True)
    b = torch.tensor(2.0)
    c = torch.tensor(3, dtype=torch.int64)
    a.data = b
    with pytest.raises(RuntimeError, match="must be floating point or complex dtype"):
        a.data = c


def test_data_inplace_after_set(torch):
    x = torch.ones(3)
    x.data = torch.zeros(3, dtype=torch.float32)
    x.add_(1)
    assert_equal(x, torch.ones(3, dtype=torch.float32))
    assert x.dtype == torch.float32


def test_detach(torch):
    x = torch.randn(10, 10, requires_grad=True)
    y = x + 2
    y = y.detach()
    z = y * 4 + 2
    assert not y.requires_grad
    assert not z.requires_grad
    x = torch.randn(10, 10, requires_grad=True)
    y = x * 2
    y = y.detach()
    assert not y.requires_grad
    assert y.grad_fn is None
    z = x + y
    z.sum().backward()
    assert_equal(x.grad.data, torch.ones(10, 10))
    view = x.narrow(0, 1, 4)
    with pytest.raises(RuntimeError, match="view"):
        view.detach_()


def test_detach_base(torch):
    x = torch.randn(10, 10, requires_grad=True)
    view = x.narrow(0, 1, 4)
    x.detach_()
    assert not x.requires_grad
    assert view.requires_grad
    assert view.grad_fn is not None
    assert view._base is x


def test_no_grad_copy(torch):
    class MyFunc(torch.autograd.Function):
        static_grad_ptr = None

        @staticmethod
        def forward(ctx, inp1, inp2):
            return inp1 + inp2

        @staticmethod
        def backward(ctx, grad):
            MyFunc.static_grad_ptr = grad.data_ptr()
            return grad, grad

    a = torch.randn(5, 6, requires_grad=True)
    b = torch.randn(5, 6, requires_grad=True)
    MyFunc.apply(a, b).sum().backward()
    assert a.grad.data_ptr() != MyFunc.static_grad_ptr or b.grad.data_ptr() != MyFunc.static_grad_ptr


def test_reentrant_child_error(torch):
    class SimulateBackwardError(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            return input.clone()

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, input):
            raise Exception("Simulate error on backward pass")

    a = torch.rand(3, 3, requires_grad=True)
    c = a * a
    b = torch.rand(3, 3, requires_grad=True)
    e = b * b
    f = SimulateBackwardError.apply(e)
    reentrant_root = f.sum()

    class ReentrantFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, grad):
            reentrant_root.backward()
            return grad

    d = ReentrantFunc.apply(c)
    with pytest.raises(Exception, match="Simulate error"):
        d.sum().backward()


def test_grad_batched_grad_matches_per_element_grads(torch):
    x = torch.randn(2, 3, requires_grad=True)
    y = torch.randn(3, requires_grad=True)
    unused = torch.randn(4, requires_grad=True)
    out1, out2 = (x * y).sin(), (y * y).sum(0, keepdim=True)
    g1, g2 = torch.randn(5, 2, 3), torch.randn(5, 1)
    gx, gy, gu = torch.autograd.grad((out1, out2), (x, y, unused), (g1, g2), retain_graph=True,
                                     is_grads_batched=True, allow_unused=True)
    assert gu is None
    for b in range(5):
        ex, ey = torch.autograd.grad((out1, out2), (x, y), (g1[b], g2[b]), retain_graph=True)
        assert_equal(gx[b], ex)
        assert_equal(gy[b], ey)
    gm = torch.autograd.grad(out1, (x, unused), g1, retain_graph=True, is_grads_batched=True,
                             materialize_grads=True)[1]
    assert_equal(gm, torch.zeros(4))
    with pytest.raises(RuntimeError, match=r"If `is_grads_batched=True`, we interpret the first dimension .* "
                                           r"mismatch was detected: grad_output\[0\]"):
        torch.autograd.grad(out1, x, torch.randn(5, 3, 2), retain_graph=True, is_grads_batched=True)
    with pytest.raises(ValueError, match=r"vmap: Expected all tensors to have the same size in the mapped "
                                         r"dimension, got sizes \[5, 4\] for the mapped dimension"):
        torch.autograd.grad((out1, out2), x, (g1, torch.randn(4, 1)), retain_graph=True, is_grads_batched=True)


def test_grad_batched_grad_create_graph(torch):
    x = torch.randn(3, requires_grad=True)
    v = torch.randn(4, 3, requires_grad=True)
    (g,) = torch.autograd.grad(x ** 3, x, v, create_graph=True, is_grads_batched=True)
    assert g.requires_grad
    assert_equal(g, 3 * x.detach() ** 2 * v.detach())
    gx, gv = torch.autograd.grad(g.sum(), (x, v))
    assert_equal(gx, (6 * x * v).sum(0).detach())
    assert_equal(gv, (3 * x ** 2).expand(4, 3).detach())


def test_unused_grad_requires_grad_with_materialize(torch):
    x = torch.ones(10, requires_grad=True)
    y = torch.ones(10, requires_grad=True)
    z = (x ** 2).sum()

    g = torch.autograd.grad(z, (x, y), allow_unused=True, materialize_grads=True, create_graph=False)

    assert not g[0].requires_grad
    assert not g[1].requires_grad


def test_power_function(torch):
    inf = float("inf")
    a = torch.tensor([0.0, 0.0, 0.0])
    b = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
    c = torch.sum(a ** b)
    c.backward()
    assert_equal(b.grad, torch.tensor([-inf, 0.0, 0.0]))

    s = 0
    b = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
    c = torch.sum(s ** b)
    c.backward()
    assert_equal(b.grad, torch.tensor([-inf, 0.0, 0.0]))


def test_reentrant_with_leaf_variable_hook(torch):
    handle = None
    param = torch.rand(10, requires_grad=True)

    def add_gradient_penalty_to_grad(grad):
        handle.remove()
        old_param_grad = grad
        param.grad = None
        # Add some sort of gradient penalty by directly updating the gradients
        with torch.enable_grad():
            g = grad.detach().requires_grad_()
            new_param = param.detach().requires_grad_()
            out = ((g * 2) + new_param).sum()
            out.backward()
        res = g.grad + grad
        param.grad = old_param_grad
        return res

    handle = param.register_hook(add_gradient_penalty_to_grad)
    # Forward pass
    tmp = param * param
    loss = tmp.sum()
    # Compute the gradients
    loss.backward()


def test_reentrant_with_non_leaf_variable_hook(torch):
    handle = None
    param = torch.rand(10, requires_grad=True)

    def manual_increase_gradient(grad):
        handle.remove()
        # Add some sort of gradient penalty by directly updating the gradients
        with torch.enable_grad():
            g = grad.detach().requires_grad_()
            out = ((g * 2) + 5).sum()
            out.backward()
        res = g.grad + grad
        return res

    # Forward pass
    tmp = param * param
    handle = tmp.register_hook(manual_increase_gradient)
    loss = tmp.sum()
    # Compute the gradients
    loss.backward()
    assert_equal(param.grad, 6 * param)


def test_inplace_on_view_undefined_grad_output(torch):
    a = torch.tensor([1.0], requires_grad=True)
    c = a.clone()
    v = c[:]
    b = torch.tensor(1.0, requires_grad=True)

    class InplaceFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, other):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def backward(ctx, grad):
            return grad * 2, None

    out = InplaceFunc.apply(v, b)
    out.backward()
    assert b.grad is None
    assert a.grad.item() == 2


def test_gradient_edge_graph_ownership(torch):
    class Clone(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, gX):
            return gX.clone()

    inp = torch.rand(1, requires_grad=True).clone()
    out = inp.clone()
    edge = torch.autograd.graph.get_gradient_edge(out)
    torch.autograd.backward(edge)
    del out
    torch.autograd.backward(edge)

    out = Clone.apply(inp)
    edge = torch.autograd.graph.get_gradient_edge(out)
    torch.autograd.backward(edge)
    del out
    torch.autograd.backward(edge)


def test_backward_with_scalar_input(torch):
    x = torch.randn([], dtype=torch.double, requires_grad=True)
    out = x**2
    out.backward(inputs=x)
    assert_equal(x.grad, 2 * x)


def test_diagonal_expanded_v(torch):
    value = torch.rand([])
    v_expanded = torch.tensor(value).expand(10)
    a = torch.rand(10, 10, dtype=torch.double, requires_grad=True)
    (result,) = torch.autograd.grad(a.diagonal(), a, v_expanded)
    assert_equal(result, torch.eye(10, dtype=torch.double) * value)


def test_select_expanded_v(torch):
    v_expanded = torch.rand(10).expand(10, 10)
    a = torch.rand(10, 10, 10, requires_grad=True)
    (result,) = torch.autograd.grad(a[0], a, v_expanded)
    expected = torch.zeros(10, 10, 10)
    expected[0] = v_expanded
    assert_equal(result, expected)


def test_slice_expanded_v(torch):
    v_expanded = torch.rand(10, 1).expand(2, 10, 10)
    a = torch.rand(10, 10, 10, requires_grad=True)
    (result,) = torch.autograd.grad(a[3:5], a, v_expanded)
    expected = torch.zeros(10, 10, 10)
    expected[3:5] = v_expanded
    assert_equal(result, expected)


def test_grad_dtype(torch):
    f32 = torch.float32
    leaf = torch.tensor([1.0, 2.0], requires_grad=True, dtype=f32)
    assert leaf.grad_dtype == torch.float32
    leaf.grad_dtype = torch.float16
    assert leaf.grad_dtype == torch.float16
    leaf.grad_dtype = None
    assert leaf.grad_dtype is None

    non_leaf = leaf * 2
    assert not non_leaf.is_leaf
    with pytest.raises(RuntimeError, match="grad_dtype can only be accessed on leaf tensors"):
        _ = non_leaf.grad_dtype
    with pytest.raises(RuntimeError, match="grad_dtype can only be set on leaf tensors"):
        non_leaf.grad_dtype = torch.float16

    x = torch.tensor([1.0, 2.0], requires_grad=True, dtype=f32)
    grad_match = torch.tensor([1.0, 1.0], dtype=f32)
    x.grad = grad_match
    assert x.grad.dtype == torch.float32

    x.grad = None
    x.grad_dtype = torch.float16
    grad_mismatch = torch.tensor([1.0, 1.0], dtype=f32)
    with pytest.raises(RuntimeError,
                       match="attempting to assign a gradient with dtype.*float.*to a tensor with grad_dtype.*Half"):
        x.grad = grad_mismatch

    x.grad = None
    x.grad_dtype = None
    grad_any = torch.tensor([1.0, 1.0], dtype=torch.float64)
    x.grad = grad_any
    assert x.grad.dtype == torch.float64

    class MismatchedGradientFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.to(torch.float64)

    d = torch.tensor([1.0, 2.0], requires_grad=True, dtype=f32)
    MismatchedGradientFunction.apply(d).sum().backward()
    assert d.grad.dtype == torch.float32
    assert torch.allclose(d.grad, torch.tensor([1.0, 1.0], dtype=f32))

    e = torch.tensor([3.0, 4.0], requires_grad=True, dtype=f32)
    e.grad_dtype = None
    MismatchedGradientFunction.apply(e).sum().backward()
    assert torch.allclose(e.grad, torch.tensor([1.0, 1.0], dtype=torch.float64))

    # derivgen computes in float32/float64 only: float64 stands in for upstream's float16 and bfloat16 below
    f = torch.tensor([5.0, 6.0], requires_grad=True, dtype=torch.float64)
    f.grad_dtype = f32
    MismatchedGradientFunction.apply(f).sum().backward()
    assert f.grad.dtype == f32
    assert torch.allclose(f.grad, torch.tensor([1.0, 1.0], dtype=f32))

    g = torch.tensor([1.0, 2.0], requires_grad=True, dtype=f32)
    g.grad = torch.tensor([1.0, 1.0], dtype=f32)
    g.grad_dtype = torch.float32
    assert g.grad_dtype == torch.float32
    with pytest.raises(RuntimeError, match="Cannot set grad_dtype.*because there is already a gradient"):
        g.grad_dtype = torch.float16
    g.grad_dtype = None
    assert g.grad_dtype is None
    g.grad = None
    g.grad_dtype = torch.float16
    assert g.grad_dtype == torch.float16

    h = torch.tensor([1.0, 2.0], requires_grad=True, dtype=f32)
    _ = h.clone()
    h.grad_dtype = None
    MismatchedGradientFunction.apply(h).sum().backward()
    assert h.grad.dtype == torch.float64

    k = torch.tensor([1.0, 2.0], requires_grad=True, dtype=f32)
    k.grad_dtype = None
    y = k * 2
    y.sum().backward()
    k.grad = k.grad.to(torch.float64)
    y2 = k * 3
    assert k.grad.dtype == torch.float64

    l = torch.tensor([3.0, 4.0], requires_grad=True, dtype=torch.float64)
    l.grad_dtype = None
    z = l * 2
    z.sum().backward()
    l.grad = l.grad.to(torch.float32)
    z2 = l * 3
    z2.sum().backward()
    assert l.grad.dtype == torch.float32


def _test_type_conversion_backward(torch, t):
    fvar = t(torch.randn(5, 5).float()).requires_grad_(True)
    fvar.double().sum().backward()
    assert_equal(fvar.grad, torch.ones_like(fvar))
    assert type(fvar.grad) is type(fvar)
    dvar = t(torch.randn(5, 5).double()).requires_grad_(True)
    dvar.float().sum().backward()
    assert_equal(dvar.grad, torch.ones_like(dvar))
    assert type(dvar.grad) is type(dvar)


def test_type_conversions(torch):
    x = torch.randn(5, 5)
    assert isinstance(x.float(), torch.FloatTensor)
    assert isinstance(x.int(), torch.IntTensor)
    for t in [torch.DoubleTensor, torch.FloatTensor, torch.IntTensor, torch.ByteTensor]:
        for _y_var in (True, False):
            y = torch.randint(5, (5, 5), dtype=t.dtype)
            assert isinstance(x.type(t), t)
            assert isinstance(x.type_as(y), t)
            t_dtype = t().dtype
            assert isinstance(x.type(t_dtype), t)
            assert t_dtype is x.type(t_dtype).dtype
            assert y.data_ptr() == y.type(t).data_ptr()
    _test_type_conversion_backward(torch, lambda x: x)


def test_isolated_node(torch):
    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5, 5, requires_grad=True)
    a = x + y
    b = torch.max(a, 1, True)[1].repeat(1, 5).double()
    o = (b + a).sum()
    o.backward()


def test_shape(torch):
    x = torch.randn(3, 4)
    assert 2 == len(x.shape)
    assert x.shape[0] == 3
    assert x.shape[1] == 4


def test_pickle(torch):
    import pickle
    x = torch.randn(10, 10, requires_grad=True)
    y = torch.randn(10, 10, requires_grad=False)

    def assert_strict_equal(var1, var2):
        assert_equal(var1, var2)
        assert var1.requires_grad == var2.requires_grad

    serialized = [pickle.dumps([x, y], protocol=p) for p in range(3)]
    for dump in serialized:
        xc, yc = pickle.loads(dump)
        assert_strict_equal(xc, x)
        assert_strict_equal(yc, y)


def test_variable_traverse(torch):
    def get_out_and_unrefed_cycle():
        inp = torch.randn(10, requires_grad=True)
        tmp = inp.view(10, 1)
        out = tmp.view(10)
        my_list = []
        my_list.append(tmp)
        my_list.append(my_list)
        return out

    out = get_out_and_unrefed_cycle()
    gc.collect()
    out.backward(torch.randn(out.size()))


def test_dir(torch):
    x = torch.randn(10, 10)
    keys = dir(x)
    assert "shape" in keys
    imag_key = "imag"
    with pytest.raises(RuntimeError):
        hasattr(x, imag_key)
    keys.remove(imag_key)
    for key in keys:
        assert hasattr(x, key), key


def test_out_variant_raises_when_inputs_require_grad(torch):
    a = torch.randn(2, 2, requires_grad=True)
    b = torch.randn(2, 2, requires_grad=True)
    x = torch.zeros_like(a)
    with pytest.raises(RuntimeError, match="out="):
        torch.mul(a, b, out=x)
    with torch.no_grad():
        torch.mul(a, b, out=x)
        assert_equal(x, a * b)
    a = torch.randn(2, 2)
    b = torch.randn(2, 2)
    x = torch.zeros(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="out="):
        torch.mul(a, b, out=x)


def test_input_buffer_accum(torch):
    leaf = torch.rand(2, 2, requires_grad=True)
    ind = torch.tensor([[0, 0]], dtype=torch.long)
    out2 = leaf.gather(0, ind)
    out1 = leaf.clone()
    grad_out1_original = torch.rand_like(out1)
    grad_out1 = grad_out1_original.clone()
    grad_out2 = torch.rand_like(out2)
    torch.autograd.backward((out1, out2), (grad_out1, grad_out2))
    assert_equal(grad_out1, grad_out1_original)


def test_integer_outputs(torch):
    inp = torch.rand(4, requires_grad=True)

    out = inp.argmax()
    assert not out.dtype.is_floating_point
    assert not out.requires_grad

    out = inp.argmin()
    assert not out.dtype.is_floating_point
    assert not out.requires_grad

    out = inp.argsort()
    assert not out.dtype.is_floating_point
    assert not out.requires_grad

    val = torch.rand((), requires_grad=True)

    out = torch.searchsorted(inp, val)
    assert not out.dtype.is_floating_point
    assert not out.requires_grad

    bins = torch.linspace(0, 1.0, steps=100, requires_grad=True)
    vals = torch.rand(5, 5, requires_grad=True)
    out = torch.bucketize(vals, bins)
    assert not out.dtype.is_floating_point
    assert not out.requires_grad

    val = torch.empty(5).requires_grad_()
    out = val.count_nonzero()
    assert not out.requires_grad

    def assert_only_first_requires_grad(res):
        if not isinstance(res, tuple):
            res = (res,)
        assert res[0].requires_grad
        for out in res[1:]:
            if out is not None:
                assert not out.requires_grad

    for sort in [True, False]:
        for return_inverse in [True, False]:
            for return_counts in [True, False]:
                res = torch.unique(inp, sorted=sort, return_inverse=return_inverse, return_counts=return_counts)
                assert_only_first_requires_grad(res)

                res = torch.unique(inp, sorted=sort, return_inverse=return_inverse, return_counts=return_counts,
                                   dim=0)
                assert_only_first_requires_grad(res)

                res = torch.unique_consecutive(inp, return_inverse=return_inverse, return_counts=return_counts)
                assert_only_first_requires_grad(res)

                res = torch.unique_consecutive(inp, return_inverse=return_inverse, return_counts=return_counts,
                                               dim=0)
                assert_only_first_requires_grad(res)

                # the internal functions behind the public API
                res = torch._unique(inp, sorted=sort, return_inverse=return_inverse)
                assert_only_first_requires_grad(res)

                res = torch._unique2(inp, sorted=sort, return_inverse=return_inverse, return_counts=return_counts)
                assert_only_first_requires_grad(res)
