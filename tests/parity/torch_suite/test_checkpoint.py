"""Ported from PyTorch's test/test_utils.py (TestCheckpoint) and the checkpoint tests of
test/test_autograd.py (TestAutograd): ``torch.utils.checkpoint.checkpoint`` with both variants and
``checkpoint_sequential``. ``subTest`` loops became ``pytest.mark.parametrize``."""
import importlib
import random

import pytest

from tests.support.torch_assert import assert_equal


def _ckpt(torch):
    return importlib.import_module(torch.__name__ + ".utils.checkpoint")


def _mlp(nn):
    return nn.Sequential(nn.Linear(100, 50), nn.ReLU(), nn.Linear(50, 20), nn.ReLU(), nn.Linear(20, 5), nn.ReLU())


def _check_checkpoint_sequential(torch, model, module_lists_to_compare, num_chunks, input, use_reentrant):  # noqa: A002
    out = model(input)
    out_not_checkpointed = out.detach().clone()
    model.zero_grad()
    out.sum().backward()
    grad_not_checkpointed = {name: param.grad.detach().clone() for name, param in model.named_parameters()}
    input_grad_not_checkpointed = input.grad.detach().clone()
    for model_to_compare in module_lists_to_compare:
        detached = input.detach()
        detached.requires_grad = True
        out = _ckpt(torch).checkpoint_sequential(model_to_compare, num_chunks, detached, use_reentrant=use_reentrant)
        out_checkpointed = out.detach().clone()
        model.zero_grad()
        out.sum().backward()
        grad_checkpointed = {name: param.grad.detach().clone() for name, param in model.named_parameters()}
        input_grad_checkpointed = detached.grad.detach().clone()
        assert_equal(out_checkpointed, out_not_checkpointed)
        assert_equal(input_grad_not_checkpointed, input_grad_checkpointed)
        for name in grad_checkpointed:
            assert_equal(grad_checkpointed[name], grad_not_checkpointed[name])


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_trigger(torch, use_reentrant):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.counter = 0

        def forward(self, input_var):
            self.counter += 1
            return input_var * torch.tensor(2.0)  # something is saved, so the recomputation runs

    modules = [Net() for _ in range(10)]
    input_var = torch.randn(3, 4, requires_grad=True)
    out = _ckpt(torch).checkpoint_sequential(modules, 2, input_var, use_reentrant=use_reentrant)
    assert [m.counter for m in modules] == [1] * 10
    out.sum().backward()
    assert [m.counter for m in modules] == [2] * 5 + [1] * 5


def test_checkpoint_valid(torch):
    ckpt = _ckpt(torch)
    model = _mlp(torch.nn)
    input_var = torch.randn(1, 100, requires_grad=True)
    modules = list(model.children())
    out = ckpt.checkpoint_sequential(modules, 2, input_var, use_reentrant=True)
    with pytest.raises(RuntimeError, match="torch.utils.checkpoint is incompatible"):
        torch.autograd.grad(outputs=[out], grad_outputs=[torch.ones(1, 5)], inputs=[input_var], create_graph=True)
    out = model(input_var)
    grads_no_checkpoint = torch.autograd.grad(outputs=[out], grad_outputs=[torch.ones(1, 5)], inputs=[input_var],
                                              create_graph=True)
    out_checkpoint = ckpt.checkpoint_sequential(modules, 2, input_var, use_reentrant=False)
    assert_equal(out_checkpoint, out)
    grads_checkpoint = torch.autograd.grad(outputs=[out_checkpoint], grad_outputs=[torch.ones(1, 5)],
                                           inputs=[input_var], create_graph=True)
    assert_equal(grads_no_checkpoint[0], grads_checkpoint[0])


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint(torch, use_reentrant):
    model = _mlp(torch.nn)
    _check_checkpoint_sequential(torch, model, [list(model.children()), model], 2,
                                 torch.randn(1, 100, requires_grad=True), use_reentrant)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_module_list(torch, use_reentrant):
    nn = torch.nn

    class ModuleListNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.module_list = nn.ModuleList(list(_mlp(nn).children()))

        def forward(self, input):  # noqa: A002
            for layer in self.module_list:
                input = layer(input)
            return input

    model = ModuleListNet()
    _check_checkpoint_sequential(torch, model, [list(model.module_list.children()), model.module_list], 2,
                                 torch.randn(1, 100, requires_grad=True), use_reentrant)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_sequential_deprecated_multiple_args(torch, use_reentrant):
    class Two(torch.nn.Module):
        def forward(self, a, b):
            return a, b

    model = torch.nn.Sequential(Two())
    a = torch.randn(1, 100, requires_grad=True)
    b = torch.randn(1, 100, requires_grad=True)
    with pytest.raises(TypeError):
        _ckpt(torch).checkpoint_sequential(model, 1, a, b)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_sequential_deprecated_no_args(torch, use_reentrant):
    class Noop(torch.nn.Module):
        def forward(self):
            pass

    with pytest.raises(TypeError):
        _ckpt(torch).checkpoint_sequential(torch.nn.Sequential(Noop()), 1)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_rng_cpu(torch, use_reentrant):
    for _ in range(5):
        inp = torch.randn(20000).requires_grad_()
        phase1 = torch.nn.Dropout()
        phase2 = torch.nn.Dropout()

        def run_fn(input):  # noqa: A002
            return phase2(input)

        state = torch.get_rng_state()
        out = phase1(inp)
        out = _ckpt(torch).checkpoint(run_fn, out, use_reentrant=use_reentrant)
        out.sum().backward()
        grad_with_checkpointing = inp.grad
        torch.set_rng_state(state)
        inp.grad = None
        out = phase1(inp)
        out = run_fn(out)
        out.sum().backward()
        assert_equal(grad_with_checkpointing, inp.grad)


def test_checkpoint_not_preserve_rng_state_and_without_reentrant(torch):
    inp = torch.randn(2).requires_grad_()
    layer = torch.nn.Dropout()
    out = _ckpt(torch).checkpoint(lambda x: layer(x), inp, use_reentrant=False, preserve_rng_state=False)
    out.sum().backward()


def test_checkpoint_non_tensor(torch):
    def run_fn(tensor1, tensor2):
        if tensor2 is None:
            return tensor1
        return tensor1 + tensor2

    input_var = torch.randn(1, 100, requires_grad=True)
    out = _ckpt(torch).checkpoint(run_fn, input_var, None, use_reentrant=True)
    out.sum().backward()


def _foo(t1, t2, scale, t3):
    t4 = t1 + t2 * t3
    t5 = t1 * t2 + t3
    t4 *= scale
    t5 *= scale
    return scale, t4, None, True, t5, "bar", t1


def test_checkpoint_non_tensor_inputs_outputs(torch):
    t1 = torch.rand(10, requires_grad=True)
    t2 = torch.rand(10, requires_grad=True)
    t3 = torch.rand(10)
    scale = random.randint(0, 10)
    res = _ckpt(torch).checkpoint(_foo, t1, t2, scale, t3, use_reentrant=True)
    assert res[0] == scale
    assert_equal((t1 + t2 * t3) * scale, res[1])
    assert res[2] is None and res[3] is True and res[5] == "bar"
    assert_equal((t1 * t2 + t3) * scale, res[4])
    assert_equal(t1, res[6])
    res[1].sum().backward(retain_graph=True)
    res[4].sum().backward(retain_graph=True)
    res[6].sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        res[6].sum().backward()
    t1_grad = t1.grad
    t2_grad = t2.grad
    t1.grad = None
    t2.grad = None
    res = _foo(t1, t2, scale, t3)
    torch.autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])
    assert_equal(t1.grad, t1_grad)
    assert_equal(t2.grad, t2_grad)


def test_checkpoint_no_tensors(torch):
    t1, t2, t3 = random.random(), random.random(), random.random()
    scale = random.randint(0, 10)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True. Gradients will be None"):
        res = _ckpt(torch).checkpoint(_foo, t1, t2, scale, t3, use_reentrant=True)
    assert res[0] == scale
    assert res[1] == pytest.approx((t1 + t2 * t3) * scale)
    assert res[2] is None and res[3] is True and res[5] == "bar" and res[6] == t1
    assert res[4] == pytest.approx((t1 * t2 + t3) * scale)


def test_checkpoint_partial_grad(torch):
    ckpt = _ckpt(torch)
    input_var = torch.randn(1, 4, requires_grad=True)
    input_var2 = torch.randn(1, 4, requires_grad=False)
    out = ckpt.checkpoint(lambda t1, t2: (t1, t2), input_var, input_var2, use_reentrant=True)
    out[0].sum().backward()
    input_var = torch.randn(1, 4, requires_grad=False)
    input_var2 = torch.randn(1, 4, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"none of output has requires_grad=True, this checkpoint\(\) is not "
                                           r"necessary"):
        out = ckpt.checkpoint(lambda t1, t2: t1, input_var, input_var2, use_reentrant=True)
        out.sum().backward()


# ---- from TestAutograd -------------------------------------------------------------------------------

def test_checkpointing(torch):
    num_inp = 2000
    nz_inp = 10
    nz_out = 10
    nz_bottleneck = 1000
    module = torch.nn.Sequential(torch.nn.Linear(nz_inp, nz_bottleneck), torch.nn.ReLU(),
                                 torch.nn.Linear(nz_bottleneck, nz_inp))
    feat_combined = []
    for _ in range(num_inp // 100):
        data_r = torch.rand(1, nz_inp)  # upstream: empty(...).uniform_()
        data_r.requires_grad = True
        feat_r = _ckpt(torch).checkpoint(module, data_r, use_reentrant=True)
        feat_combined.append(feat_r)
    mean_combined = torch.stack(feat_combined).mean()
    mean_combined.backward()
    assert nz_out == 10


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpointing_without_reentrant_input_requires_grad(torch, use_reentrant):
    """Variant of the upstream test: without reentrant autograd the parameters get their gradients even
    when the input does not require grad; the reentrant variant's output then does not require grad."""
    ckpt = _ckpt(torch)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    for input_requires_grad in (True, False):
        x = torch.randn(5, 3, requires_grad=input_requires_grad)
        model.zero_grad()
        model(x).sum().backward()
        expected = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        if use_reentrant and not input_requires_grad:
            with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
                out = ckpt.checkpoint(model, x, use_reentrant=use_reentrant)
            with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have "
                                                   "a grad_fn"):
                out.sum().backward()
            continue
        ckpt.checkpoint(model, x, use_reentrant=use_reentrant).sum().backward()
        for p, g in zip(model.parameters(), expected):
            assert_equal(p.grad, g)


def test_checkpointing_without_reentrant_correct_grad(torch):
    a = torch.randn(2, requires_grad=True)
    b = torch.exp(a).sum()
    b.backward()
    b_grad = a.grad
    a.grad = None
    c = _ckpt(torch).checkpoint(torch.exp, a, use_reentrant=False).sum()
    c.backward()
    assert_equal(b_grad, a.grad)


def test_checkpointing_without_reentrant_arbitrary_input_output(torch):
    class MyModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(5, 5, bias=False)

        def forward(self, dict_input):
            tensor = dict_input["tensor"]
            return {"result": self.layer(tensor)}

    model_no_checkpoint = MyModel()
    model_checkpoint_without_reentrant = MyModel()
    model_checkpoint_without_reentrant.load_state_dict(model_no_checkpoint.state_dict())
    inp = {"tensor": torch.randn(5, 5)}
    out_no_checkpoint = model_no_checkpoint(inp)["result"].sum()
    out_checkpoint = _ckpt(torch).checkpoint(model_checkpoint_without_reentrant, inp,
                                             use_reentrant=False)["result"].sum()
    assert_equal(out_checkpoint, out_no_checkpoint)
    out_no_checkpoint.backward()
    out_checkpoint.backward()
    for param, checkpoint_param in zip(model_no_checkpoint.parameters(),
                                       model_checkpoint_without_reentrant.parameters()):
        assert_equal(param.grad, checkpoint_param.grad)


def test_checkpointing_without_reentrant_with_context_fn(torch):
    class VerboseTorchDispatchMode:
        def __init__(self):
            self.operators = []

        def __enter__(self):
            self.operators.append("enter")
            return self

        def __exit__(self, *exc):
            self.operators.append("exit")

    verbose_mode = VerboseTorchDispatchMode()

    def context_fn():
        return verbose_mode, __import__("contextlib").nullcontext()

    x = torch.tensor(1.0, requires_grad=True)
    y = _ckpt(torch).checkpoint(lambda x: x.sin(), x, use_reentrant=False, context_fn=context_fn)
    assert verbose_mode.operators == ["enter", "exit"]
    y.backward()
    assert verbose_mode.operators == ["enter", "exit"]  # the recompute context is the other one
    with pytest.raises(ValueError, match="Passing `context_fn` or `debug` is only supported when "
                                         "use_reentrant=False."):
        _ckpt(torch).checkpoint(lambda x: x.sin(), x, use_reentrant=True, context_fn=context_fn)


def test_checkpoint_detects_non_determinism(torch):
    ckpt = _ckpt(torch)

    def save_3_tensors(x):
        out = x.sin().exp()
        out = out.sin()
        return out

    def save_2_tensors(x):
        return x.sin().exp()

    def save_2_tensors_alt(x):
        return x.sin() * torch.tensor([1.0, 2.0])

    def get_non_det_fn(orig_fn, recompute_fn):
        counter = [0]

        def fn(x):
            if counter[0] == 0:
                counter[0] += 1
                return orig_fn(x)
            return recompute_fn(x)
        return fn

    a = torch.randn(1, requires_grad=True)
    fn = get_non_det_fn(orig_fn=save_3_tensors, recompute_fn=save_2_tensors)
    with pytest.raises(ckpt.CheckpointError, match="A different number of tensors was saved"):
        out = ckpt.checkpoint(fn, a, use_reentrant=False)
        out.backward()
    fn = get_non_det_fn(orig_fn=save_2_tensors, recompute_fn=save_3_tensors)
    with ckpt.set_checkpoint_early_stop(False):
        with pytest.raises(ckpt.CheckpointError, match="trying to save more tensors during recomputation"):
            out = ckpt.checkpoint(fn, a, use_reentrant=False)
            out.backward()
    fn = get_non_det_fn(orig_fn=save_2_tensors, recompute_fn=save_3_tensors)
    out = ckpt.checkpoint(fn, a, use_reentrant=False)  # early stop: the extra tensor is never reached
    out.backward()
    fn = get_non_det_fn(orig_fn=save_2_tensors, recompute_fn=save_2_tensors_alt)
    with pytest.raises(ckpt.CheckpointError, match="Recomputed values for the following tensors have different"):
        out = ckpt.checkpoint(fn, a, use_reentrant=False)
        out.backward()
    fn = get_non_det_fn(orig_fn=save_2_tensors, recompute_fn=save_2_tensors_alt)
    out = ckpt.checkpoint(fn, a, use_reentrant=False, determinism_check="none")
    out.backward()
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        ckpt.checkpoint(fn, a, use_reentrant=False, determinism_check="foo")


def test_checkpoint_warns_without_use_reentrant(torch):
    ckpt = _ckpt(torch)
    x = torch.randn(2, requires_grad=True)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
        ckpt.checkpoint(torch.sin, x)
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter should be passed"):
        ckpt.checkpoint_sequential([torch.nn.Tanh(), torch.nn.Tanh()], 2, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        ckpt.checkpoint(torch.sin, x, use_reentrant=True, foo=1)


def test_checkpointing_without_reentrant_kwargs_and_unpack_twice(torch):
    ckpt = _ckpt(torch)
    x = torch.randn(3, requires_grad=True)
    out = ckpt.checkpoint(lambda t, *, power: t.sin() ** power, x, power=3, use_reentrant=False)
    out.sum().backward(retain_graph=True)
    assert_equal(x.grad, 3 * x.sin() ** 2 * x.cos())
    out.sum().backward()  # each backward call recomputes: a retained graph can run again
    assert_equal(x.grad, 6 * x.sin() ** 2 * x.cos())


def test_checkpointing_without_reentrant_no_grad_mode(torch):
    ckpt = _ckpt(torch)
    x = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        out = ckpt.checkpoint(torch.sin, x, use_reentrant=False)
    assert not out.requires_grad
    assert_equal(out, x.sin())


def test_checkpointing_without_reentrant_custom_function_works(torch):
    msg = "Unpack is being triggered for a tensor that was already unpacked once"

    class MyFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, z):
            w = x * y * z
            out = w + w
            ctx.save_for_backward(x, y, z, w, out)
            return out

        @staticmethod
        def backward(ctx, grad_out):
            x, y, z, w, out = ctx.saved_tensors
            # a recomputed tensor is handed out once per backward call
            with pytest.raises(RuntimeError, match=msg):
                ctx.saved_tensors
            return x, y, z

    x = torch.tensor(1.0, requires_grad=True)
    y = torch.tensor(2.0, requires_grad=True)
    z = torch.tensor(3.0, requires_grad=True)

    def foo(x, y, z):
        x = x * y * z
        y = y * y * z
        z = z * z
        return MyFunc.apply(x, y, z)

    out = _ckpt(torch).checkpoint(foo, x, y, z, use_reentrant=False)
    out.sum().backward()


def test_checkpointing_without_reentrant_saved_object_identity(torch):
    x_backward = [None]

    class Test(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(y)
            return x

        @staticmethod
        def backward(ctx, x):
            x_backward[0], = ctx.saved_tensors
            return x, None

    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(2.0, requires_grad=False)
    Test.apply(a, b).backward()
    assert x_backward[0] is b
    x_backward[0] = None
    _ckpt(torch).checkpoint(Test.apply, a, b, use_reentrant=False).backward()
    assert x_backward[0] is b


def test_checkpointing_without_reentrant_parameter_used_in_an_out(torch):
    w = torch.randn(10, 10, requires_grad=True)
    count = [0]

    def hook(grad):
        count[0] += 1

    w.register_hook(hook)
    x = torch.rand(10, 10, requires_grad=True)
    h = w * x  # w outside the checkpoint
    out = _ckpt(torch).checkpoint(lambda x: w * x, h, use_reentrant=False)  # and inside
    out.sum().backward()
    assert count[0] == 1  # the hook runs once


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpointing_without_reentrant_detached_tensor(torch, use_reentrant):
    nn = torch.nn

    class NoGradModule(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(2, 2, bias=False)
            self.lin2 = nn.Linear(2, 2, bias=False)

        def forward(self, x):
            with torch.no_grad():
                return self.lin2(self.linear(x))

    module = NoGradModule()
    a = torch.randn(2, 2, requires_grad=True)
    for _ in range(3):
        if use_reentrant:
            with pytest.raises(RuntimeError, match="none of output has requires_grad=True"):
                out = _ckpt(torch).checkpoint(module, a, use_reentrant=use_reentrant)
                out += a
                out.sum().backward()
        else:
            out = _ckpt(torch).checkpoint(module, a, use_reentrant=use_reentrant)
            out += a
            out.sum().backward()


def test_checkpoint_valid_reset_on_error(torch):
    ckpt = _ckpt(torch)
    a = torch.randn(2, 2, requires_grad=True)
    with pytest.raises(Exception, match="torch.utils.checkpoint is incompatible"):
        b = ckpt.checkpoint(torch.exp, a, use_reentrant=True).sum()
        torch.autograd.grad(b, (a,))
    c = ckpt.checkpoint(torch.exp, a, use_reentrant=True).sum()
    c.backward()


def test_access_saved_tensor_twice_without_recomputation_works(torch):
    count = [0]

    def foo(a):
        count[0] += 1
        b = a * a
        c = a * b  # noqa: F841 - saves tensors the recomputation must reproduce
        return torch.exp(a)

    a = torch.randn(5, requires_grad=True)
    d = _ckpt(torch).checkpoint(foo, a, use_reentrant=False)
    assert count[0] == 1
    # outside a backward call every access recomputes, and the recomputed values are not kept
    d.grad_fn._saved_result
    assert count[0] == 2
    d.grad_fn._saved_result
    assert count[0] == 3
    d.sum().backward()
    assert count[0] == 4
    with pytest.raises(RuntimeError, match="or directly access saved tensors after they have already been freed"):
        d.grad_fn._saved_result


@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_checkpointing_without_reentrant(torch, input_requires_grad):
    import copy
    nn = torch.nn
    num_inp = 2000
    nz_inp = 10
    nz_bottleneck = 1000
    module = nn.Sequential(nn.Linear(nz_inp, nz_bottleneck), nn.ReLU(), nn.Linear(nz_bottleneck, nz_inp))

    class MyModule(nn.Module):
        def __init__(self, mod):
            super().__init__()
            self.module = mod

        def forward(self, data):
            return self.module(data)

    module = MyModule(mod=module)
    module_copy = copy.deepcopy(module)
    feat_combined = []
    feat_combined_no_checkpoint = []
    for _ in range(num_inp // 100):  # upstream runs 2000 inputs
        data_r = torch.rand(1, nz_inp)  # upstream: empty(...).uniform_()
        data_r.requires_grad = input_requires_grad
        feat_r = _ckpt(torch).checkpoint(module, data=data_r, use_reentrant=False)
        feat_combined.append(feat_r)
        feat_combined_no_checkpoint.append(module_copy(data_r))
    mean_combined = torch.stack(feat_combined).mean()
    mean_combined.backward()
    mean_combined_no_checkpoint = torch.stack(feat_combined_no_checkpoint).mean()
    mean_combined_no_checkpoint.backward()
    for checkpoint_param, param in zip(module.parameters(), module_copy.parameters()):
        assert_equal(checkpoint_param.grad, param.grad)


def test_save_on_cpu_and_checkpoint(torch):
    checkpoint = _ckpt(torch).checkpoint
    a = torch.randn(2, 2, requires_grad=True)
    b = a.pow(2).pow(2).pow(2).pow(2)
    b.sum().backward()
    b_grad = a.grad.clone()
    a.grad.zero_()

    with torch.autograd.graph.save_on_cpu():
        h = a.pow(2)
        h = checkpoint(lambda x: x.pow(2).pow(2), h, use_reentrant=False)
        c = h.pow(2)
    c.sum().backward()
    c_grad = a.grad.clone()
    a.grad.zero_()

    def f(a):
        h = a.pow(2)
        with torch.autograd.graph.save_on_cpu():
            h = h.pow(2).pow(2)
        return h.pow(2)

    d = checkpoint(f, a, use_reentrant=False)
    d.sum().backward()
    d_grad = a.grad.clone()
    assert_equal(b_grad, c_grad)
    assert_equal(b_grad, d_grad)


def test_checkpoint_graph_execution_group(torch):
    import contextlib
    ckpt = _ckpt(torch)

    def run(use_graph_execution_group):
        counter = [0]

        def fn(x):
            counter[0] += 1
            y = x.sin().cos()
            z = y.sin().cos()
            return y, z

        x = torch.randn(3, 3, requires_grad=True)
        y, z = ckpt.checkpoint(fn, x, use_reentrant=False)
        group = ckpt.GraphExecGroup()
        ctx = group if use_graph_execution_group else contextlib.nullcontext()
        with ctx:
            (grad_y,) = torch.autograd.grad(z, inputs=(y,), grad_outputs=(torch.ones(3, 3),))
            (grad_x,) = torch.autograd.grad(y, inputs=(x,), grad_outputs=(grad_y,))
        if use_graph_execution_group:
            assert counter[0] == 2
        else:
            assert counter[0] == 3

    run(use_graph_execution_group=True)
    run(use_graph_execution_group=False)

    def fn(x):
        return x.sin().cos()

    x = torch.randn(3, 3, requires_grad=True)
    out = ckpt.checkpoint(fn, x, use_reentrant=False)
    with ckpt.GraphExecGroup():
        out.sum().backward(retain_graph=True)
        with pytest.raises(RuntimeError, match="Performing two backward calls that overlap"):
            out.sum().backward()


def test_graph_exec_group_not_nested_and_per_thread(torch):
    import threading
    ckpt = _ckpt(torch)
    group = ckpt.GraphExecGroup()
    with group as entered:
        assert entered is group
        with pytest.raises(RuntimeError, match="GraphExecGroup contexts cannot be nested. Already inside group"):
            with ckpt.GraphExecGroup():
                pass
        seen = []
        worker = threading.Thread(target=lambda: seen.append(ckpt.GraphExecGroup._get_current_group()))
        worker.start()
        worker.join()
        assert seen == [None]
        assert ckpt.GraphExecGroup._get_current_group() is group
    assert ckpt.GraphExecGroup._get_current_group() is None
    with ckpt.GraphExecGroup():  # usable again after the first one closed
        pass
