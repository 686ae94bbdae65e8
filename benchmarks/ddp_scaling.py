"""DistributedDataParallel step time on 1 vs 2 processes, the overlap of communication with backward,
and all-reduce latency and bandwidth for the scaling model in docs/distributed.md.

    python benchmarks/ddp_scaling.py            # runs itself under mpiexec -n 1 and -n 2, prints a report
    python benchmarks/ddp_scaling.py --steps 20 --width 1024

Per step (rank 0, after warm-up steps), from the reducer's time stamps:
    backward   backward() start -> the engine's last node (``backward_end``)
    hidden     first bucket's all-reduce start -> backward_end: communication running behind backward
    exposed    backward_end -> every bucket reduced: waiting after backward
Weak scaling: every process trains on its own batch of the same size, as data parallelism is used.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def measure(args):
    import numpy as np

    import derivgen as torch
    import derivgen.distributed as dist
    from derivgen.nn.parallel import DistributedDataParallel

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    w = args.width
    model = torch.nn.Sequential(torch.nn.Linear(w, 2 * w), torch.nn.ReLU(), torch.nn.Linear(2 * w, 2 * w),
                                torch.nn.ReLU(), torch.nn.Linear(2 * w, w))
    ddp = DistributedDataParallel(model, bucket_cap_mb=args.bucket_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(args.batch, w)
    y = torch.randn(args.batch, w)
    rows = []
    for step in range(args.warmup + args.steps):
        dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        tm = ddp.reducer.timings
        if step >= args.warmup:
            rows.append({"step": t3 - t0, "forward": t1 - t0, "backward": tm.get("backward_end", t2) - t1,
                         "hidden": tm["backward_end"] - tm["first_launch"] if world > 1 else 0.0,
                         "exposed": tm["reduced"] - tm["backward_end"] if world > 1 else 0.0})
    sizes = [2 ** k for k in range(3, 25, 3)]  # 8 B .. 16 MiB
    allreduce = {}
    if world > 1:
        for n in sizes:
            t = torch.zeros(n // 4)
            dist.all_reduce(t)
            reps = max(3, min(200, (1 << 22) // n))
            dist.barrier()
            s = time.perf_counter()
            for _ in range(reps):
                dist.all_reduce(t)
            allreduce[n] = (time.perf_counter() - s) / reps
    if rank == 0:
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        n_params = sum(p.numel() for p in model.parameters())
        print("RESULT " + json.dumps({"world": world, "params": n_params, "bytes": 4 * n_params,
                                      "buckets": len(ddp.reducer.buckets), "median": med,
                                      "allreduce": allreduce}), flush=True)
    dist.destroy_process_group()


def fit_latency_bandwidth(allreduce):
    """Least squares t = a + n / B over the measured all-reduce sizes (2 processes)."""
    import numpy as np
    n = np.array([float(k) for k in allreduce])
    t = np.array(list(allreduce.values()))
    A = np.stack([np.ones_like(n), n], 1)
    (a, inv_b), *_ = np.linalg.lstsq(A, t, rcond=None)
    return max(a, float(t.min())) if a <= 0 else a, 1.0 / inv_b


def report(results, args):
    one, two = results[1], results[2]
    print(f"MLP {args.width}->{2 * args.width}->{2 * args.width}->{args.width}, {one['params']:,} float32 parameters "
          f"({one['bytes'] / 2**20:.1f} MiB of gradients), batch {args.batch} per process, {two['buckets']} buckets "
          f"of <= {args.bucket_mb} MiB")
    print(f"{'processes':>10} {'step ms':>9} {'forward':>8} {'backward':>9} {'hidden':>8} {'exposed':>8}")
    for r in (one, two):
        m = r["median"]
        print(f"{r['world']:>10} {1e3 * m['step']:9.1f} {1e3 * m['forward']:8.1f} {1e3 * m['backward']:9.1f} "
              f"{1e3 * m['hidden']:8.1f} {1e3 * m['exposed']:8.1f}")
    m = two["median"]
    comm = m["hidden"] + m["exposed"]
    print(f"overlap: {1e3 * m['hidden']:.1f} ms of all-reduce time ran behind backward, {1e3 * m['exposed']:.1f} ms "
          f"waited after it ({100 * m['hidden'] / comm if comm else 0:.0f}% hidden); "
          f"2-process step / 1-process step = {m['step'] / one['median']['step']:.2f}")
    ar = {int(k): v for k, v in two["allreduce"].items()}
    print("all_reduce on 2 processes: " + ", ".join(f"{k} B {1e6 * v:.0f} us" for k, v in sorted(ar.items())))
    alpha, bw = fit_latency_bandwidth(ar)
    print(f"fit t(n) = alpha + n/B: alpha = {1e6 * alpha:.1f} us, B = {bw / 1e9:.2f} GB/s")
    S, k = two["bytes"], two["buckets"]
    backward = one["median"]["backward"]
    print("model (ring all-reduce, per bucket 2(p-1) latencies, 2(p-1)/p * S / B bytes; hidden behind backward "
          "up to its length):")
    for p in (2, 8, 16, 32, 64):
        # at p=2 the fit is t = 2*lat + S/B (two latency steps, 2(p-1)/p = 1): lat = alpha / 2
        t_comm = k * 2 * (p - 1) * alpha / 2 + 2 * (p - 1) / p * S / bw
        exposed = max(0.0, t_comm - backward)
        step = one["median"]["step"] + exposed
        print(f"  p={p:>2}: all-reduce {1e3 * t_comm:7.1f} ms, exposed {1e3 * exposed:7.1f} ms, step {1e3 * step:7.1f} ms, "
              f"efficiency {one['median']['step'] / step:.2f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--bucket-mb", type=float, default=25)
    parser.add_argument("--measure", action="store_true", help="(internal) measure in this MPI job")
    args = parser.parse_args()
    if args.measure:
        return measure(args)
    from derivgen.launch import find_launcher
    results = {}
    for n in (1, 2):
        cmd = [find_launcher(), "-n", str(n), sys.executable, os.path.abspath(__file__), "--measure",
               "--width", str(args.width), "--batch", str(args.batch), "--steps", str(args.steps),
               "--warmup", str(args.warmup), "--bucket-mb", str(args.bucket_mb)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        results[n] = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
    report(results, args)


if __name__ == "__main__":
    main()
