"""The old hook-based ``nn.utils.weight_norm`` / ``remove_weight_norm`` (and ``spectral_norm`` /
``remove_spectral_norm`` further down) against torch: parameter names,
state_dict keys, ``weight_g`` values, gradients to ``weight_g`` and ``weight_v``, the weight left by
``remove_weight_norm`` (dim 0, 1 and None; Linear and Conv1d), the deprecation warning, float64 gradcheck
and torch's errors."""
import warnings

import numpy as np
import pytest

import derivgen
from tests.nn.test_conv_pool_norm_modules import _error

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

BUILDS = [("Linear", lambda nn: nn.Linear(3, 4), (2, 3)), ("Conv1d", lambda nn: nn.Conv1d(2, 3, 2), (2, 2, 5))]


def _story(lib, dim, build, shape):
    m = build(lib.nn).double()
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape))))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.nn.utils.weight_norm(m, dim=dim)
    seen = [[(w.category.__name__, str(w.message)) for w in caught], sorted(m.state_dict().keys()),
            [n for n, _ in m.named_parameters()], m.weight_g.detach().numpy()]
    x = lib.tensor(np.random.default_rng(0).standard_normal(shape))
    m(x).pow(2).sum().backward()
    seen += [m.weight_g.grad.numpy(), m.weight_v.grad.numpy()]
    lib.nn.utils.remove_weight_norm(m)
    seen += [sorted(m.state_dict().keys()), m.weight.detach().numpy()]
    return seen


@pytest.mark.parametrize("dim", [0, 1, None])
@pytest.mark.parametrize("name,build,shape", BUILDS, ids=[b[0] for b in BUILDS])
def test_weight_norm_matches_torch(name, build, shape, dim):
    theirs, ours = _story(torch, dim, build, shape), _story(derivgen, dim, build, shape)
    for t, d in zip(theirs, ours):
        if isinstance(t, np.ndarray):
            assert d.shape == t.shape
            np.testing.assert_allclose(d, t, rtol=1e-12, atol=1e-12)
        else:
            assert d == t


def test_gradcheck_float64():
    from derivgen.nn.utils.weight_norm import norm_except_dim
    rng = np.random.default_rng(1)
    x = derivgen.tensor(rng.standard_normal((4, 3)))
    v = derivgen.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    for dim, g_shape in ((0, (2, 1)), (1, (1, 3)), (-1, ())):
        g = derivgen.tensor(rng.standard_normal(g_shape), requires_grad=True)
        assert derivgen.autograd.gradcheck(
            lambda g, v: derivgen.nn.functional.linear(x, v * (g / norm_except_dim(v, 2, dim))), (g, v))


BAD = [
    ("twice", lambda T: T.nn.utils.weight_norm(T.nn.utils.weight_norm(T.nn.Linear(2, 2)))),
    ("remove-missing", lambda T: T.nn.utils.remove_weight_norm(T.nn.Linear(2, 2))),
]


@pytest.mark.parametrize("name,fn", BAD, ids=[c[0] for c in BAD])
def test_errors_match_torch(name, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _error(torch, fn)
        assert expected is not None
        assert _error(derivgen, fn) == expected


SPECTRAL = [("Linear", lambda nn: nn.Linear(3, 4), (2, 3)), ("Conv1d", lambda nn: nn.Conv1d(2, 3, 2), (2, 2, 5)),
            ("ConvTranspose1d", lambda nn: nn.ConvTranspose1d(2, 3, 2), (2, 2, 5))]


def _spectral_story(lib, build, shape, start=None):
    """The hook-based spectral_norm; ``start`` overwrites the random ``weight_u``/``weight_v`` (the generators'
    streams differ), so a training step, an eval forward and remove_spectral_norm compare with torch's."""
    m = build(lib.nn).double()
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor((np.linspace(-1, 1, p.numel()) + np.sin(np.arange(p.numel()))).reshape(tuple(p.shape))))
    lib.nn.utils.spectral_norm(m)
    if start is not None:
        with lib.no_grad():
            m.weight_u.copy_(lib.tensor(start[0]))
            m.weight_v.copy_(lib.tensor(start[1]))
    begin = (m.weight_u.numpy().copy(), m.weight_v.numpy().copy())
    x = lib.tensor(np.random.default_rng(0).standard_normal(shape))
    seen = [sorted(m.state_dict().keys()), [n for n, _ in m.named_parameters()]]
    y = m(x)
    y.pow(2).sum().backward()
    seen += [y.detach().numpy(), m.weight_orig.grad.numpy(), m.weight_u.numpy()]
    m.eval()
    seen.append(m(x).detach().numpy())
    lib.nn.utils.remove_spectral_norm(m)
    seen += [sorted(m.state_dict().keys()), m.weight.detach().numpy()]
    return begin, seen


@pytest.mark.parametrize("name,build,shape", SPECTRAL, ids=[s[0] for s in SPECTRAL])
def test_spectral_norm_matches_torch(name, build, shape):
    start, theirs = _spectral_story(torch, build, shape)
    _, ours = _spectral_story(derivgen, build, shape, start)
    for t, d in zip(theirs, ours):
        if isinstance(t, np.ndarray):
            np.testing.assert_allclose(d, t, rtol=1e-10, atol=1e-12)
        else:
            assert d == t


def test_spectral_norm_errors_match_torch():
    for fn in (lambda T: T.nn.utils.spectral_norm(T.nn.utils.spectral_norm(T.nn.Linear(2, 2))),
               lambda T: T.nn.utils.remove_spectral_norm(T.nn.Linear(2, 2)),
               lambda T: T.nn.utils.spectral_norm(T.nn.Linear(2, 2), n_power_iterations=0)):
        expected = _error(torch, fn)
        assert expected is not None
        assert _error(derivgen, fn) == expected
