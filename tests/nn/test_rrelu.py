"""``F.rrelu`` / ``nn.RReLU`` against torch: the eval slope's values and gradients, torch's node, the training
draw (slopes within [lower, upper] for non-positive inputs, positives untouched, gradients equal to the drawn
slopes, generator reproducibility), repr, float64 gradcheck and errors. derivgen draws from its own generator
(numpy's PCG64), so training slopes are compared by range and distribution, not element by element."""
import numpy as np
import pytest

import derivgen
from tests.nn.test_conv_pool_norm_modules import _error

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("lower,upper", [(0.125, 1 / 3), (0.1, 0.5)])
def test_eval_values_gradients_and_node_match_torch(lower, upper, dtype):
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(dtype)
    g = np.random.default_rng(1).standard_normal((4, 5)).astype(dtype)
    results = []
    for lib in (torch, derivgen):
        t = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.rrelu(t, lower, upper)
        out.backward(lib.tensor(g))
        results.append((out.detach().numpy(), t.grad.numpy(), out.grad_fn.name()))
    (t_out, t_grad, t_name), (d_out, d_grad, d_name) = results
    np.testing.assert_allclose(d_out, t_out, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(d_grad, t_grad, rtol=1e-6, atol=1e-7)
    assert d_name == t_name == "RreluWithNoiseBackward0"


def test_training_draws_slopes_in_range_and_backward_uses_them():
    x = derivgen.tensor(np.random.default_rng(2).standard_normal((200, 50)), requires_grad=True)
    out = derivgen.nn.functional.rrelu(x, 0.1, 0.4, training=True)
    assert out.grad_fn.name() == "RreluWithNoiseBackward0"
    out.sum().backward()
    xs, ys, grads = x.detach().numpy(), out.detach().numpy(), x.grad.numpy()
    neg = xs < 0
    np.testing.assert_array_equal(ys[~neg], xs[~neg])
    slopes = ys[neg] / xs[neg]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.4
    assert abs(slopes.mean() - 0.25) < 0.01 and abs(slopes.std() - 0.3 / np.sqrt(12)) < 0.01
    np.testing.assert_allclose(grads[neg], slopes, rtol=1e-12)
    np.testing.assert_array_equal(grads[~neg], 1.0)


def test_training_draw_follows_the_generator():
    x = derivgen.tensor(np.random.default_rng(3).standard_normal((6, 7)))
    draws = []
    for _ in range(2):
        derivgen.manual_seed(5)
        draws.append(derivgen.nn.functional.rrelu(x, training=True).numpy())
    np.testing.assert_array_equal(draws[0], draws[1])
    assert not np.array_equal(draws[0], derivgen.nn.functional.rrelu(x, training=True).numpy())


def test_module_follows_train_and_eval_and_repr_matches_torch():
    for args in ((), (0.1, 0.2), (0.1, 0.3, True)):
        assert repr(derivgen.nn.RReLU(*args)) == repr(torch.nn.RReLU(*args))
    m = derivgen.nn.RReLU(0.1, 0.3)
    x = derivgen.tensor(-np.ones((50, 40)))
    trained = m(x).numpy()
    assert len(np.unique(trained)) > 100
    m.eval()
    np.testing.assert_allclose(m(x).numpy(), -0.2)


def test_inplace_writes_into_input():
    for lib in (torch, derivgen):
        x = lib.tensor(np.array([[-2.0, 1.0], [3.0, -4.0]]))
        out = lib.nn.functional.rrelu(x, 0.2, 0.2, inplace=True)
        np.testing.assert_allclose(x.numpy(), [[-0.4, 1.0], [3.0, -0.8]])
        assert out is x


@pytest.mark.parametrize("training", [True, False], ids=["training", "eval"])
@pytest.mark.parametrize("form", ["functional", "module", "rrelu_"])
def test_inplace_on_a_non_leaf_records_torchs_in_place_node(form, training):
    """torch's in-place rrelu records RreluWithNoiseBackward1 over the clone, and its gradient is the slope
    each element was scaled by (a single-valued range in training, so the draw is known)."""
    x = np.random.default_rng(5).standard_normal((4, 6))
    lower, upper = (0.2, 0.2) if training else (0.1, 0.3)
    results = []
    for lib in (torch, derivgen):
        t = lib.tensor(x, requires_grad=True)
        c = t.clone()
        if form == "functional":
            out = lib.nn.functional.rrelu(c, lower, upper, training, inplace=True)
        elif form == "module":
            m = lib.nn.RReLU(lower, upper, inplace=True)
            m.train(training)
            out = m(c)
        else:
            out = lib.nn.functional.rrelu_(c, lower, upper, training)
        assert out is c and c._version == 1
        names = (out.grad_fn.name(), [n.name() for n, _ in out.grad_fn.next_functions])
        out.backward(lib.tensor(x[::-1].copy()))
        results.append((out.detach().numpy(), t.grad.numpy(), names))
    (t_out, t_grad, t_names), (d_out, d_grad, d_names) = results
    assert d_names == t_names == ("RreluWithNoiseBackward1", ["CloneBackward0"])
    np.testing.assert_allclose(d_out, t_out, rtol=1e-13)
    np.testing.assert_allclose(d_grad, t_grad, rtol=1e-13)


def test_inplace_training_gradient_is_the_drawn_slope():
    x = derivgen.tensor(np.random.default_rng(6).standard_normal((40, 30)), requires_grad=True)
    c = x.clone()
    derivgen.nn.functional.rrelu(c, 0.1, 0.4, training=True, inplace=True)
    assert c.grad_fn.name() == "RreluWithNoiseBackward1"
    c.sum().backward()
    xs, ys = x.detach().numpy(), c.detach().numpy()
    neg = xs < 0
    np.testing.assert_allclose(x.grad.numpy()[neg], ys[neg] / xs[neg], rtol=1e-12)
    np.testing.assert_array_equal(x.grad.numpy()[~neg], 1.0)


def test_inplace_on_a_leaf_requiring_grad_is_refused_as_torch():
    fn = lambda T: T.nn.functional.rrelu(T.ones(3, requires_grad=True), training=True, inplace=True)  # noqa: E731
    expected = _error(torch, fn)
    assert expected is not None and _error(derivgen, fn) == expected


def test_gradcheck_float64():
    x = derivgen.tensor(np.random.default_rng(4).standard_normal((3, 5)), requires_grad=True)
    F = derivgen.nn.functional
    for f in (lambda x: F.rrelu(x), lambda x: F.rrelu(x, 0.2, 0.2, training=True),
              lambda x: F.rrelu(x.clone(), inplace=True), lambda x: F.rrelu(x * 1, 0.2, 0.2, True, True)):
        assert derivgen.autograd.gradcheck(f, (x,), check_forward_ad=True)
        assert derivgen.autograd.gradgradcheck(f, (x,))


BAD = [
    ("bounds", lambda T: T.nn.functional.rrelu(T.ones(3), 0.5, 0.1, training=True)),
    ("integer", lambda T: T.nn.functional.rrelu(T.ones(3, dtype=T.int64), training=True)),
]


@pytest.mark.parametrize("name,fn", BAD, ids=[c[0] for c in BAD])
def test_errors_match_torch(name, fn):
    expected = _error(torch, fn)
    assert expected is not None
    assert _error(derivgen, fn) == expected
