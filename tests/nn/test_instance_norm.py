"""InstanceNorm1d/2d/3d and F.instance_norm against torch: outputs, input and parameter gradients from
copied weights, running statistics (tracked, eval mode), the graph's node names, repr, state_dict,
warnings and errors; float64 gradcheck of F.instance_norm."""
import warnings

import numpy as np
import pytest

import derivgen
from tests.nn.test_conv_pool_norm_modules import _error
from tests.nn.test_layers_parity import TOLERANCE, _inputs, _pair, _run
from tests.support.nn_parity import to_numpy

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

LAYERS = [
    ("InstanceNorm1d", lambda nn: nn.InstanceNorm1d(3), [(2, 3, 5)]),
    ("InstanceNorm1d-unbatched", lambda nn: nn.InstanceNorm1d(3, affine=True), [(3, 5)]),
    ("InstanceNorm2d-affine", lambda nn: nn.InstanceNorm2d(3, affine=True), [(2, 3, 4, 5)]),
    ("InstanceNorm2d-track", lambda nn: nn.InstanceNorm2d(3, track_running_stats=True, momentum=0.3), [(2, 3, 4, 4)]),
    ("InstanceNorm2d-track-eval", lambda nn: nn.InstanceNorm2d(3, affine=True, track_running_stats=True).eval(),
     [(2, 3, 4, 4)]),
    ("InstanceNorm2d-eval-untracked", lambda nn: nn.InstanceNorm2d(2).eval(), [(2, 2, 3, 3)]),
    ("InstanceNorm3d", lambda nn: nn.InstanceNorm3d(2, affine=True, bias=False), [(2, 2, 3, 4, 3)]),
    ("InstanceNorm3d-unbatched-track", lambda nn: nn.InstanceNorm3d(2, track_running_stats=True, momentum=None),
     [(2, 3, 3, 3)]),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name,build,specs", LAYERS, ids=[c[0] for c in LAYERS])
def test_forward_gradients_and_buffers_match_torch(name, build, specs, dtype):
    theirs, ours = _pair(build, dtype)
    arrays = _inputs(specs, dtype)
    t_out, t_grads, t_pgrads = _run(torch, theirs, arrays)
    d_out, d_grads, d_pgrads = _run(derivgen, ours, arrays)
    tol = TOLERANCE[dtype] * (10 if dtype == np.float32 else 1)
    assert d_out.dtype == t_out.dtype and d_out.shape == t_out.shape
    np.testing.assert_allclose(d_out, t_out, rtol=tol, atol=tol)
    for d, t in zip(d_grads, t_grads):
        np.testing.assert_allclose(d, t, rtol=tol, atol=tol)
    assert list(d_pgrads) == list(t_pgrads)
    for key in t_pgrads:
        np.testing.assert_allclose(d_pgrads[key], t_pgrads[key], rtol=tol, atol=tol, err_msg=key)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (dk, dv), (tk, tv) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        np.testing.assert_allclose(to_numpy(dv), to_numpy(tv), rtol=tol, atol=tol, err_msg=dk)


@pytest.mark.parametrize("name,build,specs", LAYERS, ids=[c[0] for c in LAYERS])
def test_repr_and_graph_match_torch(name, build, specs):
    theirs, ours = build(torch.nn), build(derivgen.nn)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(1).standard_normal(specs[0])
    outs = []
    for lib, m in ((torch, theirs), (derivgen, ours)):
        xt = lib.tensor(x, dtype=lib.float32, requires_grad=True)
        fn, names = m(xt).grad_fn, []
        while fn is not None:
            names.append(fn.name())
            nxt = [f for f, _ in fn.next_functions if f is not None and "AccumulateGrad" not in f.name()]
            fn = nxt[0] if nxt else None
        outs.append(names)
    assert outs[1] == outs[0]


def test_running_stats_over_steps():
    theirs, ours = _pair(lambda nn: nn.InstanceNorm1d(3, track_running_stats=True), np.float64)
    rng = np.random.default_rng(4)
    for _ in range(3):
        x = rng.standard_normal((4, 3, 6)) * 2 + 1
        theirs(torch.from_numpy(x))
        ours(derivgen.from_numpy(x))
    assert ours.num_batches_tracked.item() == theirs.num_batches_tracked.item()  # instance norm does not count
    for key in ("running_mean", "running_var"):
        np.testing.assert_allclose(to_numpy(getattr(ours, key)), to_numpy(getattr(theirs, key)), rtol=1e-12)


def test_functional_instance_norm_gradcheck_float64():
    rng = np.random.default_rng(2)
    x = derivgen.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    w = derivgen.tensor(rng.standard_normal(3), requires_grad=True)
    b = derivgen.tensor(rng.standard_normal(3), requires_grad=True)
    assert derivgen.autograd.gradcheck(lambda x, w, b: derivgen.nn.functional.instance_norm(x, weight=w, bias=b),
                                       (x, w, b))


def _warnings(lib, fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(lib)
    return [str(w.message) for w in caught]


def test_num_features_mismatch_warns_as_torch_without_affine():
    def run(T):
        T.nn.InstanceNorm2d(4)(T.ones(2, 3, 2, 2))
    assert _warnings(derivgen, run) == _warnings(torch, run) != []


def test_unexpected_running_stats_in_old_checkpoint():
    msgs = []
    for lib in (torch, derivgen):
        m = lib.nn.InstanceNorm1d(2)
        sd = {"running_mean": lib.zeros(2), "running_var": lib.ones(2)}
        sd = type(sd)(sd)
        sd_meta = lib.nn.BatchNorm1d(2).state_dict()  # an OrderedDict with _metadata, then without version
        sd_meta = type(sd_meta)((k, v) for k, v in sd.items())
        sd_meta._metadata = {"": {}}
        with pytest.raises(RuntimeError) as info:
            m.load_state_dict(sd_meta)
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]


BAD = [
    ("InstanceNorm2d-dim", lambda T: T.nn.InstanceNorm2d(3)(T.ones(2, 3))),
    ("InstanceNorm1d-dim", lambda T: T.nn.InstanceNorm1d(3)(T.ones(2, 3, 2, 2))),
    ("InstanceNorm3d-dim", lambda T: T.nn.InstanceNorm3d(3)(T.ones(2, 3))),
    ("InstanceNorm2d-affine-features", lambda T: T.nn.InstanceNorm2d(4, affine=True)(T.ones(2, 3, 2, 2))),
    ("InstanceNorm1d-one-value", lambda T: T.nn.InstanceNorm1d(3)(T.ones(2, 3, 1))),
    ("instance_norm-no-stats", lambda T: T.nn.functional.instance_norm(T.ones(2, 3, 4), use_input_stats=False)),
]


@pytest.mark.parametrize("name,fn", BAD, ids=[c[0] for c in BAD])
def test_errors_match_torch(name, fn):
    expected = _error(torch, fn)
    assert expected is not None
    assert _error(derivgen, fn) == expected
