"""Lazy modules against torch: printed forms before and after the first forward, the class they turn into,
parameter shapes, dtypes and init bounds, ``has_uninitialized_params``, state_dict before and after,
loading a state_dict into a lazy module (then the same outputs and float64 gradients as torch with those
weights), an optimizer made before the first forward, deepcopy and pickling, and torch's errors."""
import copy
import pickle

import numpy as np
import pytest

import derivgen
from tests.support.nn_parity import copy_weights, same_text

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

LAZY = [
    ("LazyLinear", (3,), {}, (2, 5)),
    ("LazyLinear", (4,), {"bias": False}, (2, 3, 6)),
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 7)),
    ("LazyConv2d", (4, 3), {"stride": 2, "groups": 2}, (2, 6, 7, 7)),
    ("LazyConv2d", (2, 3), {"bias": False}, (3, 5, 5)),
    ("LazyConvTranspose1d", (3, 2), {}, (2, 4, 5)),
    ("LazyConvTranspose2d", (3, 2), {"stride": 2}, (1, 4, 3, 3)),
    ("LazyConv3d", (4, 2), {"padding": 1}, (2, 3, 4, 3, 4)),
    ("LazyConv3d", (2, (2, 1, 2)), {"bias": False, "padding_mode": "reflect", "padding": 1}, (3, 3, 4, 5)),
    ("LazyConvTranspose3d", (3, 2), {"stride": 2}, (1, 4, 2, 3, 2)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm1d", (), {"affine": False}, (4, 3, 5)),
    ("LazyBatchNorm2d", (), {"track_running_stats": False}, (2, 3, 4, 4)),
    ("LazyBatchNorm2d", (), {"bias": False, "momentum": None}, (2, 3, 4, 4)),
]


def _make(lib, name, args, options):
    return getattr(lib.nn, name)(*args, dtype=lib.float64, **options)


def _describe(lib, module):
    return {"repr": repr(module), "class": type(module).__name__,
            "lazy": module.has_uninitialized_params() if hasattr(module, "has_uninitialized_params") else None,
            "state": [(k, repr(v) if lib.nn.parameter.is_lazy(v) else (tuple(v.shape), str(v.dtype)))
                      for k, v in module.state_dict().items()]}


def _spelled(description):
    return {k: same_text(str(v)) for k, v in description.items()}


@pytest.mark.parametrize("name,args,options,shape", LAZY)
def test_materialises_like_torch(name, args, options, shape):
    ours, theirs = _make(derivgen, name, args, options), _make(torch, name, args, options)
    assert _spelled(_describe(derivgen, ours)) == _spelled(_describe(torch, theirs))
    x = np.random.default_rng(0).standard_normal(shape)
    ours(derivgen.tensor(x))
    theirs(torch.tensor(x))
    assert _spelled(_describe(derivgen, ours)) == _spelled(_describe(torch, theirs))
    assert not hasattr(ours, "_initialize_hook") and not hasattr(ours, "_load_hook")
    assert all(type(p) is derivgen.nn.Parameter for p in ours.parameters())


@pytest.mark.parametrize("name,args,options,shape", LAZY)
def test_loaded_weights_give_torch_values_and_gradients(name, args, options, shape):
    x = np.random.default_rng(1).standard_normal(shape)
    theirs = _make(torch, name, args, options)
    theirs(torch.tensor(x))
    ours = _make(derivgen, name, args, options)
    copy_weights(theirs, ours)  # loading materialises the lazy parameters from the loaded shapes
    assert type(ours).__name__ == name and not ours.has_uninitialized_params()
    results = []
    for lib, module in ((derivgen, ours), (torch, theirs)):
        module.train()
        t = lib.tensor(x, requires_grad=True)
        out = module(t)
        (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))).sum().backward()
        results.append([out.detach().numpy(), t.grad.numpy()] + [p.grad.numpy() for p in module.parameters()])
    assert type(ours).__name__ == type(theirs).__name__
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)


def test_init_distributions():
    linear = derivgen.nn.LazyLinear(50)
    linear(derivgen.ones(2, 16))
    bound = 1 / 16 ** 0.5  # kaiming_uniform(a=sqrt(5)) and the bias: both 1/sqrt(fan_in)
    for p in (linear.weight, linear.bias):
        assert 0.8 * bound < float(p.abs().max()) <= bound
    assert linear.weight.dtype == derivgen.float32
    conv = derivgen.nn.LazyConv2d(8, 3, dtype=derivgen.float64)
    conv(derivgen.ones(1, 4, 5, 5, dtype=derivgen.float64))
    assert conv.weight.dtype == derivgen.float64
    assert 0.8 / 6 < float(conv.weight.abs().max()) <= 1 / 6
    norm = derivgen.nn.LazyBatchNorm1d()
    norm.eval()
    norm(derivgen.ones(2, 3))
    assert norm.weight.tolist() == [1.0] * 3 and norm.running_var.tolist() == [1.0] * 3


def test_optimizer_made_before_the_first_forward():
    model = derivgen.nn.Sequential(derivgen.nn.LazyLinear(4), derivgen.nn.ReLU(), derivgen.nn.LazyLinear(1))
    opt = derivgen.optim.SGD(model.parameters(), lr=0.1)
    x = derivgen.randn(8, 3)
    loss = model(x).pow(2).mean()
    before = [p.detach().clone() for p in model.parameters()]
    loss.backward()
    opt.step()
    after = list(model.parameters())
    assert [tuple(p.shape) for p in after] == [(4, 3), (4,), (1, 4), (1,)]
    assert all(not np.array_equal(a.detach().numpy(), b.numpy()) for a, b in zip(after, before))
    assert repr(model) == ("Sequential(\n  (0): Linear(in_features=3, out_features=4, bias=True)\n  (1): ReLU()\n"
                           "  (2): Linear(in_features=4, out_features=1, bias=True)\n)")


def test_uninitialized_parameter_and_buffer():
    for lib in (derivgen, torch):
        p = lib.nn.UninitializedParameter(dtype=lib.float64)
        assert repr(p) == "<UninitializedParameter>" and p.requires_grad
        assert lib.nn.parameter.is_lazy(p) and isinstance(p, lib.nn.Parameter)
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter or buffer"):
            p.shape
        with pytest.raises(RuntimeError, match="Can't share memory on an uninitialized parameter or buffer"):
            p.share_memory_()
        p.materialize((2, 3))
        assert type(p) is lib.nn.Parameter and tuple(p.shape) == (2, 3) and p.dtype == lib.float64
        b = lib.nn.UninitializedBuffer()
        assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad
        b.materialize((4,), dtype=lib.float64)
        assert type(b) is lib.Tensor and b.dtype == lib.float64 and not lib.nn.parameter.is_lazy(b)


def test_deepcopy_and_pickle_before_and_after():
    lazy = derivgen.nn.LazyLinear(3, dtype=derivgen.float64)
    twin = copy.deepcopy(lazy)
    assert twin.has_uninitialized_params() and twin.weight is not lazy.weight
    again = pickle.loads(pickle.dumps(lazy))
    assert again.has_uninitialized_params() and again.weight.dtype == derivgen.float64
    twin(derivgen.ones(1, 2, dtype=derivgen.float64))
    assert type(twin).__name__ == "Linear" and lazy.has_uninitialized_params()
    lazy(derivgen.ones(1, 5, dtype=derivgen.float64))  # its own hooks were not removed through the copy
    assert tuple(lazy.weight.shape) == (3, 5)
    assert type(pickle.loads(pickle.dumps(twin))).__name__ == "Linear"


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the comparison is the test
        return type(e).__name__, same_text(str(e))
    return None


ERRORS = [
    lambda lib: lib.nn.LazyConv2d(4, 3)(lib.zeros(2, 3)),
    lambda lib: lib.nn.LazyConv2d(4, 3)(lib.zeros(1, 2, 3, 4, 5)),
    lambda lib: lib.nn.LazyConv1d(4, 3, groups=2)(lib.zeros(1, 3, 5)),
    lambda lib: lib.nn.modules.lazy.LazyModuleMixin.initialize_parameters(lib.nn.Linear(1, 1)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case):
    ours, theirs = _error(lambda: ERRORS[case](derivgen)), _error(lambda: ERRORS[case](torch))
    assert theirs is not None and ours == theirs
