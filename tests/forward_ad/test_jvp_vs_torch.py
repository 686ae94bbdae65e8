"""Forward-mode tangents of rows whose rule follows torch's hand-written one (clamp_jvp, cumprod_jvp,
convolution, pooling and normalisation JVPs), against torch's forward AD on the same values: the
cases finite differences cannot pin down (ties with a bound, min > max, zeros in cumprod, evaluation
vs training batch norm)."""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfwAD
import torch.nn.functional as TF

import derivgen
import derivgen.nn.functional as DF
from derivgen.autograd import forward_ad as fwAD


def _tangent(lib, fwd, fn, primals, tangents):
    with fwd.dual_level():
        args = [None if p is None else
                (fwd.make_dual(lib.tensor(p), lib.tensor(t)) if t is not None else lib.tensor(p))
                for p, t in zip(primals, tangents)]
        return fwd.unpack_dual(fn(*args)).tangent


def check(dg_fn, torch_fn, primals, tangents):
    ours = _tangent(derivgen, fwAD, dg_fn, primals, tangents)
    theirs = _tangent(torch, tfwAD, torch_fn, primals, tangents)
    assert ours is not None and theirs is not None
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


RNG = np.random.default_rng(0)
X = np.array([-2., -1, 0, 0.5, 1, 2, 3, np.nan])
LO = np.array([-1., -1, 0, 1, 1, 3, 0, 0])
HI = np.array([1., -2, 0, 2, 1, 2, 5, 1])
TX, TLO, THI = (RNG.standard_normal(8) for _ in range(3))


@pytest.mark.parametrize("bounds", ["both", "min", "max"])
@pytest.mark.parametrize("dual", ["all", "self", "bounds"])
def test_clamp_tensor_jvp(bounds, dual):
    lo = LO if bounds in ("both", "min") else None
    hi = HI if bounds in ("both", "max") else None
    tangents = (TX if dual != "bounds" else None,
                TLO if lo is not None and dual != "self" else None,
                THI if hi is not None and dual != "self" else None)
    check(derivgen.clamp, torch.clamp, (X, lo, hi), tangents)


@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1)])
@pytest.mark.parametrize("zeros", [(), (1,), (1, 3)])
def test_cumprod_jvp(shape, dim, zeros):
    x = RNG.standard_normal(shape).reshape(-1)
    x[list(zeros)] = 0
    x = x.reshape(shape)
    check(lambda t: derivgen.cumprod(t, dim), lambda t: torch.cumprod(t, dim), (x,), (RNG.standard_normal(shape),))


def test_cumprod_jvp_zero_dim():
    check(lambda t: derivgen.cumprod(t, 0), lambda t: torch.cumprod(t, 0), (np.zeros(()),), (np.ones(()),))


def _r(*shape):
    return RNG.standard_normal(shape)


def test_convolution_jvp():
    x, w, b = _r(2, 3, 5, 5), _r(4, 3, 3, 3), _r(4)
    check(lambda *a: DF.conv2d(*a, padding=1, stride=2), lambda *a: TF.conv2d(*a, padding=1, stride=2),
          (x, w, b), (_r(2, 3, 5, 5), _r(4, 3, 3, 3), _r(4)))
    check(DF.conv2d, TF.conv2d, (x, w, b), (None, _r(4, 3, 3, 3), None))
    check(lambda *a: DF.conv_transpose2d(*a, stride=2), lambda *a: TF.conv_transpose2d(*a, stride=2),
          (x, _r(3, 2, 3, 3)), (_r(2, 3, 5, 5), _r(3, 2, 3, 3)))


def test_pooling_jvp():
    x, t = _r(2, 3, 5, 5), _r(2, 3, 5, 5)
    check(lambda a: DF.max_pool2d(a, 2), lambda a: TF.max_pool2d(a, 2), (x,), (t,))
    check(lambda a: DF.avg_pool2d(a, 2), lambda a: TF.avg_pool2d(a, 2), (x,), (t,))
    check(lambda a: DF.adaptive_avg_pool2d(a, 3), lambda a: TF.adaptive_avg_pool2d(a, 3), (x,), (t,))


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_jvp(training):
    x, rm, rv = _r(2, 3, 5, 5), _r(3), np.abs(_r(3)) + 0.5

    def ours(a, w=None, b=None):
        return DF.batch_norm(a, derivgen.tensor(rm.copy()), derivgen.tensor(rv.copy()), w, b, training=training)

    def theirs(a, w=None, b=None):
        return TF.batch_norm(a, torch.tensor(rm.copy()), torch.tensor(rv.copy()), w, b, training=training)
    check(ours, theirs, (x, _r(3), _r(3)), (_r(2, 3, 5, 5), _r(3), _r(3)))
    check(ours, theirs, (x,), (_r(2, 3, 5, 5),))


def test_group_norm_jvp():
    x = _r(2, 6, 4)
    check(lambda *a: DF.group_norm(a[0], 3, *a[1:]), lambda *a: TF.group_norm(a[0], 3, *a[1:]),
          (x, _r(6), _r(6)), (_r(2, 6, 4), _r(6), _r(6)))
    check(lambda a: DF.group_norm(a, 2), lambda a: TF.group_norm(a, 2), (x,), (_r(2, 6, 4),))
