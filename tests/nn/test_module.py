"""nn.Module against torch: registration through attributes, iteration order, state_dict and
load_state_dict (keys, order, errors), train/eval, zero_grad, hooks, conversions, attribute protocol and
printed forms. Each body runs on derivgen and on torch (the ``torch`` fixture)."""
import pytest

from tests.support.nn_parity import same_text


def _net(torch):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)
            self.act = nn.ReLU()
            self.register_buffer("count", torch.zeros(2))
            self.register_buffer("scratch", torch.ones(1), persistent=False)
            self.scale = nn.Parameter(torch.ones(1))

        def forward(self, x):
            return self.act(self.fc(x)) * self.scale

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.head = nn.Linear(4, 2, bias=False)
            self.shared = self.head  # the same module twice: listed once

        def forward(self, x):
            return self.head(self.block(x))

    return Net()


def test_named_parameters_buffers_modules_order(torch):
    net = _net(torch)
    assert [n for n, _ in net.named_parameters()] == ["block.scale", "block.fc.weight", "block.fc.bias",
                                                      "head.weight"]
    assert [n for n, _ in net.named_parameters(prefix="m")][0] == "m.block.scale"
    assert [n for n, _ in net.block.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in net.named_buffers()] == ["block.count", "block.scratch"]
    assert [n for n, _ in net.named_modules()] == ["", "block", "block.fc", "block.act", "head"]
    assert [n for n, _ in net.named_modules(remove_duplicate=False)] == ["", "block", "block.fc", "block.act",
                                                                         "head", "shared"]
    assert [n for n, _ in net.named_children()] == ["block", "head"]
    assert len(list(net.parameters())) == 4 and len(list(net.modules())) == 5 and len(list(net.children())) == 2
    assert all(isinstance(p, torch.nn.Parameter) for p in net.parameters())


def test_state_dict_keys_order_and_detached_shared_values(torch):
    net = _net(torch)
    sd = net.state_dict()
    assert list(sd) == ["block.scale", "block.count", "block.fc.weight", "block.fc.bias", "head.weight",
                        "shared.weight"]
    assert [tuple(v.shape) for v in sd.values()] == [(1,), (2,), (4, 3), (4,), (2, 4), (2, 4)]
    assert not any(v.requires_grad for v in sd.values())
    assert sd["block.fc.weight"].grad_fn is None
    with torch.no_grad():
        net.block.fc.weight.fill_(5.0)
    assert sd["block.fc.weight"][0, 0].item() == 5.0  # shares the parameter's values
    assert net.state_dict(keep_vars=True)["head.weight"] is net.head.weight


def test_load_state_dict_round_trip_and_result(torch):
    a, b = _net(torch), _net(torch)
    result = b.load_state_dict(a.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert all(x.tolist() == y.tolist() for x, y in zip(a.parameters(), b.parameters()))
    assert b.block.fc.weight.requires_grad and b.block.fc.weight.is_leaf


def test_load_state_dict_strict_errors(torch):
    net = _net(torch)
    sd = net.state_dict()
    del sd["head.weight"]
    sd["block.extra"] = torch.zeros(1)
    sd["block.fc.weight"] = torch.zeros(5, 3)
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict(sd)
    assert same_text(str(err.value)) == (
        'Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "head.weight". \n\t'
        'Unexpected key(s) in state_dict: "block.extra". \n\t'
        "size mismatch for block.fc.weight: copying a param with shape torch.Size([5, 3]) from checkpoint, "
        "the shape in current model is torch.Size([4, 3]).")
    del sd["block.fc.weight"]
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["block.fc.weight", "head.weight"]
    assert result.unexpected_keys == ["block.extra"]
    assert repr(result) == ("_IncompatibleKeys(missing_keys=['block.fc.weight', 'head.weight'], "
                            "unexpected_keys=['block.extra'])")
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like, got <class 'list'>."):
        net.load_state_dict([])


def test_train_eval_and_requires_grad(torch):
    net = _net(torch)
    assert net.training and net.block.fc.training
    assert net.eval() is net
    assert not net.training and not net.block.act.training
    net.train()
    assert net.block.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_zero_grad(torch):
    net = _net(torch)
    net(torch.ones(2, 3)).sum().backward()
    assert net.head.weight.grad is not None
    net.zero_grad(set_to_none=False)
    assert net.head.weight.grad.tolist() == [[0.0] * 4] * 2
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_forward_hooks_and_handles(torch):
    lin = torch.nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: calls.append(("pre", len(args))) or (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append(("post", tuple(out.shape))) or out + 1)
    y = lin(torch.ones(3, 2))
    assert calls == [("pre", 1), ("post", (3, 2))]
    assert y.tolist() == (lin.bias.detach().expand(3, 2) + 1).tolist()
    h1.remove()
    h2.remove()
    calls.clear()
    lin(torch.ones(1, 2))
    assert calls == []
    order = []
    lin.register_forward_hook(lambda m, a, o: order.append("second"))
    lin.register_forward_hook(lambda m, a, o: order.append("first"), prepend=True)
    lin.register_forward_pre_hook(lambda m, a, k: order.append(sorted(k)) or None, with_kwargs=True)
    lin(input=torch.ones(1, 2))
    assert order == [["input"], "first", "second"]


def test_conversions(torch):
    net = _net(torch)
    net(torch.ones(1, 3)).sum().backward()
    w = net.head.weight
    assert net.double() is net
    assert net.head.weight is w and w.dtype == torch.float64 and w.grad.dtype == torch.float64
    assert net.block.count.dtype == torch.float64
    net.to(torch.float32)
    assert w.dtype == torch.float32
    net.to("cpu")
    net.float()
    assert net(torch.ones(1, 3)).dtype == torch.float32
    with pytest.raises(TypeError) as err:
        net.to(torch.int64)
    assert same_text(str(err.value)) == ("nn.Module.to only accepts floating point or complex dtypes, but got "
                                         "desired dtype=torch.int64")
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "ReLU", "Block", "Linear", "Net"]


def test_attribute_protocol(torch):
    nn = torch.nn
    m = nn.Module()
    m.w = nn.Parameter(torch.ones(2))
    m.sub = nn.Linear(1, 1)
    m.register_buffer("b", torch.zeros(1))
    m.plain = 3
    assert "w" in m._parameters and "sub" in m._modules and "b" in m._buffers and "plain" in m.__dict__
    assert {"w", "sub", "b", "plain", "forward"} <= set(dir(m))
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'nope'"):
        m.nope
    with pytest.raises(TypeError, match=r"cannot assign 'int' as parameter 'w' \(torch.nn.Parameter or None expected\)"):
        m.w = 1
    with pytest.raises(TypeError) as err:
        m.w = torch.zeros(1)
    assert same_text(str(err.value)) == ("cannot assign 'torch.FloatTensor' as parameter 'w' (torch.nn.Parameter or "
                                         "None expected)")
    with pytest.raises(TypeError, match=r"cannot assign 'str' as child module 'sub' \(torch.nn.Module or None expected\)"):
        m.sub = "x"
    with pytest.raises(KeyError) as err:
        m.register_parameter("plain", None)
    assert err.value.args == ("attribute 'plain' already exists",)
    with pytest.raises(KeyError) as err:
        m.register_parameter("a.b", None)
    assert err.value.args == ('parameter name can\'t contain "."',)
    with pytest.raises(TypeError, match=r"cannot assign 'int' object to buffer 'c' \(torch Tensor or None required\)"):
        m.register_buffer("c", 3)
    m.w = None
    assert m.w is None and list(m.parameters()) == list(m.sub.parameters())
    m.sub = nn.Parameter(torch.ones(1))  # a Parameter replaces the module of the same name
    assert "sub" not in m._modules and "sub" in m._parameters
    del m.b
    del m.plain
    assert "b" not in m._buffers and not hasattr(m, "plain")
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required "forward" function'):
        m(1)
    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        class Early(nn.Module):
            def __init__(self):
                self.p = nn.Parameter(torch.ones(1))
        Early()


def test_repr_nested(torch):
    nn = torch.nn
    net = _net(torch)
    assert repr(net) == (
        "Net(\n"
        "  (block): Block(\n"
        "    (fc): Linear(in_features=3, out_features=4, bias=True)\n"
        "    (act): ReLU()\n"
        "  )\n"
        "  (head): Linear(in_features=4, out_features=2, bias=False)\n"
        "  (shared): Linear(in_features=4, out_features=2, bias=False)\n"
        ")")

    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Tanh()

        def extra_repr(self):
            return "k=1\nj=2"

    assert repr(WithExtra()) == "WithExtra(\n  k=1\n  j=2\n  (inner): Tanh()\n)"
    assert repr(nn.Module()) == "Module()"


def test_parameter(torch):
    p = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    assert isinstance(p, torch.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert repr(torch.nn.Parameter(torch.zeros(1), requires_grad=False)) == "Parameter containing:\ntensor([0.])"
    assert tuple(torch.nn.Parameter().shape) == (0,)
    y = (p * p).sum()
    y.backward()
    assert p.grad.tolist() == [2.0, 4.0]
    import copy
    q = copy.deepcopy(p)
    assert type(q) is type(p) and q.requires_grad and q.tolist() == [1.0, 2.0] and q.grad is None


def test_buffer_assignment(torch):
    nn = torch.nn
    m = nn.Module()
    m.stats = nn.Buffer(torch.zeros(2))
    m.tmp = nn.Buffer(torch.ones(1), persistent=False)
    assert [n for n, _ in m.named_buffers()] == ["stats", "tmp"] and list(m.state_dict()) == ["stats"]
    m.stats = torch.ones(3)  # a plain tensor replaces a registered buffer
    assert tuple(m.stats.shape) == (3,) and list(m.state_dict()) == ["stats"]
    m.tmp = torch.zeros(1)
    assert list(m.state_dict()) == ["stats"]  # still not persistent
    with pytest.raises(TypeError, match=r"cannot assign 'int' as buffer 'stats' \(torch.nn.Buffer, torch.Tensor or "
                                        r"None expected\)"):
        m.stats = 3


def test_deepcopy_pickle_and_tied_parameters(torch):
    import copy
    import pickle
    nn = torch.nn
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    net(torch.ones(4, 2)).sum().backward()
    for clone in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert clone[0].weight is not net[0].weight and isinstance(clone[0].weight, nn.Parameter)
        assert clone[0].weight.requires_grad and clone[0].weight.tolist() == net[0].weight.tolist()
        assert list(clone.state_dict()) == list(net.state_dict())
        assert clone[1].num_batches_tracked.item() == 1
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    b.weight = a.weight  # tied: listed once by parameters(), under both names in state_dict
    tied = nn.Sequential(a, b)
    assert [n for n, _ in tied.named_parameters()] == ["0.weight", "0.bias", "1.bias"]
    assert list(tied.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
