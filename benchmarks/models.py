"""Model-level benchmarks: derivgen against PyTorch (CPU eager), interleaved.

W5  the two-layer-net tutorial loop: ``x.mm(w1).clamp(min=0).mm(w2)``, 64x1000 -> 100 -> 10, squared
    error summed, backward, manual SGD update under ``no_grad`` and ``grad.zero_()``.
W6  one LeNet-5 training step, batch 64 of 1x28x28 (Conv2d, MaxPool2d, Linear, CrossEntropyLoss, SGD
    with momentum), the model of ``examples/lenet.py``.
W7  one Adam step (``optimizer.step()`` alone, default hyper-parameters) over the parameters of an MLP
    784-256-128-10 (weights and biases, 235,146 floats), with fixed gradients.

Both libraries start from the same numpy weights; the first step's losses are compared before anything
is timed. Each library runs in a step worker process of its own (step_workers.py; ``--same-process``
runs both here). Rounds alternate between the libraries in a rotating order, so load from other
processes hits both alike; a round runs a block of consecutive steps (about 20 ms of the slower
library, the same count for both) after 0.3 s of untimed ones, as a training loop does, and the table
gives medians and minima of the time per step and their ratios.

    python benchmarks/models.py [--repeats 15] [--single-thread] [--only W5,W6,W7] [--same-process]
    python benchmarks/models.py --floor [--single-thread]

``--floor`` times, interleaved with PyTorch's whole step, only the matrix products that derivgen's step
hands to numpy's BLAS (same shapes, same calls and operand orders, nothing else): a lower bound for
derivgen's step with OpenBLAS, for W3 (the MLP of ``run.py``), W5 and W6; the products run in a step
worker that imports numpy only.

``--single-thread`` runs the script again with ``OPENBLAS/OMP/MKL/NUMBA_NUM_THREADS=1``: the thread
counts must be set before numpy starts OpenBLAS's pool (otherwise its idle threads spin and count as
process CPU time).
"""
import argparse
import gc
import importlib.util
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from step_workers import StepWorker, serve

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = {"W5": 1.0, "W6": 1.2, "W7": 0.8}
SINGLE_THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                     "NUMBA_NUM_THREADS": "1", "DERIVGEN_BENCH_SINGLE_THREAD": "1"}


def two_layer_net(lib, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    n, d_in, h, d_out = 64, 1000, 100, 10
    x = lib.from_numpy(rng.standard_normal((n, d_in)).astype(np.float32))
    y = lib.from_numpy(rng.standard_normal((n, d_out)).astype(np.float32))
    w1 = lib.from_numpy((rng.standard_normal((d_in, h)) * 0.03).astype(np.float32)).requires_grad_()
    w2 = lib.from_numpy((rng.standard_normal((h, d_out)) * 0.1).astype(np.float32)).requires_grad_()
    lr = 1e-6

    def step():
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        loss.backward()
        with lib.no_grad():
            w1.sub_(lr * w1.grad)  # the tutorial's `w1 -= learning_rate * w1.grad`
            w2.sub_(lr * w2.grad)
            w1.grad.zero_()
            w2.grad.zero_()
        return loss.item()
    return step


def lenet_step(lib, rng_seed=0):
    sys.argv = [a for a in sys.argv if a != "--torch"] + (["--torch"] if lib.__name__ == "torch" else [])
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))
    spec = importlib.util.spec_from_file_location(f"lenet_{lib.__name__}",
                                                  os.path.join(os.path.dirname(HERE), "examples", "lenet.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rng = np.random.default_rng(rng_seed)
    model = mod.LeNet5()
    model.load_state_dict(mod.numpy_weights(model, rng))
    images, labels = mod.synthetic_digits(64, rng)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss.item()
    return step


def adam_step(lib, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    sizes = [784, 256, 128, 10]
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append(lib.from_numpy(rng.uniform(-0.05, 0.05, (fan_out, fan_in)).astype(np.float32)))
        params.append(lib.from_numpy(rng.uniform(-0.05, 0.05, (fan_out,)).astype(np.float32)))
    for p in params:
        p.requires_grad_()
        p.grad = lib.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32))
    optimizer = lib.optim.Adam(params, lr=1e-3)

    def step():
        optimizer.step()
        return float(params[0][0, 0].item())
    return step


WORKLOADS = {"W5": two_layer_net, "W6": lenet_step, "W7": adam_step}


def blas_products(wl, rng_seed=0):
    """The step's BLAS calls alone, as derivgen makes them (forward, then the backward's products)."""
    rng = np.random.default_rng(rng_seed)

    def f(*shape):
        return rng.standard_normal(shape).astype(np.float32)
    if wl == "W3":  # 256x784 -> 256 -> 128 -> 10; x needs no gradient
        x, w1, w2, w3 = f(256, 784), f(784, 256), f(256, 128), f(128, 10)
        h1, h2, g1, g2, g3 = f(256, 256), f(256, 128), f(256, 256), f(256, 128), f(256, 10)

        def run():
            x @ w1, h1 @ w2, h2 @ w3
            x.T @ g1, h1.T @ g2, g2 @ w2.T, h2.T @ g3, g3 @ w3.T
            return 0.0
        return run
    if wl == "W5":
        x, w1, w2, h, gd, gh = f(64, 1000), f(1000, 100), f(100, 10), f(64, 100), f(64, 10), f(64, 100)

        def run():
            x @ w1, h @ w2
            h.T @ gd, gd @ w2.T, x.T @ gh
            return 0.0
        return run
    if wl == "W6":  # the convolutions' batched products on their columns, then the three linear layers
        c1, k1, g1 = f(64, 1, 25, 784), f(1, 6, 25), f(64, 1, 6, 784)
        c2, k2, g2 = f(64, 1, 150, 100), f(1, 16, 150), f(64, 1, 16, 100)
        a = {n: f(64, n) for n in (400, 120, 84, 10)}
        fc = {(400, 120): f(120, 400), (120, 84): f(84, 120), (84, 10): f(10, 84)}
        out1, out2 = np.empty((64, 1, 6, 784), np.float32), np.empty((64, 1, 16, 100), np.float32)

        def run():
            np.matmul(k1, c1, out=out1)
            np.matmul(k2, c2, out=out2)
            for (i, o), w in fc.items():
                a[i] @ w.T
                a[o] @ w, a[i].T @ a[o]
            np.matmul(c1, g1.swapaxes(-1, -2))
            np.matmul(c2, g2.swapaxes(-1, -2))
            np.matmul(k2.swapaxes(-1, -2), g2)
            return 0.0
        return run
    raise ValueError(wl)


BLOCK_MS = 20.0
WARMUP_S = 0.3


def _block_size(steps, clock):
    """Warm both libraries up, then the number of consecutive steps a timed round runs: enough for about
    BLOCK_MS of the slower library, the same for both. A training loop runs its steps back to back; a
    single step timed right after ``gc.collect()`` (which walks the whole heap) would start with cold
    caches every time and measure that instead."""
    slowest = 0.0
    for step in steps.values():
        # warm up for at least WARMUP_S: derivgen's first steps run its kernels as numpy expressions
        # and one of them loads Numba (derivgen/kernels/interpreted.py), far slower than a later step
        start = time.perf_counter()
        for i in range(1000):
            step()
            if i >= 2 and time.perf_counter() - start > WARMUP_S:
                break
        one = []
        for _ in range(3):
            t0 = clock()
            step()
            one.append((clock() - t0) * 1e3)
        slowest = max(slowest, min(one))
    return max(1, int(BLOCK_MS / max(slowest, 1e-3)))


def _interleaved(steps, repeats, clock):
    """Milliseconds per step of each of ``steps`` (name -> callable) in this process, ``repeats`` rounds in
    a rotating order, each round a block of consecutive steps (``_block_size``)."""
    block = _block_size(steps, clock)
    times = {name: [] for name in steps}
    order = list(steps)
    for r in range(repeats):
        for name in order[r % 2:] + order[:r % 2]:
            gc.collect()
            step = steps[name]
            t0 = clock()
            for _ in range(block):
                step()
            times[name].append((clock() - t0) * 1e3 / block)
    return times


def _interleaved_workers(workers, repeats, single_thread):
    """The same rounds with each library in its own step worker (step_workers.py); each block follows
    step_workers.SETTLE_S of untimed steps in its worker."""
    clock = "cpu" if single_thread else "wall"
    slowest = max(w.probe(clock) for w in workers.values()) * 1e3
    block = max(1, int(BLOCK_MS / max(slowest, 1e-3)))
    times = {name: [] for name in workers}
    order = list(workers)
    for r in range(repeats):
        for name in order[r % 2:] + order[:r % 2]:
            wall, cpu = workers[name].time(count=block)
            times[name].append((cpu if single_thread else wall) * 1e3)
    return times


def child_steps(impl, single_thread):
    """A step worker for ``impl`` ("derivgen", "torch", or "blas": the BLAS products alone, numpy only):
    only that library is imported."""
    if impl == "blas":
        return serve(blas_products)
    if impl == "torch":
        import torch as lib
        lib.set_num_threads(1 if single_thread else 2)
    else:
        import derivgen as lib
    return serve(lambda wl: _step_of(lib, wl))


def _step_of(lib, wl):
    """``wl``'s step in ``lib``; W3 is run.py's MLP step."""
    if wl == "W3":
        sys.path.insert(0, HERE)
        import run as bench_run
        return bench_run.w3_autograd(bench_run.Autograd(lib.__name__, lib))[1]
    return WORKLOADS[wl](lib)


def floor(args, torch, clock):
    extra = ["--single-thread"] if args.single_thread else []
    workers = {} if args.same_process else {n: StepWorker(__file__, n, extra) for n in ("blas", "torch")}
    print(f"{'workload':8} {'BLAS products ms':>24} {'torch step ms':>22} {'ratio':>7} {'(by min)':>9}")
    try:
        for wl in ("W3", "W5", "W6"):
            if workers:
                for w in workers.values():
                    w.build(wl, warmup_s=WARMUP_S, min_steps=3)
                times = _interleaved_workers(workers, args.repeats, args.single_thread)
                for w in workers.values():
                    w.drop()
            else:
                times = _interleaved({"blas": blas_products(wl), "torch": _step_of(torch, wl)}, args.repeats, clock)
            med = {n: statistics.median(t) for n, t in times.items()}
            low = {n: min(t) for n, t in times.items()}
            print(f"{wl:8} {med['blas']:10.3f} (min {low['blas']:7.3f}) {med['torch']:9.3f} (min {low['torch']:7.3f}) "
                  f"{med['blas'] / med['torch']:6.2f}x {low['blas'] / low['torch']:8.2f}x", flush=True)
    finally:
        for w in workers.values():
            w.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--only", default="W5,W6,W7")
    parser.add_argument("--floor", action="store_true",
                        help="time only the BLAS products of W3/W5/W6 against PyTorch's whole step")
    parser.add_argument("--single-thread", action="store_true",
                        help="one thread everywhere and process CPU time as the clock")
    parser.add_argument("--same-process", action="store_true",
                        help="time both libraries in this process instead of one step worker per library")
    parser.add_argument("--_child-steps", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.single_thread and os.environ.get("DERIVGEN_BENCH_SINGLE_THREAD") != "1":
        argv_ = sys.argv[1:] if argv is None else list(argv)
        return subprocess.call([sys.executable, os.path.abspath(__file__), *argv_],
                               env=dict(os.environ, **SINGLE_THREAD_ENV))
    if args._child_steps:
        return child_steps(args._child_steps, args.single_thread)
    import derivgen
    import torch
    torch.set_num_threads(1 if args.single_thread else 2)
    clock = time.process_time if args.single_thread else time.perf_counter
    print(f"derivgen {derivgen.__version__}, torch {torch.__version__}, numpy {np.__version__}; "
          f"{'one thread, process CPU time' if args.single_thread else 'two threads, wall clock'}; "
          f"{args.repeats} interleaved rounds; "
          + ("both libraries in this process" if args.same_process
             else "each library in a step worker process of its own"))
    if args.floor:
        return floor(args, torch, clock)
    print(f"{'workload':8} {'derivgen ms':>22} {'torch ms':>22} {'ratio':>7} {'(by min)':>9} {'target':>7}")
    libs = {"derivgen": derivgen, "torch": torch}
    extra = ["--single-thread"] if args.single_thread else []
    workers = {} if args.same_process else {name: StepWorker(__file__, name, extra) for name in libs}
    try:
        for wl in args.only.split(","):
            if workers:
                first = {name: w.build(wl, warmup_s=WARMUP_S, min_steps=3) for name, w in workers.items()}
            else:
                steps = {name: WORKLOADS[wl](lib) for name, lib in libs.items()}
                first = {name: step() for name, step in steps.items()}
            if not np.isclose(first["derivgen"], first["torch"], rtol=1e-3):
                print(f"{wl}: first losses differ (derivgen {first['derivgen']}, torch {first['torch']}); not timed")
                continue
            if workers:
                times = _interleaved_workers(workers, args.repeats, args.single_thread)
                for w in workers.values():
                    w.drop()
            else:
                times = _interleaved(steps, args.repeats, clock)
            med = {n: statistics.median(t) for n, t in times.items()}
            low = {n: min(t) for n, t in times.items()}
            ratio, ratio_min = med["derivgen"] / med["torch"], low["derivgen"] / low["torch"]
            verdict = "PASS" if ratio <= TARGETS[wl] else "MISS"
            print(f"{wl:8} {med['derivgen']:9.3f} (min {low['derivgen']:7.3f}) {med['torch']:9.3f} "
                  f"(min {low['torch']:7.3f}) {ratio:6.2f}x {ratio_min:8.2f}x  <={TARGETS[wl]}x {verdict}",
                  flush=True)
    finally:
        for w in workers.values():
            w.close()
    try:
        print(f"load average {os.getloadavg()} on {os.cpu_count()} cores")
    except OSError:
        pass


if __name__ == "__main__":
    main()
