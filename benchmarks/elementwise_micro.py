"""Micro-timings of the elementwise cases a training loop's update runs, on N elements (default
100,000 float32): numpy, PyTorch and derivgen interleaved round by round, medians (and minima) in us.

    python benchmarks/elementwise_micro.py [--n 100000] [--repeats 200]

Run it with OPENBLAS/OMP/NUMBA_NUM_THREADS=1 to compare one thread against one thread.
"""
import argparse
import os
import statistics
import time

import numpy as np
import torch

# times compiled kernels: no interpreted first calls (derivgen/kernels/interpreted.py), which would
# put numpy-expression calls and Numba's import into the first timed repeats
os.environ.setdefault("DERIVGEN_INTERPRETED_CALLS", "0")
import derivgen as dg


def cases(n):
    rng = np.random.default_rng(0)
    base = rng.standard_normal(n).astype(np.float32)
    g = rng.standard_normal(n).astype(np.float32)
    lr = 1e-6
    out = {}
    for name, lib in (("numpy", None), ("torch", torch), ("derivgen", dg)):
        if lib is None:
            w, gg = base.copy(), g.copy()
            out[name] = {
                "lr * g": lambda gg=gg: lr * gg,
                "x.clamp(min=0)": lambda w=w: np.maximum(w, 0),
                "w.sub_(g)": lambda w=w, gg=gg: np.subtract(w, gg, out=w),
                "w.sub_(lr * g)": lambda w=w, gg=gg: np.subtract(w, lr * gg, out=w),
                "g.zero_()": lambda gg=gg: gg.fill(0),
                "w.add_(g, alpha=lr)": lambda w=w, gg=gg: np.add(w, lr * gg, out=w),
            }
        else:
            w, gg = lib.from_numpy(base.copy()), lib.from_numpy(g.copy())
            out[name] = {
                "lr * g": lambda gg=gg: lr * gg,
                "x.clamp(min=0)": lambda w=w: w.clamp(min=0),
                "w.sub_(g)": lambda w=w, gg=gg: w.sub_(gg),
                "w.sub_(lr * g)": lambda w=w, gg=gg: w.sub_(lr * gg),
                "g.zero_()": lambda gg=gg: gg.zero_(),
                "w.add_(g, alpha=lr)": lambda w=w, gg=gg: w.add_(gg, alpha=lr),
            }
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--repeats", type=int, default=200)
    args = p.parse_args()
    torch.set_num_threads(1)
    table = cases(args.n)
    libs = list(table)
    names = list(table[libs[0]])
    times = {(lib, k): [] for lib in libs for k in names}
    for lib in libs:
        for k in names:
            for _ in range(3):
                table[lib][k]()  # compile / warm up
    for r in range(args.repeats):
        for k in names:
            order = libs[r % 3:] + libs[:r % 3]
            for lib in order:
                fn = table[lib][k]
                t0 = time.perf_counter()
                fn()
                times[(lib, k)].append(time.perf_counter() - t0)
    print(f"{'case':24s}" + "".join(f"{lib:>18s}" for lib in libs) + f"{'dg/torch':>10s}")
    for k in names:
        med = {lib: statistics.median(times[(lib, k)]) * 1e6 for lib in libs}
        mn = {lib: min(times[(lib, k)]) * 1e6 for lib in libs}
        print(f"{k:24s}" + "".join(f"{med[lib]:9.1f} ({mn[lib]:5.1f})" for lib in libs)
              + f"{med['derivgen'] / med['torch']:10.2f}")


if __name__ == "__main__":
    main()
