"""Threads (per-thread sequence counters, concurrent backward) and memory (saved values freed after
backward, no growth over 10,000 training steps). The same bodies run on torch when it is installed."""
import gc
import threading
import weakref

import numpy as np


def _val(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def _run_threads(n, target):
    errors = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)
    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    if errors:
        raise errors[0]


# ---- threads ------------------------------------------------------------------------------------------

def test_sequence_numbers_are_per_thread(torch):
    x = torch.ones(3, requires_grad=True)
    before = torch.autograd._get_sequence_nr()
    seen = {}

    def work(i):
        a = x * 2
        b = a * 3
        seen[i] = (a.grad_fn._sequence_nr(), b.grad_fn._sequence_nr())
    _run_threads(2, work)
    assert seen == {0: (0, 1), 1: (0, 1)}  # each new thread counts from 0
    assert torch.autograd._get_sequence_nr() == before  # and the main thread's counter did not move


def _mlp_grads(torch, seed, steps=1):
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal((6, 4)), dtype=torch.float64)
    w1 = torch.tensor(rng.standard_normal((4, 5)), dtype=torch.float64, requires_grad=True)
    w2 = torch.tensor(rng.standard_normal((5, 2)), dtype=torch.float64, requires_grad=True)
    for _ in range(steps):
        loss = (x.mm(w1).tanh().mm(w2).sigmoid() * 3).sum()
        loss.backward()
    return _val(w1.grad), _val(w2.grad)


def test_independent_graphs_backward_concurrently(torch):
    n = 6
    expected = {i: _mlp_grads(torch, i) for i in range(n)}
    barrier = threading.Barrier(n)
    got = {}

    def work(i):
        barrier.wait()
        got[i] = _mlp_grads(torch, i, steps=30)
    _run_threads(n, work)
    for i in range(n):
        for ours, ref in zip(got[i], expected[i]):
            np.testing.assert_allclose(ours, 30 * ref, rtol=1e-12)


def test_concurrent_autograd_grad_and_double_backward_on_shared_inputs(torch):
    x = torch.tensor([0.3, -0.8, 1.5], dtype=torch.float64, requires_grad=True)
    barrier = threading.Barrier(4)
    results = {}

    def work(i):
        barrier.wait()
        out = []
        for _ in range(25):
            y = (x * (i + 1)).sin().sum()
            g, = torch.autograd.grad(y, x, create_graph=True)
            h, = torch.autograd.grad(g.sum(), x)
            out.append((_val(g), _val(h)))
        results[i] = out
    _run_threads(4, work)
    xs = np.array([0.3, -0.8, 1.5])
    for i, out in results.items():
        k = i + 1
        for g, h in out:
            np.testing.assert_allclose(g, k * np.cos(k * xs), rtol=1e-12)
            np.testing.assert_allclose(h, -k * k * np.sin(k * xs), rtol=1e-12)
    assert x.grad is None


def test_concurrent_backward_into_a_shared_leaf_accumulates_every_gradient(torch):
    w = torch.ones(64, 64, dtype=torch.float64, requires_grad=True)
    x = torch.ones(64, 64, dtype=torch.float64)
    n, k = 4, 30
    barrier = threading.Barrier(n)

    def work(i):
        barrier.wait()
        for _ in range(k):
            x.mm(w).sum().backward()
    _run_threads(n, work)
    np.testing.assert_array_equal(_val(w.grad), np.full((64, 64), n * k * 64.0))


# ---- memory ------------------------------------------------------------------------------------------------

def _tracked_survivors_per_op(torch, n_ops):
    a = torch.rand(8, dtype=torch.float64, requires_grad=True)
    b = torch.rand(8, dtype=torch.float64, requires_grad=True)
    ops = (lambda h: h * b, lambda h: h + a, lambda h: h.sin(), lambda h: h.exp())

    def chain(n):
        h = a
        for i in range(n):
            h = ops[i % 4](h)
        return h
    chain(8).sum().backward()  # first calls compile kernels and fill caches: not the graph's objects
    gc.collect()
    before = len(gc.get_objects())
    h = chain(n_ops)
    gc.collect()  # also stops tracking tuples that hold only untracked objects
    per_op = (len(gc.get_objects()) - before) / n_ops
    h.sum().backward()
    return per_op


def test_a_graph_keeps_few_gc_tracked_objects_per_op(torch):
    # every object a graph keeps tracked is walked by each full collection while the graph lives, so the
    # per-op cost of recording grows with the graph's size. Per op derivgen keeps the node, the tuple of
    # next nodes, the Tensor of a saved input with its version-counter list, and a SavedVariable for a
    # saved output (exp); edges as (node, nr) pairs added 1.5 more on this chain, and a SavedVariable
    # per saved input 0.75 more.
    assert _tracked_survivors_per_op(torch, 800) <= 3.4


def test_saved_values_are_freed_after_backward(torch):
    x = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
    a = x * 2
    b = a.sin()  # saves its input a
    c = b.exp()  # saves its result
    loss = c.sum()
    ref_a = weakref.ref(a)
    del a, b, c
    gc.collect()
    assert ref_a() is not None  # the graph keeps the saved input alive
    loss.backward()
    gc.collect()
    assert ref_a() is None  # freed with the graph's saved values, although loss.grad_fn is still alive
    assert loss.grad_fn is not None


def test_retain_graph_keeps_saved_values_until_the_graph_dies(torch):
    x = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
    a = x * 2
    loss = a.sin().sum()
    ref_a = weakref.ref(a)
    del a
    loss.backward(retain_graph=True)
    gc.collect()
    assert ref_a() is not None
    loss.backward()
    gc.collect()
    assert ref_a() is None


def test_saved_arrays_die_after_backward():
    """derivgen keeps saved outputs as bare numpy arrays (no Tensor, no reference cycle): a weakref to the
    array dies when backward releases the node's saved values."""
    import derivgen
    x = derivgen.tensor([0.5, 1.0, 2.0], dtype=derivgen.float64, requires_grad=True)
    a = x * 2
    b = a.sin()  # saves its input a
    c = b.exp()  # saves its result c (as an array)
    loss = c.sum()
    refs = [weakref.ref(a._array), weakref.ref(c._array)]
    del a, b, c
    gc.collect()
    assert [r() is not None for r in refs] == [True, True]
    loss.backward()
    gc.collect()
    assert [r() is None for r in refs] == [True, True]


def test_no_graph_survives_a_training_loop():
    """Nothing of a step's graph outlives the step: the AccumulateGrad of each parameter is held by the
    graph only, so it dies with it (derivgen only: torch's nodes cannot be weakly referenced)."""
    import derivgen as torch
    rng = np.random.default_rng(0)
    w = torch.tensor(rng.standard_normal((4, 3)), dtype=torch.float64, requires_grad=True)
    x = torch.tensor(rng.standard_normal((5, 4)), dtype=torch.float64)
    loss = x.mm(w).tanh().sum()
    acc = weakref.ref(loss.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[1][0])
    assert acc().variable is w
    loss.backward()
    del loss
    gc.collect()
    assert acc() is None


def _rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096
    except OSError:
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def test_ten_thousand_training_steps_do_not_grow_memory(torch):
    """A 2-layer MLP on 8x4 inputs, manual SGD under no_grad: after a warm-up, 10,000 steps leave the
    process's RSS and its number of Python objects where they were."""
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((8, 4)), dtype=torch.float32)
    y = torch.tensor(rng.standard_normal((8, 1)), dtype=torch.float32)
    w1 = torch.tensor(rng.standard_normal((4, 16)) * 0.3, dtype=torch.float32, requires_grad=True)
    b1 = torch.zeros(16, dtype=torch.float32, requires_grad=True)
    w2 = torch.tensor(rng.standard_normal((16, 1)) * 0.3, dtype=torch.float32, requires_grad=True)
    params = [w1, b1, w2]

    def step():
        h = (x.mm(w1) + b1).tanh()
        loss = ((h.mm(w2) - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= 0.05 * p.grad
                p.grad = None
        return float(loss.detach())

    first = step()
    for _ in range(300):
        step()
    gc.collect()
    objects_before = len(gc.get_objects())
    rss_before = _rss_bytes()
    for _ in range(10_000):
        last = step()
    gc.collect()
    rss_growth = _rss_bytes() - rss_before
    object_growth = len(gc.get_objects()) - objects_before
    assert last < first  # it trains
    # one leaked graph per step would be tens of MB and 100,000s of objects
    assert rss_growth < 4 * 1024 * 1024, f"RSS grew by {rss_growth / 1024:.0f} KiB over 10,000 steps"
    assert object_growth < 200, f"{object_growth} more Python objects after 10,000 steps"


def test_numba_threads_keep_openmps_default_waiting(python_runner):
    """numba's OpenMP pool keeps OpenMP's default waiting: its idle workers spin a while before they
    sleep (GOMP_SPINCOUNT 300000, not passive waiting's 0, which let a sleeping worker take 0.2-0.5 ms to
    wake), and derivgen leaves the environment as it found it."""
    code = ("import os\n"
            "os.environ.pop('OMP_WAIT_POLICY', None)\n"
            "os.environ.pop('GOMP_SPINCOUNT', None)\n"
            "import derivgen\n"
            "x = derivgen.randn(1 << 19)\n"
            "print('before', os.environ.get('OMP_WAIT_POLICY'))\n"
            "(x.sin() * 2.0).sum()\n"
            "print('after', os.environ.get('OMP_WAIT_POLICY'))\n")
    env = {"OMP_DISPLAY_ENV": "verbose", "DERIVGEN_PARALLEL": "1", "DERIVGEN_ADAPTIVE_THREADS": "0"}
    out = python_runner(code, env=env)
    assert out.returncode == 0, out.stderr
    assert "before None" in out.stdout and "after None" in out.stdout
    assert "GOMP_SPINCOUNT = '300000'" in out.stderr, out.stderr
