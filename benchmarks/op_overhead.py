"""Per-call cost of common tensor ops on a small tensor, derivgen against PyTorch: the Python overhead
real programs pay per op (updates, masks, views, reductions), beside the W1-W7 workloads.

    python benchmarks/op_overhead.py [--n 1000] [--grad]

Each statement is timed with ``timeit`` (best of 5 runs of 3,000 calls, µs per call) in both libraries
on float32 tensors of ``--n`` elements, under ``no_grad`` unless ``--grad`` makes ``g`` require grad.
Rows are sorted by how much more derivgen takes than PyTorch. Nothing here asserts on a timing.
"""
import argparse
import os

# times compiled kernels: no interpreted first calls (derivgen/kernels/interpreted.py), which would
# put numpy-expression calls and Numba's import into the first timed repeats
os.environ.setdefault("DERIVGEN_INTERPRETED_CALLS", "0")

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import contextlib  # noqa: E402
import timeit  # noqa: E402

import numpy as np  # noqa: E402

import derivgen  # noqa: E402

STATEMENTS = [
    "s.mul_(2.0)", "s.add_(1.0)", "s.div_(2.0)", "s.copy_(g)", "s.sub_(g)", "s.add_(g, alpha=-0.1)", "s.mul_(g)",
    "s.addcmul_(g, g, value=0.1)", "s.addcdiv_(g, h, value=0.1)", "s.lerp_(g, 0.1)", "s.clamp_(min=0.0)",
    "s.mul_(0.9).add_(g, alpha=0.1)", "g.zero_() if not g.requires_grad else None",
    "g * 2.0", "2.0 * g", "g + 1", "g - h", "g / 2.0", "g / h", "g ** 2", "g.pow(2)", "g > 0",
    "T.where(g > 0, g, h)", "g.neg()", "g.abs()", "g.exp()", "g.sqrt()", "g.sigmoid()", "g.relu()", "g.sign()",
    "g.clamp(min=0.0)", "g.maximum(h)", "g.sum()", "g.mean()", "g.max()", "g.clone()", "g.detach()",
    "T.zeros_like(g)", "g.view(-1)", "g.reshape(-1)", "g.unsqueeze(0)", "g.t()", "g[0]", "g.float()",
    "g.to(T.float32)",
]


def measure(lib, n, grad):
    rng = np.random.default_rng(0)
    g = lib.from_numpy(rng.standard_normal(n).astype(np.float32))
    h = lib.from_numpy((rng.random(n) + 1).astype(np.float32))
    s = lib.from_numpy(rng.standard_normal(n).astype(np.float32))
    if grad:
        g.requires_grad_(True)
    env = {"g": g, "h": h, "s": s, "T": lib}
    out = {}
    for st in STATEMENTS:
        mode = lib.no_grad() if not grad or st.startswith("s.") else contextlib.nullcontext()
        with mode:
            try:
                exec(st, env)
                out[st] = min(timeit.repeat(st, globals=env, number=3000, repeat=5)) / 3000 * 1e6
            except Exception as exc:  # noqa: BLE001 - a statement one library refuses is reported, not timed
                out[st] = None
                print(f"{lib.__name__}: {st}: {type(exc).__name__}: {exc}")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1000, help="elements per tensor (default 1000)")
    p.add_argument("--grad", action="store_true", help="g requires grad (ops on it record nodes)")
    args = p.parse_args()
    import torch
    torch.set_num_threads(1)
    dg, pt = measure(derivgen, args.n, args.grad), measure(torch, args.n, args.grad)
    rows = [(st, dg[st], pt[st]) for st in STATEMENTS if dg[st] is not None and pt[st] is not None]
    rows.sort(key=lambda r: -(r[1] - r[2]))
    print(f"{args.n} float32 elements, {'g requires grad' if args.grad else 'no_grad'}; µs per call (best of 5)")
    print(f"{'statement':36s} {'derivgen':>9s} {'torch':>8s} {'ratio':>6s}")
    for st, d, t in rows:
        print(f"{st:36s} {d:9.2f} {t:8.2f} {d / t:6.2f}")


if __name__ == "__main__":
    main()
