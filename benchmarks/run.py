#!/usr/bin/env python
"""derivgen benchmarks: derivgen vs hand-written numpy vs PyTorch eager (CPU).

One command::

    python benchmarks/run.py                 # full run (15 timed repeats per workload)
    python benchmarks/run.py --quick         # short run (5 repeats, fewer subprocess samples)
    python benchmarks/run.py --json out.json --plot benchmarks/ratios.png
    python benchmarks/run.py --single-thread # one thread everywhere, process CPU time as the clock
                                             # (comparable numbers on a busy shared machine)

Implementations are interleaved round by round; median, min and max are reported with the
derivgen/PyTorch and derivgen/numpy ratios and the targets (PASS/MISS on the medians).

Workloads (all float32, forward + backward, leaf gradients reset to None before every step):

* W1  engine overhead: a chain of 2,000 small ops on shape-(8,) tensors (mul/add/sin/exp/tanh/sub/
      sigmoid/mul, repeated), then ``sum``; reported per step and in microseconds per node.
* W2  large elementwise chain: ``sum(sigmoid(x*w+b)*tanh(x) + exp(-x*x))`` on three 4M-element arrays,
      grads of x, w, b (plus a plain copy of one array as a memory-bandwidth reference).
* W3  MLP step: 784-256-128-10 at batch 256, relu, log_softmax, nll_loss (mean).
* W4  broadcast + reduction: ``((x + b) ** 2).mean(0).sum()`` with x (2048, 2048), b (2048,).
* W1 scaling: W1 at 200 / 2,000 / 20,000 ops, microseconds per node for derivgen and PyTorch
  (``--only scaling``): the per-node cost should not grow with the graph.
* import time of ``import derivgen`` (fresh subprocess, warm kernel cache) and ``derivgen generate``
  time for the whole table (into a temporary folder).
* cold first-use latency (fresh subprocess, empty DERIVGEN_CACHE_DIR, DERIVGEN_NO_CACHE=1).
* peak memory of W2, W3 and W6 (fresh subprocess per implementation, peak RSS above the steady state),
  with derivgen/PyTorch ratios.
* W2 scaling (section ``scaling_w2``): 64k / 1M / 16M elements against the memory-bandwidth floor.
* ``--busy N``: the workloads (and W5) timed again with N spinning processes beside, ratios busy vs idle.
* micro-benchmarks: numba dispatcher call overhead on 8 elements vs numpy ufuncs, and 4M-element
  kernel throughput (sigmoid backward / forward) vs numpy and PyTorch.

Gradients are checked against each other (np.testing.assert_allclose, float32 tolerances) before any
timing. Nothing here asserts on timings. Environment variables such as OPENBLAS_CORETYPE are left as
they are.
"""
import argparse
import datetime
import gc
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

from step_workers import StepWorker, as_float, serve

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Targets: derivgen / PyTorch median-time ratios, and absolute seconds ("import": warm bytecode and
# kernel caches; "import_cold": no bytecode cache; "first_use": the first forward+backward in a fresh
# process with warm caches).
RATIO_TARGETS = {"W1": 0.8, "W2": 0.35, "W3": 0.8, "W4": 0.3}
ABS_TARGETS = {"import": 0.3, "import_cold": 0.8, "first_use": 0.15, "generate": 3.0}

W1_OPS = 2000
W1_SHAPE = (8,)
W2_N = 4 * 1024 * 1024
W3_SIZES = (784, 256, 128, 10)
W3_BATCH = 256
W4_N = 2048

DTYPE = np.float32

# Gradient-check tolerances (float32). W1 pushes rounding differences (1-ulp differences between
# libm, SVML/SLEEF) through a 2,000-op chain, and W3 through BLAS with different summation orders.
TOLS = {"W1": dict(rtol=2e-3, atol=1e-4), "W2": dict(rtol=1e-4, atol=1e-6),
        "W3": dict(rtol=2e-3, atol=2e-5), "W4": dict(rtol=1e-4, atol=1e-6)}


# ------------------------------------------------------------------------------------------------
# Implementations


def import_derivgen():
    import derivgen
    return derivgen


SINGLE_THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                     "NUMBA_NUM_THREADS": "1", "DERIVGEN_BENCH_SINGLE_THREAD": "1"}


def single_thread():
    return os.environ.get("DERIVGEN_BENCH_SINGLE_THREAD") == "1"


def import_torch():
    try:
        import torch
    except Exception:  # noqa: BLE001 - torch is an optional peer
        return None
    torch.set_num_threads(1 if single_thread() else 2)
    return torch


class Autograd:
    """The shared spelling of a workload for derivgen and PyTorch (same Python code, ``T`` is the module)."""

    def __init__(self, name, T):
        self.name = name
        self.T = T

    def leaf(self, arr):
        t = self.T.from_numpy(np.array(arr, copy=True))
        t.requires_grad_(True)
        return t

    def const(self, arr):
        return self.T.from_numpy(np.array(arr, copy=True))

    @staticmethod
    def grads(params):
        return {k: np.array(v.grad.numpy(), copy=True) for k, v in params.items()}


def make_step(params, forward):
    """A forward+backward step for autograd implementations: grads reset, forward, backward."""
    plist = list(params.values())

    def step():
        for p in plist:
            p.grad = None
        loss = forward()
        loss.backward()
        return loss
    step.forward = forward
    step.params = plist
    return step


# ------------------------------------------------------------------------------------------------
# Inputs


def w1_inputs(shape=W1_SHAPE):
    rng = np.random.default_rng(1)
    return {k: rng.standard_normal(shape).astype(DTYPE) for k in ("a", "b", "c")}


def w2_inputs(n=W2_N):
    rng = np.random.default_rng(2)
    return {"x": rng.standard_normal(n).astype(DTYPE),
            "w": rng.standard_normal(n).astype(DTYPE),
            "b": rng.standard_normal(n).astype(DTYPE)}


def w3_inputs(batch=W3_BATCH, sizes=W3_SIZES):
    rng = np.random.default_rng(3)
    d = {"x": rng.standard_normal((batch, sizes[0])).astype(DTYPE),
         "y": rng.integers(0, sizes[-1], size=batch).astype(np.int64)}
    for i in range(3):
        fan_in = sizes[i]
        bound = 1.0 / np.sqrt(fan_in)
        d[f"W{i + 1}"] = rng.uniform(-bound, bound, (sizes[i], sizes[i + 1])).astype(DTYPE)
        d[f"b{i + 1}"] = rng.uniform(-bound, bound, (sizes[i + 1],)).astype(DTYPE)
    return d


def w4_inputs(n=W4_N):
    rng = np.random.default_rng(4)
    return {"x": rng.standard_normal((n, n)).astype(DTYPE), "b": rng.standard_normal(n).astype(DTYPE)}


# ------------------------------------------------------------------------------------------------
# W1: engine overhead, a chain of small ops


def _w1_cycle(a, b, c):
    # eight ops per cycle; values stay bounded (sin/tanh/sigmoid squash), so the chain never overflows
    return (lambda h: h * b, lambda h: h + c, lambda h: h.sin(), lambda h: h.exp(),
            lambda h: h.tanh(), lambda h: h - c, lambda h: h.sigmoid(), lambda h: h * a)


def w1_autograd(impl, n_ops=W1_OPS, shape=W1_SHAPE):
    inp = w1_inputs(shape)
    params = {k: impl.leaf(v) for k, v in inp.items()}
    cycle = _w1_cycle(params["a"], params["b"], params["c"])
    ops = [cycle[i % 8] for i in range(n_ops)]

    def forward():
        h = params["a"]
        for op in ops:
            h = op(h)
        return h.sum()
    return params, make_step(params, forward)


def w1_numpy(n_ops=W1_OPS, shape=W1_SHAPE):
    """A minimal hand-written numpy tape: forward saves what each op needs, backward walks it back."""
    inp = w1_inputs(shape)
    a, b, c = inp["a"], inp["b"], inp["c"]
    grads = {}

    def step():
        saved = []
        h = a
        for i in range(n_ops):
            k = i & 7
            if k == 0:
                saved.append(h)
                h = h * b
            elif k == 1:
                h = h + c
                saved.append(None)
            elif k == 2:
                saved.append(h)
                h = np.sin(h)
            elif k == 3:
                h = np.exp(h)
                saved.append(h)
            elif k == 4:
                h = np.tanh(h)
                saved.append(h)
            elif k == 5:
                h = h - c
                saved.append(None)
            elif k == 6:
                h = 1 / (1 + np.exp(-h))
                saved.append(h)
            else:
                saved.append(h)
                h = h * a
        loss = h.sum()
        g = np.ones_like(h)
        ga = np.zeros_like(a)
        gb = np.zeros_like(b)
        gc = np.zeros_like(c)
        for i in range(n_ops - 1, -1, -1):
            k = i & 7
            s = saved[i]
            if k == 0:
                gb += g * s
                g = g * b
            elif k == 1:
                gc += g
            elif k == 2:
                g = g * np.cos(s)
            elif k == 3:
                g = g * s
            elif k == 4:
                g = g * (1 - s * s)
            elif k == 5:
                gc -= g
            elif k == 6:
                g = g * s * (1 - s)
            else:
                ga += g * s
                g = g * a
        ga += g
        grads.update(a=ga, b=gb, c=gc)
        return loss
    return grads, step


# ------------------------------------------------------------------------------------------------
# W2: large elementwise chain


def w2_autograd(impl, n=W2_N):
    params = {k: impl.leaf(v) for k, v in w2_inputs(n).items()}
    x, w, b = params["x"], params["w"], params["b"]

    def forward():
        return ((x * w + b).sigmoid() * x.tanh() + (-(x * x)).exp()).sum()
    return params, make_step(params, forward)


def w2_numpy(n=W2_N):
    inp = w2_inputs(n)
    x, w, b = inp["x"], inp["w"], inp["b"]
    grads = {}

    def step():
        z = x * w + b
        s = 1 / (1 + np.exp(-z))
        t = np.tanh(x)
        e = np.exp(-(x * x))
        loss = (s * t + e).sum()
        dz = s * (1 - s) * t
        gx = dz * w + s * (1 - t * t) - 2 * x * e
        grads.update(x=gx, w=dz * x, b=dz)
        return loss
    return grads, step


# ------------------------------------------------------------------------------------------------
# W3: MLP step


def derivgen_functional(dg):
    """derivgen.nn.functional.{log_softmax,nll_loss} if they exist, else None (and why)."""
    try:
        import importlib
        F = importlib.import_module("derivgen.nn.functional")
    except Exception as exc:  # noqa: BLE001
        return None, f"derivgen.nn.functional not importable ({type(exc).__name__}: {exc})"
    missing = [n for n in ("log_softmax", "nll_loss") if not hasattr(F, n)]
    if missing:
        return None, f"derivgen.nn.functional lacks {', '.join(missing)}"
    return F, "derivgen.nn.functional.log_softmax + nll_loss"


# derivgen's W3 runs one trial step with derivgen.nn.functional and falls back to the composite
# spelling if it raises; the memory child turns the trial off so that its first step is the measured one
W3_TRIAL_STEP = True


def w3_autograd(impl, batch=W3_BATCH, spelling="auto"):
    """Returns (params, step, spelling used). ``spelling``: 'functional', 'composite' or 'auto'."""
    inp = w3_inputs(batch)
    params = {k: impl.leaf(inp[k]) for k in ("W1", "b1", "W2", "b2", "W3", "b3")}
    T = impl.T
    x = impl.const(inp["x"])
    y = impl.const(inp["y"])
    n_cls = W3_SIZES[-1]
    onehot = impl.const(np.eye(n_cls, dtype=DTYPE)[inp["y"]])
    W1, b1, W2, b2, W3, b3 = (params[k] for k in ("W1", "b1", "W2", "b2", "W3", "b3"))

    def logits():
        h1 = (x @ W1 + b1).relu()
        h2 = (h1 @ W2 + b2).relu()
        return h2 @ W3 + b3

    if impl.name == "torch":
        F = T.nn.functional
        used = "torch.nn.functional.log_softmax + nll_loss"
    elif spelling in ("auto", "functional"):
        F, used = derivgen_functional(T)
    else:
        F, used = None, "composite requested"

    def forward_functional():
        return F.nll_loss(F.log_softmax(logits(), 1), y)

    def forward_composite():
        z = logits()
        # log_softmax = z - logsumexp(z); the row max is a constant shift (as in torch's kernel)
        m = T.from_numpy(z.detach().numpy().max(axis=1, keepdims=True))
        zs = z - m
        logp = zs - zs.exp().sum(1, keepdim=True).log()
        return -(logp * onehot).sum() / batch   # nll_loss(mean) as a mean of -(onehot * logp)

    if F is not None:
        step = make_step(params, forward_functional)
        if impl.name != "torch" and W3_TRIAL_STEP:
            try:
                step()
                _ = Autograd.grads(params)
            except Exception as exc:  # noqa: BLE001 - young API: fall back, say so
                used = (f"composite fallback (x - log(sum(exp(x - max))), -(onehot*logp).sum()/N): "
                        f"functional spelling raised {type(exc).__name__}: {exc}")
                step = make_step(params, forward_composite)
        return params, step, used
    reason = used
    used = ("composite fallback: log_softmax = (z - max) - log(sum(exp(z - max), 1)), "
            f"nll_loss = -(onehot * logp).sum() / N  [{reason}]")
    return params, make_step(params, forward_composite), used


def w3_numpy(batch=W3_BATCH):
    inp = w3_inputs(batch)
    x, y = inp["x"], inp["y"]
    W1, b1, W2, b2, W3, b3 = (inp[k] for k in ("W1", "b1", "W2", "b2", "W3", "b3"))
    rows = np.arange(batch)
    grads = {}

    def step():
        z1 = x @ W1 + b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ W2 + b2
        h2 = np.maximum(z2, 0)
        z3 = h2 @ W3 + b3
        zs = z3 - z3.max(axis=1, keepdims=True)
        e = np.exp(zs)
        s = e.sum(axis=1, keepdims=True)
        logp = zs - np.log(s)
        loss = -logp[rows, y].mean()
        g3 = e / s
        g3[rows, y] -= 1
        g3 /= batch
        gW3 = h2.T @ g3
        gb3 = g3.sum(0)
        g2 = (g3 @ W3.T) * (z2 > 0)
        gW2 = h1.T @ g2
        gb2 = g2.sum(0)
        g1 = (g2 @ W2.T) * (z1 > 0)
        gW1 = x.T @ g1
        gb1 = g1.sum(0)
        grads.update(W1=gW1, b1=gb1, W2=gW2, b2=gb2, W3=gW3, b3=gb3)
        return loss
    return grads, step


# ------------------------------------------------------------------------------------------------
# W4: broadcast + reduction


def w4_autograd(impl, n=W4_N):
    params = {k: impl.leaf(v) for k, v in w4_inputs(n).items()}
    x, b = params["x"], params["b"]

    def forward():
        return ((x + b) ** 2).mean(0).sum()
    return params, make_step(params, forward)


def w4_numpy(n=W4_N):
    inp = w4_inputs(n)
    x, b = inp["x"], inp["b"]
    grads = {}

    def step():
        yv = x + b
        loss = (yv * yv).mean(0).sum()
        gy = yv * DTYPE(2.0 / n)
        grads.update(x=gy, b=gy.sum(0))
        return loss
    return grads, step


# ------------------------------------------------------------------------------------------------
# Building a workload for one implementation


def build(workload, impl_name, modules, small=False):
    """(step, grads_fn, note) for ``workload`` under ``impl_name``; ``small`` shrinks sizes (warm-up)."""
    note = ""
    if impl_name == "numpy":
        if workload == "W1":
            grads, step = w1_numpy()
        elif workload == "W2":
            grads, step = w2_numpy(256 if small else W2_N)
        elif workload == "W3":
            grads, step = w3_numpy(4 if small else W3_BATCH)
            note = "hand-written log_softmax/nll_loss"
        else:
            grads, step = w4_numpy(16 if small else W4_N)
        return step, (lambda: dict(grads)), note, grads.clear
    impl = Autograd(impl_name, modules[impl_name])
    if workload == "W1":
        params, step = w1_autograd(impl)
    elif workload == "W2":
        params, step = w2_autograd(impl, 256 if small else W2_N)
    elif workload == "W3":
        params, step, note = w3_autograd(impl, 4 if small else W3_BATCH)
    else:
        params, step = w4_autograd(impl, 16 if small else W4_N)
    def clear():
        for t in params.values():
            t.grad = None
    return step, (lambda: Autograd.grads(params)), note, clear


# ------------------------------------------------------------------------------------------------
# Timing helpers


def time_step(step, repeats, warmup):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return times


def summary(times):
    return {"median": statistics.median(times), "min": min(times), "max": max(times), "n": len(times)}


def per_call(fn, number, repeat=5):
    """Best-of-``repeat`` seconds per call of ``fn`` over ``number`` calls."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


# ------------------------------------------------------------------------------------------------
# Subprocess children (import time, cold first use, peak memory)


def _status_kb(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _w6_memory_setup(lib):
    """W6 (benchmarks/models.py's LeNet-5 step) for the memory child: the model, data and optimizer are
    built, then two steps run (kernels compiled or loaded, momentum buffers made): the steady state of a
    training loop. Returns (step, grads_fn, clear, rss after imports, rss at the steady state)."""
    sys.path.insert(0, HERE)
    import models
    gc.collect()
    rss_imports = _status_kb("VmRSS")
    step = models.lenet_step(lib)
    step()
    step()
    gc.collect()
    return step, (lambda: None), (lambda: None), rss_imports, _status_kb("VmRSS")


def child_memory(workload, impl_name):
    """Peak RSS of the first full-size step in a fresh process, above the steady state after imports,
    a small same-rank warm-up (kernels loaded) and the inputs. Also the tracemalloc peak of the step,
    which sees numpy buffers (numpy and derivgen) but not PyTorch's allocator."""
    import tracemalloc
    global W3_TRIAL_STEP
    W3_TRIAL_STEP = False
    modules = {"numpy": np}
    if impl_name == "derivgen":
        modules["derivgen"] = import_derivgen()
    elif impl_name == "torch":
        modules["torch"] = import_torch()
    if workload == "W6":
        step, grads_fn, clear, rss_imports, rss_inputs = _w6_memory_setup(modules[impl_name])
    else:
        small = build(workload, impl_name, modules, small=True)
        small[0]()
        small[1]()
        del small
        gc.collect()
        rss_imports = _status_kb("VmRSS")
        step, grads_fn, _, clear = build(workload, impl_name, modules)
        clear()           # (building W3 for derivgen may run one trial step to pick the spelling)
        gc.collect()
        rss_inputs = _status_kb("VmRSS")
    can_reset = _reset_peak()
    if can_reset:
        base = _status_kb("VmRSS")
        step()
        peak_kb = _status_kb("VmHWM") - base
    else:  # no /proc/self/clear_refs: the high-water mark of the whole process, minus the state before
        import resource
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        step()
        peak_kb = max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
    grads_fn()
    out = {"method": "VmHWM after /proc/self/clear_refs" if can_reset else "ru_maxrss delta",
           "after_imports_mb": rss_imports / 1024, "inputs_mb": (rss_inputs - rss_imports) / 1024,
           "step_peak_mb": peak_kb / 1024, "process_peak_mb": _status_kb("VmHWM") / 1024}
    if impl_name != "torch":
        clear()
        gc.collect()
        if impl_name == "derivgen":
            from derivgen.kernels import buffers
            buffers.empty_cache()  # a pooled buffer reused from the first step would be invisible here
        tracemalloc.start()
        step()
        out["tracemalloc_step_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    print(json.dumps(out))


COLD_EXPR = "(x.sigmoid() * x.tanh() + (-(x * x)).exp()).sum()"


def cold_loss(x):
    return (x.sigmoid() * x.tanh() + (-(x * x)).exp()).sum()  # COLD_EXPR


def child_cold(impl_name):
    t0 = time.perf_counter()
    if impl_name == "derivgen":
        T = import_derivgen()
    else:
        T = import_torch()
    t_import = time.perf_counter() - t0
    x = T.from_numpy(np.linspace(-2, 2, int(os.environ.get("BENCH_COLD_N", 8))).astype(DTYPE))
    x.requires_grad_(True)
    timings, cpu = [], []
    for _ in range(3):
        x.grad = None
        c1 = time.process_time()
        t1 = time.perf_counter()
        loss = cold_loss(x)
        loss.backward()
        timings.append(time.perf_counter() - t1)
        cpu.append(time.process_time() - c1)
    out = {"import_s": t_import, "first_s": timings[0], "second_s": timings[1], "third_s": timings[2],
           "first_cpu_s": cpu[0], "grad": x.grad.numpy().tolist()}
    if impl_name == "derivgen":
        # derivgen's first small calls run as numpy expressions (derivgen/kernels/interpreted.py); the
        # step whose call loads Numba pays for it: report which step that is, and its time
        out["numba_after_first"] = "numba" in sys.modules
        step = 3
        while "numba" not in sys.modules and step < 5000:
            x.grad = None
            t1 = time.perf_counter()
            cold_loss(x).backward()
            t_step = time.perf_counter() - t1
            step += 1
        if "numba" in sys.modules and not out["numba_after_first"]:
            out["numba_step"], out["numba_step_s"] = step, t_step
    print(json.dumps(out))


# First training steps of two small real programs in a fresh process: the two-layer-net tutorial
# (mm, clamp, pow, sum, manual update; W5's sizes) and a 784-128-10 Linear/ReLU classifier with
# cross_entropy and SGD, batch 32. Each reports its first forward+backward and its whole first step.
FIRST_STEP_PROGRAMS = ("tutorial", "classifier")


def child_first_step(impl_name, program):
    T = import_derivgen() if impl_name == "derivgen" else import_torch()
    rng = np.random.default_rng(0)
    if program == "tutorial":
        x = T.from_numpy(rng.standard_normal((64, 1000)).astype(DTYPE))
        y = T.from_numpy(rng.standard_normal((64, 10)).astype(DTYPE))
        w1 = T.from_numpy((rng.standard_normal((1000, 100)) * 0.03).astype(DTYPE)).requires_grad_()
        w2 = T.from_numpy((rng.standard_normal((100, 10)) * 0.1).astype(DTYPE)).requires_grad_()
        t0 = time.perf_counter()
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        loss.backward()
        t_fb = time.perf_counter() - t0
        with T.no_grad():
            w1 -= 1e-6 * w1.grad
            w2 -= 1e-6 * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    else:
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(784, 128), T.nn.ReLU(), T.nn.Linear(128, 10))
        opt = T.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x = T.from_numpy(rng.standard_normal((32, 784)).astype(DTYPE))
        y = T.from_numpy(rng.integers(0, 10, 32))
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = T.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        t_fb = time.perf_counter() - t0
        opt.step()
    loss.item()
    t_step = time.perf_counter() - t0
    print(json.dumps({"first_fwd_bwd_s": t_fb, "first_step_s": t_step, "numba": "numba" in sys.modules}))


# The environment of the children that time a first use "with warm caches": Python writes and reads
# its .pyc files there even where the launching shell sets PYTHONDONTWRITEBYTECODE (otherwise every
# node and kernel module a first step loads would be compiled from source, 20-30 ms of it).
WARM_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_child(args, env=WARM_ENV, timeout=600):
    cmd = [sys.executable, os.path.abspath(__file__)] + args
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"child {' '.join(args)} failed (rc {p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------------------
# Sections of the run


def check_gradients(workloads, impls, modules, log):
    """Run every implementation once and compare losses and grads; returns {workload: info}."""
    results = {}
    for wl in workloads:
        info = {"checked": [], "failures": {}, "notes": {}, "losses": {}}
        grads, losses = {}, info["losses"]
        for name in impls:
            try:
                step, grads_fn, note, _ = build(wl, name, modules)
                losses[name] = as_float(step())
                grads[name] = grads_fn()
                if note:
                    info["notes"][name] = note
            except Exception as exc:  # noqa: BLE001 - report, keep going
                info["failures"][name] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                info["failures"][name + "_traceback"] = traceback.format_exc()[-4000:]
                log(f"  {wl} {name}: FAILED: {info['failures'][name]}")
        ref = "numpy"
        tol = TOLS[wl]
        for name in [n for n in impls if n != ref and n in grads]:
            pair = f"{name} vs {ref}"
            try:
                np.testing.assert_allclose(losses[name], losses[ref], rtol=max(tol["rtol"], 1e-5),
                                           err_msg=f"{wl} loss {pair}")
                errs = []
                for k in grads[ref]:
                    np.testing.assert_allclose(grads[name][k], grads[ref][k], **tol,
                                               err_msg=f"{wl} grad {k} {pair}")
                    errs.append(float(np.max(np.abs(grads[name][k] - grads[ref][k]))))
                info["checked"].append({"pair": pair, "grads": sorted(grads[ref]), "max_abs_err": max(errs),
                                        "loss": losses[name], "ref_loss": losses[ref], **tol})
                log(f"  {wl}: {pair}: loss {losses[name]:.6g} vs {losses[ref]:.6g}, grads "
                    f"{','.join(sorted(grads[ref]))} allclose(rtol={tol['rtol']}, atol={tol['atol']}), "
                    f"max |diff| {max(errs):.2e}")
            except AssertionError as exc:
                info["failures"][name] = f"gradient mismatch: {str(exc).strip()[:600]}"
                log(f"  {wl}: {pair}: MISMATCH -> {name} excluded from timing\n{exc}")
        for name, note in info["notes"].items():
            log(f"  {wl}: {name} spelling: {note}")
        results[wl] = info
        del grads, losses
        gc.collect()
    return results


def _runnable():
    """Runnable tasks on the whole machine right now (the 4th field of /proc/loadavg, ourselves included)."""
    try:
        with open("/proc/loadavg") as fh:
            return int(fh.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return 1


def wait_quiet(max_wait):
    """Wait (at most ``max_wait`` seconds) until no other task is runnable in 3 samples 20 ms apart.
    Returns True when the machine looked quiet."""
    t_end = time.perf_counter() + max_wait
    streak = 0
    while True:
        streak = streak + 1 if _runnable() <= 1 else 0
        if streak >= 3:
            return True
        if time.perf_counter() >= t_end:
            return False
        time.sleep(0.02)


def warm_up(step, warmup):
    """At least ``warmup`` runs and at least 0.3 s, so that first-call paths (derivgen's interpreted
    first calls, Numba's loading, allocator growth) are behind the timed repeats."""
    t_end = time.perf_counter() + 0.3
    for i in range(max(warmup, 1) * 50):
        step()
        if i + 1 >= warmup and time.perf_counter() >= t_end:
            break


def timed_step(step):
    """(wall seconds, process CPU seconds) of one step, after a collection outside the timing."""
    gc.collect()
    c0 = time.process_time()
    t0 = time.perf_counter()
    step()
    return time.perf_counter() - t0, time.process_time() - c0


def child_steps(impl_name):
    """A step worker (step_workers.StepWorker) for ``impl_name``: only that library is imported."""
    modules = {"numpy": np}
    if impl_name == "torch":
        modules["torch"] = import_torch()
    elif impl_name == "derivgen":
        modules["derivgen"] = import_derivgen()
    return serve(lambda workload: build(workload, impl_name, modules)[0])


BLOCK_MS = 20.0


def time_workloads(workloads, impls, modules, checks, repeats, warmup, log, quiet_wait=0.0, isolate=True):
    """Interleaved timing: each round runs every implementation once (in a rotating order), so that
    load from other processes on a small shared machine hits all implementations alike. With
    ``isolate`` each implementation runs in its own step worker (step_workers.py: a process that has
    imported only that library; each timed block of steps follows 0.3 s of untimed ones); otherwise all run in
    this process, each timed step right after the other implementations' ones. With ``quiet_wait`` each round first waits up to that many seconds for the machine
    to be idle."""
    out = {}
    quiet_rounds = {}
    workers = {}
    try:
        for wl in workloads:
            out[wl] = {}
            names = [n for n in impls if n not in checks[wl]["failures"]]
            if isolate:
                for n in names:
                    if n not in workers:
                        workers[n] = StepWorker(__file__, n)
                    loss = workers[n].build(wl, min_steps=warmup)
                    checked = checks[wl]["losses"][n]
                    if not np.isclose(loss, checked, rtol=TOLS[wl]["rtol"], atol=0.0):
                        raise RuntimeError(f"{wl} {n}: the step worker's loss {loss!r} differs from the "
                                           f"checked one {checked!r}")
                # a timed repeat is a block of consecutive steps, about BLOCK_MS of the slowest
                # implementation (the same count for all), as models.py times W5-W7: a training loop runs
                # its steps back to back, and a single step after the garbage collection that precedes
                # each repeat would start with the thread pools' idle workers asleep (waking one took
                # 0.2-0.5 ms on the 2-vCPU machine) and the caches cold
                clock = "cpu" if single_thread() else "wall"
                slowest = max(workers[n].probe(clock) for n in names) * 1e3
                block = max(1, int(BLOCK_MS / max(slowest, 1e-3)))
                run = {n: (lambda n=n: workers[n].time(count=block)) for n in names}
            else:
                steps = {n: build(wl, n, modules)[0] for n in names}
                for n in names:
                    warm_up(steps[n], warmup)
                run = {n: (lambda n=n: timed_step(steps[n])) for n in names}
            times = {n: [] for n in names}
            cpu = {n: [] for n in names}
            quiet = 0
            for r in range(repeats):
                if quiet_wait > 0:
                    quiet += wait_quiet(quiet_wait)
                else:
                    quiet += _runnable() <= 1
                order = names[r % len(names):] + names[:r % len(names)]
                for n in order:
                    wall, cpu_s = run[n]()
                    times[n].append(wall)
                    cpu[n].append(cpu_s)
            for n in names:
                wall_s, cpu_s = summary(times[n]), summary(cpu[n])
                # single-thread mode: process CPU time is the clock (it does not run while a co-tenant
                # holds the core); otherwise wall-clock time, with CPU time kept for reference
                s = dict(cpu_s if single_thread() else wall_s)
                s["clock"] = "process CPU time" if single_thread() else "wall"
                s["wall"] = wall_s
                s["cpu"] = cpu_s
                s["process"] = "own" if isolate else "shared"
                if wl == "W1":
                    s["us_per_node"] = s["median"] / W1_OPS * 1e6
                out[wl][n] = s
                extra = f", {s['us_per_node']:.2f} us/node" if wl == "W1" else ""
                other = (f"; wall median {wall_s['median'] * 1e3:.3f} ms" if single_thread()
                         else f"; CPU time median {cpu_s['median'] * 1e3:.3f} ms")
                log(f"  {wl} {n:8s} median {s['median'] * 1e3:9.3f} ms  (min {s['min'] * 1e3:.3f}, "
                    f"max {s['max'] * 1e3:.3f}, n={s['n']}){extra}{other}")
            quiet_rounds[wl] = quiet / repeats
            log(f"  {wl}: machine idle (no other runnable task) at the start of {quiet}/{repeats} rounds")
            if isolate:
                for n in names:
                    workers[n].call("drop")
            else:
                del steps
            del run
            gc.collect()
    finally:
        for w in workers.values():
            w.close()
    # a plain copy of one 4M-element array: the memory-bandwidth floor for W2-sized arrays
    if "W2" in workloads:
        src = np.random.default_rng(0).standard_normal(W2_N).astype(DTYPE)
        dst = np.empty_like(src)
        times = time_step(lambda: np.copyto(dst, src), repeats, warmup)
        s = summary(times)
        s["GBps"] = 2 * src.nbytes / s["median"] / 1e9
        out["W2_copy_reference"] = s
        log(f"  W2 reference: np.copyto of one 4M float32 array (16 MiB) median {s['median'] * 1e3:.3f} ms "
            f"({s['GBps']:.1f} GB/s read+write)")
    out["quiet_rounds"] = quiet_rounds
    return out


def measure_import(n, log):
    """``import derivgen`` in fresh processes with warm caches (kernel cache and .pyc files: the state
    after a first import), plus the same without a bytecode cache (every module compiled from source,
    as when PYTHONDONTWRITEBYTECODE is set and no .pyc exists). Wall and CPU time of the import."""
    code = ("import time; t0 = time.perf_counter(); c0 = time.process_time(); import {mod}; "
            "print(time.perf_counter() - t0, time.process_time() - c0)")
    def run(c, env=WARM_ENV, extra=()):
        p = subprocess.run([sys.executable, *extra, "-c", c], capture_output=True, text=True, cwd=ROOT,
                           check=True, env=env)
        return [float(v) for v in p.stdout.strip().splitlines()[-1].split()]

    run(code.format(mod="derivgen"))  # warm: .pyc files + kernel caches
    inproc, cpu, wall = [], [], []
    for _ in range(n):
        t0 = time.perf_counter()
        w, c = run(code.format(mod="derivgen"))
        wall.append(time.perf_counter() - t0)
        inproc.append(w)
        cpu.append(c)
    bare = []
    for _ in range(max(3, n // 2)):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - t0)
    res = {"import_wall_s": summary(inproc), "import_cpu_s": summary(cpu), "process_wall_s": summary(wall),
           "bare_python_s": summary(bare)}
    res["import_s"] = res["import_cpu_s"] if single_thread() else res["import_wall_s"]
    nopyc = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        for _ in range(max(3, n // 3)):
            nopyc.append(run(code.format(mod="derivgen"), env=env, extra=("-X", f"pycache_prefix={tmp}")))
    res["import_no_bytecode_cache_wall_s"] = summary([w for w, _ in nopyc])
    res["import_no_bytecode_cache_cpu_s"] = summary([c for _, c in nopyc])
    try:
        tcode = code.format(mod="torch")
        run(tcode)
        t = [run(tcode) for _ in range(3)]
        res["torch_import_wall_s"] = summary([w for w, _ in t])
        res["torch_import_cpu_s"] = summary([c for _, c in t])
    except Exception:  # noqa: BLE001
        pass
    log(f"  import derivgen (warm .pyc + kernel cache): median {res['import_wall_s']['median']:.3f} s wall, "
        f"{res['import_cpu_s']['median']:.3f} s CPU (wall min {res['import_wall_s']['min']:.3f}, "
        f"max {res['import_wall_s']['max']:.3f}, n={n}); whole process {res['process_wall_s']['median']:.3f} s wall "
        f"(bare python {res['bare_python_s']['median']:.3f} s)")
    log(f"  import derivgen without a bytecode cache (all modules compiled from source): median "
        f"{res['import_no_bytecode_cache_wall_s']['median']:.3f} s wall, "
        f"{res['import_no_bytecode_cache_cpu_s']['median']:.3f} s CPU"
        + (f"; import torch {res['torch_import_wall_s']['median']:.3f} s wall, "
           f"{res['torch_import_cpu_s']['median']:.3f} s CPU" if "torch_import_wall_s" in res else ""))
    return res


def _generate_once(tmp, table=None):
    cmd = [sys.executable, "-m", "derivgen", "generate", "--out", os.path.join(tmp, "gen")]
    if table:
        cmd += ["--table", table]
    import resource
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if p.returncode != 0:
        raise RuntimeError(f"`derivgen generate` failed: {p.stderr.strip()[-1500:]}")
    reported = None
    try:
        reported = float(p.stdout.strip().splitlines()[0].rsplit("(", 1)[1].split(" s)")[0])
    except (IndexError, ValueError):
        pass
    n_files = len([f for _, _, fs in os.walk(os.path.join(tmp, "gen")) for f in fs])
    return wall, cpu, reported, n_files


def measure_generate(n, log):
    """Wall time of ``python -m derivgen generate --out <empty temp dir>`` for the whole table. If the
    working-tree table does not build (it is being edited), the committed table (git HEAD) is timed
    instead and the result says so."""
    walls, cpus, reported = [], [], []
    table, note = None, "working-tree formulas.yaml"
    with tempfile.TemporaryDirectory() as tmp:
        try:
            _generate_once(tmp)
        except RuntimeError as exc:
            head = subprocess.run(["git", "show", "HEAD:formulas.yaml"], capture_output=True, text=True, cwd=ROOT)
            if head.returncode != 0:
                raise
            table = os.path.join(tmp, "formulas.yaml")
            with open(table, "w") as fh:
                fh.write(head.stdout)
            note = f"committed formulas.yaml (git HEAD); the working-tree table failed: {str(exc)[:300]}"
            log(f"  NOTE: {note}")
        for i in range(n):
            out = os.path.join(tmp, f"run{i}")
            os.makedirs(out)
            wall, cpu, rep, n_files = _generate_once(out, table)
            walls.append(wall)
            cpus.append(cpu)
            if rep is not None:
                reported.append(rep)
    res = {"wall_s": summary(walls), "cpu_s": summary(cpus), "files": n_files, "table": note}
    res["time_s"] = res["cpu_s"] if single_thread() else res["wall_s"]
    if reported:
        res["reported_s"] = summary(reported)
    log(f"  derivgen generate (subprocess, whole table, {n_files} files): median {res['wall_s']['median']:.2f} s "
        f"wall, {res['cpu_s']['median']:.2f} s CPU (wall min {res['wall_s']['min']:.2f}, max {res['wall_s']['max']:.2f}, "
        f"n={n})"
        + (f"; render+write as reported by the CLI {res['reported_s']['median']:.2f} s" if reported else ""))
    return res


def measure_cold(has_torch, n, log):
    res = {}
    run_child(["--_child-cold", "derivgen"])  # make sure the user kernel cache is current
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(WARM_ENV, DERIVGEN_CACHE_DIR=tmp, DERIVGEN_NO_CACHE="1")
        res["derivgen"] = run_child(["--_child-cold", "derivgen"], env=env)
        res["derivgen"]["cache_dir_files_after"] = sum(len(fs) for _, _, fs in os.walk(tmp))
    d = res["derivgen"]
    log(f"  derivgen cold (DERIVGEN_CACHE_DIR=<empty>, DERIVGEN_NO_CACHE=1): import {d['import_s']:.3f} s, "
        f"first fwd+bwd of `{COLD_EXPR}` on 8 float32: {d['first_s']:.3f} s wall ({d['first_cpu_s']:.3f} s CPU); second {d['second_s'] * 1e3:.3f} ms, "
        f"third {d['third_s'] * 1e3:.3f} ms")
    warm = [run_child(["--_child-cold", "derivgen"]) for _ in range(n)]
    res["derivgen_warm"] = {k: statistics.median(w[k] for w in warm) for k in ("import_s", "first_s", "second_s",
                                                                              "third_s", "first_cpu_s")}
    if all("numba_step" in w for w in warm):
        res["derivgen_warm"].update({k: statistics.median(w[k] for w in warm) for k in ("numba_step", "numba_step_s")})
    d = res["derivgen_warm"]
    log(f"  derivgen, warm kernel cache (median of {n} processes): import {d['import_s']:.3f} s, first fwd+bwd "
        f"{d['first_s']:.3f} s wall ({d['first_cpu_s']:.3f} s CPU); second {d['second_s'] * 1e3:.3f} ms, third {d['third_s'] * 1e3:.3f} ms")
    if "numba_step" in d:
        log(f"  derivgen: the first steps' kernels run as numpy expressions; Numba loads in step {d['numba_step']:.0f} "
            f"(its budget of interpreted calls spent), which takes {d['numba_step_s']:.3f} s")
    # the same expression on 1M elements runs fused (derivgen/engine/fusion.py): its kernels are
    # generated and compiled on first use, then loaded from the cache by later processes
    big = 1 << 20
    with tempfile.TemporaryDirectory() as cache_dir:
        env = dict(WARM_ENV, DERIVGEN_CACHE_DIR=cache_dir, BENCH_COLD_N=str(big))
        res["derivgen_fused_cold"] = run_child(["--_child-cold", "derivgen"], env=env)
        res["derivgen_fused_warm"] = run_child(["--_child-cold", "derivgen"], env=env)
    for key, what in (("derivgen_fused_cold", "empty kernel caches"), ("derivgen_fused_warm", "warm caches")):
        d = res[key]
        log(f"  derivgen fused, same expression on {big} float32 ({what}): first fwd+bwd {d['first_s']:.3f} s wall "
            f"({d['first_cpu_s']:.3f} s CPU); second {d['second_s'] * 1e3:.3f} ms, third {d['third_s'] * 1e3:.3f} ms")
    if has_torch:
        res["torch"] = run_child(["--_child-cold", "torch"])
        d = res["torch"]
        log(f"  torch fresh process: import {d['import_s']:.3f} s, first fwd+bwd {d['first_s'] * 1e3:.3f} ms; "
            f"second {d['second_s'] * 1e3:.3f} ms, third {d['third_s'] * 1e3:.3f} ms")
    for program in FIRST_STEP_PROGRAMS:
        for impl in ("derivgen", "torch") if has_torch else ("derivgen",):
            run_child(["--_child-first-step", impl, program])  # its kernel cache and .pyc files written
            runs = [run_child(["--_child-first-step", impl, program]) for _ in range(n)]
            d = res[f"first_step_{program}_{impl}"] = {
                k: statistics.median(r[k] for r in runs) for k in ("first_fwd_bwd_s", "first_step_s")}
            d["numba"] = any(r["numba"] for r in runs)
            log(f"  {impl} first training step of the {program} (fresh process, warm caches, median of {n}): "
                f"forward+backward {d['first_fwd_bwd_s'] * 1e3:.1f} ms, whole step {d['first_step_s'] * 1e3:.1f} ms"
                + (f"; Numba loaded: {d['numba']}" if impl == "derivgen" else ""))
    return res


# glibc: a fixed mmap threshold (which also turns off its dynamic raise) makes every buffer of 64 KiB
# or more its own mapping, returned to the OS on free, so RSS follows the live buffers even for the
# small arrays of W3 instead of being hidden in reused heap. Same setting for every implementation.
# derivgen's small warm-up must load Numba and the kernels, as it is there to keep them out of the
# measured step: without DERIVGEN_INTERPRETED_CALLS=0 its kernels would run as numpy expressions
# (derivgen/kernels/interpreted.py) and the full-size step would pay Numba's ~90 MiB import.
MEMORY_ENV = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536", DERIVGEN_INTERPRETED_CALLS="0")


MEMORY_WORKLOADS = ("W2", "W3", "W6")


def measure_memory(impls, log):
    res = {}
    for wl in MEMORY_WORKLOADS:
        res[wl] = {}
        for name in impls:
            if wl == "W6" and name == "numpy":
                continue
            try:
                res[wl][name] = run_child(["--_child-memory", wl, name], env=MEMORY_ENV)
            except Exception as exc:  # noqa: BLE001
                res[wl][name] = {"error": str(exc)[-500:]}
                log(f"  {wl} {name}: memory child failed: {str(exc)[-300:]}")
                continue
            m = res[wl][name]
            tm = (f", tracemalloc peak {m['tracemalloc_step_peak_mb']:.1f} MiB"
                  if "tracemalloc_step_peak_mb" in m else "")
            log(f"  {wl} {name:8s} first-step peak RSS above steady state {m['step_peak_mb']:8.1f} MiB{tm} "
                f"(inputs/params {m['inputs_mb']:.1f} MiB, process peak {m['process_peak_mb']:.0f} MiB)")
    log(f"  {'workload':8s} {'derivgen MiB':>12s} {'torch MiB':>10s} {'dg/torch':>9s}  (step peak RSS above steady state)")
    for wl in MEMORY_WORKLOADS:
        d, t = res[wl].get("derivgen", {}), res[wl].get("torch", {})
        if "step_peak_mb" in d and "step_peak_mb" in t:
            ratio = d["step_peak_mb"] / max(t["step_peak_mb"], 1e-3)
            res[wl]["vs_torch"] = ratio
            log(f"  {wl:8s} {d['step_peak_mb']:12.1f} {t['step_peak_mb']:10.1f} {ratio:8.2f}x  target <= 1.0x "
                f"{verdict(ratio, 1.0)}")
    log("  (W2/W3: first full-size step in a fresh process after a small same-rank warm-up; W6: the third "
        "step of a fresh LeNet-5 training loop; peak RSS via "
        f"{m.get('method', '?')}, MALLOC_MMAP_THRESHOLD_=65536; tracemalloc sees numpy buffers only)")
    return res


def measure_micro(modules, log):
    """Numba dispatcher overhead on tiny arrays and kernel throughput on 4M elements."""
    from derivgen.generated import kernels as K
    import numba
    res = {}

    @numba.njit(cache=False)
    def noop(out, a, b, z):
        return None

    torch = modules.get("torch")
    for n, number in ((8, 20000), (W2_N, 10)):
        rng = np.random.default_rng(5)
        g = rng.standard_normal(n).astype(DTYPE)
        r = (1 / (1 + np.exp(-rng.standard_normal(n)))).astype(DTYPE)
        out = np.empty_like(g)
        zero = DTYPE(0)
        k1d = K.sigmoid_backward_self.k1d
        f1d = K.sigmoid_forward.k1d
        kpar = getattr(K.sigmoid_backward_self, "k1d_parallel", None)
        fpar = getattr(K.sigmoid_forward, "k1d_parallel", None)
        noop(out, g, r, zero)
        k1d(out, g, r, zero)
        f1d(out, g, zero)
        cases = {
            "numba njit no-op (dispatch floor), 4 args": lambda: noop(out, g, r, zero),
            "sigmoid_backward 1d kernel, direct dispatcher call, preallocated out": lambda: k1d(out, g, r, zero),
            "sigmoid_backward via Elementwise wrapper (as nodes call it)": lambda: K.sigmoid_backward_self((g, r), ()),
            "numpy: g * r * (1 - r)": lambda: g * r * (1 - r),
            "numpy: one ufunc np.multiply(g, r)": lambda: np.multiply(g, r),
            "numpy: one ufunc np.multiply(g, r, out=out)": lambda: np.multiply(g, r, out=out),
            "sigmoid forward 1d kernel, direct, preallocated out": lambda: f1d(out, g, zero),
            "sigmoid forward via Elementwise.forward wrapper": lambda: K.sigmoid_forward((g,), ()),
            "numpy: 1 / (1 + np.exp(-x))": lambda: 1 / (1 + np.exp(-g)),
            "np.copyto(out, g)": lambda: np.copyto(out, g),
        }
        if n > 8 and kpar is not None:
            cases["sigmoid_backward 1d_parallel kernel (prange), direct, preallocated out"] = \
                lambda: kpar(out, g, r, zero)
        if n > 8 and fpar is not None:
            cases["sigmoid forward 1d_parallel kernel (prange), direct, preallocated out"] = \
                lambda: fpar(out, g, zero)
        if torch is not None:
            tg, tr = torch.from_numpy(g), torch.from_numpy(r)
            tout = torch.empty_like(tg)
            cases["torch.ops.aten.sigmoid_backward(g, r)"] = lambda: torch.ops.aten.sigmoid_backward(tg, tr)
            cases["torch.ops.aten.sigmoid_backward.grad_input(out=)"] = \
                lambda: torch.ops.aten.sigmoid_backward.grad_input(tg, tr, grad_input=tout)
            cases["torch.sigmoid(x)"] = lambda: torch.sigmoid(tg)
            cases["torch.mul(g, r)"] = lambda: torch.mul(tg, tr)
        key = f"n={n}"
        res[key] = {}

        for label, fn in cases.items():
            fn()
            sec = per_call(fn, number, repeat=5 if n == 8 else 3)
            res[key][label] = sec
        unit, scale = ("us", 1e6) if n == 8 else ("ms", 1e3)
        log(f"  {key} float32:")
        for label, sec in res[key].items():
            extra = ""
            if n != 8 and "no-op" not in label:
                two_in = any(k in label for k in ("backward", "multiply", "mul(", "g * r"))
                nbytes = n * 4 * (3 if two_in else 2)
                extra = f"   ({nbytes / sec / 1e9:5.1f} GB/s effective, {n / sec / 1e9:.2f} Gelem/s)"
            log(f"    {label:70s} {sec * scale:9.3f} {unit}{extra}")
    try:
        res["numba_threading_layer"] = numba.threading_layer()
    except ValueError:
        res["numba_threading_layer"] = "none initialised"
    res["numba_num_threads"] = numba.get_num_threads()
    log(f"  numba threading layer {res.get('numba_threading_layer')}, {res.get('numba_num_threads')} threads")
    return res


# ------------------------------------------------------------------------------------------------
# Busy cores: the same workloads with N other processes spinning beside the timed run


class busy_cores:
    """N child processes that each spin one core (``while True: pass``) while the block runs."""

    def __init__(self, n):
        self.n = n
        self.procs = []

    def __enter__(self):
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(self.n)]
        time.sleep(0.3)  # let them get scheduled before the first timing
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()
        self.procs = []


MODEL_LINE = re.compile(r"^(W\d+)\s+([\d.]+) \(min\s+([\d.]+)\)\s+([\d.]+) \(min\s+([\d.]+)\)\s+([\d.]+)x\s+([\d.]+)x")


def parse_models(text):
    """{workload: {derivgen_ms, torch_ms, vs_torch, vs_torch_min, ...}} from benchmarks/models.py's table."""
    out = {}
    for line in (text or "").splitlines():
        m = MODEL_LINE.match(line.strip())
        if m:
            wl, dmed, dmin, tmed, tmin, r, rmin = m.groups()
            out[wl] = {"derivgen_ms": float(dmed), "derivgen_min_ms": float(dmin), "torch_ms": float(tmed),
                       "torch_min_ms": float(tmin), "vs_torch": float(r), "vs_torch_min": float(rmin)}
    return out


BUSY_TARGET = 1.2  # a busy core may make derivgen/PyTorch at most 1.2x its idle value


def measure_busy(args, workloads, impls, modules, checks, repeats, warmup, idle, log):
    """W1-W4 (those requested) and W5 timed again with ``args.busy`` spinning processes beside; the
    ratios derivgen/PyTorch busy against idle. ``idle`` holds this run's idle timings and ratios."""
    res = {"busy_processes": args.busy, "idle": {}, "busy": {}}
    for wl, r in idle.get("ratios", {}).items():
        if "vs_torch" in r:
            res["idle"][wl] = {"vs_torch": r["vs_torch"], "vs_torch_min": r["vs_torch_min"],
                               "derivgen_ms": idle["timings"][wl]["derivgen"]["median"] * 1e3,
                               "torch_ms": idle["timings"][wl]["torch"]["median"] * 1e3,
                               "derivgen_max_ms": idle["timings"][wl]["derivgen"]["max"] * 1e3}
    models_only = "W5"
    idle_models = parse_models(idle.get("models"))
    if "W5" not in idle_models and "torch" in modules:
        log("  idle W5 (benchmarks/models.py --only W5)")
        idle_models = parse_models(measure_models(args, repeats, True, log, only=models_only))
    res["idle"].update(idle_models)
    with busy_cores(args.busy):
        log(f"  {args.busy} busy process(es) running beside the timed workloads")
        if workloads:
            timings = time_workloads(workloads, impls, modules, checks, repeats, warmup, log,
                                     isolate=not args.same_process)
            for wl, r in ratios(timings).items():
                if "vs_torch" in r:
                    res["busy"][wl] = {"vs_torch": r["vs_torch"], "vs_torch_min": r["vs_torch_min"],
                                       "derivgen_ms": timings[wl]["derivgen"]["median"] * 1e3,
                                       "torch_ms": timings[wl]["torch"]["median"] * 1e3,
                                       "derivgen_max_ms": timings[wl]["derivgen"]["max"] * 1e3}
        if "torch" in modules:
            res["busy"].update(parse_models(measure_models(args, repeats, True, log, only=models_only)))
    log(f"\n  derivgen/PyTorch (medians; by minima in brackets), idle and with {args.busy} busy core(s); "
        f"target: busy within {BUSY_TARGET}x of idle")
    log(f"  {'workload':8s} {'idle':>15s} {'busy':>15s} {'busy/idle':>9s}  {'dg ms idle->busy':>22s} "
        f"{'torch ms idle->busy':>22s}")
    for wl in sorted(set(res["idle"]) & set(res["busy"])):
        i, b = res["idle"][wl], res["busy"][wl]
        change = b["vs_torch"] / i["vs_torch"]
        b["busy_over_idle"] = change
        log(f"  {wl:8s} {i['vs_torch']:6.2f} ({i['vs_torch_min']:5.2f}) {b['vs_torch']:6.2f} ({b['vs_torch_min']:5.2f}) "
            f"{change:8.2f}x  {i['derivgen_ms']:9.3f} -> {b['derivgen_ms']:9.3f} {i['torch_ms']:9.3f} -> "
            f"{b['torch_ms']:9.3f}  {verdict(change, BUSY_TARGET)}")
    return res


# ------------------------------------------------------------------------------------------------
# W2 scaling: the same chain at 64k, 1M and 16M elements; the memory-bandwidth floor


W2_SCALING_SIZES = (1 << 16, 1 << 20, 1 << 24)
# Bytes one fused W2 step must move per element: the forward reads x, w, b (the loss is a sum, nothing
# is written), the backward reads x, w, b again and writes the three gradients; float32.
W2_FLOOR_BYTES_PER_ELEMENT = 9 * 4


def copy_bandwidth(n, repeats):
    """Read+write bytes per second of ``np.copyto`` on ``n`` float32 (median of ``repeats``, on the
    run's clock)."""
    src = np.random.default_rng(0).standard_normal(n).astype(DTYPE)
    dst = np.empty_like(src)
    clock = time.process_time if single_thread() else time.perf_counter
    times = []
    for i in range(max(repeats, 5) + 2):
        t0 = clock()
        np.copyto(dst, src)
        if i >= 2:  # two warm-up copies (page faults of dst)
            times.append(clock() - t0)
    s = summary(times)
    return 2 * src.nbytes / s["median"], s


def scaling_w2(impls, modules, repeats, log):
    """W2 at three sizes, derivgen and PyTorch interleaved; derivgen's time per element must stay flat
    (linear cost), and the floor is W2_FLOOR_BYTES_PER_ELEMENT bytes per element at copy bandwidth.
    The clock is the run's (process CPU time with --single-thread)."""
    names = [n for n in impls if n in ("derivgen", "torch")]
    res = {}
    for n in W2_SCALING_SIZES:
        steps = {}
        for name in names:
            impl = Autograd(name, modules[name])
            steps[name] = w2_autograd(impl, n)[1]
            for _ in range(2):
                steps[name]()
        reps = max(3, repeats if n < (1 << 24) else repeats // 2)
        times = {name: [] for name in names}
        clock = time.process_time if single_thread() else time.perf_counter
        for r in range(reps):
            for name in names[r % len(names):] + names[:r % len(names)]:
                gc.collect()
                t0 = clock()
                steps[name]()
                times[name].append(clock() - t0)
        del steps
        gc.collect()
        bw, copy = copy_bandwidth(n, reps)
        row = {name: summary(t) for name, t in times.items()}
        row["copy"] = copy
        row["copy_GBps"] = bw / 1e9
        row["floor_s"] = W2_FLOOR_BYTES_PER_ELEMENT * n / bw
        res[n] = row
    log(f"  {'elements':>10s} {'derivgen ms':>12s} {'ns/elem':>8s} {'torch ms':>10s} {'dg/torch':>9s} {'(by min)':>9s} "
        f"{'floor ms':>9s} {'dg/floor':>9s}")
    for n, row in res.items():
        d = row["derivgen"]
        t = row.get("torch")
        vt = f"{d['median'] / t['median']:9.2f} {d['min'] / t['min']:9.2f}" if t else f"{'n/a':>9s} {'n/a':>9s}"
        tm = f"{t['median'] * 1e3:10.3f}" if t else f"{'n/a':>10s}"
        log(f"  {n:>10d} {d['median'] * 1e3:12.3f} {d['median'] / n * 1e9:8.2f} {tm} {vt} "
            f"{row['floor_s'] * 1e3:9.3f} {d['median'] / row['floor_s']:8.2f}x")
    sizes = list(res)
    for a, b in zip(sizes, sizes[1:]):
        growth = res[b]["derivgen"]["median"] / res[a]["derivgen"]["median"]
        log(f"  derivgen {a} -> {b} elements ({b // a}x): time x{growth:.1f}")
    log(f"  floor: {W2_FLOOR_BYTES_PER_ELEMENT} bytes per element (forward reads x, w, b; backward reads them "
        f"again and writes 3 grads) at np.copyto bandwidth of the same size "
        f"({', '.join(format(r['copy_GBps'], '.1f') for r in res.values())} GB/s)")
    return {str(k): v for k, v in res.items()}


# ------------------------------------------------------------------------------------------------
# Report


def measure_models(args, repeats, has_torch, log, only=None):
    """W5/W6 (benchmarks/models.py) in a fresh process, so their thread settings are their own."""
    if not has_torch:
        log("  skipped: the model workloads are ratios to PyTorch, which is not installed")
        return None
    cmd = [sys.executable, os.path.join(HERE, "models.py"), "--repeats", str(repeats)]
    if only:
        cmd += ["--only", only]
    if args.single_thread:
        cmd.append("--single-thread")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    log(out.stdout.rstrip() + (("\n" + out.stderr[-2000:]) if out.returncode else ""))
    return out.stdout


def absolute_figures(res):
    """(target key, label, value, wall, CPU) of each absolute-time figure the run measured (seconds, medians)."""
    out = []
    if "import" in res:
        r = res["import"]
        out.append(("import", "import derivgen", r["import_s"]["median"], r["import_wall_s"]["median"],
                    r["import_cpu_s"]["median"]))
        if "import_no_bytecode_cache_wall_s" in r:
            w, c = r["import_no_bytecode_cache_wall_s"]["median"], r["import_no_bytecode_cache_cpu_s"]["median"]
            out.append(("import_cold", "import, no .pyc", w, w, c))
    if "cold" in res and "derivgen_warm" in res["cold"]:
        d = res["cold"]["derivgen_warm"]
        out.append(("first_use", "first fwd+bwd", d["first_s"], d["first_s"], d["first_cpu_s"]))
    if "generate" in res:
        r = res["generate"]
        out.append(("generate", "derivgen generate", r["time_s"]["median"], r["wall_s"]["median"],
                     r["cpu_s"]["median"]))
    return out


def verdict(value, target):
    return "PASS" if value <= target else "MISS"


def ratios(timings):
    out = {}
    for wl in ("W1", "W2", "W3", "W4"):
        t = timings.get(wl, {})
        if "derivgen" not in t:
            continue
        r = {}
        if "torch" in t:
            r["vs_torch"] = t["derivgen"]["median"] / t["torch"]["median"]
            r["vs_torch_min"] = t["derivgen"]["min"] / t["torch"]["min"]
            r["target"] = RATIO_TARGETS[wl]
            r["verdict"] = verdict(r["vs_torch"], RATIO_TARGETS[wl])
        if "numpy" in t:
            r["vs_numpy"] = t["derivgen"]["median"] / t["numpy"]["median"]
            r["vs_numpy_min"] = t["derivgen"]["min"] / t["numpy"]["min"]
        out[wl] = r
    return out


def print_tables(res, log):
    t = res["timings"]
    log(f"\nTimings (forward + backward, float32; median / min / max over the timed repeats; "
        f"{res['env'].get('clock', 'wall clock')})")
    log(f"{'workload':10s} {'impl':9s} {'median':>11s} {'min':>11s} {'max':>11s}  extra")
    for wl in ("W1", "W2", "W3", "W4"):
        for name, s in t.get(wl, {}).items():
            extra = f"{s['us_per_node']:.2f} us/node" if "us_per_node" in s else ""
            log(f"{wl:10s} {name:9s} {s['median'] * 1e3:8.3f} ms {s['min'] * 1e3:8.3f} ms {s['max'] * 1e3:8.3f} ms  {extra}")
    if "W2_copy_reference" in t:
        s = t["W2_copy_reference"]
        log(f"{'W2 copy':10s} {'numpy':9s} {s['median'] * 1e3:8.3f} ms {s['min'] * 1e3:8.3f} ms {s['max'] * 1e3:8.3f} ms  "
            f"{s['GBps']:.1f} GB/s (bandwidth reference)")
    log("\nRatios (time derivgen / other; lower is better) against the targets; the verdict uses "
        "the medians,\nthe min-based ratios show the least-disturbed runs")
    log(f"{'workload':10s} {'dg/torch':>9s} {'target':>7s} {'verdict':>8s} {'(by min)':>9s} {'dg/numpy':>9s} "
        f"{'(by min)':>9s}")
    na = f"{'n/a':>9s}"
    for wl, r in res["ratios"].items():
        vt = f"{r['vs_torch']:9.2f}" if "vs_torch" in r else na
        vtm = f"{r['vs_torch_min']:9.2f}" if "vs_torch_min" in r else na
        tg = f"<={r['target']:.2f}" if "target" in r else ""
        vd = r.get("verdict", "")
        vn = f"{r['vs_numpy']:9.2f}" if "vs_numpy" in r else na
        vnm = f"{r['vs_numpy_min']:9.2f}" if "vs_numpy_min" in r else na
        extra = ""
        if vd == "MISS":
            extra = f"  (median ratio {r['vs_torch'] / r['target']:.1f}x the target)"
        log(f"{wl:10s} {vt} {tg:>7s} {vd:>8s} {vtm} {vn} {vnm}{extra}")
    for key, label, v, w, c in absolute_figures(res):
        log(f"{label:22s} {v:6.3f} s  target <= {ABS_TARGETS[key]:.2f} s  {verdict(v, ABS_TARGETS[key])}   "
            f"(wall {w:.3f} s, CPU {c:.3f} s)")
    for key, msg in res.get("errors", {}).items():
        log(f"NOTE: section {key} failed: {msg.splitlines()[0][:300]}")
    for wl, info in res.get("checks", {}).items():
        for name, msg in info["failures"].items():
            if not name.endswith("_traceback"):
                log(f"NOTE: {wl} {name} not timed: {msg.splitlines()[0][:300]}")


def environment():
    import numba
    env = {"date": datetime.date.today().isoformat(), "python": platform.python_version(),
           "numpy": np.__version__, "numba": numba.__version__, "machine": platform.machine(),
           "cpu_count": os.cpu_count(), "platform": platform.platform()}
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    env["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        import derivgen
        env["derivgen"] = derivgen.__version__
    except Exception:  # noqa: BLE001
        pass
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "NUMBA_NUM_THREADS"):
        if var in os.environ:
            env[var] = os.environ[var]
    return env


W1_SCALING_OPS = (200, 2000, 20000)


def measure_w1_scaling(modules, repeats, log):
    """W1 at 200 / 2,000 / 20,000 ops: per-node microseconds of derivgen and PyTorch, interleaved round
    by round (median and min). A per-node cost that grows with the graph is a cost per live object
    (the cyclic GC walks every tracked object that survives), not per op."""
    names = [n for n in ("derivgen", "torch") if n in modules]
    out = {}
    log(f"  {'ops':>6}  " + "  ".join(f"{n + ' median':>16} {n + ' min':>13}" for n in names)
        + ("  dg/torch (median, min)" if len(names) == 2 else ""))
    for n_ops in W1_SCALING_OPS:
        steps = {n: w1_autograd(Autograd(n, modules[n]), n_ops=n_ops)[1] for n in names}
        for n in names:
            steps[n]()
        per_node = {n: [] for n in names}
        for r in range(repeats):
            for n in names[r % len(names):] + names[:r % len(names)]:
                gc.collect()
                c0 = time.process_time() if single_thread() else time.perf_counter()
                steps[n]()
                c1 = time.process_time() if single_thread() else time.perf_counter()
                per_node[n].append((c1 - c0) / n_ops * 1e6)
        row = {n: {"median_us": statistics.median(v), "min_us": min(v)} for n, v in per_node.items()}
        out[n_ops] = row
        line = f"  {n_ops:>6}  " + "  ".join(f"{row[n]['median_us']:>13.2f} us {row[n]['min_us']:>10.2f} us"
                                             for n in names)
        if len(names) == 2:
            line += (f"  {row['derivgen']['median_us'] / row['torch']['median_us']:.2f}, "
                     f"{row['derivgen']['min_us'] / row['torch']['min_us']:.2f}")
        log(line)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer repeats (5) and subprocess samples")
    p.add_argument("--repeats", type=int, help="timed repeats per workload (default 15, --quick 5)")
    p.add_argument("--json", metavar="PATH", help="write all results as JSON")
    p.add_argument("--plot", metavar="PATH", help="write a PNG bar chart of derivgen/PyTorch ratios")
    p.add_argument("--only", default="W1,W2,W3,W4,scaling,import,generate,cold,memory,micro,models,scaling_w2",
                   help="comma-separated sections to run (default: all)")
    p.add_argument("--no-torch", action="store_true", help="do not import PyTorch even if installed")
    p.add_argument("--single-thread", action="store_true",
                   help="everything on one thread (OPENBLAS/OMP/MKL/NUMBA_NUM_THREADS=1, torch.set_num_threads(1)) "
                        "and process CPU time as the clock: comparable numbers on a busy shared machine")
    p.add_argument("--wait-quiet", type=float, default=0.0, metavar="SECONDS",
                   help="before each timing round wait up to SECONDS for no other runnable task on the machine "
                        "(useful on shared machines; default 0: do not wait)")
    p.add_argument("--busy", type=int, default=0, metavar="N",
                   help="after the idle timings, time W1-W4 (those in --only) and W5 again with N processes "
                        "spinning beside, and compare the derivgen/PyTorch ratios with the idle ones")
    p.add_argument("--same-process", action="store_true",
                   help="time W1-W4 with every library imported in this one process, instead of one step "
                        "worker process per implementation")
    p.add_argument("--_child-memory", nargs=2, help=argparse.SUPPRESS)
    p.add_argument("--_child-steps", help=argparse.SUPPRESS)
    p.add_argument("--_child-cold", help=argparse.SUPPRESS)
    p.add_argument("--_child-first-step", nargs=2, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._child_memory:
        return child_memory(*args._child_memory)
    if args._child_cold:
        return child_cold(args._child_cold)
    if args._child_steps:
        return child_steps(args._child_steps)
    if args._child_first_step:
        return child_first_step(*args._child_first_step)

    if args.single_thread and not single_thread():
        # the thread counts must be set before numpy/numba/torch start their pools: run again
        env = dict(os.environ, **SINGLE_THREAD_ENV)
        argv_ = sys.argv[1:] if argv is None else list(argv)
        return subprocess.call([sys.executable, os.path.abspath(__file__), *argv_], env=env)
    repeats = args.repeats or (5 if args.quick else 15)
    warmup = 1 if args.quick else 2
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    workloads = [s for s in sections if s in RATIO_TARGETS]

    def log(msg=""):
        print(msg, flush=True)

    t_start = time.perf_counter()
    # (the timed steps run in step workers, each importing one library; here both are imported for the
    # gradient checks)
    torch = None if args.no_torch else import_torch()
    dg = import_derivgen()
    if getattr(dg, "_generated_error", None) is not None:
        sys.exit(f"derivgen imported without its generated ops ({dg._generated_error!r}); "
                 "run `python -m derivgen generate` first")
    modules = {"numpy": np, "derivgen": dg}
    if torch is not None:
        modules["torch"] = torch
    impls = ["derivgen", "numpy"] + (["torch"] if torch is not None else [])
    env = environment()
    env["single_thread"] = single_thread()
    env["clock"] = "process CPU time (single thread)" if single_thread() else "wall clock"
    env["processes"] = ("W1-W4: all implementations in one process" if args.same_process
                        else "W1-W4: one step worker process per implementation")
    if torch is not None:
        env["torch"] = torch.__version__
        env["torch_threads"] = torch.get_num_threads()
    env["loadavg_start"] = os.getloadavg()
    res = {"env": env, "repeats": repeats, "warmup": warmup, "targets": {**RATIO_TARGETS, **ABS_TARGETS}}
    log(f"derivgen benchmarks {env['date']}: python {env['python']}, numpy {env['numpy']}, numba {env['numba']}, "
        f"torch {env.get('torch', 'not installed')} ({env.get('torch_threads', '-')} threads), "
        f"{env['cpu_count']} cores{', ' + env['cpu'] if 'cpu' in env else ''}")
    log(f"repeats {repeats} (+{warmup} warm-up runs excluded); implementations: {', '.join(impls)}; "
        f"clock: {env['clock']}; {env['processes']}")

    if workloads:
        log("\n[1] gradient checks (before any timing)")
        res["checks"] = check_gradients(workloads, impls, modules, log)
        log("\n[2] timings")
        res["timings"] = time_workloads(workloads, impls, modules, res["checks"], repeats, warmup, log,
                                        args.wait_quiet, isolate=not args.same_process)
        res["ratios"] = ratios(res["timings"])
    extra = (("import", "[3] import time", lambda: measure_import(3 if args.quick else 9, log)),
             ("generate", "[4] derivgen generate", lambda: measure_generate(1 if args.quick else 5, log)),
             ("cold", "[5] cold first-use latency", lambda: measure_cold(torch is not None, 1 if args.quick else 3, log)),
             ("memory", "[6] peak memory (fresh subprocess per implementation)", lambda: measure_memory(impls, log)),
             ("micro", "[7] micro-benchmarks: dispatch overhead and kernel throughput", lambda: measure_micro(modules, log)),
             ("models", "[8] models: W5 two-layer net, W6 LeNet-5 step (benchmarks/models.py, its own process)",
              lambda: measure_models(args, repeats, torch is not None, log)),
             ("scaling", "[9] W1 scaling: microseconds per node at 200 / 2,000 / 20,000 ops (forward + backward)",
              lambda: measure_w1_scaling(modules, repeats, log)),
             ("scaling_w2", "[10] W2 scaling: 64k / 1M / 16M elements against the memory-bandwidth floor",
              lambda: scaling_w2(impls, modules, repeats, log)))
    for key, title, fn in extra:
        if key not in sections:
            continue
        log("\n" + title)
        try:
            res[key] = fn()
        except Exception as exc:  # noqa: BLE001 - report the failure, run the other sections
            res.setdefault("errors", {})[key] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            log(f"  FAILED: {res['errors'][key]}")

    if args.busy > 0:
        log(f"\n[10] busy cores: the workloads again with {args.busy} spinning process(es) beside")
        try:
            res["busy"] = measure_busy(args, workloads, impls, modules, res.get("checks", {}), repeats, warmup,
                                       res, log)
        except Exception as exc:  # noqa: BLE001 - report the failure
            res.setdefault("errors", {})["busy"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            log(f"  FAILED: {res['errors']['busy']}")

    if workloads or "import" in sections or "generate" in sections:
        res.setdefault("timings", {})
        res.setdefault("ratios", {})
        print_tables(res, log)
    res["total_s"] = time.perf_counter() - t_start
    env["loadavg_end"] = os.getloadavg()
    log(f"load average (1/5/15 min) at start {env['loadavg_start']}, at end "
        f"{tuple(round(v, 2) for v in env['loadavg_end'])} on {env['cpu_count']} cores"
        + ("  -- other processes were busy: expect noisy medians" if max(env['loadavg_end'][0],
                                                                       env['loadavg_start'][0]) > 0.5 else ""))
    log(f"\ntotal {res['total_s']:.0f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=1, default=str)
        log(f"wrote {args.json}")
    if args.plot:
        sys.path.insert(0, HERE)
        from plot import plot_ratios
        plot_ratios(res, args.plot)
        log(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
