#!/usr/bin/env python
"""Profile derivgen's forward and backward paths on W1 (2,000 tiny ops) and W2 (4M-element chain),
and on request W3 (MLP step) and W4 (broadcast + reduction): ``--only W1,W2,W3,W4,micro``.

    python benchmarks/profile_derivgen.py              # cProfile tables + per-component micro-costs
    python benchmarks/profile_derivgen.py --steps 20   # more profiled steps

Prints, for each workload and phase (forward / backward), the functions with the most own time
(cProfile ``tottime``) as a share of the phase, with calls and microseconds per call, then a breakdown
of what one tiny op costs (binding, kernel wrapper, kernel call, node creation, Tensor creation) next
to numpy and PyTorch. cProfile adds its own per-call overhead, so shares matter more than absolute
numbers; the un-profiled phase times are printed too. Nothing here is used by the tests.
"""
import argparse
import cProfile
import gc
import os
import pstats
import statistics
import sys
import time

import numpy as np

# times compiled kernels: no interpreted first calls (derivgen/kernels/interpreted.py), which would
# put numpy-expression calls and Numba's import into the first timed repeats
os.environ.setdefault("DERIVGEN_INTERPRETED_CALLS", "0")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402


def _short(func):
    filename, line, name = func
    if filename == "~":
        return name
    parts = filename.replace("\\", "/").split("/")
    for anchor in ("derivgen", "generated", "numba", "numpy"):
        if anchor in parts:
            i = len(parts) - 1 - parts[::-1].index(anchor)
            return f"{'/'.join(parts[i:])}:{line}({name})"
    return f"{parts[-1]}:{line}({name})"


def profile_phase(fn, setup, steps):
    """cProfile ``fn`` over ``steps`` calls (``setup`` before each, not profiled)."""
    prof = cProfile.Profile()
    for _ in range(steps):
        arg = setup()
        gc.collect()
        prof.enable()
        fn(arg)
        prof.disable()
    return pstats.Stats(prof)


def report(stats, title, steps, top, per_unit=None):
    total = stats.total_tt
    print(f"\n### {title}: {total / steps * 1e3:.2f} ms per step under cProfile ({steps} steps)")
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    print(f"{'own %':>6s} {'cum %':>6s} {'calls/step':>10s} {'own us/call':>11s}  function")
    for func, (cc, nc, tt, ct, _callers) in rows:
        print(f"{tt / total * 100:6.1f} {ct / total * 100:6.1f} {nc / steps:10.0f} {tt / nc * 1e6:11.2f}  {_short(func)}")
    if per_unit:
        print(f"(per node: {total / steps / per_unit * 1e6:.2f} us under cProfile)")


def phase_times(step_forward, clear, repeats):
    fwd, bwd = [], []
    for _ in range(repeats):
        clear()
        gc.collect()
        t0 = time.perf_counter()
        loss = step_forward()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        fwd.append(t1 - t0)
        bwd.append(t2 - t1)
    return statistics.median(fwd), statistics.median(bwd)


def profile_workload(name, dg, steps, top):
    modules = {"numpy": np, "derivgen": dg}
    impl = bench.Autograd("derivgen", dg)
    nodes = None
    if name == "W1":
        params, step = bench.w1_autograd(impl)
        nodes = bench.W1_OPS + 1
    elif name == "W2":
        params, step = bench.w2_autograd(impl)
    elif name == "W3":
        params, step, used = bench.w3_autograd(impl)
        print(f"\n(W3 spelling: {used})")
    else:
        params, step = bench.w4_autograd(impl)
    del modules
    plist = list(params.values())

    def clear():
        for p in plist:
            p.grad = None

    for _ in range(3):
        step()
    f, b = phase_times(step.forward, clear, max(5, steps))
    print(f"\n## {name} derivgen, un-profiled medians: forward {f * 1e3:.2f} ms, backward {b * 1e3:.2f} ms"
          + (f"  ({f / bench.W1_OPS * 1e6:.2f} + {b / bench.W1_OPS * 1e6:.2f} us per node)" if name == "W1" else ""))

    def fwd_setup():
        clear()
        return None

    st = profile_phase(lambda _: step.forward(), fwd_setup, steps)
    report(st, f"{name} forward", steps, top, nodes)

    def bwd_setup():
        clear()
        return step.forward()

    st = profile_phase(lambda loss: loss.backward(), bwd_setup, steps)
    report(st, f"{name} backward", steps, top, nodes)


def per_call(fn, number=20000, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best * 1e6


def micro_costs(dg, torch):
    """What one tiny (8-element) op costs, piece by piece (best of 5 x 20,000 calls: robust to load)."""
    from derivgen.generated import kernels as K
    from derivgen.generated import ops as O
    from derivgen.ops import binding as B
    from derivgen.core import node as N
    from derivgen.core import tensor as TT
    a = np.linspace(-1, 1, 8).astype(np.float32)
    b = np.linspace(1, 2, 8).astype(np.float32)
    x = dg.from_numpy(a.copy()).requires_grad_(True)
    y = dg.from_numpy(b.copy()).requires_grad_(True)
    h = x * y                      # a non-leaf, as inside a chain
    xc = dg.from_numpy(a.copy())
    yc = dg.from_numpy(b.copy())
    out = np.empty_like(a)
    zero = np.float32(0)
    rows = []

    def add(label, fn, number=20000):
        fn()
        rows.append((label, per_call(fn, number)))

    mul_rows = getattr(O, "_mul_rows", None)
    add("derivgen  h * y  (operator on a non-leaf: bind + kernel + node + Tensor)", lambda: h * y)
    add("derivgen  dg.mul(h, y)  (public function)", lambda: dg.mul(h, y))
    add("derivgen  ops.mul_Tensor(h, y)  (row function: kernel + node, no binding)", lambda: O.mul_Tensor(h, y))
    if mul_rows is not None:
        add("derivgen    binding.bind(mul.Tensor row, (h, y), {})  (argument binding only)",
            lambda: B.bind(mul_rows[0], (h, y), {}))
    add("derivgen    K.mul_Tensor_forward.forward((h, y), ())  (Elementwise wrapper + kernel)",
        lambda: K.mul_Tensor_forward.forward((h, y), ()))
    add("derivgen    K.mul_Tensor_forward(arrays) (backward-side wrapper + kernel)",
        lambda: K.mul_Tensor_forward((a, b), ()))
    add("derivgen      mul_Tensor_forward.k1d(out, a, b, 0)  (numba dispatcher + loop only)",
        lambda: K.mul_Tensor_forward.k1d(out, a, b, zero))
    add("derivgen    MulBackward0(edges, meta) + 2 SavedVariable  (node creation)", lambda: _make_node(O, N, h, y))
    add("derivgen      MulBackward0(edges, meta)  (no saved values)", lambda: _make_bare_node(O, N, h, y))
    add("derivgen      SavedVariable(t)", lambda: N.SavedVariable(y))
    add("derivgen      next_sequence_nr()  (thread-local counter)", N.next_sequence_nr)
    add("derivgen      gradient_edge(non-leaf) / gradient_edge(leaf)",
        lambda: (N.gradient_edge(h), N.gradient_edge(y)))
    add("derivgen      any_requires_grad(h, y)", lambda: TT.any_requires_grad(h, y))
    add("derivgen      Tensor._make(array, grad_fn, 0)", lambda: TT.Tensor._make(a, None, 0))
    add("derivgen  h.sigmoid()  (requires_grad)", lambda: h.sigmoid())
    for label, fn in (("h.sin()", lambda: h.sin()), ("h + y", lambda: h + y), ("h - y", lambda: h - y),
                      ("h.pow(2)", lambda: h.pow(2)), ("h.clamp(min=0)", lambda: h.clamp(min=0)),
                      ("h.sum()", lambda: h.sum())):
        add(f"derivgen  {label}  (requires_grad)", fn)
    # the floor a recorded op cannot go below in CPython: its pieces, each at its cheapest
    entry = K.sin_forward._entry[a.dtype]
    add("floor     np.empty((8,), float32)  (the result's array)", lambda: np.empty(a.shape, a.dtype))
    add("floor     compiled sin entry point, no typing  (the kernel)", lambda: entry[0](out, a, entry[1]))
    add("floor     a Python call of a 1-argument function  (the op's frame)", lambda: _noop(h))
    add("derivgen  xc * yc  (no grad: bind + kernel + Tensor)", lambda: xc * yc)
    add("numpy     a * b", lambda: a * b)
    add("numpy     np.multiply(a, b, out=out)", lambda: np.multiply(a, b, out=out))
    add("numpy     1 / (1 + np.exp(-a))", lambda: 1 / (1 + np.exp(-a)))
    if torch is not None:
        tx = torch.from_numpy(a.copy()).requires_grad_(True)
        ty = torch.from_numpy(b.copy()).requires_grad_(True)
        th = tx * ty
        tc = torch.from_numpy(a.copy())
        add("torch     th * ty  (requires_grad: dispatch + kernel + node)", lambda: th * ty)
        add("torch     tc * tc  (no grad)", lambda: tc * tc)
        add("torch     th.sigmoid()  (requires_grad)", lambda: th.sigmoid())
        for label, fn in (("th.sin()", lambda: th.sin()), ("th + ty", lambda: th + ty), ("th - ty", lambda: th - ty),
                          ("th.pow(2)", lambda: th.pow(2)), ("th.clamp(min=0)", lambda: th.clamp(min=0)),
                          ("th.sum()", lambda: th.sum())):
            add(f"torch     {label}  (requires_grad)", fn)

    # backward through the engine, per node: a chain of 64 muls by a leaf, then sum
    def chain_backward(x0, y0, n=64):
        def run():
            x0.grad = None
            y0.grad = None
            hh = x0
            for _ in range(n):
                hh = hh * y0
            loss = hh.sum()
            t0 = time.perf_counter()
            loss.backward()
            return time.perf_counter() - t0
        run()
        return min(run() for _ in range(200)) / (n + 1) * 1e6

    rows.append(("derivgen  engine backward per node (chain of 64 x MulBackward0, 64 grads summed into one leaf)",
                 chain_backward(x, y)))
    if torch is not None:
        rows.append(("torch     engine backward per node (same chain)", chain_backward(tx, ty)))
    print("\n## Per-op micro-costs on 8-element float32 tensors (best of 5 x 20,000 calls, microseconds per call)")
    for label, us in rows:
        print(f"  {us:8.2f} us  {label}")


def _noop(x):
    return x


def _make_bare_node(O, N, x, y):
    return O.MulBackward0((O._fn(x), O._fn(y)), (O._nr(x), O._nr(y)), ((x._array.shape, x._array.dtype),
                                                                     (y._array.shape, y._array.dtype)), O._LIKE_FIRST_INPUT)


def _make_node(O, N, x, y):
    node = O.MulBackward0((O._fn(x), O._fn(y)), (O._nr(x), O._nr(y)), ((x._array.shape, x._array.dtype),
                                                                     (y._array.shape, y._array.dtype)),
                          O._LIKE_FIRST_INPUT)
    node._sv_self = N.SavedVariable(x)
    node._sv_other = N.SavedVariable(y)
    return node


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--top", type=int, default=22)
    p.add_argument("--only", default="W1,W2,micro")
    args = p.parse_args(argv)
    dg = bench.import_derivgen()
    torch = bench.import_torch()
    only = args.only.split(",")
    for wl in ("W1", "W2", "W3", "W4"):
        if wl in only:
            profile_workload(wl, dg, args.steps if wl == "W1" else max(3, args.steps // 2), args.top)
    if "micro" in only:
        micro_costs(dg, torch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
