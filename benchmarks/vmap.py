"""Per-sample gradients of an MLP: derivgen's vmap(grad) against torch.func's vmap(grad) in the same
run (interleaved, float32), and against derivgen's loop of one grad per sample. Prints the median and
minimum seconds of each and the ratios. Run: python benchmarks/vmap.py [--batch 64] [--repeat 15]"""
import argparse
import os
import statistics
import time

import numpy as np

# times compiled kernels: no interpreted first calls (derivgen/kernels/interpreted.py), which would
# put numpy-expression calls and Numba's import into the first timed repeats
os.environ.setdefault("DERIVGEN_INTERPRETED_CALLS", "0")
import derivgen


def _mlp_loss(lib):
    def loss(params, x, y):
        w1, b1, w2, b2 = params
        h = lib.tanh(lib.nn.functional.linear(x, w1, b1))
        return lib.nn.functional.cross_entropy(lib.nn.functional.linear(h, w2, b2).unsqueeze(0), y.unsqueeze(0))
    return loss


def _setup(lib, batch, d_in, hidden, classes):
    rng = np.random.default_rng(0)
    params = tuple(lib.tensor(rng.standard_normal(s).astype(np.float32) * 0.1)
                   for s in ((hidden, d_in), (hidden,), (classes, hidden), (classes,)))
    x = lib.tensor(rng.standard_normal((batch, d_in)).astype(np.float32))
    y = lib.tensor(rng.integers(0, classes, batch))
    return params, x, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--d-in", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--torch-threads", type=int, default=1,
                    help="torch's intra-op threads (1: on a small shared machine more threads only contend)")
    args = ap.parse_args()
    import torch
    import torch.func
    torch.set_num_threads(args.torch_threads)

    dims = (args.batch, args.d_in, args.hidden, args.classes)
    dg_params, dg_x, dg_y = _setup(derivgen, *dims)
    t_params, t_x, t_y = _setup(torch, *dims)
    dg_vmap = derivgen.func.vmap(derivgen.func.grad(_mlp_loss(derivgen)), in_dims=(None, 0, 0))
    t_vmap = torch.func.vmap(torch.func.grad(_mlp_loss(torch)), in_dims=(None, 0, 0))
    dg_grad = derivgen.func.grad(_mlp_loss(derivgen))

    def dg_loop():
        return [dg_grad(dg_params, dg_x[i], dg_y[i]) for i in range(args.batch)]
    runs = {"derivgen vmap(grad)": lambda: dg_vmap(dg_params, dg_x, dg_y),
            "torch.func vmap(grad)": lambda: t_vmap(t_params, t_x, t_y),
            "derivgen loop of grad": dg_loop}
    ours = [g.numpy() for g in runs["derivgen vmap(grad)"]()]
    theirs = [g.numpy() for g in runs["torch.func vmap(grad)"]()]
    assert all(np.allclose(a, b, rtol=1e-3, atol=1e-5) for a, b in zip(ours, theirs)), "results differ"
    times = {k: [] for k in runs}
    for fn in runs.values():  # warm-up (Numba compiles the kernels on first use)
        fn()
    for _ in range(args.repeat):  # interleaved, so that machine noise hits every contender alike
        for name, fn in runs.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    print(f"per-sample gradients, MLP {args.d_in}-{args.hidden}-{args.classes}, batch {args.batch}, float32, "
          f"{args.repeat} interleaved runs, torch threads {args.torch_threads}")
    for name, ts in times.items():
        print(f"  {name:24s} median {statistics.median(ts) * 1e3:8.2f} ms   min {min(ts) * 1e3:8.2f} ms")
    med = {k: statistics.median(v) for k, v in times.items()}
    mins = {k: min(v) for k, v in times.items()}
    for a, b in (("derivgen vmap(grad)", "torch.func vmap(grad)"), ("derivgen loop of grad", "derivgen vmap(grad)")):
        print(f"  {a} / {b}: median {med[a] / med[b]:.2f}x   min {mins[a] / mins[b]:.2f}x")


if __name__ == "__main__":
    main()
