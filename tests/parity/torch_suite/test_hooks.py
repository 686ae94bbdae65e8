"""Ported from PyTorch's test/test_autograd.py (TestAutograd): tensor hooks, node hooks,
post-accumulate-grad hooks and multi-grad hooks."""
import gc
import weakref

import pytest

from tests.support.torch_assert import assert_equal


def test_hooks(torch):
    x = torch.ones(5, 5, requires_grad=True)
    y = torch.ones(5, 5) * 4
    y.requires_grad_(True)
    counter = [0]

    def bw_hook(inc, grad):
        assert isinstance(grad, torch.Tensor)
        counter[0] += inc

    z = x ** 2 + x * 2 + x * y + y
    x.register_hook(lambda *args: bw_hook(0, *args))
    test = z.register_hook(lambda *args: bw_hook(1, *args))
    z.backward(torch.ones(5, 5), retain_graph=True)
    assert counter[0] == 1
    test2 = z.register_hook(lambda *args: bw_hook(2, *args))
    z.backward(torch.ones(5, 5), retain_graph=True)
    assert counter[0] == 4
    test2.remove()
    z.backward(torch.ones(5, 5), retain_graph=True)
    assert counter[0] == 5

    def bw_hook_modify(grad):
        return grad.mul(2)

    test.remove()
    z.register_hook(bw_hook_modify)
    with torch.no_grad():
        y.grad.zero_()
    z.backward(torch.ones(5, 5), retain_graph=True)
    assert_equal(y.grad, (x + 1) * 2)
    y.register_hook(bw_hook_modify)
    with torch.no_grad():
        y.grad.zero_()
    z.backward(torch.ones(5, 5))
    assert_equal(y.grad, (x + 1) * 4)


def test_hook_with_no_name(torch):
    class MyHookClass:
        def __call__(self, grad):
            return grad.clone()

    x = torch.randn(5, requires_grad=True).clone()
    x.register_hook(MyHookClass())
    x.sum().backward()


def test_hook_edge_case_when_called_with_grad(torch):
    a = torch.tensor(1.0, requires_grad=True)
    b = a * 2
    c = b * 2
    tensor_hook_count = [0]
    prehook_count = [0]
    posthook_count = [0]

    def reset_counts():
        nonlocal tensor_hook_count, prehook_count, posthook_count
        tensor_hook_count = [0]
        prehook_count = [0]
        posthook_count = [0]

    def tensor_prehook(g):
        tensor_hook_count[0] += 1

    def prehook(g):
        prehook_count[0] += 1

    def posthook(gI, gO):
        posthook_count[0] += 1

    a.register_hook(tensor_prehook)
    b.register_hook(tensor_prehook)
    c.register_hook(tensor_prehook)
    c.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(prehook)
    c.grad_fn.register_hook(posthook)
    b.grad_fn.register_hook(posthook)
    torch.autograd.grad(c, inputs=(b), retain_graph=True)
    assert tensor_hook_count[0] == 2
    assert prehook_count[0] == 1
    assert posthook_count[0] == 1
    reset_counts()
    torch.autograd.grad(c, inputs=(a, b), retain_graph=True)
    assert tensor_hook_count[0] == 3
    assert prehook_count[0] == 2
    assert posthook_count[0] == 2
    reset_counts()
    c.backward(retain_graph=True)
    assert tensor_hook_count[0] == 3
    assert prehook_count[0] == 2
    assert posthook_count[0] == 2
    reset_counts()
    c.backward(inputs=(a, b), retain_graph=True)
    assert tensor_hook_count[0] == 3
    assert prehook_count[0] == 2
    assert posthook_count[0] == 2


def test_retain_grad_inplace_over_view_hook(torch):
    base = torch.tensor([1.0, 2.0], requires_grad=True).clone()
    view = base[1:]
    calls = []
    view.register_hook(lambda g: calls.append(g))
    base.sum().backward()
    assert calls == []


def test_tensor_hooks_inplace(torch):
    count1 = [0]
    count2 = [0]

    def fn1(grad):
        count1[0] += 1
        assert_equal(grad, torch.tensor(4.0))
        return grad * 2

    def fn2(grad):
        count2[0] += 1
        assert_equal(grad, torch.tensor(1.0))
        return grad * 2

    a = torch.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.register_hook(fn1)
    b.mul_(2)
    b.register_hook(fn2)
    b.sum().backward()
    assert count1[0] == 1
    assert count2[0] == 1
    assert_equal(a.grad, torch.tensor(8.0))
    count3 = [0]

    def fn3(grad):
        count3[0] += 1
        assert_equal(grad, torch.tensor([2.0]))
        return grad * 2

    a = torch.tensor([1.0], requires_grad=True)
    b = a.clone()
    b.register_hook(fn3)
    b.mul_(2)
    b.sum().backward()
    assert count3[0] == 1
    assert_equal(a.grad, torch.tensor([4.0]))


def test_tensor_hooks_inplace_multiple_outputs(torch):
    class DoubleMul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    count = [0]

    def fn(grad):
        count[0] += 1
        return grad * 2

    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out1, out2 = DoubleMul.apply(a)
    out1.register_hook(fn)
    out2.register_hook(fn)
    out1.mul_(2)
    out2.mul_(3)
    (out1 + out2).sum().backward()
    assert count[0] == 2
    assert_equal(a.grad, torch.full((3,), 2.0 * 2 * 2 + 3.0 * 3 * 2))


def test_tensor_hooks_inplace_over_view(torch):
    count = [0]

    def fn0(grad):
        pytest.fail("hook on the base must not fire")

    def fn1(grad):
        pytest.fail("hook on the view before in-place must not fire")

    def fn2(grad):
        count[0] += 1
        assert_equal(grad, torch.tensor([1.0]))

    base = torch.tensor([1.0], requires_grad=True).clone()
    view = base[:]
    other = torch.tensor([1.0], requires_grad=True)
    base.register_hook(fn0)
    view.register_hook(fn1)
    view.mul_(other)
    view.register_hook(fn2)
    torch.autograd.grad(view.sum(), other)
    assert count[0] == 1


def test_hooks_on_sibling_view_dropped_after_inplace(torch):
    base = torch.tensor([1.0, 2.0], requires_grad=True).clone()
    v1 = base[:1]
    v2 = base[1:]
    calls = []
    v2.register_hook(lambda g: calls.append("v2"))
    v1.mul_(2)
    base.sum().backward()
    assert calls == []


def test_grad_fn_prehooks(torch):
    for key in ("prehook", "posthook"):
        a = torch.tensor(1.0, requires_grad=True)
        b = a.clone()
        c = b * 2
        counter = [0]

        def pre(grad_output):
            counter[0] += 1
            return (grad_output[0] * 3,)

        def post(grad_inputs, grad_outputs):
            counter[0] += 1
            return (grad_inputs[0] * 5, grad_inputs[1]) if len(grad_inputs) == 2 else (grad_inputs[0] * 5,)

        if key == "prehook":
            c.grad_fn.register_prehook(pre)
            c.backward()
            assert counter[0] == 1
            assert_equal(a.grad, torch.tensor(6.0))
        else:
            c.grad_fn.register_hook(post)
            c.backward()
            assert counter[0] == 1
            assert_equal(a.grad, torch.tensor(10.0))


def test_grad_fn_prehooks_multiple_outputs(torch):
    b = torch.rand(3, 3, requires_grad=True)
    var, mean = torch.var_mean(b, dim=0)

    def prehook(grad_output):
        return (grad_output[0] * 2, grad_output[1] * 3)

    h = var.grad_fn.register_prehook(prehook)
    (var + mean).sum().backward()
    with torch.no_grad():
        b2 = b.detach().clone().requires_grad_()
    var2, mean2 = torch.var_mean(b2, dim=0)
    (var2 * 2 + mean2 * 3).sum().backward()
    assert_equal(b.grad, b2.grad)
    h.remove()


def test_grad_fn_prehooks_remove_hooks(torch):
    for return_handle in (True, False):
        a = torch.tensor(1.0, requires_grad=True)
        b = a.clone()
        counter = [0]

        def prehook(grad_output):
            counter[0] += 1
            return None

        h = b.grad_fn.register_prehook(prehook)
        h.remove()
        b.backward()
        assert counter[0] == 0


def test_hooks_cpp_node_register_hook(torch):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    seen = []

    def hook(grad_inputs, grad_outputs):
        seen.append((len(grad_inputs), len(grad_outputs)))

    b.grad_fn.register_hook(hook)
    b.sum().backward()
    assert seen == [(2, 1)]


def test_accumulate_grad_posthooks_can_observe_tensor_prehook(torch):
    a = torch.tensor(1.0, requires_grad=True)

    def tensor_prehook(g):
        return g * 2

    def posthook(gO, gI):
        assert_equal(torch.tensor(2.0), a.grad)
        assert len(gO) == 0

    def prehook(gI):
        assert_equal(torch.tensor(2.0), gI[0])
        assert a.grad is None

    a.register_hook(tensor_prehook)
    acc = a.clone().grad_fn.next_functions[0][0]
    acc.register_hook(posthook)
    acc.register_prehook(prehook)
    a.backward()


def test_hook_closure_cycle(torch):
    class Function(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    class Test:
        pass

    count = [0]

    def scope():
        a = torch.tensor(1.0, requires_grad=True)
        b = Function.apply(a)
        obj = Test()

        def on_bw(g):
            obj.a = a
            return g
        b.register_hook(on_bw)
        obj.ref = weakref.ref(b, lambda _: count.__setitem__(0, count[0] + 1))
        return weakref.ref(obj)

    ref = scope()
    gc.collect()
    assert ref() is None


def test_post_accumulate_grad_hook_on_non_leaf(torch):
    def hook(tensor):
        tensor.sub_(1.0)

    leaf = torch.rand(3, requires_grad=True)
    non_leaf = 2.0 * leaf
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        non_leaf.register_post_accumulate_grad_hook(hook)


def test_post_accumulate_grad_hook_multiple_hooks(torch):
    def hook1(tensor):
        tensor.grad.sub_(tensor.grad.norm())

    def hook2(tensor):
        tensor.grad.mul_(4.0)

    tensor = torch.rand(3, 3, requires_grad=True)
    tensor_ref = tensor.detach().clone()
    tensor.register_post_accumulate_grad_hook(hook1)
    tensor.register_post_accumulate_grad_hook(hook2)
    tensor.sum().backward()
    grad = torch.ones_like(tensor_ref)
    grad = grad - grad.norm()
    grad = grad * 4.0
    assert_equal(grad, tensor.grad)


def test_post_accumulate_grad_hook_multiple_tensors(torch):
    def hook(tensor):
        tensor.grad.sub_(tensor.grad.norm())

    tensor1 = torch.rand(3, requires_grad=True)
    tensor2 = torch.rand(3, requires_grad=True)
    tensor1.register_post_accumulate_grad_hook(hook)
    tensor2.register_post_accumulate_grad_hook(hook)
    torch.autograd.backward([tensor1.sum(), tensor2.sum()])
    grad = torch.ones_like(tensor1)
    grad = grad - grad.norm()
    assert_equal(grad, tensor1.grad)
    assert_equal(grad, tensor2.grad)


def test_post_accumulate_grad_hook_returns_not_None(torch):
    def bad_hook(tensor):
        return tensor.grad

    tensor = torch.rand(2, 3, requires_grad=True)
    tensor.register_post_accumulate_grad_hook(bad_hook)
    with pytest.raises(RuntimeError, match="hooks should return None."):
        tensor.sum().backward()


def test_post_accumulate_grad_hook_e2e(torch):
    def setup_optim_in_bwd(param, lr):
        def opt_hook(p):
            with torch.no_grad():
                p.sub_(lr * p.grad)
                p.grad = None
        param.register_post_accumulate_grad_hook(opt_hook)

    w = torch.randn(4, 3, requires_grad=True)
    w_ref = w.detach().clone().requires_grad_()
    x = torch.randn(5, 4)
    setup_optim_in_bwd(w, 0.1)
    for _ in range(3):
        (x @ w).pow(2).sum().backward()
        (x @ w_ref).pow(2).sum().backward()
        with torch.no_grad():
            w_ref.sub_(0.1 * w_ref.grad)
            w_ref.grad = None
        assert w.grad is None
        assert_equal(w, w_ref)


def test_post_accumulate_grad_hook_ordering(torch):
    tensor = torch.rand(3, requires_grad=True)

    def pre_hook(grad):
        return grad.sub(2.0)

    def acc_grad_node_pre_hook(grad_out):
        return (grad_out[0].div(5.0),)

    def post_acc_grad_hook(tensor):
        tensor.grad.add_(0.5)

    def acc_grad_node_post_hook(grad_in, grad_out):
        tensor.grad = grad_out[0].mul(10)

    acc_grad = tensor.view_as(tensor).grad_fn.next_functions[0][0]
    tensor.register_hook(pre_hook)
    acc_grad.register_prehook(acc_grad_node_pre_hook)
    tensor.register_post_accumulate_grad_hook(post_acc_grad_hook)
    acc_grad.register_hook(acc_grad_node_post_hook)
    tensor.sum().backward()
    # tensor prehook, AccumulateGrad prehook, post-accumulate-grad hook, AccumulateGrad posthook:
    # ((1 - 2) / 5 + 0.5) * 10 = 3
    assert_equal(torch.tensor([3.0, 3.0, 3.0]), tensor.grad)


def test_multi_grad_all_hooks(torch):
    t1 = torch.rand(2, requires_grad=True)
    t2 = torch.rand(2, requires_grad=True)
    t3 = torch.rand(2, requires_grad=True)
    t4 = torch.rand(2, requires_grad=True)

    class Foo(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, gO):
            return gO

    def run_test(grad_output):
        out = torch.rand(2)
        res = [None] * 4
        count = [0]

        def hook(grads):
            nonlocal res
            count[0] += 1
            res = [g is not None for g in grads]

        handle = torch.autograd.graph.register_multi_grad_hook((t1, t2, t3, t4), hook)
        out = t2 * t3
        out.sum().backward(inputs=(t2, t3), retain_graph=True)
        assert count[0] == 1
        assert res == [False, True, True, False]
        out.sum().backward(inputs=(t1, t4), retain_graph=True)
        assert count[0] == 1
        out.sum().backward(inputs=(t1, t3), retain_graph=True)
        assert count[0] == 2
        assert res == [False, False, True, False]
        handle.remove()
        out.sum().backward(inputs=(t1, t3), retain_graph=True)
        assert count[0] == 2

    run_test(None)


def test_multi_grad_any_hooks(torch):

    class MultiOutputModule(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    x = torch.rand(2, requires_grad=True)
    y = torch.rand(2, requires_grad=True)
    calls = []

    def hook(grad):
        calls.append(grad)

    a = x * 2
    b = y * 3
    handle = torch.autograd.graph.register_multi_grad_hook((a, b), hook, mode="any")
    (a + b).sum().backward()
    assert len(calls) == 1
    assert isinstance(calls[0], torch.Tensor)
    handle.remove()
    a = x * 2
    b = y * 3
    torch.autograd.graph.register_multi_grad_hook((a, b), hook, mode="any")
    a.sum().backward()
    assert len(calls) == 2


def test_multi_grad_hook_bad_mode(torch):
    t = torch.rand(2, requires_grad=True)
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        torch.autograd.graph.register_multi_grad_hook((t,), lambda g: None, mode="bad")


def test_hook_accumulate_grad_register_on_leaf(torch):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    a.register_hook(lambda g: seen.append(g.clone()))
    (a * 3).sum().backward()
    assert_equal(seen[0], torch.full((2,), 3.0))
    assert_equal(a.grad, torch.full((2,), 3.0))


def test_hook_remove_handle_twice(torch):
    a = torch.tensor([1.0], requires_grad=True)
    h = a.register_hook(lambda g: g * 2)
    h.remove()
    h.remove()
    (a * 1).sum().backward()
    assert_equal(a.grad, torch.tensor([1.0]))


def test_register_hook_requires_grad_error(torch):
    a = torch.tensor([1.0])
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        a.register_hook(lambda g: g)


def test_post_accumulate_grad_hook_gets_cleaned_up(torch):
    def fun_stuff_with_hook():
        thing_to_put_in_hook = torch.rand(3)

        def hook(tensor):
            tensor.sub_(tensor.grad)
            tensor.add_(thing_to_put_in_hook)

        tensor = torch.rand(3, requires_grad=True)
        tensor.register_post_accumulate_grad_hook(hook)
        tensor.sum().backward()
        ref = weakref.ref(thing_to_put_in_hook)
        gc.collect()
        return tensor, ref

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        tensor, ref = fun_stuff_with_hook()
        assert ref() is not None
        del tensor
        gc.collect()
        assert ref() is None
    finally:
        if was_enabled:
            gc.enable()


def test_prehook_ordering(torch):
    log = []

    def hook1(g):
        log.append(1)
        return g * 3

    def hook2(gs):
        log.append(2)
        return tuple(g * 2 for g in gs)

    a = torch.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(hook2)
    b.register_hook(hook1)
    b.grad_fn.register_prehook(hook2)
    acc = b.grad_fn.next_functions[0][0]
    a.register_hook(hook1)
    acc.register_prehook(hook2)
    a.register_hook(hook1)

    b.sum().backward(retain_graph=True)
    assert log == [1, 2, 2, 1, 1, 2]

    log = []
    torch.autograd.grad(b.sum(), inputs=(a,), retain_graph=True)
    assert log == [1, 2, 2, 1, 1]

    log = []
    b.sum().backward(inputs=(b,))
    assert log == [1, 2, 2]
    assert b.grad.item() == 3


def test_retains_grad_can_always_observe_tensor_prehook(torch):
    def tensor_prehook(g):
        return g * 2

    a = torch.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.register_hook(tensor_prehook)
    b.retain_grad()
    b.register_hook(tensor_prehook)
    b.clone().backward()
    assert b.grad.item() == 4

    a = torch.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.retain_grad()
    b.register_hook(tensor_prehook)
    b.clone().backward()
    assert b.grad.item() == 2


def test_accumulate_grad_posthooks_should_not_execute(torch):
    def tensor_prehook(g):
        raise RuntimeError

    def posthook(gO, gI):
        raise RuntimeError

    a = torch.tensor(1.0, requires_grad=True)
    a.register_hook(tensor_prehook)
    b = torch.tensor(1.0, requires_grad=True)
    c = a.clone()
    acc = c.grad_fn.next_functions[0][0]
    acc.register_hook(posthook)
    out = a + b + c
    out.sum().backward(inputs=[b])


def test_backward_hook_relative_ordering(torch):
    order = []

    class MyModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(10, 10)

        def forward(self, x):
            return self.linear(x)

    x = torch.randn(10, 10, requires_grad=True)
    module = MyModule()
    module.register_full_backward_hook(
        lambda _1, _2, _3: order.append("module_full_backward_hook_BackwardHookFunctionBackward0"))

    def make_pre_hook(id):
        return lambda _: order.append(f"pre_hook_{id}")

    def make_post_hook(id):
        return lambda _1, _2: order.append(f"post_hook_{id}")

    count = 0

    def register_hooks_on_all_nodes(nodes):
        nonlocal count
        for node, _ in nodes:
            count += 1
            # derivgen's AccumulateGrad names its namespace after the library
            id = f"{node.name().replace(torch.__name__ + '::', 'torch::')}_{count}"
            node.register_prehook(make_pre_hook(id))
            node.register_hook(make_post_hook(id))
            register_hooks_on_all_nodes(node.next_functions)

    loss = module(x).sum()
    register_hooks_on_all_nodes(((loss.grad_fn, None),))

    def make_tensor_pre_hook(id):
        return lambda _: order.append(f"tensor_pre_hook_{id}")

    def make_post_acc_grad_hook(id):
        return lambda _: order.append(f"post_acc_grad_hook_{id}")

    x.register_hook(make_tensor_pre_hook("x"))
    module.linear.weight.register_hook(make_tensor_pre_hook("weight"))
    module.linear.bias.register_hook(make_tensor_pre_hook("bias"))
    x.register_post_accumulate_grad_hook(make_post_acc_grad_hook("x"))
    module.linear.weight.register_post_accumulate_grad_hook(make_post_acc_grad_hook("weight"))
    module.linear.bias.register_post_accumulate_grad_hook(make_post_acc_grad_hook("bias"))

    loss.backward()

    expected_order = [
        "pre_hook_SumBackward0_1",
        "post_hook_SumBackward0_1",
        "pre_hook_BackwardHookFunctionBackward_2",
        "post_hook_BackwardHookFunctionBackward_2",
        "pre_hook_AddmmBackward0_3",
        "post_hook_AddmmBackward0_3",
        "tensor_pre_hook_bias",
        "pre_hook_torch::autograd::AccumulateGrad_4",
        "post_acc_grad_hook_bias",
        "post_hook_torch::autograd::AccumulateGrad_4",
        "pre_hook_TBackward0_7",
        "post_hook_TBackward0_7",
        "tensor_pre_hook_weight",
        "pre_hook_torch::autograd::AccumulateGrad_8",
        "post_acc_grad_hook_weight",
        "post_hook_torch::autograd::AccumulateGrad_8",
        "pre_hook_BackwardHookFunctionBackward_5",
        "module_full_backward_hook_BackwardHookFunctionBackward0",
        "post_hook_BackwardHookFunctionBackward_5",
        "tensor_pre_hook_x",
        "pre_hook_torch::autograd::AccumulateGrad_6",
        "post_acc_grad_hook_x",
        "post_hook_torch::autograd::AccumulateGrad_6",
    ]
    assert len(expected_order) == len(order)
    for expected, actual in zip(expected_order, order):
        assert expected == actual


def test_multi_grad_hooks_invalid_mode(torch):
    t1 = torch.rand(2, requires_grad=True)
    t2 = torch.rand(2, requires_grad=True)
    regex = r"Expects mode to be one of \('all', 'any'\) but got foo"
    with pytest.raises(ValueError, match=regex):
        torch.autograd.graph.register_multi_grad_hook((t1, t2), lambda _: None, mode="foo")
