"""Convolution, pooling and batch/group-norm modules against torch: outputs and gradients from copied
weights (float64 and float32), state_dict, repr, BatchNorm's running statistics (momentum, cumulative
average, eval mode, num_batches_tracked), constructor and input errors."""
import re

import numpy as np
import pytest

import derivgen
from tests.support.nn_parity import same_text, to_numpy
from tests.nn.test_layers_parity import TOLERANCE, _inputs, _pair, _run

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

LAYERS = [
    ("Conv1d", lambda nn: nn.Conv1d(3, 4, 3), [(2, 3, 9)]),
    ("Conv1d-groups-stride-pad", lambda nn: nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2), [(2, 4, 9)]),
    ("Conv2d", lambda nn: nn.Conv2d(3, 5, 3), [(2, 3, 7, 6)]),
    ("Conv2d-nobias-dilation", lambda nn: nn.Conv2d(2, 3, (3, 2), stride=(2, 1), padding=(1, 2), dilation=2,
                                                    bias=False), [(2, 2, 9, 8)]),
    ("Conv2d-same", lambda nn: nn.Conv2d(2, 2, 4, padding="same"), [(1, 2, 6, 6)]),
    ("ConvTranspose1d", lambda nn: nn.ConvTranspose1d(3, 2, 3, stride=2), [(2, 3, 5)]),
    ("ConvTranspose2d", lambda nn: nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2),
     [(2, 4, 4, 5)]),
    ("MaxPool1d", lambda nn: nn.MaxPool1d(3, stride=2), [(2, 3, 9)]),
    ("MaxPool2d", lambda nn: nn.MaxPool2d(2), [(2, 3, 6, 6)]),
    ("MaxPool2d-pad-ceil", lambda nn: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), [(2, 3, 7, 6)]),
    ("AvgPool2d", lambda nn: nn.AvgPool2d(2), [(2, 3, 6, 6)]),
    ("AvgPool2d-pad", lambda nn: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), [(2, 3, 7, 7)]),
    ("AdaptiveAvgPool2d", lambda nn: nn.AdaptiveAvgPool2d((3, 2)), [(2, 3, 7, 5)]),
    ("AdaptiveAvgPool2d-1", lambda nn: nn.AdaptiveAvgPool2d(1), [(2, 3, 4, 4)]),
    ("BatchNorm1d", lambda nn: nn.BatchNorm1d(4), [(6, 4)]),
    ("BatchNorm1d-3d", lambda nn: nn.BatchNorm1d(4, momentum=None), [(3, 4, 5)]),
    ("BatchNorm2d", lambda nn: nn.BatchNorm2d(3), [(2, 3, 4, 4)]),
    ("BatchNorm2d-eval", lambda nn: nn.BatchNorm2d(3).eval(), [(2, 3, 4, 4)]),
    ("BatchNorm2d-noaffine-notrack", lambda nn: nn.BatchNorm2d(3, affine=False, track_running_stats=False),
     [(2, 3, 4, 4)]),
    ("GroupNorm", lambda nn: nn.GroupNorm(2, 4), [(3, 4, 5)]),
    ("GroupNorm-noaffine", lambda nn: nn.GroupNorm(3, 6, affine=False), [(2, 6, 3, 3)]),
    ("GroupNorm-nobias", lambda nn: nn.GroupNorm(1, 3, bias=False), [(2, 3, 4)]),
    ("BatchNorm1d-nobias", lambda nn: nn.BatchNorm1d(3, bias=False), [(4, 3)]),
    ("CNN", lambda nn: nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                                     nn.Conv2d(4, 4, 3), nn.GroupNorm(2, 4), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                     nn.Linear(4, 3)), [(2, 2, 8, 8)]),
]


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")  # torch's performance note
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
    for (dk, dv), (tk, tv) in zip(ours.state_dict().items(), theirs.state_dict().items()):  # running stats
        assert dk == tk
        np.testing.assert_allclose(to_numpy(dv), to_numpy(tv), rtol=tol, atol=tol, err_msg=dk)


@pytest.mark.parametrize("name,build,specs", LAYERS, ids=[c[0] for c in LAYERS])
def test_state_dict_and_repr_match_torch(name, build, specs):
    theirs, ours = build(torch.nn), build(derivgen.nn)
    assert [(k, tuple(v.shape), str(v.dtype).split(".")[1]) for k, v in ours.state_dict().items()] == \
           [(k, tuple(v.shape), str(v.dtype).split(".")[1]) for k, v in theirs.state_dict().items()]
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("momentum", [0.3, None])
def test_batchnorm_running_stats_over_steps_and_eval(momentum):
    theirs, ours = _pair(lambda nn: nn.BatchNorm1d(3, momentum=momentum), np.float64)
    rng = np.random.default_rng(4)
    for _ in range(3):
        x = rng.standard_normal((5, 3)) * 2 + 1
        theirs(torch.from_numpy(x))
        ours(derivgen.from_numpy(x))
    assert ours.num_batches_tracked.item() == theirs.num_batches_tracked.item() == 3
    assert ours.num_batches_tracked.dtype == derivgen.int64
    for key in ("running_mean", "running_var"):
        np.testing.assert_allclose(to_numpy(getattr(ours, key)), to_numpy(getattr(theirs, key)), rtol=1e-12)
    ours.eval()
    theirs.eval()
    x = rng.standard_normal((4, 3))
    np.testing.assert_allclose(to_numpy(ours(derivgen.from_numpy(x))), to_numpy(theirs(torch.from_numpy(x))),
                               rtol=1e-12)
    assert ours.num_batches_tracked.item() == 3


def test_batchnorm_loads_a_checkpoint_without_num_batches_tracked():
    for lib in (torch, derivgen):
        bn = lib.nn.BatchNorm1d(2)
        sd = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
        assert repr(bn.load_state_dict(sd)) == "<All keys matched successfully>"


def _sorted_sets(text):
    """Texts that print a Python set of strings list them in hash order: compare them sorted."""
    return re.sub(r"\{('[^{}]*')\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", text)


def _error(lib, fn):
    try:
        fn(lib)
    except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
        return type(exc).__name__, _sorted_sets(same_text(str(exc)))
    return None


BAD = [
    ("Conv2d-groups", lambda T: T.nn.Conv2d(3, 4, 3, groups=2)),
    ("Conv2d-out-groups", lambda T: T.nn.Conv2d(4, 3, 3, groups=2)),
    ("Conv2d-padding-string", lambda T: T.nn.Conv2d(2, 2, 3, padding="full")),
    ("Conv2d-same-strided", lambda T: T.nn.Conv2d(2, 2, 3, stride=2, padding="same")),
    ("Conv2d-padding-mode", lambda T: T.nn.Conv2d(2, 2, 3, padding_mode="mirror")),
    ("ConvTranspose2d-padding-mode", lambda T: T.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")),
    ("GroupNorm-divisible", lambda T: T.nn.GroupNorm(3, 4)),
    ("BatchNorm2d-dim", lambda T: T.nn.BatchNorm2d(3)(T.ones(2, 3))),
    ("BatchNorm1d-dim", lambda T: T.nn.BatchNorm1d(3)(T.ones(2, 3, 2, 2))),
    ("BatchNorm1d-one-value", lambda T: T.nn.BatchNorm1d(3)(T.ones(1, 3))),
    ("Conv2d-channels", lambda T: T.nn.Conv2d(3, 4, 3)(T.ones(1, 2, 5, 5))),
    ("ConvTranspose2d-output-size", lambda T: T.nn.ConvTranspose2d(2, 2, 3, stride=2)(T.ones(1, 2, 4, 4),
                                                                                      output_size=[20, 20])),
]


@pytest.mark.parametrize("name,fn", BAD, ids=[c[0] for c in BAD])
def test_errors_match_torch(name, fn):
    expected = _error(torch, fn)
    assert expected is not None
    assert _error(derivgen, fn) == expected


def test_conv_transpose_output_size():
    theirs, ours = _pair(lambda nn: nn.ConvTranspose2d(2, 3, 3, stride=2), np.float64)
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4))
    t = theirs(torch.from_numpy(x), output_size=[10, 10])
    d = ours(derivgen.from_numpy(x), output_size=[10, 10])
    assert tuple(d.shape) == tuple(t.shape) == (1, 3, 10, 10)
    np.testing.assert_allclose(to_numpy(d), to_numpy(t), rtol=1e-10)
