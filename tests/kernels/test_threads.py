"""Thread counts follow the cores other processes leave free (derivgen/kernels/threads.py): the load
measured from /proc/stat minus our own CPU time, prange kernels serial and OpenBLAS on one thread while
a core is taken, at most the user's ``set_num_threads``, and results identical either way."""
import numpy as np
import pytest
import torch as real_torch

import derivgen as torch
from derivgen.config import settings
from derivgen.kernels import dispatch, threads


@pytest.fixture
def restore_threads():
    limit = threads.state.limit
    yield
    threads.state.threads = 0  # (so that the calls below set OpenBLAS too)
    threads.state.limit = limit
    threads.set_free_cores(threads._cores())
    threads.state.ticks = None
    threads.state.next_sample = 0.0


@pytest.fixture
def blas_unowned():
    """OpenBLAS still computing on its own threads (as before derivgen's first parallel kernel); the
    ownership and OpenBLAS's thread count put back afterwards."""
    owned = threads.state.blas_owned
    threads.state.blas_owned = False
    yield
    threads.state.blas_owned = owned
    threads.state.threads = 0  # (so that _apply sets OpenBLAS as the ownership says)
    threads._apply()


def _feed(monkeypatch, samples):
    """Make adapt() see ``samples``: (monotonic seconds, machine busy seconds, own CPU seconds)."""
    it = iter(samples)
    current = {}

    def advance():
        current["t"], current["busy"], current["own"] = next(it)
    monkeypatch.setattr(threads.time, "monotonic", lambda: current["t"])
    monkeypatch.setattr(threads.time, "process_time", lambda: current["own"])
    monkeypatch.setattr(threads, "_busy_ticks", lambda: round(current["busy"] / threads.state.tick_s))
    return advance


@pytest.mark.parametrize("others, own, expected_taken", [(0.0, 2.0, 0), (1.0, 1.0, 1), (0.3, 1.0, 0), (0.8, 0.0, 1)])
def test_adapt_counts_only_other_processes(monkeypatch, restore_threads, others, own, expected_taken):
    monkeypatch.setattr(threads.state, "cores", 4)
    monkeypatch.setattr(settings, "adaptive_threads", True)
    threads.set_free_cores(4)
    threads.state.ticks = None
    threads.state.next_sample = 0.0
    # one second passes; the machine's busy time is our own CPU time plus the other processes'
    advance = _feed(monkeypatch, [(100.0, 50.0, 10.0), (101.0, 50.0 + own + others, 10.0 + own)])
    advance()
    threads.adapt()
    assert threads.free_threads() == 4  # the first sample only starts a window
    advance()
    threads.adapt()
    assert threads.free_threads() == 4 - expected_taken
    assert threads.state.parallel


def test_adapt_resamples_only_after_the_interval(monkeypatch, restore_threads):
    monkeypatch.setattr(threads.state, "cores", 2)
    monkeypatch.setattr(settings, "adaptive_threads", True)
    threads.set_free_cores(2)
    threads.state.ticks = None
    threads.state.next_sample = 0.0
    advance = _feed(monkeypatch, [(10.0, 0.0, 0.0), (10.0 + threads.INTERVAL / 2, 5.0, 0.0),
                                  (10.0 + threads.INTERVAL, 5.0, 0.0)])
    advance()
    threads.adapt()
    advance()
    threads.adapt()   # too early: the busy second is not looked at yet
    assert threads.free_threads() == 2
    advance()
    threads.adapt()
    assert threads.free_threads() == 1
    assert not threads.state.parallel


def test_switched_off_keeps_every_thread(monkeypatch, restore_threads):
    monkeypatch.setattr(settings, "adaptive_threads", False)
    threads.state.next_sample = 0.0
    monkeypatch.setattr(threads, "_busy_ticks", lambda: pytest.fail("sampled although switched off"))
    threads.adapt()
    assert threads.free_threads() == threads.state.cores


def test_one_free_core_runs_serial_kernels_and_single_threaded_blas(monkeypatch, restore_threads, blas_unowned):
    monkeypatch.setattr(settings, "adaptive_threads", False)  # no resampling during the test
    monkeypatch.setattr(dispatch, "start_threads", lambda: None)
    serial, parallel = object(), object()
    size = settings.parallel_threshold
    threads.set_free_cores(1)
    assert dispatch.pick(serial, parallel, size) is serial
    blas = threads._blas()
    if blas:
        assert blas.get_threads() == 1
    threads.set_free_cores(threads.state.cores)
    assert dispatch.pick(serial, parallel, size) is (parallel if threads.state.cores > 1 else serial)
    if blas:
        assert blas.get_threads() == min(threads.state.cores, threads.state.blas_max)


def test_once_derivgen_splits_products_openblas_stays_on_one_thread(monkeypatch, restore_threads, blas_unowned):
    """From the first parallel kernel on, derivgen's products run on its own pool (products.py) and
    OpenBLAS computes on one thread whatever the free cores: its idle workers would spin beside the pool."""
    import numba
    blas = threads._blas()
    if not blas or not blas.gemm or numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("no 64-bit-integer OpenBLAS, or a pool of one thread: OpenBLAS's own threads keep the products")
    monkeypatch.setattr(settings, "adaptive_threads", False)
    monkeypatch.setattr(dispatch, "_THREADS", [False])
    threads.set_free_cores(threads.state.cores)
    dispatch.start_threads()
    assert threads.state.blas_owned and blas.get_threads() == 1
    threads.set_free_cores(1)
    threads.set_free_cores(threads.state.cores)
    assert blas.get_threads() == 1


def test_a_pool_of_one_thread_leaves_openblas_its_threads(monkeypatch, restore_threads, blas_unowned):
    import numba
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 1)
    monkeypatch.setattr(dispatch, "_THREADS", [False])
    dispatch.start_threads()
    assert not threads.state.blas_owned


@pytest.mark.parametrize("n_threads", [1, 2])
def test_results_do_not_depend_on_the_thread_count(monkeypatch, restore_threads, n_threads):
    monkeypatch.setattr(settings, "adaptive_threads", False)
    threads.set_free_cores(n_threads)
    rng = np.random.default_rng(0)
    a, w = rng.standard_normal((64, 300)), rng.standard_normal((300, 40))
    big = rng.standard_normal(settings.parallel_threshold + 17)
    x = torch.tensor(a, requires_grad=True)
    y = torch.tensor(big, requires_grad=True)
    ((x @ torch.tensor(w)).tanh().sum() + (y.sigmoid() * y).sum()).backward()
    rx = real_torch.tensor(a, requires_grad=True)
    ry = real_torch.tensor(big, requires_grad=True)
    ((rx @ real_torch.tensor(w)).tanh().sum() + (ry.sigmoid() * ry).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), rx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), ry.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_set_num_threads_caps_the_free_cores(monkeypatch, restore_threads):
    monkeypatch.setattr(threads.state, "cores", 8)
    monkeypatch.setattr(settings, "adaptive_threads", False)
    threads.set_free_cores(8)
    torch.set_num_threads(3)
    assert torch.get_num_threads() == 3
    assert threads.threads_now() == 3 and threads.state.parallel
    threads.set_free_cores(2)  # another process took cores: the fewer wins
    assert threads.threads_now() == 2
    torch.set_num_threads(1)
    assert threads.threads_now() == 1 and not threads.state.parallel
    torch.set_num_threads(20)  # more than the cores: every free core, and the asked count is reported
    threads.set_free_cores(8)
    assert torch.get_num_threads() == 20
    assert threads.threads_now() == 8


def test_one_thread_runs_serial_kernels_and_single_threaded_blas(monkeypatch, restore_threads):
    monkeypatch.setattr(settings, "adaptive_threads", False)
    serial, parallel = object(), object()
    threads.set_free_cores(threads.state.cores)
    torch.set_num_threads(1)
    assert dispatch.pick(serial, parallel, settings.parallel_threshold) is serial
    blas = threads._blas()
    if blas:
        assert blas.get_threads() == 1
    torch.set_num_threads(threads.state.cores)
    if blas:
        assert blas.get_threads() == (1 if threads.state.blas_owned else min(threads.state.cores, threads.state.blas_max))


def test_prange_kernels_get_the_thread_count(monkeypatch, restore_threads):
    import numba
    monkeypatch.setattr(threads.state, "cores", 8)
    monkeypatch.setattr(settings, "adaptive_threads", False)
    monkeypatch.setattr(dispatch, "start_threads", lambda: None)
    given = []
    monkeypatch.setattr(numba, "set_num_threads", given.append)
    monkeypatch.setattr(dispatch._numba_threads, "n", None, raising=False)
    threads.set_free_cores(8)
    torch.set_num_threads(3)
    serial, parallel = object(), object()
    assert dispatch.pick(serial, parallel, settings.parallel_threshold) is parallel
    assert dispatch.pick(serial, parallel, settings.parallel_threshold) is parallel
    assert given == [min(3, numba.config.NUMBA_NUM_THREADS)]  # set once, not on every kernel
    threads.set_free_cores(2)
    dispatch.pick(serial, parallel, settings.parallel_threshold)
    assert given[-1] == min(2, numba.config.NUMBA_NUM_THREADS)


def test_default_ceiling_reads_omp_num_threads(monkeypatch):
    for value, expected in (("1", 1), ("3", 3), ("100", 8), ("0", 8), ("", 8), ("two", 8)):
        monkeypatch.setenv("OMP_NUM_THREADS", value)
        assert threads._configured_limit(8) == expected
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert threads._configured_limit(8) == 8
