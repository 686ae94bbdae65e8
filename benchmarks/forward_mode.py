"""Forward vs reverse mode: jacfwd vs jacrev for f: R^8 -> R^2000, and one forward-mode JVP of a
4M-element elementwise chain against its reverse-mode gradient, each against torch.func when installed.
Prints median seconds and the ratios. Run: python benchmarks/forward_mode.py [--n 4000000]"""
import argparse
import statistics
import time

import numpy as np

import derivgen
from derivgen.autograd import forward_ad as fwAD


def _median(fn, repeat=5):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _jacobians(lib, F, W):
    def f(x):
        h = lib.tanh(W @ x)
        return lib.sigmoid(h) * h + lib.exp(-h * h)
    x = lib.tensor(np.linspace(-1, 1, 8))
    return _median(lambda: F.jacfwd(f)(x)), _median(lambda: F.jacrev(f)(x), repeat=3)


def _chain(lib, fwd_ad, n):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal(n).astype(np.float32))
    w = lib.tensor(rng.standard_normal(n).astype(np.float32))
    b = lib.tensor(rng.standard_normal(n).astype(np.float32))
    t = lib.ones(n)

    def f(v):
        return (lib.sigmoid(v * w + b) * lib.tanh(v) + lib.exp(-v * v)).sum()

    def forward():
        with fwd_ad.dual_level():
            return fwd_ad.unpack_dual(f(fwd_ad.make_dual(x, t))).tangent

    def reverse():
        v = x.detach().requires_grad_(True)
        f(v).backward()
        return v.grad
    return _median(forward), _median(reverse)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4_000_000)
    args = ap.parse_args()
    W = np.random.default_rng(1).standard_normal((2000, 8))
    rows = [("derivgen", derivgen, derivgen.func, fwAD, derivgen.tensor(W))]
    try:
        import torch
        import torch.func
        import torch.autograd.forward_ad as tfw
        rows.append(("torch", torch, torch.func, tfw, torch.tensor(W)))
    except ImportError:
        pass
    for name, lib, F, fad, Wl in rows:
        jf, jr = _jacobians(lib, F, Wl)
        cf, cr = _chain(lib, fad, args.n)
        print(f"{name:9s} jacfwd {jf:.4f}s  jacrev {jr:.4f}s  (jacrev/jacfwd {jr / jf:.1f}x)   "
              f"chain JVP {cf:.4f}s  reverse grad {cr:.4f}s  (JVP/grad {cf / cr:.2f})")


if __name__ == "__main__":
    main()
