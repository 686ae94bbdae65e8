"""Forward vs reverse mode: jacfwd vs jacrev for f: R^8 -> R^2000, and the W2 chain
``sum(sigmoid(x*w+b)*tanh(x) + exp(-x*x))`` over 4M float32 elements: its primal alone, one
forward-mode JVP (primal and tangent) and the reverse-mode gradient, derivgen and torch timed in the
same run, interleaved (one repetition of each in turn). Prints medians and minima (seconds) and the
ratios JVP / primal, JVP / gradient and derivgen / torch.
Run: python benchmarks/forward_mode.py [--n 4000000] [--repeat 7]"""
import argparse
import os
import statistics
import time

import numpy as np

# times compiled kernels: no interpreted first calls (derivgen/kernels/interpreted.py), which would
# put numpy-expression calls and Numba's import into the first timed repeats
os.environ.setdefault("DERIVGEN_INTERPRETED_CALLS", "0")
import derivgen
from derivgen.autograd import forward_ad as fwAD


def _jacobian_cases(lib, F, W):
    def f(x):
        h = lib.tanh(W @ x)
        return lib.sigmoid(h) * h + lib.exp(-h * h)
    x = lib.tensor(np.linspace(-1, 1, 8))
    return {"jacfwd": lambda: F.jacfwd(f)(x), "jacrev": lambda: F.jacrev(f)(x)}


def _chain_cases(lib, fwd_ad, n):
    rng = np.random.default_rng(0)
    x, w, b, t = (lib.tensor(rng.standard_normal(n).astype(np.float32)) for _ in range(4))

    def f(v):
        return (lib.sigmoid(v * w + b) * lib.tanh(v) + lib.exp(-v * v)).sum()

    def primal():
        return f(x).item()

    def jvp():
        with fwd_ad.dual_level():
            return fwd_ad.unpack_dual(f(fwd_ad.make_dual(x, t))).tangent.item()

    def grad():
        v = x.detach().requires_grad_(True)
        f(v).backward()
        return v.grad
    return {"primal": primal, "jvp": jvp, "grad": grad}


def _interleaved(cases, repeat):
    """{(lib, case): [seconds]}: every (lib, case) once per round, ``repeat`` rounds after a warm-up."""
    times = {key: [] for key in cases}
    for fn in cases.values():
        fn()
    for _ in range(repeat):
        for key, fn in cases.items():
            t0 = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - t0)
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4_000_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    W = np.random.default_rng(1).standard_normal((2000, 8))
    libs = [("derivgen", derivgen, derivgen.func, fwAD, derivgen.tensor(W))]
    try:
        import torch
        import torch.autograd.forward_ad as tfw
        import torch.func
        libs.append(("torch", torch, torch.func, tfw, torch.tensor(W)))
    except ImportError:
        pass
    cases = {}
    for name, lib, F, fad, Wl in libs:
        cases.update({(name, k): fn for k, fn in _jacobian_cases(lib, F, Wl).items()})
        cases.update({(name, k): fn for k, fn in _chain_cases(lib, fad, args.n).items()})
    times = _interleaved(cases, args.repeat)
    med = {k: statistics.median(v) for k, v in times.items()}
    low = {k: min(v) for k, v in times.items()}
    for name, *_ in libs:
        print(f"{name:9s} " + "  ".join(f"{k} {med[(name, k)]:.4f}s (min {low[(name, k)]:.4f})"
                                        for k in ("jacfwd", "jacrev", "primal", "jvp", "grad")))
        print(f"{'':9s} jacrev/jacfwd {med[(name, 'jacrev')] / med[(name, 'jacfwd')]:.1f}x   "
              f"JVP/primal {med[(name, 'jvp')] / med[(name, 'primal')]:.2f} (min {low[(name, 'jvp')] / low[(name, 'primal')]:.2f})   "
              f"JVP/grad {med[(name, 'jvp')] / med[(name, 'grad')]:.2f} (min {low[(name, 'jvp')] / low[(name, 'grad')]:.2f})")
    if len(libs) > 1:
        print("derivgen/torch  " + "  ".join(f"{k} {med[('derivgen', k)] / med[('torch', k)]:.2f}"
                                             for k in ("jacfwd", "jacrev", "primal", "jvp", "grad")))


if __name__ == "__main__":
    main()
