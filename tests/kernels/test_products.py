"""Matrix products split over derivgen's threads (derivgen/kernels/products.py): every layout and dtype
the split takes gives numpy's product, each block really is a GEMM call through the address blas.py
found, and everything the split does not take goes to numpy unchanged."""
import numpy as np
import pytest

import derivgen
from derivgen.config import settings
from derivgen.kernels import blas, interpreted, products, threads

LIB = blas.find()
needs_split = pytest.mark.skipif(LIB is None or not LIB.gemm or threads._cores() < 2,
                                 reason="no 64-bit-integer OpenBLAS in this numpy, or one core")


@pytest.fixture
def two_threads(monkeypatch):
    """derivgen computes on two threads, with compiled kernels (not a fresh process's numpy forms)."""
    limit = threads.state.limit
    monkeypatch.setattr(settings, "adaptive_threads", False)
    monkeypatch.setattr(interpreted.state, "active", False)
    threads.set_free_cores(2)
    threads.set_limit(2)
    yield
    threads.state.limit = limit
    threads.set_free_cores(threads._cores())


@pytest.fixture
def split_calls(monkeypatch):
    """The (blocks, by_rows) of each split product."""
    calls = []
    kernel = products.gemm_blocks

    def counted(fn, a, b, c, ta, tb, blocks, by_rows, one, zero):
        calls.append((blocks, by_rows))
        return kernel(fn, a, b, c, ta, tb, blocks, by_rows, one, zero)
    monkeypatch.setattr(products, "gemm_blocks", counted)
    return calls


SHAPES = [(256, 784, 256), (64, 1000, 100), (1000, 64, 100), (7, 300, 900), (129, 257, 65)]


@needs_split
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_split_products_are_numpys(two_threads, split_calls, shape, trans_a, trans_b, dtype):
    m, k, n = shape
    rng = np.random.default_rng(m + k + n)
    a = rng.standard_normal((k, m) if trans_a else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(dtype)
    a, b = (a.T if trans_a else a), (b.T if trans_b else b)
    got = products.matmul(a, b)
    assert split_calls == [(2, m >= n)], "the product ran as two blocks of the longer side"
    want = np.matmul(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
    # OpenBLAS picks its kernel (and so the rounding of a sum of k terms) by the block's shape
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert np.abs(got - exact).max() <= 2 * np.abs(want - exact).max() + tol * np.abs(exact).max()


@needs_split
def test_a_split_product_hands_openblas_one_thread(two_threads, split_calls):
    a = np.ones((128, 128), np.float32)
    products.matmul(a, a)
    assert split_calls and threads.state.blas_owned
    assert LIB.get_threads() == 1, "OpenBLAS's own workers stay idle while derivgen splits the work"


@needs_split
@pytest.mark.parametrize("case", ["small", "ints", "strided", "mixed dtypes", "one thread", "numpy forms",
                                  "parallel off"])
def test_what_the_split_does_not_take_goes_to_numpy(two_threads, split_calls, monkeypatch, case):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((256, 300)).astype(np.float32), rng.standard_normal((300, 128)).astype(np.float32)
    if case == "small":
        a, b = a[:8, :8].copy(), b[:8, :8].copy()
    elif case == "ints":
        a, b = (a * 10).astype(np.int64), (b * 10).astype(np.int64)
    elif case == "strided":
        a = a[:, ::2]
        b = b[::2]
    elif case == "mixed dtypes":
        b = b.astype(np.float64)
    elif case == "one thread":
        derivgen.set_num_threads(1)
    elif case == "numpy forms":
        monkeypatch.setattr(interpreted.state, "active", True)  # before Numba is loaded
    elif case == "parallel off":
        monkeypatch.setattr(settings, "parallel_threshold", 1 << 62)
    got = products.matmul(a, b)
    assert split_calls == []
    np.testing.assert_array_equal(got, a @ b)
    assert got.dtype == (a @ b).dtype


@needs_split
def test_mm_and_its_gradients_split_and_match_torch(two_threads, split_calls):
    torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((64, 1000)), rng.standard_normal((1000, 100))
    ours = [derivgen.tensor(v, requires_grad=True) for v in (x, w)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (x, w)]
    (ours[0] @ ours[1]).tanh().sum().backward()
    (theirs[0] @ theirs[1]).tanh().sum().backward()
    assert len(split_calls) == 3, "the forward and both gradients' products were split"
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_blas_finds_numpys_openblas_and_its_gemm():
    """numpy's wheels (2.0 and later) carry a 64-bit-integer OpenBLAS: derivgen finds its thread functions
    and both GEMMs, and the GEMM addresses lie inside that library's mapping."""
    config = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    if config.get("name") != "scipy-openblas" or "USE64BITINT" not in config.get("openblas configuration", ""):
        pytest.skip(f"numpy is built with {config.get('name')!r}, not a 64-bit-integer scipy-openblas")
    lib = blas.find()
    assert lib is not None and lib.get_threads() >= 1
    assert set(lib.gemm) == {np.dtype(np.float32), np.dtype(np.float64)}
    with open("/proc/self/maps") as fh:
        spans = [tuple(int(v, 16) for v in line.split()[0].split("-")) for line in fh if lib.path in line]
    for address in lib.gemm.values():
        assert any(lo <= address < hi for lo, hi in spans)


@needs_split
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_split_batched_products_are_numpys(two_threads, monkeypatch, trans_a, trans_b, dtype):
    calls = []
    kernel = products.gemm_batch_blocks
    monkeypatch.setattr(products, "gemm_batch_blocks", lambda *args: (calls.append(args[6]), kernel(*args))[1])
    rng = np.random.default_rng(9)
    count, m, k, n = 7, 33, 65, 40
    a = rng.standard_normal((count, k, m) if trans_a else (count, m, k)).astype(dtype)
    b = rng.standard_normal((count, n, k) if trans_b else (count, k, n)).astype(dtype)
    a, b = (a.swapaxes(1, 2) if trans_a else a), (b.swapaxes(1, 2) if trans_b else b)
    got = products.bmm(a, b)
    assert calls == [2]
    want = np.matmul(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    # a stack whose matrices are not contiguous, and one of another dtype, go to numpy
    calls.clear()
    np.testing.assert_array_equal(products.bmm(a[:, :, ::2], b[:, ::2]), np.matmul(a[:, :, ::2], b[:, ::2]))
    np.testing.assert_array_equal(products.bmm(a, b.astype(np.float16)), np.matmul(a, b.astype(np.float16)))
    assert calls == []


@needs_split
def test_products_split_from_several_python_threads_at_once(two_threads, split_calls):
    """Python threads that multiply at the same time each run their own split (numba's OpenMP pool
    and single-threaded OpenBLAS calls are both made for concurrent callers)."""
    import threading
    rng = np.random.default_rng(12)
    pairs = [(rng.standard_normal((200, 300)), rng.standard_normal((300, 150))) for _ in range(4)]
    want = [a @ b for a, b in pairs]
    got = [[] for _ in pairs]

    def work(i):
        a, b = pairs[i]
        for _ in range(20):
            got[i].append(products.matmul(a, b))
    workers = [threading.Thread(target=work, args=(i,)) for i in range(len(pairs))]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(split_calls) == 20 * len(pairs)
    for results, expected in zip(got, want):
        for r in results:
            np.testing.assert_allclose(r, expected, rtol=1e-13, atol=1e-12)
