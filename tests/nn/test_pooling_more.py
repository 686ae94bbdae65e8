"""AvgPool1d / AdaptiveAvgPool1d (and their F functions) against torch: outputs and gradients from the same
inputs (float64 and float32), node names down the graph, repr and torch's errors."""
import numpy as np
import pytest

import derivgen
from tests.nn.test_conv_pool_norm_modules import _error
from tests.nn.test_layers_parity import TOLERANCE, _inputs, _pair, _run

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

LAYERS = [
    ("AvgPool1d", lambda nn: nn.AvgPool1d(3), [(2, 3, 9)]),
    ("AvgPool1d-pad-ceil-nocount", lambda nn: nn.AvgPool1d(3, 2, 1, True, False), [(2, 3, 8)]),
    ("AvgPool1d-unbatched", lambda nn: nn.AvgPool1d(2, 1), [(3, 7)]),
    ("AdaptiveAvgPool1d", lambda nn: nn.AdaptiveAvgPool1d(4), [(2, 3, 10)]),
    ("AdaptiveAvgPool1d-1", lambda nn: nn.AdaptiveAvgPool1d(1), [(2, 3, 5)]),
    ("AdaptiveAvgPool1d-unbatched", lambda nn: nn.AdaptiveAvgPool1d(3), [(3, 7)]),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name,build,specs", LAYERS, ids=[c[0] for c in LAYERS])
def test_forward_and_gradients_match_torch(name, build, specs, dtype):
    theirs, ours = _pair(build, dtype)
    arrays = _inputs(specs, dtype)
    t_out, t_grads, _ = _run(torch, theirs, arrays)
    d_out, d_grads, _ = _run(derivgen, ours, arrays)
    tol = TOLERANCE[dtype]
    assert d_out.dtype == t_out.dtype and d_out.shape == t_out.shape
    np.testing.assert_allclose(d_out, t_out, rtol=tol, atol=tol)
    for d, t in zip(d_grads, t_grads):
        np.testing.assert_allclose(d, t, rtol=tol, atol=tol)


def _chain(lib, fn):
    names = []
    while fn is not None:
        names.append(fn.name())
        nxt = [f for f, _ in fn.next_functions if f is not None and "AccumulateGrad" not in f.name()]
        fn = nxt[0] if nxt else None
    return names


@pytest.mark.parametrize("name,build,specs", LAYERS, ids=[c[0] for c in LAYERS])
def test_repr_and_graph_match_torch(name, build, specs):
    theirs, ours = build(torch.nn), build(derivgen.nn)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(2).standard_normal(specs[0])
    chains = [_chain(lib, m(lib.tensor(x, requires_grad=True)).grad_fn) for lib, m in ((torch, theirs), (derivgen, ours))]
    assert chains[1] == chains[0]


def test_gradcheck_float64():
    x = derivgen.tensor(np.random.default_rng(1).standard_normal((2, 2, 7)), requires_grad=True)
    F = derivgen.nn.functional
    assert derivgen.autograd.gradcheck(lambda x: F.avg_pool1d(x, 3, 2, 1, True, False), (x,), check_forward_ad=True)
    assert derivgen.autograd.gradcheck(lambda x: F.adaptive_avg_pool1d(x, 3), (x,), check_forward_ad=True)


BAD = [
    ("avg_pool1d-rank", lambda T: T.nn.functional.avg_pool1d(T.ones(2, 3, 4, 5), 2)),
    ("avg_pool1d-kernel", lambda T: T.nn.functional.avg_pool1d(T.ones(2, 3, 4), (2, 2))),
    ("avg_pool1d-too-small", lambda T: T.nn.functional.avg_pool1d(T.ones(3, 4), 5)),
    ("adaptive_avg_pool1d-rank", lambda T: T.nn.functional.adaptive_avg_pool1d(T.ones(2, 3, 4, 5), 2)),
    ("adaptive_avg_pool1d-size", lambda T: T.nn.functional.adaptive_avg_pool1d(T.ones(3, 4), (2, 2))),
]


@pytest.mark.parametrize("name,fn", BAD, ids=[c[0] for c in BAD])
def test_errors_match_torch(name, fn):
    expected = _error(torch, fn)
    assert expected is not None
    assert _error(derivgen, fn) == expected
