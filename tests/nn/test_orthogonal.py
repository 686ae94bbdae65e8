"""``nn.utils.parametrizations.orthogonal`` against torch: the orthogonal weight's values for every map
(matrix_exp, cayley, householder) and ``use_trivialization``, square, tall and wide, the weight's node and
the gradients reaching ``original`` (where torch's base is not completed by a random draw: derivgen's draws
are not torch's), ``right_inverse`` on assignment, ``parametrize.cached()``, float64 gradcheck of the map,
repr and errors. Inside the map derivgen composes matmuls and slices where torch has one linear-algebra
node (``LinalgMatrixExpBackward0``, ``LinalgSolveExBackward0``, ``LinalgHouseholderProductBackward0``), so
only the weight's own node is compared where it is one of those."""
import numpy as np
import pytest

import derivgen
from tests.nn.test_conv_pool_norm_modules import _error

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

CASES = [((3, 3), None, True), ((4, 3), None, True), ((3, 5), "matrix_exp", True), ((4, 4), "cayley", True),
         ((3, 5), "cayley", True), ((4, 4), "householder", True), ((5, 3), "householder", False),
         ((3, 5), "householder", False), ((4, 4), "matrix_exp", False), ((4, 4), "cayley", False),
         ((5, 5), "householder", False), ((2, 3, 3), "matrix_exp", True), ((2, 4, 4), "cayley", True)]
_LINALG_NODES = {"LinalgMatrixExpBackward0", "LinalgSolveExBackward0", "LinalgHouseholderProductBackward0"}


def _parametrized(lib, shape, omap, triv):
    m = lib.nn.Module()
    m.weight = lib.nn.Parameter(lib.tensor(np.random.default_rng(0).standard_normal(shape)))
    lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=omap, use_trivialization=triv)
    return m


def _run(lib, shape, omap, triv):
    m = _parametrized(lib, shape, omap, triv)
    W = m.weight
    x = lib.tensor(np.random.default_rng(1).standard_normal(shape[-1:]))
    (W @ x).sin().sum().backward()
    return W.detach().numpy(), m.parametrizations.weight.original.grad.numpy(), W.grad_fn.name()


@pytest.mark.parametrize("shape,omap,triv", CASES, ids=[f"{s}-{o}-{t}" for s, o, t in CASES])
def test_weight_values_node_and_gradients_match_torch(shape, omap, triv):
    t_w, t_g, t_name = _run(torch, shape, omap, triv)
    d_w, d_g, d_name = _run(derivgen, shape, omap, triv)
    np.testing.assert_allclose(d_w, t_w, rtol=1e-10, atol=1e-12)
    k = min(shape[-2:])
    np.testing.assert_allclose(np.swapaxes(d_w, -1, -2) @ d_w if shape[-2] >= shape[-1] else d_w @ np.swapaxes(d_w, -1, -2),
                               np.broadcast_to(np.eye(k), shape[:-2] + (k, k)), atol=1e-12)
    if t_name not in _LINALG_NODES:
        assert d_name == t_name
    if shape[-2] == shape[-1] or not triv:  # a non-square base is completed by a random draw
        np.testing.assert_allclose(d_g, t_g, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
def test_gradcheck_float64(omap):
    for shape in ((3, 3), (4, 2)):
        if omap != "householder" and shape != (3, 3):
            continue
        m = _parametrized(derivgen, shape, omap, False if omap == "householder" else True)
        orth = m.parametrizations.weight[0]
        X = derivgen.tensor(np.random.default_rng(2).standard_normal(shape), requires_grad=True)
        assert derivgen.autograd.gradcheck(orth, (X,))


@pytest.mark.parametrize("omap,triv", [("matrix_exp", True), ("cayley", True), ("householder", True),
                                       ("householder", False)])
def test_assigning_an_orthogonal_matrix_reproduces_it(omap, triv):
    q = np.linalg.qr(np.random.default_rng(3).standard_normal((4, 4)))[0]
    results = []
    for lib in (torch, derivgen):
        m = _parametrized(lib, (4, 4), omap, triv)
        m.weight = lib.tensor(q)
        results.append((m.weight.detach().numpy(), m.parametrizations.weight.original.detach().numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-10, atol=1e-12)
    if triv:
        np.testing.assert_allclose(results[1][0], q, atol=1e-12)


def test_cached_computes_the_weight_once():
    m = _parametrized(derivgen, (3, 3), "matrix_exp", True)
    with derivgen.nn.utils.parametrize.cached():
        a, b = m.weight, m.weight
        assert a is b
    assert m.weight is not m.weight


def test_repr_matches_torch():
    reprs = []
    for lib in (torch, derivgen):
        lin = lib.nn.Linear(3, 4)
        lib.nn.utils.parametrizations.orthogonal(lin)
        reprs.append((repr(lin), repr(lin.parametrizations.weight)))
    assert reprs[0] == reprs[1]


BAD = [
    ("map", lambda T: T.nn.utils.parametrizations.orthogonal(T.nn.Linear(3, 3), orthogonal_map="foo")),
    ("vector", lambda T: T.nn.utils.parametrizations.orthogonal(T.nn.Linear(3, 3), name="bias")),
    ("missing", lambda T: T.nn.utils.parametrizations.orthogonal(T.nn.Linear(3, 3), name="nope")),
    ("assign-shape", lambda T: setattr(T.nn.utils.parametrizations.orthogonal(T.nn.Linear(3, 3)), "weight",
                                       T.ones(2, 2))),
    ("assign-no-trivialization", lambda T: setattr(T.nn.utils.parametrizations.orthogonal(
        T.nn.Linear(3, 3), use_trivialization=False), "weight", T.eye(3))),
]


@pytest.mark.parametrize("name,fn", BAD, ids=[c[0] for c in BAD])
def test_errors_match_torch(name, fn):
    expected = _error(torch, fn)
    assert expected is not None
    assert _error(derivgen, fn) == expected
