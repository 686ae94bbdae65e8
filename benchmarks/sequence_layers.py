#!/usr/bin/env python
"""derivgen against PyTorch on recurrent and attention layers, forward + backward, float32: LSTM and GRU
(50 steps, batch 32, 64 -> 128), a packed 2-layer bidirectional LSTM, MultiheadAttention (64 tokens,
batch 16, 128 wide, 8 heads) and a TransformerEncoderLayer of the same size.

    python benchmarks/sequence_layers.py                  # about 10-20 s
    python benchmarks/sequence_layers.py --single-thread  # one thread everywhere, process CPU time as the clock
    python benchmarks/sequence_layers.py --only LSTM,GRU  # workloads whose names start so

Both libraries run the same modules (derivgen's weights copied from torch's) on the same inputs,
interleaved round by round in alternating order; the table shows the median and the fastest
milliseconds and the derivgen/PyTorch ratios of both. The first two runs of each workload are not timed.
Nothing here asserts on a timing.
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

SINGLE_THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                     "NUMBA_NUM_THREADS": "1", "DERIVGEN_BENCH_SINGLE_THREAD": "1"}
clock = time.perf_counter


def _workloads(torch, derivgen, only=None):
    rng = np.random.default_rng(0)
    lengths = sorted(rng.integers(10, 51, 32).tolist(), reverse=True)
    specs = {
        "LSTM 50x32, 64->128": (lambda lib: lib.nn.LSTM(64, 128), (50, 32, 64), None),
        "GRU 50x32, 64->128": (lambda lib: lib.nn.GRU(64, 128), (50, 32, 64), None),
        "LSTM 2 layers bidir, packed": (lambda lib: lib.nn.LSTM(64, 128, num_layers=2, bidirectional=True),
                                        (50, 32, 64), lengths),
        "MultiheadAttention 64x16, 128/8": (lambda lib: lib.nn.MultiheadAttention(128, 8), (64, 16, 128), "mha"),
        "TransformerEncoderLayer 64x16": (lambda lib: lib.nn.TransformerEncoderLayer(128, 8, 256, dropout=0.0),
                                          (64, 16, 128), "layer"),
    }
    work = {}
    for name, (build, shape, extra) in specs.items():
        if only and not any(name.startswith(prefix) for prefix in only):
            continue
        theirs = build(torch)
        ours = build(derivgen)
        ours.load_state_dict({k: derivgen.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
        x = rng.standard_normal(shape).astype(np.float32)
        work[name] = {lib_name: _step(lib, module, x, extra)
                      for lib_name, lib, module in (("derivgen", derivgen, ours), ("torch", torch, theirs))}
    return work


def _step(lib, module, x, extra):
    t = lib.from_numpy(x.copy()).requires_grad_(True)

    def step():
        if extra == "mha":
            out = module(t, t, t, need_weights=False)[0]
        elif extra == "layer":
            out = module(t)
        elif extra is not None:
            out = module(lib.nn.utils.rnn.pack_padded_sequence(t, extra))[0].data
        else:
            out = module(t)[0]
        out.sum().backward()
        t.grad = None
        for p in module.parameters():
            p.grad = None
    return step


def _timed(fn):
    start = clock()
    fn()
    return clock() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--torch-threads", type=int, default=2)
    parser.add_argument("--only", help="comma-separated name prefixes of the workloads to run (e.g. LSTM,GRU)")
    parser.add_argument("--single-thread", action="store_true",
                        help="run again with one thread everywhere and process CPU time as the clock")
    args = parser.parse_args()
    global clock
    if args.single_thread:
        if os.environ.get("DERIVGEN_BENCH_SINGLE_THREAD") != "1":
            return subprocess.call([sys.executable, os.path.abspath(__file__), *sys.argv[1:]],
                                   env=dict(os.environ, **SINGLE_THREAD_ENV))
        args.torch_threads = 1
        clock = time.process_time
    import torch

    import derivgen
    torch.set_num_threads(args.torch_threads)
    work = _workloads(torch, derivgen, args.only.split(",") if args.only else None)
    times = {wl: {"derivgen": [], "torch": []} for wl in work}
    for impls in work.values():
        for fn in impls.values():
            fn()
            fn()
    for r in range(args.repeats):
        for wl, impls in work.items():
            for name in (("derivgen", "torch") if r % 2 == 0 else ("torch", "derivgen")):
                times[wl][name].append(_timed(impls[name]))
    print(f"forward + backward, float32, {args.repeats} repeats (ms); torch {torch.__version__}, "
          f"{args.torch_threads} threads" + ("; one thread everywhere, process CPU time" if args.single_thread else ""))
    print(f"{'':34s} {'median':>27s}   {'fastest':>27s}")
    print(f"{'workload':34s} {'derivgen':>9s} {'torch':>9s} {'ratio':>7s}   {'derivgen':>9s} {'torch':>9s} {'ratio':>7s}")
    for wl, t in times.items():
        d, p = statistics.median(t["derivgen"]) * 1e3, statistics.median(t["torch"]) * 1e3
        dm, pm = min(t["derivgen"]) * 1e3, min(t["torch"]) * 1e3
        print(f"{wl:34s} {d:9.3f} {p:9.3f} {d / p:6.2f}x   {dm:9.3f} {pm:9.3f} {dm / pm:6.2f}x")


if __name__ == "__main__":
    main()
