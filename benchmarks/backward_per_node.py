"""Backward alone on W1's graph: ``loss.backward(retain_graph=True)`` on one forward of 2,000 small ops,
microseconds per node, derivgen and PyTorch interleaved in the same process (process CPU time, medians
and minima of the rounds). ``--profile`` prints a cProfile of derivgen's backward instead. ``--floor``
adds, in the same rounds, what the engine cannot go below while it calls each node from Python: the
dependency count alone, and every node's ``_apply_fast`` called in backward order with no engine around
it (a gradient of ones, nothing handed over or summed).

    python benchmarks/backward_per_node.py [--ops 2000] [--rounds 15] [--single-thread] [--profile] [--floor]
"""
import argparse
import os
import statistics
import sys
import time

# times compiled kernels: no interpreted first calls (derivgen/kernels/interpreted.py), which would
# put numpy-expression calls and Numba's import into the first timed repeats
os.environ.setdefault("DERIVGEN_INTERPRETED_CALLS", "0")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ops", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--reps", type=int, default=20, help="backward calls per round")
    p.add_argument("--single-thread", action="store_true")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--floor", action="store_true")
    args = p.parse_args()
    if args.single_thread:
        for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
            os.environ[v] = "1"
    import run as bench
    import derivgen
    impls = [bench.Autograd("derivgen", derivgen)]
    if not args.no_torch:
        import torch
        if args.single_thread:
            torch.set_num_threads(1)
        impls.append(bench.Autograd("torch", torch))
    losses = {}
    for impl in impls:
        params, step = bench.w1_autograd(impl, n_ops=args.ops)
        loss = step.forward()
        loss.backward(retain_graph=True)  # warm the kernels
        losses[impl.name] = loss
    nodes = args.ops + 1 + 1  # the ops, the sum, the leaves' AccumulateGrad nodes counted once
    if args.profile:
        import cProfile
        import pstats
        loss = losses["derivgen"]
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.reps):
            loss.backward(retain_graph=True)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
        return
    runs = {name: (lambda loss=loss: loss.backward(retain_graph=True)) for name, loss in losses.items()}
    if args.floor:
        runs.update(_floor_runs(losses["derivgen"]))
    times = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, run in runs.items():
            t0 = time.process_time()
            for _ in range(args.reps):
                run()
            times[name].append((time.process_time() - t0) / args.reps / nodes * 1e6)
    for name, ts in times.items():
        print(f"{name:14s} backward us/node: median {statistics.median(ts):.2f}  min {min(ts):.2f}")
    if "torch" in times:
        print(f"ratio (median of per-round ratios) "
              f"{statistics.median(a / b for a, b in zip(times['derivgen'], times['torch'])):.2f}")


def _floor_runs(loss):
    import numpy as np
    import run as bench
    from derivgen.core.node import AccumulateGrad
    from derivgen.engine.execute import _compute_dependencies
    root = loss.grad_fn
    nodes = sorted((n for n in _compute_dependencies(root) if type(n) is not AccumulateGrad),
                   key=lambda n: -n._seq)  # the ops (the root, the sum, has no count)
    ones = [np.ones(bench.W1_SHAPE, np.float32)]
    needs = [tuple(f is not None for f in n._next_fns) for n in nodes]

    def applies_only():
        for node, need in zip(nodes, needs):
            node._apply_fast(ones, need)
    return {"deps pass": lambda: _compute_dependencies(root), "applies only": applies_only}


if __name__ == "__main__":
    main()
