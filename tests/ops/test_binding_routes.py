"""Calls of ops with several rows, repeated so the second call takes the remembered route: the row, the
values and torch's errors must be the same as the general parser's on the first call."""
import numpy as np
import pytest
import torch as T

import derivgen as D
from derivgen.ops import binding


def _pair(shape=(3, 4), dtype=np.float64, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return D.from_numpy(a.copy()).requires_grad_(), T.from_numpy(a.copy()).requires_grad_()


CALLS = [
    ("clamp min kw", lambda L, x: x.clamp(min=0)),
    ("clamp positional", lambda L, x: x.clamp(-0.5, 0.5)),
    ("clamp max kw", lambda L, x: x.clamp(max=0.25)),
    ("clamp tensor min", lambda L, x: x.clamp(min=L.zeros(4, dtype=L.float64))),
    ("clamp 0-dim tensor min", lambda L, x: x.clamp(min=L.tensor(0.1, dtype=L.float64))),
    ("sum dim kw", lambda L, x: x.sum(dim=0)),
    ("sum dim tuple keepdim", lambda L, x: x.sum(dim=(0, 1), keepdim=True)),
    ("sum dim list", lambda L, x: x.sum([1])),
    ("sum dtype", lambda L, x: x.sum(dtype=L.float32)),
    ("add alpha", lambda L, x: L.add(x, x, alpha=2)),
    ("add number alpha", lambda L, x: L.add(x, 3, alpha=2)),
    ("sub numpy scalar", lambda L, x: x.sub(np.float64(1.5))),
    ("pow number", lambda L, x: x.pow(2)),
    ("pow tensor", lambda L, x: x.pow(L.ones(4, dtype=L.float64))),
    ("max dim", lambda L, x: x.max(dim=1)[0]),
]


@pytest.mark.parametrize("label,call", CALLS, ids=[c[0] for c in CALLS])
def test_repeated_call_binds_like_torch(label, call):
    for _ in range(3):  # the first call learns the route, the next ones use it
        xd, xt = _pair()
        rd, rt = call(D, xd), call(T, xt)
        assert type(rd.grad_fn).__name__ == type(rt.grad_fn).__name__
        assert str(rd.dtype).split('.')[-1] == str(rt.dtype).split('.')[-1]
        np.testing.assert_allclose(rd.detach().numpy(), rt.detach().numpy(),
                                   rtol=1e-12 if rt.dtype == T.float64 else 1e-5)
        rd.sum().backward()
        rt.sum().backward()
        np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_shapes_sharing_types_choose_their_own_rows():
    # the same call shape with a wrapped number and with a plain 0-dim tensor binds different rows in
    # torch's parser for Scalar parameters; the route key tells them apart
    xd, xt = _pair()
    for L, x in ((D, xd), (T, xt)):
        x.clamp(min=L.tensor(0.0, dtype=L.float64))
    assert type(xd.clamp(min=0.0).grad_fn).__name__ == type(xt.clamp(min=0.0).grad_fn).__name__
    assert (type(xd.clamp(min=D.tensor(0.0, dtype=D.float64)).grad_fn).__name__
            == type(xt.clamp(min=T.tensor(0.0, dtype=T.float64)).grad_fn).__name__)


@pytest.mark.parametrize("bad", [
    lambda L, x: x.clamp(min="a"),
    lambda L, x: x.sum(dim=0.5),
    lambda L, x: x.sum(dim=[0.5]),
])
def test_errors_stay_torchs_after_routes_are_learned(bad):
    xd, xt = _pair()
    # learn routes for the good shapes of the same ops first
    xd.clamp(min=0), xd.sum(dim=0), xd.sum(dim=[0]), D.add(xd, xd, alpha=2)
    with pytest.raises(TypeError) as et:
        bad(T, xt)
    for _ in range(2):
        with pytest.raises(type(et.value)) as ed:
            bad(D, xd)
        assert str(ed.value).split(" - ")[0] == str(et.value).split(" - ")[0]


def test_routes_are_reused():
    from derivgen.generated import ops as generated_ops
    xd, _ = _pair()
    D.clamp(xd, min=0)  # the function binds (the Tensor method picks the Scalar row for a number itself)
    key = binding._route_key(generated_ops._clamp_rows, (xd,), {"min": 0})
    assert binding._routes[key].overload.schema.startswith("clamp(Tensor self, Scalar? min")
    n = len(binding._routes)
    for _ in range(5):
        D.clamp(xd, min=0)
    assert len(binding._routes) == n


def test_route_key_leaves_deferred_values_deferred():
    from derivgen import config
    old = config.fusion_threshold()
    config.set_fusion_threshold(4)
    try:
        x = D.from_numpy(np.linspace(0.1, 1.0, 64, dtype=np.float32))
        y = x * x + x.exp()
        assert type(y).__name__ == "LazyTensor"
        binding._route_key(("rows",), (y,), {"dim": 0})
        assert type(y).__name__ == "LazyTensor"
    finally:
        config.set_fusion_threshold(old)
