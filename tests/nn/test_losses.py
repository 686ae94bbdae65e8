"""Loss modules against torch: values and input gradients for every reduction (float64 and float32),
class weights, ignore_index, label smoothing, pos_weight, buffers in state_dict, printed forms and
errors."""
import numpy as np
import pytest

import derivgen
from tests.support.nn_parity import copy_weights, same_text, to_numpy

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

W4 = np.array([0.2, 1.0, 2.5, 0.7])


def _t(lib, a, dtype=None):
    a = np.asarray(a)
    if a.dtype.kind == "f" and dtype is not None:
        a = a.astype(dtype)
    return lib.from_numpy(a.copy())


# (id, constructor(nn, lib, dtype), input kind: "real" | "prob" | "logp", target kind, shape)
LOSSES = [
    ("MSELoss", lambda nn, T, dt: nn.MSELoss(), "real", "real", (4, 3)),
    ("L1Loss", lambda nn, T, dt: nn.L1Loss(), "real", "real", (4, 3)),
    ("SmoothL1Loss", lambda nn, T, dt: nn.SmoothL1Loss(beta=0.5), "real", "real", (4, 3)),
    ("HuberLoss", lambda nn, T, dt: nn.HuberLoss(delta=0.7), "real", "real", (4, 3)),
    ("BCELoss", lambda nn, T, dt: nn.BCELoss(), "prob", "prob", (4, 3)),
    ("BCELoss-weight", lambda nn, T, dt: nn.BCELoss(weight=_t(T, np.linspace(0.5, 2, 3), dt)), "prob", "binary", (4, 3)),
    ("BCEWithLogitsLoss", lambda nn, T, dt: nn.BCEWithLogitsLoss(), "real", "binary", (4, 3)),
    ("BCEWithLogitsLoss-pos_weight", lambda nn, T, dt: nn.BCEWithLogitsLoss(pos_weight=_t(T, [0.5, 2.0, 3.0], dt)),
     "real", "prob", (4, 3)),
    ("CrossEntropyLoss", lambda nn, T, dt: nn.CrossEntropyLoss(), "real", "class", (5, 4)),
    ("CrossEntropyLoss-weight-ignore", lambda nn, T, dt: nn.CrossEntropyLoss(weight=_t(T, W4, dt), ignore_index=2),
     "real", "class", (5, 4)),
    ("CrossEntropyLoss-smoothing", lambda nn, T, dt: nn.CrossEntropyLoss(label_smoothing=0.1), "real", "class", (5, 4)),
    ("CrossEntropyLoss-smoothing-weight", lambda nn, T, dt: nn.CrossEntropyLoss(weight=_t(T, W4, dt),
                                                                               label_smoothing=0.2), "real", "class", (5, 4)),
    ("CrossEntropyLoss-probs", lambda nn, T, dt: nn.CrossEntropyLoss(label_smoothing=0.1), "real", "simplex", (5, 4)),
    ("CrossEntropyLoss-4d", lambda nn, T, dt: nn.CrossEntropyLoss(), "real", "class", (2, 4, 3, 2)),
    ("NLLLoss", lambda nn, T, dt: nn.NLLLoss(), "logp", "class", (5, 4)),
    ("NLLLoss-weight", lambda nn, T, dt: nn.NLLLoss(weight=_t(T, W4, dt), ignore_index=1), "logp", "class", (5, 4)),
    ("KLDivLoss", lambda nn, T, dt: nn.KLDivLoss(reduction="batchmean"), "logp", "simplex", (5, 4)),
]


def _make(kind, shape, rng, dtype, target_of=None):
    if kind == "real":
        return rng.standard_normal(shape).astype(dtype)
    if kind == "prob":
        return rng.uniform(0.05, 0.95, shape).astype(dtype)
    if kind == "binary":
        return (rng.random(shape) > 0.5).astype(dtype)
    if kind == "logp":
        x = rng.standard_normal(shape)
        return (x - np.log(np.exp(x).sum(1, keepdims=True))).astype(dtype)
    if kind == "simplex":
        x = rng.random(shape)
        return (x / x.sum(1, keepdims=True)).astype(dtype)
    if kind == "class":
        return rng.integers(0, shape[1], (shape[0],) + tuple(shape[2:])).astype(np.int64)
    raise ValueError(kind)


def _loss_run(lib, build, reduction, x, y, dtype):
    module = build(lib.nn, lib, dtype)
    module.reduction = reduction
    inp = lib.from_numpy(x.copy()).requires_grad_(True)
    out = module(inp, lib.from_numpy(y.copy()))
    (out * lib.from_numpy(np.full(tuple(out.shape), 1.3, dtype))).sum().backward()
    return to_numpy(out), to_numpy(inp.grad)


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss")  # KLDivLoss, both libraries
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,build,xkind,ykind,shape", LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_values_and_gradients_match_torch(name, build, xkind, ykind, shape, reduction, dtype):
    if name == "KLDivLoss" and reduction != "mean":
        reduction = "batchmean" if reduction == "sum" else reduction
    rng = np.random.default_rng(7)
    x, y = _make(xkind, shape, rng, dtype), _make(ykind, shape, rng, dtype)
    if name.endswith("ignore") or name == "NLLLoss-weight":
        y.reshape(-1)[0] = 2 if name.endswith("ignore") else 1  # at least one ignored target
    t_out, t_grad = _loss_run(torch, build, reduction, x, y, dtype)
    d_out, d_grad = _loss_run(derivgen, build, reduction, x, y, dtype)
    tol = 1e-10 if dtype == np.float64 else 3e-5
    assert d_out.dtype == t_out.dtype and d_out.shape == t_out.shape
    np.testing.assert_allclose(d_out, t_out, rtol=tol, atol=tol)
    np.testing.assert_allclose(d_grad, t_grad, rtol=tol, atol=tol)


@pytest.mark.parametrize("name,build,xkind,ykind,shape", LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_repr_and_buffers_match_torch(name, build, xkind, ykind, shape):
    ours, theirs = build(derivgen.nn, derivgen, np.float32), build(torch.nn, torch, np.float32)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert repr(copy_weights(theirs, ours)) == "<All keys matched successfully>"


def test_loss_options_stored_like_torch():
    for lib in (torch, derivgen):
        ce = lib.nn.CrossEntropyLoss(ignore_index=3, reduction="sum", label_smoothing=0.25)
        assert (ce.ignore_index, ce.reduction, ce.label_smoothing, ce.weight) == (3, "sum", 0.25, None)
        assert lib.nn.HuberLoss().delta == 1.0 and lib.nn.SmoothL1Loss().beta == 1.0
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, please use "
                                             "reduction='sum' instead."):
            assert lib.nn.MSELoss(size_average=False).reduction == "sum"


def _error(lib, fn):
    try:
        fn(lib)
    except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
        return type(exc).__name__, same_text(str(exc))
    return None


BAD = [
    ("CrossEntropy-target-range", lambda T: T.nn.CrossEntropyLoss()(T.zeros(3, 4), T.tensor([0, 1, 5]))),
    ("NLL-batch", lambda T: T.nn.NLLLoss()(T.zeros(3, 4), T.tensor([0, 1]))),
    ("MSE-reduction", lambda T: T.nn.MSELoss(reduction="foo")(T.zeros(3), T.zeros(3))),
    ("BCE-size", lambda T: T.nn.BCELoss()(T.full((3,), 0.5), T.full((4,), 0.5))),
    ("BCEWithLogits-size", lambda T: T.nn.BCEWithLogitsLoss()(T.zeros(3), T.zeros(4))),
    ("MSE-not-broadcastable", lambda T: T.nn.MSELoss()(T.ones(2, 3), T.ones(3, 2))),
    ("NLL-4d-target", lambda T: T.nn.NLLLoss()(T.zeros(2, 4, 3, 2), T.zeros(2, 3, 3, dtype=T.int64))),
    ("NLL-3d-target", lambda T: T.nn.NLLLoss()(T.zeros(2, 4, 3), T.zeros(2, 2, dtype=T.int64))),
]


@pytest.mark.filterwarnings("ignore:Using a target size")  # both libraries warn before raising
@pytest.mark.parametrize("name,fn", BAD, ids=[c[0] for c in BAD])
def test_loss_errors_match_torch(name, fn):
    expected = _error(torch, fn)
    assert expected is not None
    assert _error(derivgen, fn) == expected


@pytest.mark.parametrize("loss", ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss"])
def test_pointwise_losses_warn_and_broadcast_a_different_target_like_torch(loss):
    x = np.random.default_rng(0).standard_normal((4, 3))
    y = np.random.default_rng(1).standard_normal((3,))
    values = []
    for lib in (torch, derivgen):
        inp = lib.from_numpy(x.copy()).requires_grad_(True)
        with pytest.warns(UserWarning, match=r"Using a target size \((torch|derivgen).Size\(\[3\]\)\) that is different "
                                             r"to the input size \((torch|derivgen).Size\(\[4, 3\]\)\)"):
            out = getattr(lib.nn, loss)()(inp, lib.from_numpy(y.copy()))
        out.backward()
        values.append((out.item(), to_numpy(inp.grad)))
    assert values[1][0] == pytest.approx(values[0][0], rel=1e-12)
    np.testing.assert_allclose(values[1][1], values[0][1], rtol=1e-12)


def test_kl_div_mean_warns_like_torch():
    for lib in (torch, derivgen):
        with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss by both the batch size and "
                                             "the support size."):
            lib.nn.KLDivLoss()(lib.zeros(2, 3), lib.full((2, 3), 0.5))
