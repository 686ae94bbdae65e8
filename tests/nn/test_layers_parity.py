"""Every layer against torch: the same constructor arguments, torch's weights copied in through
``load_state_dict``, the same inputs; outputs, input and parameter gradients (float64 and float32),
``state_dict`` keys and shapes, ``repr`` text, and the error for a wrongly shaped input."""
import numpy as np
import pytest

import derivgen
from tests.support.nn_parity import copy_weights, same_text, to_numpy

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

# (id, constructor taking the nn namespace, input specs: a shape for a float input, ("int", hi, shape)
# for an index input, ("nonleaf", shape) for an input that is the result of an op, as in-place needs)
LAYERS = [
    ("Linear", lambda nn: nn.Linear(3, 4), [(5, 3)]),
    ("Linear-3d-nobias", lambda nn: nn.Linear(3, 2, bias=False), [(2, 5, 3)]),
    ("Bilinear", lambda nn: nn.Bilinear(3, 2, 4), [(5, 3), (5, 2)]),
    ("Bilinear-3d-nobias", lambda nn: nn.Bilinear(2, 3, 2, bias=False), [(2, 4, 2), (2, 4, 3)]),
    ("Identity", lambda nn: nn.Identity(7, k=1), [(2, 3)]),
    ("Flatten", lambda nn: nn.Flatten(), [(2, 3, 4)]),
    ("Flatten-0", lambda nn: nn.Flatten(0, 1), [(2, 3, 4)]),
    ("Unflatten", lambda nn: nn.Unflatten(1, (2, 3)), [(4, 6)]),
    ("ReLU", lambda nn: nn.ReLU(), [(4, 5)]),
    ("ReLU-inplace", lambda nn: nn.ReLU(inplace=True), [("nonleaf", (4, 5))]),
    ("ReLU6", lambda nn: nn.ReLU6(), [(4, 5)]),
    ("GELU", lambda nn: nn.GELU(), [(4, 5)]),
    ("GELU-tanh", lambda nn: nn.GELU(approximate="tanh"), [(4, 5)]),
    ("SiLU", lambda nn: nn.SiLU(), [(4, 5)]),
    ("SiLU-inplace", lambda nn: nn.SiLU(inplace=True), [("nonleaf", (4, 5))]),
    ("Tanh", lambda nn: nn.Tanh(), [(4, 5)]),
    ("Sigmoid", lambda nn: nn.Sigmoid(), [(4, 5)]),
    ("Softmax", lambda nn: nn.Softmax(dim=1), [(4, 5)]),
    ("Softmax-dim0", lambda nn: nn.Softmax(0), [(2, 4, 5)]),
    ("LogSoftmax", lambda nn: nn.LogSoftmax(dim=-1), [(4, 5)]),
    ("LeakyReLU", lambda nn: nn.LeakyReLU(0.2), [(4, 5)]),
    ("LeakyReLU-inplace", lambda nn: nn.LeakyReLU(0.1, inplace=True), [("nonleaf", (4, 5))]),
    ("ELU", lambda nn: nn.ELU(alpha=0.7), [(4, 5)]),
    ("CELU", lambda nn: nn.CELU(alpha=1.5), [(4, 5)]),
    ("SELU", lambda nn: nn.SELU(), [(4, 5)]),
    ("Softplus", lambda nn: nn.Softplus(beta=2.0, threshold=1.0), [(4, 5)]),
    ("Hardtanh", lambda nn: nn.Hardtanh(-0.5, 0.8), [(4, 5)]),
    ("Hardtanh-inplace", lambda nn: nn.Hardtanh(inplace=True), [("nonleaf", (4, 5))]),
    ("Hardsigmoid", lambda nn: nn.Hardsigmoid(), [(4, 5)]),
    ("Hardswish", lambda nn: nn.Hardswish(), [(4, 5)]),
    ("Mish", lambda nn: nn.Mish(), [(4, 5)]),
    ("Threshold", lambda nn: nn.Threshold(0.1, 20.0), [(4, 5)]),
    ("Dropout-eval", lambda nn: nn.Dropout(0.5).eval(), [(4, 5)]),
    ("Dropout-p0", lambda nn: nn.Dropout(0.0), [(4, 5)]),
    ("LayerNorm", lambda nn: nn.LayerNorm(5), [(3, 4, 5)]),
    ("LayerNorm-2d", lambda nn: nn.LayerNorm((4, 5), eps=1e-3), [(3, 4, 5)]),
    ("LayerNorm-nobias", lambda nn: nn.LayerNorm(5, bias=False), [(3, 5)]),
    ("LayerNorm-noaffine", lambda nn: nn.LayerNorm(5, elementwise_affine=False), [(3, 5)]),
    ("Embedding", lambda nn: nn.Embedding(6, 3), [("int", 6, (2, 4))]),
    ("Embedding-padding", lambda nn: nn.Embedding(6, 3, padding_idx=-2), [("int", 6, (2, 4))]),
    ("Sequential-mlp", lambda nn: nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.LayerNorm(8), nn.Linear(8, 2)),
     [(6, 3)]),
]

TOLERANCE = {np.float64: 1e-10, np.float32: 2e-5}
# torch's CPU hardsigmoid backward multiplies by the float literal ``1.0f / 6.0f`` also for float64, so
# its float64 gradient is off by ~3e-8 relative; derivgen's is grad / 6 in float64
FLOAT64_TOLERANCE = {"Hardsigmoid": 1e-7}


def _inputs(specs, dtype, seed=0):
    rng = np.random.default_rng(seed)
    arrays = []
    for spec in specs:
        if spec[0] == "int":
            arrays.append(("int", rng.integers(0, spec[1], spec[2]).astype(np.int64)))
        elif spec[0] == "nonleaf":
            arrays.append(("nonleaf", rng.standard_normal(spec[1]).astype(dtype)))
        else:
            arrays.append(("leaf", rng.standard_normal(spec).astype(dtype)))
    return arrays


def _run(lib, module, arrays, cotangent_seed=1):
    """Forward on fresh inputs, backward of ``sum(out * c)``; returns output, input grads, param grads."""
    leaves, args = [], []
    for kind, a in arrays:
        t = lib.from_numpy(a.copy())
        if kind == "int":
            args.append(t)
            continue
        t.requires_grad_(True)
        leaves.append(t)
        args.append(t * 1 if kind == "nonleaf" else t)
    out = module(*args)
    c = np.random.default_rng(cotangent_seed).standard_normal(tuple(out.shape)).astype(to_numpy(out).dtype)
    (out * lib.from_numpy(c)).sum().backward()
    grads = [to_numpy(t.grad) for t in leaves]
    pgrads = {n: (None if p.grad is None else to_numpy(p.grad)) for n, p in module.named_parameters()}
    return to_numpy(out), grads, pgrads


def _pair(build, dtype):
    torch.manual_seed(0)
    theirs = build(torch.nn).to(torch.float64 if dtype == np.float64 else torch.float32)
    ours = build(derivgen.nn).to(derivgen.float64 if dtype == np.float64 else derivgen.float32)
    assert repr(copy_weights(theirs, ours)) == "<All keys matched successfully>"
    return theirs, ours


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name,build,specs", LAYERS, ids=[c[0] for c in LAYERS])
def test_forward_and_gradients_match_torch(name, build, specs, dtype):
    theirs, ours = _pair(build, dtype)
    arrays = _inputs(specs, dtype)
    t_out, t_grads, t_pgrads = _run(torch, theirs, arrays)
    d_out, d_grads, d_pgrads = _run(derivgen, ours, arrays)
    tol = FLOAT64_TOLERANCE.get(name, TOLERANCE[dtype]) if dtype == np.float64 else TOLERANCE[dtype]
    assert d_out.dtype == t_out.dtype and d_out.shape == t_out.shape
    np.testing.assert_allclose(d_out, t_out, rtol=tol, atol=tol)
    for d, t in zip(d_grads, t_grads):
        np.testing.assert_allclose(d, t, rtol=tol, atol=tol)
    assert list(d_pgrads) == list(t_pgrads)
    for key in t_pgrads:
        np.testing.assert_allclose(d_pgrads[key], t_pgrads[key], rtol=tol, atol=tol, err_msg=key)


@pytest.mark.parametrize("name,build,specs", LAYERS, ids=[c[0] for c in LAYERS])
def test_state_dict_and_repr_match_torch(name, build, specs):
    theirs, ours = build(torch.nn), build(derivgen.nn)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
           [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert repr(ours) == repr(theirs)
    assert [p.requires_grad for p in ours.parameters()] == [p.requires_grad for p in theirs.parameters()]


def test_reprs_of_options_match_torch():
    builds = [lambda nn: nn.ReLU(True), lambda nn: nn.ReLU6(True), lambda nn: nn.SiLU(True),
              lambda nn: nn.Mish(True), lambda nn: nn.LeakyReLU(0.2, True), lambda nn: nn.CELU(2.0, True),
              lambda nn: nn.Hardtanh(-2, 2, True), lambda nn: nn.Hardsigmoid(True), lambda nn: nn.Threshold(0.1, 20),
              lambda nn: nn.SELU(True), lambda nn: nn.Dropout(0.2, True), lambda nn: nn.Softmax(),
              lambda nn: nn.Embedding(10, 3, padding_idx=0, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True),
              lambda nn: nn.LayerNorm((3, 4), elementwise_affine=False), lambda nn: nn.Linear(2, 3, bias=False),
              lambda nn: nn.Bilinear(2, 3, 4, bias=False), lambda nn: nn.Unflatten(-1, [2, 2])]
    for build in builds:
        assert repr(build(derivgen.nn)) == repr(build(torch.nn))


def test_default_init_follows_torchs_distributions():
    """Same bounds as torch (kaiming_uniform(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the
    weight, the fan-in uniform for the bias), from derivgen's own random stream."""
    derivgen.manual_seed(0)
    lin = derivgen.nn.Linear(100, 300)
    w, b = to_numpy(lin.weight), to_numpy(lin.bias)
    assert np.abs(w).max() <= 0.1 and np.abs(w).max() > 0.099 and abs(w.std() - 0.1 / np.sqrt(3)) < 2e-3
    assert np.abs(b).max() <= 0.1 and np.abs(b).max() > 0.09
    derivgen.manual_seed(0)
    again = derivgen.nn.Linear(100, 300)
    assert np.array_equal(to_numpy(again.weight), w)
    bil = derivgen.nn.Bilinear(25, 3, 400)
    assert np.abs(to_numpy(bil.weight)).max() <= 0.2 and np.abs(to_numpy(bil.bias)).max() <= 0.2
    emb = derivgen.nn.Embedding(2000, 5, padding_idx=3)
    e = to_numpy(emb.weight)
    assert not e[3].any() and abs(e.std() - 1) < 0.05
    ln = derivgen.nn.LayerNorm(4)
    assert to_numpy(ln.weight).tolist() == [1.0] * 4 and to_numpy(ln.bias).tolist() == [0.0] * 4


def test_embedding_padding_row_gets_no_gradient_and_from_pretrained():
    for lib in (torch, derivgen):
        emb = lib.nn.Embedding(5, 2, padding_idx=1)
        emb(lib.tensor([[1, 2, 1]])).sum().backward()
        assert to_numpy(emb.weight.grad)[1].tolist() == [0.0, 0.0]
        assert to_numpy(emb.weight.grad)[2].tolist() == [1.0, 1.0]
        w = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        frozen = lib.nn.Embedding.from_pretrained(w)
        assert not frozen.weight.requires_grad and frozen(lib.tensor([1])).tolist() == [[3.0, 4.0]]
        assert lib.nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad


def test_embedding_max_norm_renormalises_looked_up_rows():
    theirs, ours = _pair(lambda nn: nn.Embedding(6, 4, max_norm=1.0), np.float64)
    idx = np.array([[0, 2], [2, 5]])
    t_out = theirs(torch.from_numpy(idx))
    d_out = ours(derivgen.from_numpy(idx))
    np.testing.assert_allclose(to_numpy(d_out), to_numpy(t_out), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(ours.weight), to_numpy(theirs.weight), rtol=1e-12)


def test_dropout_train_vs_eval():
    drop = derivgen.nn.Dropout(0.5)
    x = derivgen.ones(2000)
    derivgen.manual_seed(0)
    y = to_numpy(drop(x))
    assert set(np.unique(y).tolist()) == {0.0, 2.0} and 0.4 < (y == 0).mean() < 0.6
    drop.eval()
    assert drop(x) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        derivgen.nn.Dropout(1.5)


def _error(lib, build, args):
    torch.manual_seed(0)
    module = build(lib.nn)
    try:
        module(*args(lib))
    except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
        return type(exc).__name__, same_text(str(exc))
    return None


BAD_INPUTS = [
    ("Linear-features", lambda nn: nn.Linear(3, 2), lambda T: (T.ones(4, 5),)),
    ("Linear-dtype", lambda nn: nn.Linear(3, 2), lambda T: (T.ones(4, 3, dtype=T.float64),)),
    ("Bilinear-input1", lambda nn: nn.Bilinear(3, 2, 4), lambda T: (T.ones(5, 4), T.ones(5, 2))),
    ("Bilinear-input2", lambda nn: nn.Bilinear(3, 2, 4), lambda T: (T.ones(5, 3), T.ones(5, 3))),
    ("Bilinear-batch", lambda nn: nn.Bilinear(3, 2, 4), lambda T: (T.ones(5, 3), T.ones(4, 2))),
    ("Embedding-float", lambda nn: nn.Embedding(4, 2), lambda T: (T.ones(3),)),
    ("Unflatten-size", lambda nn: nn.Unflatten(1, (2, 3)), lambda T: (T.ones(4, 5),)),
    ("Unflatten-inferred", lambda nn: nn.Unflatten(1, (2, -1)), lambda T: (T.ones(2, 5),)),
    ("Flatten-dim", lambda nn: nn.Flatten(2), lambda T: (T.ones(2),)),
    ("Flatten-order", lambda nn: nn.Flatten(2, 1), lambda T: (T.ones(2, 3, 4),)),
    ("LayerNorm-shape", lambda nn: nn.LayerNorm((3, 4)), lambda T: (T.ones(2, 4, 3),)),
    ("Embedding-range", lambda nn: nn.Embedding(4, 2), lambda T: (T.tensor([1, 4]),)),
    ("Linear-0d", lambda nn: nn.Linear(3, 2), lambda T: (T.tensor(1.0),)),
    ("Linear-1d", lambda nn: nn.Linear(3, 2), lambda T: (T.ones(4),)),
    ("Softmax-dim", lambda nn: nn.Softmax(dim=3), lambda T: (T.ones(2, 3),)),
    ("Sequential-chain", lambda nn: nn.Sequential(nn.Linear(2, 3), nn.Linear(4, 1)), lambda T: (T.ones(1, 2),)),
    ("Bilinear-dims", lambda nn: nn.Bilinear(2, 3, 4), lambda T: (T.ones(5, 2), T.ones(5, 1, 3))),
]


@pytest.mark.parametrize("name,build,args", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_wrong_inputs_raise_torchs_error(name, build, args):
    expected = _error(torch, build, args)
    assert expected is not None
    assert _error(derivgen, build, args) == expected


def test_implicit_softmax_dim_warns_like_torch():
    for lib in (torch, derivgen):
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
            lib.nn.Softmax()(lib.ones(2, 3))
        with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax has been deprecated"):
            lib.nn.LogSoftmax()(lib.ones(2, 3))


@pytest.mark.parametrize("build", [lambda nn: nn.ELU(inplace=True), lambda nn: nn.SiLU(inplace=True),
                                   lambda nn: nn.ReLU(inplace=True), lambda nn: nn.Hardswish(inplace=True),
                                   lambda nn: nn.Dropout(0.5, inplace=True)])
def test_inplace_modules_write_into_their_input(build):
    for lib in (torch, derivgen):
        x = lib.from_numpy(np.linspace(-2, 2, 6)).requires_grad_(True)
        y = x * 1
        out = build(lib.nn)(y)
        assert out is y and y._version > 0
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place "
                                               "operation."):
            build(lib.nn)(x)
