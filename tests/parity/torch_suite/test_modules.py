"""Ported from PyTorch's module-hook tests: test/nn/test_module_hooks.py (TestModuleHooks,
TestModuleGlobalHooks, TestModuleHookNN) and TestAutograd.test_hooks_cpp of test/test_autograd.py.
Names are kept; ``self.assert*`` became plain asserts and ``assert_equal``; ``parametrize_test`` became
``pytest.mark.parametrize``. The global hooks are cleared after every test, as upstream's tearDown does."""
import importlib
from collections import OrderedDict, namedtuple
from functools import partial

import pytest

from tests.support.torch_assert import assert_equal

ToyNamedTuple = namedtuple("ToyNamedTuple", "content")


def _reset_global_hooks(torch):
    mm = importlib.import_module(torch.__name__ + ".nn.modules.module")
    for name in ("_global_backward_hooks", "_global_backward_pre_hooks", "_global_forward_hooks",
                 "_global_forward_pre_hooks"):
        setattr(mm, name, OrderedDict())
    # removing a global full backward hook leaves this set, in torch too: an earlier test in the same
    # process (tests/nn/test_module_hooks.py) would make the non-full global hooks here refuse
    mm._global_is_full_backward_hook = None


@pytest.fixture(autouse=True)
def _clear_global_hooks(torch):
    _reset_global_hooks(torch)
    yield
    _reset_global_hooks(torch)


def _models(torch):
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.seq1 = nn.Sequential(*[nn.Linear(10, 10) for _ in range(2)])
            self.seq2 = nn.Sequential(*[nn.Linear(10, 10) for _ in range(2)])

        def forward(self, x):
            return self.seq2(self.seq1(x))

    class ToyModel(nn.Module):
        def __init__(self, with_named_tuple=False):
            super().__init__()
            self.net1 = Net()
            self.net2 = Net()
            self.with_named_tuple = with_named_tuple

        def forward(self, x):
            res = self.net2(self.net1(x))
            return ToyNamedTuple(res) if self.with_named_tuple else (res,)

    return ToyModel


def forward_hook(fired_hooks, expected_module, hook_id, module, inp, out):
    fired_hooks.append(hook_id)
    assert id(module) == id(expected_module)
    assert len(inp) == 1


def forward_pre_hook(fired_hooks, expected_module, hook_id, module, inp):
    fired_hooks.append(hook_id)
    assert id(module) == id(expected_module)
    assert len(inp) == 1


def full_backward_hook(fired_hooks, expected_module, hook_id, module, grad_input, grad_output):
    fired_hooks.append(hook_id)
    assert id(module) == id(expected_module)
    assert len(grad_input) == 1
    assert len(grad_output) == 1


def full_backward_pre_hook(fired_hooks, expected_module, hook_id, module, grad_input):
    fired_hooks.append(hook_id)
    assert id(module) == id(expected_module)
    assert len(grad_input) == 1


def _basic_net(torch):
    """upstream's ``_create_basic_net``: a layer with a parameter and a buffer, inside a net, inside a
    Sequential."""
    nn = torch.nn

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer_dummy_param = nn.Parameter(torch.empty(3, 5))
            self.layer_dummy_buf = nn.Buffer(torch.zeros(1, 3, 3, 7))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = Layer()
            self.dummy_param = nn.Parameter(torch.empty(3, 5))
            self.dummy_buf = nn.Buffer(torch.zeros(7, 3, 3, 1))

    l = Layer()  # noqa: E741 - upstream's name
    n = Net()
    s = nn.Sequential(n, n)
    return l, n, s


@pytest.mark.parametrize("named_tuple", [True, False])
def test_forward_hooks(torch, named_tuple):
    fired_hooks = []
    model = _models(torch)(named_tuple)
    x = torch.randn(10, 10)
    hook = partial(forward_hook, fired_hooks, model.net1.seq2)
    model.net1.seq2.register_forward_hook(partial(hook, 0))
    model.net1.seq2.register_forward_hook(partial(hook, 1), prepend=True)
    model.net1.seq2.register_forward_hook(partial(hook, 2))
    model.net1.seq2.register_forward_hook(partial(hook, 3))
    model.net1.seq2.register_forward_hook(partial(hook, 4), prepend=True)
    expected = [4, 1, 0, 2, 3]
    out = model(x)
    assert fired_hooks == expected
    assert isinstance(out, ToyNamedTuple if named_tuple else tuple)
    out[0].sum().backward()
    assert fired_hooks == expected
    model(x)[0].sum().backward()
    assert fired_hooks == expected + expected


@pytest.mark.parametrize("named_tuple", [True, False])
def test_forward_pre_hooks(torch, named_tuple):
    fired_hooks = []
    model = _models(torch)(named_tuple)
    x = torch.randn(10, 10)
    hook = partial(forward_pre_hook, fired_hooks, model.net2.seq1)
    model.net2.seq1.register_forward_pre_hook(partial(hook, 0), prepend=True)
    model.net2.seq1.register_forward_pre_hook(partial(hook, 1))
    model.net2.seq1.register_forward_pre_hook(partial(hook, 2))
    model.net2.seq1.register_forward_pre_hook(partial(hook, 3))
    model.net2.seq1.register_forward_pre_hook(partial(hook, 4), prepend=True)
    expected = [4, 0, 1, 2, 3]
    out = model(x)
    assert fired_hooks == expected
    assert isinstance(out, ToyNamedTuple if named_tuple else tuple)
    out[0].sum().backward()
    assert fired_hooks == expected
    model(x)[0].sum().backward()
    assert fired_hooks == expected + expected


@pytest.mark.parametrize("named_tuple", [True, False])
def test_full_backward_hooks(torch, named_tuple):
    fired_hooks = []
    model = _models(torch)(named_tuple)
    x = torch.randn(10, 10)
    hook = partial(full_backward_hook, fired_hooks, model.net1)
    model.net1.register_full_backward_hook(partial(hook, 0))
    model.net1.register_full_backward_hook(partial(hook, 1))
    model.net1.register_full_backward_hook(partial(hook, 2))
    model.net1.register_full_backward_hook(partial(hook, 3), prepend=True)
    model.net1.register_full_backward_hook(partial(hook, 4), prepend=True)
    expected = [4, 3, 0, 1, 2]
    out = model(x)
    assert fired_hooks == []
    assert isinstance(out, ToyNamedTuple if named_tuple else tuple)
    out[0].sum().backward()
    assert fired_hooks == expected
    model(x)[0].sum().backward()
    assert fired_hooks == expected + expected


@pytest.mark.parametrize("named_tuple", [True, False])
def test_full_backward_pre_hooks(torch, named_tuple):
    fired_hooks = []
    model = _models(torch)(named_tuple)
    x = torch.randn(10, 10)
    hook = partial(full_backward_pre_hook, fired_hooks, model.net1)
    model.net1.register_full_backward_pre_hook(partial(hook, 0), prepend=True)
    model.net1.register_full_backward_pre_hook(partial(hook, 1), prepend=True)
    model.net1.register_full_backward_pre_hook(partial(hook, 2))
    model.net1.register_full_backward_pre_hook(partial(hook, 3))
    model.net1.register_full_backward_pre_hook(partial(hook, 4))
    expected = [1, 0, 2, 3, 4]
    out = model(x)
    assert fired_hooks == []
    assert isinstance(out, ToyNamedTuple if named_tuple else tuple)
    out[0].sum().backward()
    assert fired_hooks == expected
    model(x)[0].sum().backward()
    assert fired_hooks == expected + expected
    # a backward pre-hook changes the gradients computed after it
    for rg in [True, False]:
        a = torch.ones(2, requires_grad=rg)
        model = torch.nn.Linear(2, 2)
        model.register_full_backward_pre_hook(lambda _unused_module, grad_output: (grad_output[0] * 0,))
        out = model(a)
        if rg:
            out.sum().backward()
        else:
            with pytest.warns(UserWarning, match="Full backward hook is firing"):
                out.sum().backward()
        assert_equal(model.weight.grad, torch.zeros(2, 2))
        if rg:
            assert_equal(a.grad, torch.zeros_like(a))
        else:
            assert a.grad is None


@pytest.mark.parametrize("named_tuple", [True, False])
def test_mixed_hooks(torch, named_tuple):
    fired_hooks = []
    model = _models(torch)(named_tuple)
    x = torch.randn(10, 10)
    model.register_forward_pre_hook(partial(forward_pre_hook, fired_hooks, model, 0))
    model.register_forward_hook(partial(forward_hook, fired_hooks, model, 1))
    model.register_full_backward_pre_hook(partial(full_backward_pre_hook, fired_hooks, model, 2))
    model.register_full_backward_hook(partial(full_backward_hook, fired_hooks, model, 3))
    out = model(x)
    assert fired_hooks == [0, 1]
    assert isinstance(out, ToyNamedTuple if named_tuple else tuple)
    with pytest.warns(UserWarning, match="Full backward hook is firing"):  # x does not require grad
        out[0].sum().backward()
    assert fired_hooks == [0, 1, 2, 3]
    with pytest.warns(UserWarning, match="Full backward hook is firing"):
        model(x)[0].sum().backward()
    assert fired_hooks == [0, 1, 2, 3, 0, 1, 2, 3]


def test_hooks_cpp(torch):
    """TestAutograd.test_hooks_cpp: a tensor hook on the output of BatchNorm1d."""
    bn = torch.nn.BatchNorm1d(5, affine=False)
    bn.double()
    bn.eval()
    counter = [0]

    def bw_hook(grad):
        counter[0] += 1
        return grad * 2

    x = torch.ones(5, 5, dtype=torch.double, requires_grad=True)
    z = bn(x)
    z.register_hook(bw_hook)
    z.sum().backward()
    assert counter[0] == 1, "bw_hook not called"
    assert_equal(x.grad, torch.ones(5, 5, dtype=torch.double) * 2, atol=1e-5, rtol=0)


def test_hook_cpp(torch):
    bn = torch.nn.BatchNorm1d(5)
    seen = []

    def hook(module, grad_inputs, grad_outputs):
        assert len(grad_inputs) == 1
        assert len(grad_outputs) == 1
        assert module is bn
        seen.append(True)

    bn.register_full_backward_hook(hook)
    output = bn(torch.randn(5, 5, requires_grad=True))
    output.sum().backward()
    assert seen == [True]


def test_backward_hooks_interaction(torch):
    module = torch.nn.Sigmoid()
    cnt = {"backward_cnt": 0}

    def bw_pre_hook(m, grad_output):
        cnt["backward_cnt"] += 1
        return (grad_output[0] * 0.5,)

    def bw_hook(m, grad_in, grad_output):
        assert_equal(torch.full_like(grad_output[0], 0.5), grad_output[0])
        cnt["backward_cnt"] += 1
        return grad_output

    module.register_full_backward_pre_hook(bw_pre_hook)
    module.register_full_backward_hook(bw_hook)
    t = torch.ones(1, 2, requires_grad=True)
    module(t).sum().backward()
    assert cnt["backward_cnt"] == 2


def test_hook_invalid_outputs(torch):
    module = torch.nn.Sigmoid()
    input = torch.randn(5, 5, requires_grad=True)  # noqa: A001

    def bw_fail1(self, grad_input, grad_output):
        return grad_input[:-1]

    def bw_fail2(self, grad_input, grad_output):
        return grad_input + (torch.randn(2, 2),)

    with pytest.warns(FutureWarning):
        with module.register_backward_hook(bw_fail1):
            with pytest.raises(RuntimeError, match="got 0, but expected 1"):
                module(input).sum().backward()
        with module.register_backward_hook(bw_fail2):
            with pytest.raises(RuntimeError, match="got 2, but expected 1"):
                module(input).sum().backward()
    module = torch.nn.Sigmoid()

    def bw_pre_fail1(self, grad_output):
        return ()

    def bw_pre_fail2(self, grad_output):
        return grad_output + (torch.randn(2, 2),)

    with module.register_full_backward_pre_hook(bw_pre_fail1):
        with pytest.raises(RuntimeError, match="got 0, but expected 1"):
            module(input).sum().backward()
    with module.register_full_backward_pre_hook(bw_pre_fail2):
        with pytest.raises(RuntimeError, match="got 2, but expected 1"):
            module(input).sum().backward()


def test_hook_requires_grad(torch):
    class MyModule(torch.nn.Module):
        def forward(self, arg1, arg2, arg3):
            assert arg1.requires_grad
            assert not arg2.requires_grad
            assert arg3.requires_grad
            return arg1.sum() + arg2.sum() + arg3.sum()

    inp = torch.rand(2, requires_grad=True)
    mod = MyModule()
    mod(inp, inp.detach(), inp)
    mod.register_full_backward_hook(lambda mod, gI, gO: None)
    mod(inp, inp.detach(), inp)


def test_hook_no_requires_grad(torch):
    mod = torch.nn.Linear(2, 3)
    inp = torch.rand(1, 2)
    state = {"return_val": "None"}
    hook_called = [0]

    def hook(mod, grad_input, grad_output):
        hook_called[0] += 1
        for gI in grad_input:
            assert gI is None
        for gO in grad_output:
            assert gO.size() == (1, 3)
        if state["return_val"] == "grad_input":
            return grad_input
        if state["return_val"] == "invalid":
            return inp  # a valid result if the input required grad
        return None

    mod.register_full_backward_hook(hook)
    with pytest.warns(UserWarning, match="Full backward hook is firing"):
        mod(inp).sum().backward()
    assert hook_called[0] == 1
    state["return_val"] = "grad_input"
    with pytest.warns(UserWarning, match="Full backward hook is firing"):
        mod(inp).sum().backward()
    assert hook_called[0] == 2
    state["return_val"] = "invalid"
    with pytest.warns(UserWarning, match="Full backward hook is firing"):
        with pytest.raises(RuntimeError, match="where no input requires gradient"):
            mod(inp).sum().backward()


def test_hook_last_arg_requires_grad(torch):
    mod = torch.nn.L1Loss()
    inp = torch.rand(1, requires_grad=True)
    mod.register_full_backward_hook(lambda m, gI, gO: None)
    mod(inp.detach(), inp)


def test_hook_extra_input(torch):
    class MyModule(torch.nn.Module):
        def forward(self, non_tensor, tensor):
            return tensor.clone(), non_tensor

    inp = torch.rand(2, requires_grad=True)
    mod = MyModule()
    seen = []

    def hook(mod, grad_input, grad_output):
        assert grad_input[0] is None
        assert isinstance(grad_input[1], torch.Tensor)
        assert isinstance(grad_output[0], torch.Tensor)
        assert grad_output[1] is None
        seen.append(True)

    mod.register_full_backward_hook(hook)
    out, _ = mod(True, inp)
    out.sum().backward()
    assert seen == [True]


def test_hook_inplace(torch):
    class MyModule(torch.nn.Module):
        def forward(self, inp, do_inplace):
            self.inp = inp
            if do_inplace:
                inp += 1
            return inp.clone()

    hook_called = [0]

    def hook(mod, grad_input, grad_output):
        hook_called[0] += 1

    def hook_pre(mod, grad_output):
        hook_called[0] += 1

    inp = torch.rand(10, requires_grad=True)
    mod = MyModule()
    for hook_fn, register_fn in [(hook, mod.register_full_backward_hook),
                                 (hook_pre, mod.register_full_backward_pre_hook)]:
        hook_called[0] = 0
        with register_fn(hook_fn):
            mod(inp, False).sum().backward()
            assert hook_called[0] == 1
            with pytest.raises(RuntimeError, match="Output 0 of BackwardHookFunction is a view and is being "
                                                   "modified inplace."):
                mod(inp.clone(), True)
            local_inp = inp.clone()
            out = mod(local_inp, False)
            local_inp[0] *= 1
            with pytest.raises(RuntimeError, match="Output 0 of BackwardHookFunction is a view and its base "
                                                   "or another view"):
                mod.inp + 2
            out = mod(inp, False)
            with pytest.raises(RuntimeError, match="BackwardHookFunction is a view and is being modified "
                                                   "inplace."):
                out += 1


def test_hook_non_full_warning(torch):
    def noop(*args):
        pass

    a = torch.rand(2, requires_grad=True)
    b = torch.rand(2, requires_grad=True)

    class ListInput(torch.nn.Module):
        def forward(self, l):  # noqa: E741 - upstream's name
            return l[0].clone(), l[1].clone()

    m = ListInput()
    m.register_backward_hook(noop)
    with pytest.warns(FutureWarning, match="does not take as input a single Tensor or a tuple of Tensors"):
        m([a, b])

    class ListOutput(torch.nn.Module):
        def forward(self, a, b):
            return [a.clone(), b.clone()]

    m = ListOutput()
    m.register_backward_hook(noop)
    with pytest.warns(FutureWarning, match="does not return a single Tensor or a tuple of Tensors"):
        m(a, b)

    class TwoNodes(torch.nn.Module):
        def forward(self, a, b):
            return a.clone(), b.clone()

    m = TwoNodes()
    m.register_backward_hook(noop)
    with pytest.warns(FutureWarning, match="outputs are generated by different autograd Nodes"):
        m(a, b)

    class Chain(torch.nn.Module):
        def forward(self, a):
            return a.clone().clone()

    m = Chain()
    m.register_backward_hook(noop)
    with pytest.warns(FutureWarning, match="the forward contains multiple autograd Nodes"):
        m(a)


def test_hook_backward_size(torch):
    class MyModule(torch.nn.Module):
        def forward(self, arg1, arg2):
            tmp = arg1.sum() * arg2
            tmp = tmp + arg2.sum() * arg1.sum()
            tmp = tmp.sum().view(1)
            tmp = tmp.expand(8).contiguous()
            return tmp

    module = MyModule()
    inp1 = torch.randn(5, 5, requires_grad=True)
    inp2 = torch.randn(10, 10, requires_grad=True)
    seen = []

    def bw_hook(module, grad_input, grad_output):
        assert len(grad_input) == 2
        assert grad_input[0].size() == torch.Size([5, 5])
        assert grad_input[1].size() == torch.Size([10, 10])
        assert len(grad_output) == 1
        assert grad_output[0].size() == torch.Size([8])
        seen.append(True)

    with module.register_full_backward_hook(bw_hook):
        module(inp1, inp2).sum().backward()
    assert seen == [True]


def test_hook_backward_writeable(torch):
    module = torch.nn.Sigmoid()
    input = torch.randn(5, 5, requires_grad=True)  # noqa: A001
    sig_x = torch.nn.functional.sigmoid(input)

    def bw_hook(module, grad_input, grad_output):
        for grad in grad_input:
            assert isinstance(grad, torch.Tensor)
        for grad in grad_output:
            assert isinstance(grad, torch.Tensor)
        return tuple(gi * 2 for gi in grad_input)

    module.register_backward_hook(bw_hook)
    with pytest.warns(FutureWarning):
        out = module(input)
    out.backward(torch.ones(5, 5))
    assert_equal(input.grad, sig_x * (1 - sig_x) * 2)


def test_hook_forward_preforward_writable(torch):
    module = torch.nn.Sigmoid()
    input = torch.randn(5, 5, requires_grad=True)  # noqa: A001
    sig_x = torch.nn.functional.sigmoid(input)
    module.register_forward_pre_hook(lambda m, input: torch.nn.functional.relu(input[0]))
    module.register_forward_hook(lambda m, input, output: -output)
    output = module(input)
    assert_equal(output, -torch.nn.functional.sigmoid(torch.nn.functional.relu(input)))
    output.backward(torch.ones(5, 5) * 2, retain_graph=True)
    mask = input > 0
    assert_equal(input.grad, -sig_x * (1 - sig_x) * 2 * mask)


@pytest.mark.parametrize("return_buffer", [True, False])
def test_hook_buffer_registration(torch, return_buffer):
    def buffer_registration_hook(module, name, buffer):
        buffer.registered = True
        if return_buffer:
            return buffer
        return None

    handle = torch.nn.modules.module.register_module_buffer_registration_hook(buffer_registration_hook)
    try:
        _l, _n, s = _basic_net(torch)
        for b in s.buffers():
            assert getattr(b, "registered", False)
    finally:
        handle.remove()


@pytest.mark.parametrize("return_submodule", [True, False])
def test_hook_submodule_registration(torch, return_submodule):
    def module_registration_hook(module, name, submodule):
        module.registered = True
        submodule.registered = True
        if return_submodule:
            return submodule
        return None

    handle = torch.nn.modules.module.register_module_module_registration_hook(module_registration_hook)
    try:
        _l, _n, s = _basic_net(torch)
        for m in s.modules():
            assert getattr(m, "registered", False)
    finally:
        handle.remove()


@pytest.mark.parametrize("return_parameter", [True, False])
def test_hook_parameter_registration(torch, return_parameter):
    def parameter_registration_hook(module, name, parameter):
        parameter.registered = True
        if return_parameter:
            return parameter
        return None

    handle = torch.nn.modules.module.register_module_parameter_registration_hook(parameter_registration_hook)
    try:
        _l, _n, s = _basic_net(torch)
        for p in s.parameters():
            assert getattr(p, "registered", False)
    finally:
        handle.remove()


# ---- TestModuleGlobalHooks -------------------------------------------------------------------------

def test_module_global_hook_invalid_outputs(torch):
    module = torch.nn.Sigmoid()
    input = torch.randn(5, 5, requires_grad=True)  # noqa: A001

    def bw_fail1(self, grad_input, grad_output):
        return grad_input[:-1]

    def bw_fail2(self, grad_input, grad_output):
        return grad_input + (torch.randn(2, 2),)

    with pytest.warns(FutureWarning):
        with torch.nn.modules.module.register_module_backward_hook(bw_fail1):
            with pytest.raises(RuntimeError, match="got 0, but expected 1"):
                module(input).sum().backward()
        with torch.nn.modules.module.register_module_backward_hook(bw_fail2):
            with pytest.raises(RuntimeError, match="got 2, but expected 1"):
                module(input).sum().backward()


def test_module_backward_global_hook_writeable(torch):
    module = torch.nn.Sigmoid()
    input = torch.randn(5, 5, requires_grad=True)  # noqa: A001
    sig_x = torch.sigmoid(input)

    def bw_hook(module, grad_input, grad_output):
        for grad in grad_input:
            assert isinstance(grad, torch.Tensor)
        for grad in grad_output:
            assert isinstance(grad, torch.Tensor)
        return tuple(gi * 2 for gi in grad_input)

    torch.nn.modules.module.register_module_backward_hook(bw_hook)
    with pytest.warns(FutureWarning):
        out = module(input)
    out.backward(torch.ones(5, 5))
    assert_equal(input.grad, sig_x * (1 - sig_x) * 2)


def test_module_global_forward_preforward_hook_writeable(torch):
    module = torch.nn.Sigmoid()
    input = torch.randn(5, 5, requires_grad=True)  # noqa: A001
    sig_x = torch.sigmoid(input)
    torch.nn.modules.module.register_module_forward_pre_hook(lambda m, input: torch.nn.functional.relu(input[0]))
    torch.nn.modules.module.register_module_forward_hook(lambda m, input, output: -output)
    output = module(input)
    assert_equal(output, -torch.sigmoid(torch.nn.functional.relu(input)))
    output.backward(torch.ones(5, 5) * 2, retain_graph=True)
    mask = input > 0
    assert_equal(input.grad, -sig_x * (1 - sig_x) * 2 * mask)


def test_global_and_local_hooks_order(torch):
    module = torch.nn.Sigmoid()
    called = []

    def make(name, returns):
        def hook(m, *args):
            called.append(name)
            return args[returns]
        return hook

    input = torch.randn(5, 5, requires_grad=True)  # noqa: A001
    torch.nn.modules.module.register_module_forward_pre_hook(make("global_forward_pre", 0))
    module.register_forward_pre_hook(make("local_forward_pre", 0))
    torch.nn.modules.module.register_module_forward_hook(make("global_forward", 1))
    module.register_forward_hook(make("local_forward", 1))
    torch.nn.modules.module.register_module_backward_hook(make("global_backward", 0))
    module.register_backward_hook(make("local_backward", 0))
    with pytest.warns(FutureWarning):
        output = module(input)
    assert called == ["global_forward_pre", "local_forward_pre", "global_forward", "local_forward"]
    output.backward(torch.ones(5, 5), retain_graph=True)
    assert called[4:] == ["global_backward", "local_backward"]


def test_full_backward_hook_double_backward(torch):
    x = torch.rand(1, requires_grad=True)
    y = torch.rand_like(x)
    func = torch.nn.MSELoss()
    counter = [0]

    def hook(module, grad_input, grad_output):
        counter[0] += 1

    func.register_full_backward_hook(hook)
    f = func(x, y)
    (gradx_f,) = torch.autograd.grad(f, x, create_graph=True)
    assert counter[0] == 1
    _ = torch.autograd.grad(gradx_f, x)
    assert counter[0] == 1
