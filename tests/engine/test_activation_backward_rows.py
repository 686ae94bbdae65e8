"""Activations whose backward is one of torch's ``*_backward`` rows (leaky_relu_backward, hardtanh_backward,
elu_backward, gelu_backward, softplus_backward, hardswish_backward): with ``create_graph=True`` the first
gradient's graph has torch's node (``LeakyReluBackwardBackward0``, ...) with torch's edges, and the second and
third derivatives through it are torch's. Each case runs on derivgen and on PyTorch 2.13 side by side."""
import pytest
import torch as real

import derivgen
from derivgen.core.registry import aten
from tests.support.torch_assert import assert_equal

# inputs on both sides of every kink (0, +-1, +-3, softplus's threshold) without sitting on one
_X = [-3.5, -2.0, -0.7, -0.2, 0.4, 0.9, 1.6, 2.5, 3.4]

CASES = {
    "leaky_relu": (lambda t, x: t.nn.functional.leaky_relu(x, 0.2), "LeakyReluBackwardBackward0"),
    "hardtanh": (lambda t, x: t.nn.functional.hardtanh(x, -1.5, 2.0), "HardtanhBackwardBackward0"),
    "relu6": (lambda t, x: t.nn.functional.relu6(x), "HardtanhBackwardBackward0"),
    "elu": (lambda t, x: t.nn.functional.elu(x, 0.8), "EluBackwardBackward0"),
    "selu": (lambda t, x: t.nn.functional.selu(x), "EluBackwardBackward0"),
    "celu": (lambda t, x: t.nn.functional.celu(x, 0.7), "EluBackwardBackward0"),
    "gelu": (lambda t, x: t.nn.functional.gelu(x), "GeluBackwardBackward0"),
    "gelu_tanh": (lambda t, x: t.nn.functional.gelu(x, approximate="tanh"), "GeluBackwardBackward0"),
    "softplus": (lambda t, x: t.nn.functional.softplus(x, 2.0, 3.0), "SoftplusBackwardBackward0"),
    "hardswish": (lambda t, x: t.nn.functional.hardswish(x), "HardswishBackwardBackward0"),
    "elu_module": (lambda t, x: t.nn.ELU(1.3)(x), "EluBackwardBackward0"),
    "leaky_relu_module": (lambda t, x: t.nn.LeakyReLU()(x), "LeakyReluBackwardBackward0"),
    # in place: the backward reads the result (is_result / self_is_result true), the node is still torch's
    "leaky_relu_": (lambda t, x: t.nn.functional.leaky_relu(x * 1.5, 0.2, inplace=True), "LeakyReluBackwardBackward0"),
    "elu_": (lambda t, x: t.nn.functional.elu(x * 1.5, 0.8, inplace=True), "EluBackwardBackward0"),
    "celu_": (lambda t, x: t.nn.functional.celu(x * 1.5, 0.7, inplace=True), "EluBackwardBackward0"),
    "selu_": (lambda t, x: t.nn.functional.selu(x * 1.5, inplace=True), "EluBackwardBackward0"),
    "hardtanh_": (lambda t, x: t.nn.functional.hardtanh(x * 1.5, inplace=True), "HardtanhBackwardBackward0"),
}


def _name(fn):
    return None if fn is None else fn.name().split("::")[-1]


def _graph(fn, depth):
    """Node names under ``fn`` with each edge's input number, ``depth`` levels deep."""
    if fn is None or depth == 0:
        return _name(fn)
    return (_name(fn), tuple((_graph(f, depth - 1), nr) for f, nr in fn.next_functions))


def _run(t, name, dtype_name="float64"):
    fn = CASES[name][0]
    dtype = getattr(t, dtype_name)
    x = t.tensor(_X, dtype=dtype, requires_grad=True)
    w = t.linspace(0.5, 1.5, len(_X), dtype=dtype)
    (g,) = t.autograd.grad((fn(t, x) * w).sum(), x, create_graph=True)
    (gg,) = t.autograd.grad((g * w).sum(), x, create_graph=True, allow_unused=True)
    return g, gg


@pytest.mark.parametrize("name", CASES)
def test_first_gradient_graph_is_torch_s(name):
    g, _ = _run(derivgen, name)
    tg, _ = _run(real, name)
    fn = g.grad_fn.next_functions[0][0] if name.endswith("_") else g.grad_fn  # in place: under x * 1.5's Mul
    assert _name(fn) == CASES[name][1]
    assert _graph(g.grad_fn, 4) == _graph(tg.grad_fn, 4)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("dtype_name", ["float64", "float32"])
def test_values_through_create_graph_match_torch(name, dtype_name):
    g, gg = _run(derivgen, name, dtype_name)
    tg, tgg = _run(real, name, dtype_name)
    assert_equal(g, tg, exact_dtype=True)
    if tgg is None:
        assert gg is None or not gg.any()
        return
    assert_equal(gg, tgg, exact_dtype=True)


@pytest.mark.parametrize("name", ["elu", "celu", "gelu", "gelu_tanh", "softplus", "elu_", "celu_"])
def test_third_derivative_matches_torch(name):
    # the *_backward rows' own `self` formulas (elu_double_backward, gelu_double_backward, ...) differentiated
    out = []
    for t in (derivgen, real):
        x = t.tensor(_X, dtype=t.float64, requires_grad=True)
        (g,) = t.autograd.grad(CASES[name][0](t, x).sum(), x, create_graph=True)
        (gg,) = t.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = t.autograd.grad(gg.sum(), x, allow_unused=True)
        out.append(ggg)
    assert_equal(out[0], out[1])


@pytest.mark.parametrize("name", CASES)
def test_gradgradcheck(torch, name):
    x = torch.tensor(_X, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda a: CASES[name][0](torch, a), (x,))


@pytest.mark.parametrize("op, args", [
    ("leaky_relu_backward", (0.1, False)), ("hardtanh_backward", (-1.0, 1.0)),
    ("softplus_backward", (1.5, 2.0)), ("hardswish_backward", ()), ("gelu_backward", ()),
])
def test_backward_rows_called_directly(op, args):
    # the rows are torch's aten ops: both their inputs are differentiable, with torch's values and node
    def run(t):
        go = t.tensor([0.3, -1.2, 0.8, 2.0, -0.4], dtype=t.float64, requires_grad=True)
        x = t.tensor([-3.2, -0.6, 0.2, 1.1, 2.9], dtype=t.float64, requires_grad=True)
        fn = getattr(t.ops.aten, op) if t is real else getattr(aten, op)
        y = fn(go, x, *args)
        grads = t.autograd.grad((y * y).sum(), (go, x))
        return y, grads
    y, grads = run(derivgen)
    ty, tgrads = run(real)
    assert_equal(y, ty)
    assert _name(y.grad_fn) == _name(ty.grad_fn)
    for a, b in zip(grads, tgrads):
        assert_equal(a, b)
