"""3-D convolution (Conv3d, ConvTranspose3d, F.conv3d, F.conv_transpose3d) against torch: outputs and
gradients from copied weights (float64 and float32; strided, padded, dilated, grouped, 'same'/'valid',
unbatched, transposed with output padding), node names, repr, float64 gradcheck / gradgradcheck with
forward mode, and torch's errors."""
import numpy as np
import pytest

import derivgen
from tests.nn.test_conv_pool_norm_modules import _error
from tests.nn.test_layers_parity import TOLERANCE, _inputs, _pair, _run

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

LAYERS = [
    ("Conv3d", lambda nn: nn.Conv3d(3, 4, 3), [(2, 3, 5, 6, 5)]),
    ("Conv3d-stride-pad-dil-groups", lambda nn: nn.Conv3d(4, 6, (3, 2, 3), stride=(1, 2, 1), padding=(1, 0, 2),
                                                          dilation=(2, 1, 1), groups=2), [(2, 4, 6, 5, 7)]),
    ("Conv3d-nobias-same", lambda nn: nn.Conv3d(2, 3, (2, 3, 4), padding="same", bias=False), [(1, 2, 5, 6, 5)]),
    ("Conv3d-valid-unbatched", lambda nn: nn.Conv3d(2, 2, 2, padding="valid"), [(2, 4, 4, 4)]),
    ("ConvTranspose3d", lambda nn: nn.ConvTranspose3d(3, 2, 3, stride=2), [(2, 3, 3, 4, 3)]),
    ("ConvTranspose3d-groups-outpad", lambda nn: nn.ConvTranspose3d(4, 2, (3, 2, 3), stride=(2, 1, 2), padding=1,
                                                                    output_padding=(1, 0, 0), groups=2, dilation=1),
     [(1, 4, 3, 4, 3)]),
    ("CNN3d", lambda nn: nn.Sequential(nn.Conv3d(1, 3, 3, padding=1), nn.InstanceNorm3d(3, affine=True), nn.ReLU(),
                                       nn.Conv3d(3, 2, 2, stride=2), nn.Flatten(), nn.Linear(16, 2)),
     [(2, 1, 4, 4, 4)]),
]


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")  # torch's performance note
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name,build,specs", LAYERS, ids=[c[0] for c in LAYERS])
def test_forward_and_gradients_match_torch(name, build, specs, dtype):
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


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
@pytest.mark.parametrize("name,build,specs", LAYERS, ids=[c[0] for c in LAYERS])
def test_repr_and_node_match_torch(name, build, specs):
    theirs, ours = build(torch.nn), build(derivgen.nn)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(3).standard_normal(specs[0]).astype(np.float32)
    names = [m(lib.from_numpy(x)).grad_fn.name() for lib, m in ((torch, theirs), (derivgen, ours))]
    assert names[1] == names[0]


FUNCTIONAL = [
    ("conv3d", (1, 2, 3, 4, 3), (2, 1, 2, 2, 2), dict(stride=(1, 2, 1), padding=1, groups=2)),
    ("conv3d", (2, 2, 3, 3, 4), (3, 2, 1, 2, 2), dict(dilation=(1, 2, 1))),
    ("conv_transpose3d", (1, 2, 2, 3, 2), (2, 1, 2, 2, 2), dict(stride=2, padding=1, output_padding=1)),
    ("conv_transpose3d", (1, 2, 2, 2, 2), (2, 2, 2, 1, 2), dict(groups=2, dilation=2)),
]


@pytest.mark.parametrize("fn,xs,ws,kw", FUNCTIONAL, ids=[f"{c[0]}-{i}" for i, c in enumerate(FUNCTIONAL)])
def test_gradcheck_float64(fn, xs, ws, kw):
    rng = np.random.default_rng(5)
    x = derivgen.tensor(rng.standard_normal(xs), requires_grad=True)
    w = derivgen.tensor(rng.standard_normal(ws), requires_grad=True)
    out_channels = ws[1] * kw.get("groups", 1) if "transpose" in fn else ws[0]
    b = derivgen.tensor(rng.standard_normal(out_channels), requires_grad=True)
    f = getattr(derivgen.nn.functional, fn)

    def call(x, w, b):
        return f(x, w, b, **kw)
    assert derivgen.autograd.gradcheck(call, (x, w, b), check_forward_ad=True)
    assert derivgen.autograd.gradgradcheck(call, (x, w, b))


BAD = [
    ("conv3d-rank", lambda T: T.nn.functional.conv3d(T.ones(2, 3, 4, 4), T.ones(2, 3, 2, 2, 2))),
    ("Conv3d-channels", lambda T: T.nn.Conv3d(3, 4, 3)(T.ones(1, 2, 5, 5, 5))),
    ("Conv3d-kernel-too-large", lambda T: T.nn.Conv3d(1, 1, 4)(T.ones(1, 1, 3, 5, 5))),
    ("Conv3d-same-strided", lambda T: T.nn.Conv3d(2, 2, 3, stride=2, padding="same")),
    ("conv_transpose3d-outpad", lambda T: T.nn.functional.conv_transpose3d(T.ones(1, 2, 3, 3, 3), T.ones(2, 1, 2, 2, 2),
                                                                           stride=2, output_padding=2)),
    ("ConvTranspose3d-output-size", lambda T: T.nn.ConvTranspose3d(2, 2, 3, stride=2)(T.ones(1, 2, 3, 3, 3),
                                                                                      output_size=[20, 20, 20])),
]


@pytest.mark.parametrize("name,fn", BAD, ids=[c[0] for c in BAD])
def test_errors_match_torch(name, fn):
    expected = _error(torch, fn)
    assert expected is not None
    assert _error(derivgen, fn) == expected
