"""``nn.utils.parametrize`` against torch: class name, repr, state_dict keys, named parameters, values and
gradients through the parametrization, ``cached``, assignment through ``right_inverse``, chained
parametrizations, ``remove_parametrizations`` (kept and not kept), ``parametrizations.weight_norm`` and
``parametrizations.spectral_norm``, and torch's errors."""
import numpy as np
import pytest

import derivgen
from tests.nn.test_conv_pool_norm_modules import _error

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")


def _modules(lib):
    nn = lib.nn

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    class Scale(nn.Module):
        def forward(self, X):
            return X * 2.0

        def right_inverse(self, A):
            return A / 2.0

    return Symmetric, Scale


def _linear(lib):
    m = lib.nn.Linear(3, 3).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(np.arange(9.0).reshape(3, 3) / 10 - 0.3))
        m.bias.copy_(lib.tensor(np.array([0.1, -0.2, 0.3])))
    return m


def _story(lib, leave_parametrized):
    P = lib.nn.utils.parametrize
    Symmetric, Scale = _modules(lib)
    m = _linear(lib)
    P.register_parametrization(m, "weight", Symmetric())
    P.register_parametrization(m, "weight", Scale())
    seen = [type(m).__name__, repr(m), sorted(m.state_dict().keys()), [n for n, _ in m.named_parameters()],
            P.is_parametrized(m), P.is_parametrized(m, "bias"), P.type_before_parametrizations(m).__name__,
            m.weight.detach().numpy().tolist()]
    x = lib.tensor(np.array([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]]))
    m(x).pow(2).sum().backward()
    seen.append(m.parametrizations.weight.original.grad.numpy().tolist())
    with P.cached():
        seen.append(m.weight is m.weight)
    seen.append(m.weight is m.weight)
    m.weight = lib.tensor(np.eye(3) * 4.0)
    seen += [m.parametrizations.weight.original.detach().numpy().tolist(), m.weight.detach().numpy().tolist()]
    P.remove_parametrizations(m, "weight", leave_parametrized=leave_parametrized)
    seen += [type(m).__name__, sorted(m.state_dict().keys()), m.weight.detach().numpy().tolist(),
             hasattr(m, "parametrizations")]
    return seen


@pytest.mark.parametrize("leave_parametrized", [True, False])
def test_parametrization_story_matches_torch(leave_parametrized):
    theirs, ours = _story(torch, leave_parametrized), _story(derivgen, leave_parametrized)
    assert len(ours) == len(theirs)
    for t, d in zip(theirs, ours):
        if isinstance(t, list) and t and isinstance(t[0], list):
            np.testing.assert_allclose(d, t, rtol=1e-12, atol=1e-12)
        else:
            assert d == t


def test_buffer_parametrization_and_gradcheck():
    P = derivgen.nn.utils.parametrize
    Symmetric, _ = _modules(derivgen)
    m = _linear(derivgen)
    m.register_buffer("mask", derivgen.tensor(np.arange(4.0).reshape(2, 2)))
    P.register_parametrization(m, "mask", Symmetric())
    assert "parametrizations.mask.original" in m.state_dict()
    np.testing.assert_array_equal(m.mask.numpy(), [[0.0, 1.0], [1.0, 3.0]])
    P.register_parametrization(m, "weight", Symmetric())
    x = derivgen.tensor(np.random.default_rng(0).standard_normal((2, 3)))
    w = m.parametrizations.weight.original

    def f(w):
        with derivgen.no_grad():
            m.parametrizations.weight.original.copy_(w)
        return derivgen.nn.functional.linear(x, Symmetric()(w), m.bias)
    assert derivgen.autograd.gradcheck(f, (w.detach().clone().requires_grad_(),))


BAD = [
    ("missing", lambda T: T.nn.utils.parametrize.register_parametrization(T.nn.Linear(2, 2), "nope",
                                                                          T.nn.Identity())),
    ("shape", lambda T: T.nn.utils.parametrize.register_parametrization(T.nn.Linear(2, 2), "weight",
                                                                        T.nn.Flatten(0))),
    ("remove-missing", lambda T: T.nn.utils.parametrize.remove_parametrizations(T.nn.Linear(2, 2), "weight")),
]


@pytest.mark.parametrize("name,fn", BAD, ids=[c[0] for c in BAD])
def test_errors_match_torch(name, fn):
    expected = _error(torch, fn)
    assert expected is not None
    assert _error(derivgen, fn) == expected


def _weight_norm_story(lib, dim):
    m = lib.nn.Linear(3, 4).double()
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape))))
    lib.nn.utils.parametrizations.weight_norm(m, dim=dim)
    seen = [type(m).__name__, repr(m), sorted(m.state_dict().keys()), [n for n, _ in m.named_parameters()],
            m.parametrizations.weight.original0.detach().numpy(), m.weight.detach().numpy()]
    m(lib.tensor(np.ones((2, 3)))).pow(2).sum().backward()
    seen += [m.parametrizations.weight.original0.grad.numpy(), m.parametrizations.weight.original1.grad.numpy()]
    lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
    seen += [type(m).__name__, sorted(m.state_dict().keys()), m.weight.detach().numpy()]
    return seen


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrizations_weight_norm_matches_torch(dim):
    theirs, ours = _weight_norm_story(torch, dim), _weight_norm_story(derivgen, dim)
    for t, d in zip(theirs, ours):
        if isinstance(t, np.ndarray):
            assert d.shape == t.shape
            np.testing.assert_allclose(d, t, rtol=1e-12, atol=1e-12)
        else:
            assert d == t


SPECTRAL = [("Linear", lambda nn: nn.Linear(3, 4), (2, 3)), ("Conv1d", lambda nn: nn.Conv1d(2, 3, 2), (2, 2, 5)),
            ("ConvTranspose1d", lambda nn: nn.ConvTranspose1d(2, 3, 2), (2, 2, 5))]


def _spectral_story(lib, build, shape, start=None):
    """Registers spectral_norm; ``start`` overwrites the random ``_u``/``_v`` (the generators' streams differ),
    so one training forward/backward and the eval weight can be compared with torch's."""
    m = build(lib.nn).double()
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor((np.linspace(-1, 1, p.numel()) + np.sin(np.arange(p.numel()))).reshape(tuple(p.shape))))
    lib.nn.utils.parametrizations.spectral_norm(m)
    norm = m.parametrizations.weight[0]
    if start is not None:
        with lib.no_grad():
            norm._u.copy_(lib.tensor(start[0]))
            norm._v.copy_(lib.tensor(start[1]))
    begin = (norm._u.numpy().copy(), norm._v.numpy().copy())
    seen = [type(m).__name__, sorted(m.state_dict().keys()), [n for n, _ in m.named_parameters()]]
    y = m(lib.tensor(np.random.default_rng(0).standard_normal(shape)))
    y.pow(2).sum().backward()
    seen += [y.detach().numpy(), m.parametrizations.weight.original.grad.numpy(), norm._u.numpy()]
    m.eval()
    seen.append(m.weight.detach().numpy())
    return begin, seen


@pytest.mark.parametrize("name,build,shape", SPECTRAL, ids=[s[0] for s in SPECTRAL])
def test_parametrizations_spectral_norm_matches_torch(name, build, shape):
    start, theirs = _spectral_story(torch, build, shape)
    _, ours = _spectral_story(derivgen, build, shape, start)
    for t, d in zip(theirs, ours):
        if isinstance(t, np.ndarray):
            np.testing.assert_allclose(d, t, rtol=1e-10, atol=1e-12)
        else:
            assert d == t


def test_spectral_norm_starting_vectors_estimate_the_largest_singular_value():
    # The 15 starting power iterations converge at the rate of the ratio of the two largest singular
    # values: for about a quarter of random 4x5 weights (in torch too) that is short of 1e-6, so the
    # weight comes from a fixed seed.
    derivgen.manual_seed(0)
    m = derivgen.nn.utils.parametrizations.spectral_norm(derivgen.nn.Linear(5, 4).double())
    m.eval()
    assert np.linalg.svd(m.weight.detach().numpy(), compute_uv=False)[0] == pytest.approx(1.0, abs=1e-6)


BAD_SPECTRAL = [
    ("no-weight", lambda T: T.nn.utils.parametrizations.spectral_norm(T.nn.ReLU())),
    ("iterations", lambda T: T.nn.utils.parametrizations.spectral_norm(T.nn.Linear(2, 2), n_power_iterations=0)),
    ("dim", lambda T: T.nn.utils.parametrizations.spectral_norm(T.nn.Linear(2, 2), dim=2)),
]


@pytest.mark.parametrize("name,fn", BAD_SPECTRAL, ids=[c[0] for c in BAD_SPECTRAL])
def test_spectral_norm_errors_match_torch(name, fn):
    expected = _error(torch, fn)
    assert expected is not None
    assert _error(derivgen, fn) == expected
