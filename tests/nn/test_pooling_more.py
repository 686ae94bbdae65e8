"""AvgPool1d / AdaptiveAvgPool1d and MaxPool3d / AvgPool3d / AdaptiveAvgPool3d (and their F functions) against
torch: outputs and gradients from the same inputs (float64 and float32), node names down the graph, indices,
repr, float64 gradcheck with forward mode, and torch's errors."""
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
    ("MaxPool3d", lambda nn: nn.MaxPool3d(2), [(2, 3, 4, 6, 4)]),
    ("MaxPool3d-pad-dil-ceil", lambda nn: nn.MaxPool3d((3, 2, 3), stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1),
                                                       ceil_mode=True), [(2, 2, 6, 7, 6)]),
    ("MaxPool3d-unbatched", lambda nn: nn.MaxPool3d(2, 1), [(2, 3, 4, 3)]),
    ("AvgPool3d", lambda nn: nn.AvgPool3d(2), [(2, 3, 4, 6, 4)]),
    ("AvgPool3d-pad-ceil-nocount", lambda nn: nn.AvgPool3d(3, 2, 1, True, False), [(1, 2, 5, 6, 7)]),
    ("AvgPool3d-divisor", lambda nn: nn.AvgPool3d((2, 3, 2), 1, 1, divisor_override=5), [(1, 2, 4, 5, 4)]),
    ("AdaptiveAvgPool3d", lambda nn: nn.AdaptiveAvgPool3d((2, 3, 4)), [(2, 3, 5, 7, 6)]),
    ("AdaptiveAvgPool3d-None", lambda nn: nn.AdaptiveAvgPool3d((None, 2, 1)), [(2, 3, 4, 5, 6)]),
    ("AdaptiveAvgPool3d-1", lambda nn: nn.AdaptiveAvgPool3d(1), [(2, 3, 4, 4, 4)]),
    ("AdaptiveMaxPool2d", lambda nn: nn.AdaptiveMaxPool2d((3, 4)), [(2, 3, 7, 9)]),
    ("AdaptiveMaxPool2d-None-unbatched", lambda nn: nn.AdaptiveMaxPool2d((None, 2)), [(3, 5, 6)]),
    ("AdaptiveMaxPool1d", lambda nn: nn.AdaptiveMaxPool1d(4), [(2, 3, 10)]),
    ("AdaptiveMaxPool1d-unbatched", lambda nn: nn.AdaptiveMaxPool1d(3), [(3, 7)]),
    ("AdaptiveMaxPool3d", lambda nn: nn.AdaptiveMaxPool3d((2, 3, 4)), [(2, 3, 5, 7, 6)]),
    ("AdaptiveMaxPool3d-None-unbatched", lambda nn: nn.AdaptiveMaxPool3d((None, 2, 1)), [(3, 4, 5, 6)]),
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


def test_max_pool3d_indices_match_torch():
    x = np.random.default_rng(4).standard_normal((2, 2, 5, 6, 5))
    outs = [lib.nn.functional.max_pool3d(lib.tensor(x), 3, 2, 1, return_indices=True) for lib in (torch, derivgen)]
    for t, d in zip(*outs):
        assert d.dtype.__repr__().split(".")[-1] == t.dtype.__repr__().split(".")[-1]
        np.testing.assert_array_equal(d.numpy(), t.numpy())


def test_adaptive_max_pool2d_indices_match_torch():
    x = np.random.default_rng(4).standard_normal((2, 2, 7, 5))
    outs = [lib.nn.functional.adaptive_max_pool2d(lib.tensor(x), (3, 2), True) for lib in (torch, derivgen)]
    for t, d in zip(*outs):
        np.testing.assert_array_equal(d.numpy(), t.numpy())


def test_adaptive_max_pool_1d_3d_indices_match_torch():
    x = np.random.default_rng(5).standard_normal((2, 2, 5, 7, 6))
    for call in (lambda lib, t: lib.nn.functional.adaptive_max_pool3d(t, (3, 2, 4), True),
                 lambda lib, t: lib.nn.functional.adaptive_max_pool1d(t[0, 0], 3, True)):
        outs = [call(lib, lib.tensor(x)) for lib in (torch, derivgen)]
        for t, d in zip(*outs):
            np.testing.assert_array_equal(d.numpy(), t.numpy())


def test_gradcheck_3d_float64():
    x = derivgen.tensor(np.random.default_rng(1).standard_normal((1, 2, 4, 5, 4)), requires_grad=True)
    F = derivgen.nn.functional
    for f in (lambda x: F.max_pool3d(x, 2, (1, 2, 1), 1), lambda x: F.avg_pool3d(x, 3, 2, 1, True, False),
              lambda x: F.avg_pool3d(x, 2, divisor_override=3), lambda x: F.adaptive_avg_pool3d(x, (3, 2, 3)),
              lambda x: F.adaptive_max_pool2d(x[0], (3, 2)), lambda x: F.adaptive_max_pool3d(x, (3, 2, 3)),
              lambda x: F.adaptive_max_pool1d(x[0, 0], 3)):
        assert derivgen.autograd.gradcheck(f, (x,), check_forward_ad=True)
        assert derivgen.autograd.gradgradcheck(f, (x,))


BAD = [
    ("max_pool3d-rank", lambda T: T.nn.functional.max_pool3d(T.ones(3, 4, 4), 2)),
    ("max_pool3d-kernel", lambda T: T.nn.functional.max_pool3d(T.ones(1, 1, 4, 4, 4), (2, 2))),
    ("max_pool3d-pad", lambda T: T.nn.functional.max_pool3d(T.ones(1, 1, 4, 4, 4), 2, padding=2)),
    ("max_pool3d-too-small", lambda T: T.nn.functional.max_pool3d(T.ones(1, 1, 4, 1, 4), 2)),
    ("avg_pool3d-rank", lambda T: T.nn.functional.avg_pool3d(T.ones(3, 4, 4), 2)),
    ("avg_pool3d-divisor", lambda T: T.nn.functional.avg_pool3d(T.ones(1, 1, 4, 4, 4), 2, divisor_override=0)),
    ("adaptive_max_pool2d-rank", lambda T: T.nn.functional.adaptive_max_pool2d(T.ones(4, 4), 2)),
    ("adaptive_max_pool2d-empty", lambda T: T.nn.functional.adaptive_max_pool2d(T.ones(1, 0, 4), 2)),
    ("adaptive_max_pool2d-long", lambda T: T.nn.functional.adaptive_max_pool2d(T.ones(1, 3, 4, dtype=T.int64), 2)),
    ("adaptive_max_pool3d-rank", lambda T: T.nn.functional.adaptive_max_pool3d(T.ones(3, 4), 2)),
    ("adaptive_max_pool3d-empty", lambda T: T.nn.functional.adaptive_max_pool3d(T.ones(1, 3, 0, 4, 4), 2)),
    ("adaptive_max_pool3d-long", lambda T: T.nn.functional.adaptive_max_pool3d(T.ones(1, 3, 4, 4, dtype=T.int64), 2)),
    ("adaptive_max_pool1d-rank", lambda T: T.nn.functional.adaptive_max_pool1d(T.ones(2, 3, 4, 5), 2)),
    ("adaptive_max_pool1d-size", lambda T: T.nn.functional.adaptive_max_pool1d(T.ones(3, 4), (2, 2))),
    ("adaptive_avg_pool3d-rank", lambda T: T.nn.functional.adaptive_avg_pool3d(T.ones(3, 4, 4), 2)),
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
