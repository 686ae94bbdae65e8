"""How many threads derivgen computes with: as many cores as other processes leave free.

A multi-threaded kernel is only as fast as its slowest thread. When another process keeps one core of a
small machine busy, the thread that shares that core waits for its time slice, and a step that splits
its work in two takes several times longer than running it on one thread. Multi-threaded matmuls suffer
most: the MLP step of benchmarks/run.py (W3) went from 2.4 ms to 5.6 ms median (63 ms worst) on
OpenBLAS's two threads beside one busy process on two cores. So derivgen watches how busy the machine is
and, while its cores are shared, runs its prange kernels and split products (serially when one core is
left) on as many threads as there are free cores (dispatch.parallel_threads gives numba the count).
OpenBLAS gets the same count until derivgen's products take over its threads (``own_blas_threads``).

The load is sampled from ``/proc/stat`` (CPU time of every process) minus this process's own CPU time,
so derivgen's own threads never count as load. ``adapt()`` resamples at most every ``INTERVAL``
seconds and is called from the main thread (once per ``backward``, and before a parallel kernel), never
from a background thread: OpenBLAS's thread count must not change while a BLAS call is running.
``DERIVGEN_ADAPTIVE_THREADS=0`` turns this off (all configured threads, always).

The user's own ceiling (``derivgen.set_num_threads``, by default ``OMP_NUM_THREADS`` or every core) caps
both: derivgen computes with the fewer of the free cores and that ceiling.
"""
import os
import time

from derivgen.config import settings as _cfg
from derivgen.kernels import blas as _openblas

INTERVAL = 0.25
# other processes' CPU use, in cores, from which one core counts as taken (hysteresis against noise)
BUSY_CORE = 0.5


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _busy_ticks():
    """CPU time spent by the whole machine (not idle, not iowait), in clock ticks; None without /proc."""
    try:
        with open("/proc/stat", "rb") as fh:
            fields = fh.readline().split()[1:]
    except OSError:
        return None
    values = [int(v) for v in fields]
    return sum(values) - values[3] - (values[4] if len(values) > 4 else 0)


def _configured_limit(cores):
    """The thread ceiling before any ``set_num_threads``: ``OMP_NUM_THREADS`` when it is a positive
    integer (as PyTorch reads it), at most the usable cores; else every usable core."""
    try:
        n = int(os.environ.get("OMP_NUM_THREADS", ""))
    except ValueError:
        return cores
    return min(n, cores) if n > 0 else cores


class _State:
    __slots__ = ("parallel", "threads", "free", "limit", "cores", "next_sample", "ticks", "tick_s", "blas",
                 "blas_max", "blas_owned")

    def __init__(self):
        self.cores = _cores()
        self.limit = _configured_limit(self.cores)  # the user's ceiling (set_num_threads); may exceed cores
        self.free = self.cores          # cores other processes leave free, from the last sample
        self.threads = min(self.free, self.limit)  # threads derivgen may use now
        self.parallel = self.threads > 1  # whether prange kernels may run multi-threaded now
        self.next_sample = 0.0
        self.ticks = None               # (monotonic time, machine busy ticks, own CPU seconds) of the last sample
        self.tick_s = 1.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01
        self.blas = None
        self.blas_max = None
        # derivgen's products split their work over its own threads (products.py): OpenBLAS computes on one
        self.blas_owned = False


state = _State()


def _blas():
    """numpy's OpenBLAS (blas.py), or False."""
    if state.blas is None:
        state.blas = _openblas.find() or False
        if state.blas:
            state.blas_max = state.blas.get_threads()  # the configured count (OPENBLAS_NUM_THREADS) is the ceiling
    return state.blas


def own_blas_threads():
    """From now on derivgen's products run multi-threaded on derivgen's own threads, one OpenBLAS call per
    block (products.py), and OpenBLAS computes on one thread. Two thread pools on the same cores slow each
    other down: OpenBLAS's idle workers spin for about 0.1 s after each multi-threaded call, and a
    prange kernel started in that time waited for them (a 0.33 ms parallel loop took 3.8 ms after one
    two-thread OpenBLAS product, on two cores)."""
    if state.blas_owned:
        return
    state.blas_owned = True
    blas = _blas()
    if blas:
        blas.set_threads(1)


def free_threads():
    """Cores not taken by other processes, from the last sample (at least 1)."""
    return state.free


def threads_now():
    """Threads derivgen computes with now: the free cores, at most the user's ceiling."""
    return state.threads


def adapt():
    """Resample the machine's load (at most every INTERVAL seconds) and set the thread counts."""
    now = time.monotonic()
    if now < state.next_sample or not _cfg.adaptive_threads:
        return
    ticks = _busy_ticks()
    if ticks is None:
        state.next_sample = float("inf")  # no /proc: keep the configured threads
        return
    own = time.process_time()
    last = state.ticks
    if last is not None:
        window = now - last[0]
        # other processes' CPU use in cores over the window (our own threads excluded)
        others = ((ticks - last[1]) * state.tick_s - (own - last[2])) / window
        taken = int(max(0.0, others) + (1.0 - BUSY_CORE))
        set_free_cores(max(1, state.cores - taken))
    state.ticks = (now, ticks, own)
    state.next_sample = now + INTERVAL


def set_free_cores(n):
    """Record that ``n`` cores are free and set the thread counts from it."""
    state.free = max(1, min(int(n), state.cores))
    _apply()


def set_limit(n):
    """The user's ceiling: compute with at most ``n`` threads (``n`` >= 1; more than the cores counts as
    every core)."""
    state.limit = n
    _apply()


def _apply():
    """Use the fewer of the free cores and the ceiling: prange kernels only with two or more threads,
    OpenBLAS with that many (at most its configured count), or one once derivgen owns its threads."""
    n = max(1, min(state.free, state.limit))
    state.parallel = n > 1
    if n == state.threads:
        return
    state.threads = n
    blas = _blas()
    if blas:
        blas.set_threads(1 if state.blas_owned else min(n, state.blas_max))
