"""Convolutions split over derivgen's threads, sample by sample (``_conv_kernels.conv_*_blocks``): each
case of test_conv_chunks runs split into blocks of samples, and its output and three gradients must
match torch's in float64, the output and the input gradient bit for bit the serial path's (the same
GEMM calls per sample), the weight gradient the serial path's up to the order of the blocks' sums."""
import numpy as np
import pytest

import derivgen
from derivgen.config import settings
from derivgen.kernels import blas, interpreted, products, threads
from derivgen.ops.forwards import _conv_kernels
from tests.nn.test_conv_chunks import CASES

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

LIB = blas.find()
pytestmark = pytest.mark.skipif(LIB is None or not LIB.gemm or threads._cores() < 2,
                                reason="no 64-bit-integer OpenBLAS in this numpy, or one core")

BLOCK_KERNELS = ("conv_forward_blocks", "conv_weight_grad_blocks", "conv_input_grad_blocks")


@pytest.fixture
def split(monkeypatch):
    """Two threads, and every convolution, however small, split (one block per sample at most)."""
    limit = threads.state.limit
    monkeypatch.setattr(settings, "adaptive_threads", False)
    monkeypatch.setattr(interpreted.state, "active", False)
    monkeypatch.setattr(products, "MIN_WORK", 1)
    monkeypatch.setattr(products, "_BLOCK_WORK", 1)
    threads.set_free_cores(2)
    threads.set_limit(2)
    ran = []
    for name in BLOCK_KERNELS:
        kernel = getattr(_conv_kernels, name)
        monkeypatch.setattr(_conv_kernels, name, lambda *args, _k=kernel, _n=name: (ran.append(_n), _k(*args))[1])
    yield ran
    threads.state.limit = limit
    threads.set_free_cores(threads._cores())


def _run(lib, case, x, w, b, g):
    _, _, _, stride, padding, dilation, transposed, output_padding, groups = case
    xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
    y = lib.convolution(xs, ws, bs, stride, padding, dilation, transposed, output_padding, groups)
    y.backward(lib.tensor(g))
    return [t.detach().numpy() for t in (y, xs.grad, ws.grad, bs.grad)]


def _inputs(case):
    _, x_shape, w_shape, stride, padding, dilation, transposed, output_padding, groups = case
    rng = np.random.default_rng(11)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[1] * groups if transposed else w_shape[0])
    y = torch.convolution(torch.tensor(x), torch.tensor(w), torch.tensor(b), stride, padding, dilation, transposed,
                          output_padding, groups)
    return x, w, b, rng.standard_normal(tuple(y.shape))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_split_convolution_matches_torch_and_the_serial_path(case, split):
    x, w, b, g = _inputs(case)
    theirs = _run(torch, case, x, w, b, g)
    ours = _run(derivgen, case, x, w, b, g)
    assert set(split) == set(BLOCK_KERNELS), "forward, weight gradient and input gradient ran split"
    split.clear()
    threads.set_limit(1)
    serial = _run(derivgen, case, x, w, b, g)
    assert not split, "one thread runs the serial path"
    for what, t, o, s in zip(("output", "input grad", "weight grad", "bias grad"), theirs, ours, serial):
        assert o.shape == t.shape, what
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-10, err_msg=what)
        if what == "weight grad":
            np.testing.assert_allclose(o, s, rtol=1e-12, atol=1e-12, err_msg=what)
        else:
            np.testing.assert_array_equal(o, s, err_msg=what)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lenet_layers_split_in_both_dtypes(split, dtype):
    """LeNet-5's two convolutions (the shapes of benchmarks' W6) in float32 and float64, bias included."""
    rng = np.random.default_rng(2)
    for x_shape, w_shape, padding in (((64, 1, 28, 28), (6, 1, 5, 5), 2), ((64, 6, 14, 14), (16, 6, 5, 5), 0)):
        x, w, b = (rng.standard_normal(s).astype(dtype) for s in (x_shape, w_shape, (w_shape[0],)))
        results = []
        for lib in (torch, derivgen):
            xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
            y = lib.nn.functional.conv2d(xs, ws, bs, padding=padding)
            (y * y).sum().backward()
            results.append([t.detach().numpy() for t in (y, xs.grad, ws.grad, bs.grad)])
        tol = 2e-4 if dtype == np.float32 else 1e-10
        for t, o in zip(*results):
            assert o.dtype == dtype
            np.testing.assert_allclose(o, t, rtol=tol, atol=tol * max(1.0, np.abs(t).max()))
    assert set(split) == set(BLOCK_KERNELS)
