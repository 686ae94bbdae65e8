"""Module hooks against torch: full backward (pre-)hooks and their BackwardHookFunctionBackward nodes,
forward hooks with kwargs / always_call, the global ``register_module_*`` hooks, state_dict and
load_state_dict hooks, and the lookup/conversion helpers (get_submodule, get_parameter, get_buffer,
named_* options, requires_grad_). Each body runs on derivgen and on torch (the ``torch`` fixture)."""
import warnings

import pytest

from tests.support.torch_assert import assert_equal


def _linear(torch):
    torch.manual_seed(0)
    m = torch.nn.Linear(3, 2).double()
    with torch.no_grad():
        m.weight.copy_(torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], dtype=torch.float64))
        m.bias.copy_(torch.tensor([0.1, -0.2], dtype=torch.float64))
    return m


def test_full_backward_hook_sees_grad_input_and_grad_output(torch):
    m = _linear(torch)
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((mod, gi, go)))
    x = torch.arange(6.0, dtype=torch.float64).reshape(2, 3).requires_grad_()
    out = m(x)
    assert out.grad_fn.name() == "BackwardHookFunctionBackward"
    assert out.grad_fn.next_functions[0][0].name() == "AddmmBackward0"
    (out * torch.tensor([1.0, 3.0], dtype=torch.float64)).sum().backward()
    (mod, grad_input, grad_output), = seen
    assert mod is m and len(grad_input) == 1 and len(grad_output) == 1
    assert_equal(grad_output[0], torch.tensor([[1.0, 3.0], [1.0, 3.0]], dtype=torch.float64))
    assert_equal(grad_input[0], grad_output[0] @ m.weight)
    assert_equal(x.grad, grad_input[0])


def test_full_backward_hook_result_replaces_grad_input(torch):
    m = _linear(torch)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 10,))
    x = torch.ones(1, 3, dtype=torch.float64, requires_grad=True)
    m(x).sum().backward()
    assert_equal(x.grad, m.weight.sum(0, keepdim=True) * 10)
    assert_equal(m.weight.grad, torch.ones(2, 3, dtype=torch.float64))  # parameters are not affected


def test_full_backward_pre_hook_replaces_grad_output(torch):
    m = _linear(torch)
    order = []

    def pre(mod, grad_output):
        order.append("pre")
        return (grad_output[0] * 0 + 2,)

    m.register_full_backward_pre_hook(pre)
    m.register_full_backward_hook(lambda mod, gi, go: order.append(("hook", go[0].tolist())))
    x = torch.ones(1, 3, dtype=torch.float64, requires_grad=True)
    m(x).sum().backward()
    assert order == ["pre", ("hook", [[2.0, 2.0]])]
    assert_equal(m.weight.grad, torch.full((2, 3), 2.0, dtype=torch.float64))
    assert_equal(x.grad, m.weight.sum(0, keepdim=True) * 2)


def test_full_backward_hook_non_tensor_inputs_and_tuple_outputs(torch):
    class Split(torch.nn.Module):
        def forward(self, a, scale, b):
            return a * scale, b * 2, "tag"

    m = Split()
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
    a = torch.ones(2, dtype=torch.float64, requires_grad=True)
    b = torch.ones(2, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = m(a, 3.0, b)
    assert out[2] == "tag"
    out[0].sum().backward()
    (gi, go), = seen
    assert len(gi) == 3 and gi[1] is None
    assert_equal(gi[0], torch.full((2,), 3.0, dtype=torch.float64))
    assert_equal(gi[2], torch.zeros(2, dtype=torch.float64))  # b does not require grad: materialized zeros
    assert len(go) == 3 and go[1] is None and go[2] is None
    assert_equal(go[0], torch.ones(2, dtype=torch.float64))


def test_full_backward_hook_no_input_requires_grad_warns(torch):
    m = _linear(torch)
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are computed with respect "
                                         "to module outputs since no inputs require gradients"):
        m(torch.ones(1, 3, dtype=torch.float64)).sum().backward()
    (gi, go), = seen
    assert gi == (None,) and go[0].shape == (1, 2)


def test_full_backward_hook_errors(torch):
    m = _linear(torch)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    x = torch.ones(1, 3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of grad_input, got 2, but "
                                           "expected 1"):
        m(x).sum().backward()
    m2 = _linear(torch)
    m2.register_full_backward_pre_hook(lambda mod, go: ())
    with pytest.raises(RuntimeError, match="Backward pre hook returned an invalid number of grad_output, got 0, "
                                           "but expected 1"):
        m2(x).sum().backward()
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks on a "
                                           "single Module"):
        m.register_backward_hook(lambda *a: None)


def test_full_backward_hook_remove_and_prepend(torch):
    m = _linear(torch)
    order = []
    m.register_full_backward_hook(lambda *a: order.append(1))
    h = m.register_full_backward_hook(lambda *a: order.append(2))
    m.register_full_backward_hook(lambda *a: order.append(0), prepend=True)
    x = torch.ones(1, 3, dtype=torch.float64, requires_grad=True)
    m(x).sum().backward()
    h.remove()
    m(x).sum().backward()
    assert order == [0, 1, 2, 0, 1]


def test_non_full_backward_hook_on_output_grad_fn(torch):
    m = torch.nn.Sigmoid()
    seen = []
    m.register_backward_hook(lambda mod, gi, go: seen.append((mod, [g.shape for g in gi], [g.shape for g in go])))
    x = torch.ones(2, 2, dtype=torch.float64, requires_grad=True)
    with pytest.warns(FutureWarning, match="Using a non-full backward hook when the forward contains multiple "
                                           "autograd Nodes is deprecated"):
        out = m(x)
    out.sum().backward()
    assert seen == [(m, [(2, 2)], [(2, 2)])]


def test_forward_hooks_with_kwargs_and_always_call(torch):
    class Scale(torch.nn.Module):
        def forward(self, x, *, factor=1.0):
            if factor < 0:
                raise ValueError("negative factor")
            return x * factor

    m = Scale()
    calls = []

    def pre(mod, args, kwargs):
        calls.append(("pre", dict(kwargs)))
        return args, {"factor": kwargs.get("factor", 1.0) * 2}

    def post(mod, args, kwargs, out):
        calls.append(("post", dict(kwargs)))
        return out + 1

    m.register_forward_pre_hook(pre, with_kwargs=True)
    m.register_forward_hook(post, with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: calls.append(("always", out)), always_call=True)
    out = m(torch.ones(2), factor=3.0)
    assert_equal(out, torch.full((2,), 7.0))
    assert calls[0] == ("pre", {"factor": 3.0}) and calls[1] == ("post", {"factor": 6.0})
    calls.clear()
    with pytest.raises(ValueError, match="negative factor"):
        m(torch.ones(2), factor=-1.0)
    assert calls == [("pre", {"factor": -1.0}), ("always", None)]
    m2 = Scale()
    m2.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"forward pre-hook must return None or a tuple of \(new_args, "
                                           r"new_kwargs\), but got 5\."):
        m2(torch.ones(1))


def test_global_forward_and_backward_hooks(torch):
    from importlib import import_module
    mm = import_module(torch.__name__ + ".nn.modules.module")
    order = []
    handles = [
        mm.register_module_forward_pre_hook(lambda mod, args: order.append(("gpre", type(mod).__name__))),
        mm.register_module_forward_hook(lambda mod, args, out: order.append(("gpost", type(mod).__name__))),
        mm.register_module_full_backward_pre_hook(lambda mod, go: order.append(("gbpre", type(mod).__name__))),
        mm.register_module_full_backward_hook(lambda mod, gi, go: order.append(("gbwd", type(mod).__name__))),
    ]
    try:
        m = _linear(torch)
        m.register_forward_pre_hook(lambda mod, args: order.append(("pre", "own")))
        m.register_forward_hook(lambda mod, args, out: order.append(("post", "own")))
        x = torch.ones(1, 3, dtype=torch.float64, requires_grad=True)
        m(x).sum().backward()
    finally:
        for h in handles:
            h.remove()
        mm._global_is_full_backward_hook = None  # removing the hook leaves it set (in torch too)
    assert order == [("gpre", "Linear"), ("pre", "own"), ("gpost", "Linear"), ("post", "own"),
                     ("gbpre", "Linear"), ("gbwd", "Linear")]
    order.clear()
    m(x)
    assert order == [("pre", "own"), ("post", "own")]


def test_global_registration_hooks(torch):
    from importlib import import_module
    mm = import_module(torch.__name__ + ".nn.modules.module")
    seen = []
    handles = [
        mm.register_module_parameter_registration_hook(lambda mod, name, p: seen.append(("param", name))),
        mm.register_module_buffer_registration_hook(lambda mod, name, b: seen.append(("buffer", name))),
        mm.register_module_module_registration_hook(lambda mod, name, sub: seen.append(("module", name))),
    ]
    try:
        m = torch.nn.Module()
        m.w = torch.nn.Parameter(torch.ones(1))
        m.register_buffer("b", torch.zeros(1))
        m.child = torch.nn.Identity()
        m.register_module("other", torch.nn.Identity())
        replaced = torch.nn.Parameter(torch.full((1,), 5.0))
        h = mm.register_module_parameter_registration_hook(lambda mod, name, p: replaced)
        m.v = torch.nn.Parameter(torch.ones(1))
        h.remove()
    finally:
        for h in handles:
            h.remove()
    assert seen == [("param", "w"), ("buffer", "b"), ("module", "child"), ("module", "other"), ("param", "v")]
    assert m.v is replaced


def test_state_dict_hooks(torch):
    m = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
    calls = []
    m[0].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix, keep_vars)))

    def post(mod, sd, prefix, meta):
        calls.append(("post", prefix, sorted(sd)))
        sd[prefix + "extra"] = torch.zeros(1)

    m[1].register_state_dict_post_hook(post)
    sd = m.state_dict()
    assert calls == [("pre", "0.", False), ("post", "1.", ["0.bias", "0.weight", "1.bias", "1.weight"])]
    assert list(sd) == ["0.weight", "0.bias", "1.weight", "1.bias", "1.extra"]
    m2 = torch.nn.Linear(2, 2)
    m2.register_state_dict_post_hook(lambda *a: {})
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        m2.state_dict()
    m3 = torch.nn.Linear(2, 2)
    m3._register_state_dict_hook(lambda mod, sd, prefix, meta: {"only": 1})
    assert m3.state_dict() == {"only": 1}
    with pytest.raises(RuntimeError, match="Cannot register the same function as the state dict post hook"):
        m3._register_state_dict_hook(post)


def test_load_state_dict_hooks(torch):
    m = torch.nn.Sequential(torch.nn.Linear(2, 2))
    src = torch.nn.Sequential(torch.nn.Linear(2, 2)).state_dict()
    seen = []

    def pre(mod, sd, prefix, meta, strict, missing, unexpected, errors):
        seen.append(("pre", type(mod).__name__, prefix, strict))
        sd[prefix + "bias"] = torch.full((2,), 4.0)

    def post(mod, keys):
        seen.append(("post", type(mod).__name__, list(keys.missing_keys), list(keys.unexpected_keys)))
        keys.unexpected_keys.clear()

    m[0].register_load_state_dict_pre_hook(pre)
    m.register_load_state_dict_post_hook(post)
    src["0.junk"] = torch.zeros(1)
    result = m.load_state_dict(src)
    assert seen == [("pre", "Linear", "0.", True), ("post", "Sequential", [], ["0.junk"])]
    assert result.unexpected_keys == [] and str(result) == "<All keys matched successfully>"
    assert_equal(m[0].bias, torch.full((2,), 4.0))
    m.register_load_state_dict_post_hook(lambda mod, keys: 1)
    with pytest.raises(AssertionError, match="Hooks registered with ``register_load_state_dict_post_hook`` are not"):
        m.load_state_dict(m.state_dict())


def test_lookup_helpers(torch):
    nn = torch.nn
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    assert m.get_submodule("1") is m[1] and m.get_submodule("") is m
    assert m.get_parameter("0.weight") is m[0].weight
    assert m.get_buffer("1.running_mean") is m[1].running_mean
    with pytest.raises(AttributeError, match="Sequential has no attribute `2`"):
        m.get_submodule("2")
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        m.get_submodule("0.weight")
    with pytest.raises(AttributeError, match="`running_mean` is not an nn.Parameter"):
        m.get_parameter("1.running_mean")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        m.get_buffer("0.weight")
    with pytest.raises(AttributeError, match="Linear has no attribute `nothing`"):
        m.get_parameter("0.nothing")


def test_named_members_options_and_requires_grad(torch):
    nn = torch.nn
    shared = nn.Linear(1, 1)
    m = nn.Sequential(shared, shared, nn.BatchNorm1d(1))
    assert [n for n, _ in m.named_modules()] == ["", "0", "2"]
    assert [n for n, _ in m.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    assert [n for n, _ in m.named_modules(prefix="net")] == ["net", "net.0", "net.2"]
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == ["0.weight", "0.bias", "1.weight",
                                                                          "1.bias", "2.weight", "2.bias"]
    assert [n for n, _ in m.named_buffers(prefix="p")] == ["p.2.running_mean", "p.2.running_var",
                                                           "p.2.num_batches_tracked"]
    assert [n for n, _ in m.named_buffers(recurse=False)] == []
    assert [n for n, _ in m.named_children()] == ["0", "2"]
    assert m.requires_grad_(False) is m
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    assert all(p.requires_grad for p in m.parameters())
    d = nn.Linear(2, 2).double()
    assert d.weight.dtype == torch.float64 and d.float().weight.dtype == torch.float32


def _load_pre_hook(module, state_dict, prefix, *rest):
    module.loaded_with_prefix = prefix


def test_modules_with_hooks_copy_and_pickle(torch):
    import copy
    import pickle
    m = torch.nn.Sequential(torch.nn.Linear(2, 2))
    m[0].register_load_state_dict_pre_hook(_load_pre_hook)
    for clone in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        clone.load_state_dict(m.state_dict())
        assert clone[0].loaded_with_prefix == "0." and not hasattr(m[0], "loaded_with_prefix")
