"""float32/float64 ``pow`` with the scalar exponents torch's CPU kernel computes without powf (-2 as
``1 / (x * x)``, -0.5 as ``1 / sqrt(x)``, -1, 2, 3, 0): bit-equal to PyTorch 2.13, including NaN, infinities,
signed zeros and ``x ** 0 == 1`` everywhere. Other exponents go through a vectorised pow in torch (Sleef's,
within 1 ulp) and are checked by the tolerance tests elsewhere."""
import numpy as np
import pytest
import torch as real

import derivgen

EXPONENTS = [-2, -2.0, -0.5, -1, 0, 0.0, 2, 3, 1]
_EDGES = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-30, -1e-30, 3e38, -2.0, 1.0]


def _data(dtype):
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(0, 10, 4000), rng.uniform(-5, 5, 4000), rng.lognormal(0, 6, 4000), _EDGES])
    return x.astype(dtype)


def _bits(a):
    a = np.asarray(a)
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def _same(got, expected):
    got, expected = np.asarray(got, expected.dtype), np.asarray(expected)
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(_bits(got)[~nan], _bits(expected)[~nan])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("exponent", EXPONENTS)
def test_pow_scalar_exponent_is_bit_equal_to_torch(dtype, exponent):
    x = _data(dtype)
    expected = (real.from_numpy(x) ** exponent).numpy()
    _same(derivgen.tensor(x).pow(exponent).numpy(), expected)
    _same((derivgen.tensor(x) ** exponent).numpy(), expected)
    inplace = derivgen.tensor(x.copy())
    inplace.pow_(exponent)
    _same(inplace.numpy(), expected)


@pytest.mark.parametrize("exponent", [-2, -0.5])
def test_pow_in_a_fused_chain_and_its_gradient(exponent):
    # the same rounding inside a chain the engine may fuse, and in the backward (pow's exponent - 1)
    x = np.abs(_data(np.float32)[:8000]) + np.float32(0.5)
    out = []
    for t, make in ((derivgen, derivgen.tensor), (real, real.tensor)):
        a = make(x, requires_grad=True)
        y = ((a * 1.5) ** exponent + 1.0) ** -1
        y.sum().backward()
        out.append((y.detach().numpy(), a.grad.numpy()))
    _same(out[0][0], out[1][0])
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=2e-6)
