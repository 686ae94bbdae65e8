#!/usr/bin/env python
"""derivgen against PyTorch on the LeNet-5 convolution and pooling layers, forward + backward, float32,
batch 64, on a small padded Conv3d layer, and on a whole LeNet-5 training step (forward, cross entropy,
backward, SGD update).

    python benchmarks/conv_layers.py              # about 5-10 s
    python benchmarks/conv_layers.py --repeats 40
    python benchmarks/conv_layers.py --single-thread   # one thread everywhere, process CPU time as the clock

Both libraries run the same code on the same inputs, PyTorch with 2 threads (``--torch-threads``).
Each round times every workload once in each library, interleaved, so load from other processes hits
both alike; the table shows the median and the fastest milliseconds and the derivgen/PyTorch ratios of
both (on a shared machine the fastest run is the one least disturbed). The first runs of each workload
(Numba compiles, caches) are not timed. Nothing here asserts on a timing.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

# times compiled kernels: no interpreted first calls (derivgen/kernels/interpreted.py), which would
# put numpy-expression calls and Numba's import into the first timed repeats
os.environ.setdefault("DERIVGEN_INTERPRETED_CALLS", "0")


def _layers(T, F, rng):
    def t(shape, grad, scale=0.1):
        a = T.from_numpy((rng.standard_normal(shape) * scale).astype(np.float32))
        return a.requires_grad_(True) if grad else a

    x1 = t((64, 1, 28, 28), False, 1.0)
    w1, b1 = t((6, 1, 5, 5), True), t((6,), True)
    a1 = t((64, 6, 24, 24), True, 1.0)
    x2 = t((64, 6, 14, 14), True, 1.0)
    w2, b2 = t((16, 6, 5, 5), True), t((16,), True)
    a2 = t((64, 16, 10, 10), True, 1.0)
    x3 = t((8, 4, 12, 12, 12), True, 1.0)
    w3, b3 = t((8, 4, 3, 3, 3), True), t((8,), True)
    return {
        "conv1 64x1x28x28 -> 6 5x5": (lambda: F.conv2d(x1, w1, b1), [w1, b1]),
        "pool1 max 2x2 64x6x24x24": (lambda: F.max_pool2d(a1, 2), [a1]),
        "conv2 64x6x14x14 -> 16 5x5": (lambda: F.conv2d(x2, w2, b2), [x2, w2, b2]),
        "pool2 max 2x2 64x16x10x10": (lambda: F.max_pool2d(a2, 2), [a2]),
        "avg_pool2d 2x2 64x6x24x24": (lambda: F.avg_pool2d(a1, 2), [a1]),
        "batch_norm train 64x6x24x24": (lambda: F.batch_norm(a1, None, None, b1, b1, training=True), [a1, b1]),
        "group_norm 3 groups 64x6x24x24": (lambda: F.group_norm(a1, 3, b1, b1), [a1, b1]),
        "conv3d 8x4x12x12x12 -> 8 3x3x3 p1": (lambda: F.conv3d(x3, w3, b3, padding=1), [x3, w3, b3]),
    }


def _lenet(T, F, rng):
    def t(shape, grad=True, scale=0.1):
        a = T.from_numpy((rng.standard_normal(shape) * scale).astype(np.float32))
        return a.requires_grad_(True) if grad else a

    params = [t((6, 1, 5, 5)), t((6,)), t((16, 6, 5, 5)), t((16,)), t((120, 256)), t((120,)), t((84, 120)),
              t((84,)), t((10, 84)), t((10,))]
    x = t((64, 1, 28, 28), False, 1.0)
    y = T.from_numpy(rng.integers(0, 10, 64).astype(np.int64))

    def step():
        c1w, c1b, c2w, c2b, f1w, f1b, f2w, f2b, f3w, f3b = params
        h = F.max_pool2d(F.relu(F.conv2d(x, c1w, c1b)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, c2w, c2b)), 2)
        h = h.reshape(64, -1)
        h = F.relu(F.linear(h, f1w, f1b))
        h = F.relu(F.linear(h, f2w, f2b))
        loss = F.cross_entropy(F.linear(h, f3w, f3b), y)
        loss.backward()
        with T.no_grad():
            for p in params:
                p -= 0.01 * p.grad
                p.grad = None
    return step


SINGLE_THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                     "NUMBA_NUM_THREADS": "1", "DERIVGEN_BENCH_SINGLE_THREAD": "1"}
clock = time.perf_counter


def _timed(fn, leaves):
    start = clock()
    out = fn()
    if leaves is not None:
        out.sum().backward()
        for leaf in leaves:
            leaf.grad = None
    return clock() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--torch-threads", type=int, default=2)
    parser.add_argument("--single-thread", action="store_true",
                        help="run again with one thread everywhere (set before numpy starts OpenBLAS) and "
                             "process CPU time as the clock, steadier than wall time on a shared machine")
    args = parser.parse_args()
    global clock
    if args.single_thread:
        if os.environ.get("DERIVGEN_BENCH_SINGLE_THREAD") != "1":
            return subprocess.call([sys.executable, os.path.abspath(__file__), *sys.argv[1:]],
                                   env=dict(os.environ, **SINGLE_THREAD_ENV))
        args.torch_threads = 1
        clock = time.process_time
    import torch
    import torch.nn.functional as TF

    import derivgen
    import derivgen.nn.functional as DF
    torch.set_num_threads(args.torch_threads)
    work = {}
    for name, T, F in (("derivgen", derivgen, DF), ("torch", torch, TF)):
        rng = np.random.default_rng(0)
        for wl, (fn, leaves) in _layers(T, F, rng).items():
            work.setdefault(wl, {})[name] = (fn, leaves)
        work.setdefault("LeNet-5 train step, batch 64", {})[name] = (_lenet(T, F, np.random.default_rng(1)), None)
    times = {wl: {"derivgen": [], "torch": []} for wl in work}
    for wl, impls in work.items():
        for fn, leaves in impls.values():
            _timed(fn, leaves)
            _timed(fn, leaves)
    for r in range(args.repeats):
        for wl, impls in work.items():
            order = ("derivgen", "torch") if r % 2 == 0 else ("torch", "derivgen")
            for name in order:
                fn, leaves = impls[name]
                times[wl][name].append(_timed(fn, leaves))
    print(f"forward + backward, float32, median of {args.repeats} (ms); torch {torch.__version__}, "
          f"{args.torch_threads} threads" + ("; one thread everywhere, process CPU time" if args.single_thread else ""))
    print(f"{'':34s} {'median':>27s}   {'fastest':>27s}")
    print(f"{'workload':34s} {'derivgen':>9s} {'torch':>9s} {'ratio':>7s}   {'derivgen':>9s} {'torch':>9s} {'ratio':>7s}")
    for wl, t in times.items():
        d, p = statistics.median(t["derivgen"]) * 1e3, statistics.median(t["torch"]) * 1e3
        dm, pm = min(t["derivgen"]) * 1e3, min(t["torch"]) * 1e3
        print(f"{wl:34s} {d:9.3f} {p:9.3f} {d / p:6.2f}x   {dm:9.3f} {pm:9.3f} {dm / pm:6.2f}x")


if __name__ == "__main__":
    main()
