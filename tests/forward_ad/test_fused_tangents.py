"""Forward mode with whole-graph fusion: the tangent of a deferred elementwise result is deferred too
(a Pending of the row's JVP kernel) and computed in the same loop as the primal. Every test compares
with the same code run eagerly (fusion off) and with torch; the fusion threshold is lowered to a few
elements so small tensors exercise it."""
import os

import numpy as np
import pytest

import derivgen
from derivgen import config
from derivgen.autograd import forward_ad as fwAD
from derivgen.autograd._forward_rules import tangent_of
from derivgen.core.pending import Pending
from derivgen.core.tensor import Tensor
from derivgen.generated import jvp as generated_jvp
from derivgen.table import load_table
from tests.support.gradcheck import flat_outputs
from tests.support.paths import REPO
from tests.support.samples import row_function, samples_for


@pytest.fixture
def fused():
    old = config.fusion_threshold()
    config.set_fusion_threshold(4)
    try:
        yield
    finally:
        config.set_fusion_threshold(old)


def _eager(fn):
    old = config.fusion_threshold()
    config.set_fusion_threshold(None)
    try:
        return fn()
    finally:
        config.set_fusion_threshold(old)


def _w2(lib, v, w, b):
    return lib.sigmoid(v * w + b) * lib.tanh(v) + lib.exp(-v * v)


def _inputs(n=64, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.5, 1.5, n).astype(dtype) for _ in range(4)]


def test_chain_tangent_is_deferred_and_computed_with_its_primal(fused):
    x, w, b, t = (derivgen.tensor(a) for a in _inputs())
    with fwAD.dual_level():
        h = _w2(derivgen, fwAD.make_dual(x, t), w, b)
        tangent = tangent_of(h)
        assert h._lazy and tangent._lazy  # nothing computed yet: both deferred
        p, q = h._pending, tangent._pending
        assert p.__class__ is Pending and q.__class__ is Pending and q in p.siblings
        value = h.detach().numpy()  # reading the primal computes the tangent in the same loop
        assert p.value is not None and q.value is not None
        fused_tangent = fwAD.unpack_dual(h).tangent.numpy()

    def eager():
        with fwAD.dual_level():
            return fwAD.unpack_dual(_w2(derivgen, fwAD.make_dual(x, t), w, b)).tangent.numpy()
    np.testing.assert_allclose(fused_tangent, _eager(eager), rtol=1e-13, atol=1e-13)

    torch = pytest.importorskip("torch")
    X, W, B, T = (torch.tensor(a.numpy()) for a in (x, w, b, t))
    out, ref = torch.func.jvp(lambda v: _w2(torch, v, W, B), (X,), (T,))
    np.testing.assert_allclose(value, out.numpy(), rtol=1e-13)
    np.testing.assert_allclose(fused_tangent, ref.numpy(), rtol=1e-12, atol=1e-13)


def test_sum_of_chain_matches_torch_float32(fused):
    x, w, b, t = _inputs(1000, seed=1, dtype=np.float32)
    with fwAD.dual_level():
        d = fwAD.make_dual(derivgen.tensor(x), derivgen.tensor(t))
        p, tangent = fwAD.unpack_dual(_w2(derivgen, d, derivgen.tensor(w), derivgen.tensor(b)).sum())
    torch = pytest.importorskip("torch")
    out, ref = torch.func.jvp(lambda v: _w2(torch, v, torch.tensor(w), torch.tensor(b)).sum(),
                              (torch.tensor(x),), (torch.tensor(t),))
    np.testing.assert_allclose(tangent.item(), ref.item(), rtol=1e-4)
    np.testing.assert_allclose(p.item(), out.item(), rtol=1e-5)


def test_inplace_write_sees_tangents_as_eager(fused):
    """An in-place op flushes pending values (tangents with them) before it writes."""
    x, w, b, t = (derivgen.tensor(a) for a in _inputs(seed=2))

    def run():
        with fwAD.dual_level():
            d = fwAD.make_dual(x.clone(), t.clone())  # the in-place op writes into the tangent too
            h = _w2(derivgen, d, w, b)
            d.mul_(2)
            return fwAD.unpack_dual(h).tangent.numpy(), fwAD.unpack_dual(h * d).tangent.numpy()
    for got, expected in zip(run(), _eager(run)):
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)


def test_create_graph_tangents_are_not_deferred(fused):
    """A tangent that must carry a graph (inputs requiring grad, grad mode on) is built from Tensor ops."""
    x, w, b, t = (derivgen.tensor(a) for a in _inputs(seed=3))
    x.requires_grad_(True)
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(_w2(derivgen, fwAD.make_dual(x, t), w, b)).tangent
        assert tangent.grad_fn is not None
        tangent.sum().backward()
    torch = pytest.importorskip("torch")
    X = torch.tensor(x.detach().numpy(), requires_grad=True)
    W, B, T = (torch.tensor(a.numpy()) for a in (w, b, t))
    with torch.autograd.forward_ad.dual_level():
        ref = torch.autograd.forward_ad.unpack_dual(
            _w2(torch, torch.autograd.forward_ad.make_dual(X, T), W, B)).tangent
        ref.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), X.grad.numpy(), rtol=1e-12, atol=1e-13)


KERNEL_ROWS = [e for e in load_table(os.path.join(REPO, "formulas.yaml"))
               if generated_jvp.RULES.get(e.schema.row_name, ("",))[0] == "kernel"]


@pytest.mark.parametrize("entry", KERNEL_ROWS, ids=lambda e: e.name)
def test_deferred_tangent_of_every_kernel_row(entry, fused):
    """Each row's JVP kernel deferred (fusion on) gives the eager tangent."""
    fn = row_function(entry)
    checked = 0
    for k, s in enumerate(samples_for(entry, derivgen.float64)):
        if not s.diff_index:
            continue
        args, kwargs, leaves = s.leaves(requires_grad=False)
        direction = [np.random.default_rng(k).standard_normal(leaf._array.shape) for leaf in leaves]

        def run():
            with fwAD.dual_level():
                duals = iter([fwAD.make_dual(leaf, Tensor._make(v.copy())) for leaf, v in zip(leaves, direction)])
                args2, kwargs2 = list(args), dict(kwargs)
                for pos in s.diff_index:
                    cont = kwargs2 if isinstance(pos, str) else args2
                    v = cont[pos]
                    cont[pos] = [next(duals) for _ in v] if isinstance(v, (list, tuple)) else next(duals)
                outs = flat_outputs(fn(*args2, **kwargs2))
                return [None if fwAD.unpack_dual(o).tangent is None else fwAD.unpack_dual(o).tangent.numpy()
                        for o in outs]
        for got, expected in zip(run(), _eager(run)):
            if expected is None:
                assert got is None
                continue
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
            checked += 1
    assert checked
