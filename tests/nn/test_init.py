"""nn.init against torch: gains, fan computation, the bounds and spread of each random initialiser, the
exact fills, in-place/no-grad behaviour, reproducibility from derivgen's seed, and errors."""
import math

import numpy as np
import pytest

import derivgen
from tests.support.nn_parity import to_numpy

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")


@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",),
                                  ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5)), ("selu",)])
def test_calculate_gain(args):
    assert derivgen.nn.init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


@pytest.mark.parametrize("call,error", [
    (lambda init: init.calculate_gain("foo"), "Unsupported nonlinearity foo"),
    (lambda init: init.calculate_gain("leaky_relu", True), "negative_slope True not a valid number"),
])
def test_gain_errors(call, error):
    for lib in (torch, derivgen):
        with pytest.raises(ValueError, match=error):
            call(lib.nn.init)


def _leaf(lib, *shape):
    return lib.nn.Parameter(lib.zeros(*shape))


def test_fills_are_exact_in_place_and_leave_no_history():
    for lib in (torch, derivgen):
        init = lib.nn.init
        p = _leaf(lib, 3, 4)
        assert init.constant_(p, 0.3) is p
        assert p.grad_fn is None and p.requires_grad and p.is_leaf
        np.testing.assert_array_equal(to_numpy(p), np.full((3, 4), 0.3, np.float32))
        init.ones_(p)
        assert to_numpy(p).tolist() == [[1.0] * 4] * 3
        init.zeros_(p)
        assert not to_numpy(p).any()
        init.eye_(p)
        np.testing.assert_array_equal(to_numpy(p), np.eye(3, 4, dtype=np.float32))
        with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
            init.eye_(_leaf(lib, 2, 2, 2))


def _stats(fn):
    derivgen.manual_seed(0)
    torch.manual_seed(0)
    ours, theirs = _leaf(derivgen, 400, 300), _leaf(torch, 400, 300)
    fn(derivgen.nn.init, ours)
    fn(torch.nn.init, theirs)
    return to_numpy(ours).astype(np.float64), to_numpy(theirs).astype(np.float64)


RANDOM = [
    ("uniform", lambda init, t: init.uniform_(t, -0.3, 0.7)),
    ("normal", lambda init, t: init.normal_(t, 0.5, 2.0)),
    ("trunc_normal", lambda init, t: init.trunc_normal_(t, 0.1, 1.0, -1.0, 0.5)),
    ("xavier_uniform", lambda init, t: init.xavier_uniform_(t, gain=2.0)),
    ("xavier_normal", lambda init, t: init.xavier_normal_(t)),
    ("kaiming_uniform", lambda init, t: init.kaiming_uniform_(t, a=math.sqrt(5))),
    ("kaiming_uniform_fan_out_relu", lambda init, t: init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu")),
    ("kaiming_normal", lambda init, t: init.kaiming_normal_(t, nonlinearity="relu")),
    ("orthogonal", lambda init, t: init.orthogonal_(t, gain=1.5)),
]


@pytest.mark.parametrize("name,fn", RANDOM, ids=[c[0] for c in RANDOM])
def test_random_initialisers_match_torchs_distribution(name, fn):
    """Different streams, same distribution: range, mean and spread agree with torch's to sampling
    error (120000 values)."""
    ours, theirs = _stats(fn)
    assert abs(ours.mean() - theirs.mean()) < 0.02 * max(theirs.std(), 1e-3) + 0.01
    assert abs(ours.std() / theirs.std() - 1) < 0.02
    span = theirs.max() - theirs.min()
    assert abs(ours.min() - theirs.min()) < 0.05 * span and abs(ours.max() - theirs.max()) < 0.05 * span
    if name == "orthogonal":
        np.testing.assert_allclose(ours.T @ ours, 2.25 * np.eye(300), atol=1e-4)


def test_random_initialisers_are_reproducible_and_take_a_generator():
    init = derivgen.nn.init
    derivgen.manual_seed(5)
    a = to_numpy(init.normal_(_leaf(derivgen, 5, 5))).copy()
    derivgen.manual_seed(5)
    b = to_numpy(init.normal_(_leaf(derivgen, 5, 5)))
    assert np.array_equal(a, b)
    c = to_numpy(init.kaiming_uniform_(_leaf(derivgen, 5, 5), generator=np.random.default_rng(1))).copy()
    d = to_numpy(init.kaiming_uniform_(_leaf(derivgen, 5, 5), generator=np.random.default_rng(1)))
    assert np.array_equal(c, d) and not np.array_equal(a, c)


def test_fan_errors_and_zero_element_warning():
    for lib in (torch, derivgen):
        init = lib.nn.init
        with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2 "
                                             "dimensions"):
            init.xavier_uniform_(_leaf(lib, 3))
        with pytest.raises(ValueError, match=r"Mode fan_avg not supported, please use one of \['fan_in', 'fan_out'\]"):
            init.kaiming_normal_(_leaf(lib, 3, 3), mode="fan_avg")
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            init.kaiming_uniform_(_leaf(lib, 0, 3))
        with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
            init.orthogonal_(_leaf(lib, 3))
        assert init._calculate_fan_in_and_fan_out(_leaf(lib, 6, 4, 3, 2)) == (24, 36)
