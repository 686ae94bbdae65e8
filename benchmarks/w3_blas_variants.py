"""W3's eight matrix products per step (784-256-128-10 MLP, batch 256, float32: three forward, five
backward; the input needs no gradient) timed in the ways derivgen could hand them to numpy's BLAS:

* ``plain``: ``a @ b`` on the operands as the backward formulas give them (transposes are views, so
  BLAS gets a transpose flag, no copy) -- what derivgen does;
* ``with_out``: the same into preallocated outputs (``np.matmul(..., out=)``), no allocation;
* ``transposed_weight_grads``: the three weight gradients computed as ``(g.T @ h).T``;
* ``contiguous_copies``: every operand copied contiguous first.

    OPENBLAS_NUM_THREADS=1 python benchmarks/w3_blas_variants.py

Rounds alternate the variants; process CPU time, medians and minima.
"""
import os, time, statistics
import numpy as np
rng = np.random.default_rng(0)
f = np.float32
x = rng.standard_normal((256, 784)).astype(f); W1 = rng.standard_normal((784, 256)).astype(f)
h1 = rng.standard_normal((256, 256)).astype(f); W2 = rng.standard_normal((256, 128)).astype(f)
h2 = rng.standard_normal((256, 128)).astype(f); W3 = rng.standard_normal((128, 10)).astype(f)
g3 = rng.standard_normal((256, 10)).astype(f); g2 = rng.standard_normal((256, 128)).astype(f); g1 = rng.standard_normal((256, 256)).astype(f)
prods = [(x, W1), (h1, W2), (h2, W3), (h2.T, g3), (g3, W3.T), (h1.T, g2), (g2, W2.T), (x.T, g1)]
outs = [np.empty((a.shape[0], b.shape[1]), f) for a, b in prods]
def plain():
    for a, b in prods: a @ b
def with_out():
    for (a, b), o in zip(prods, outs): np.matmul(a, b, out=o)
def transposed_weight_grads():
    # weight gradients as (g.T @ h).T: the product written in the other order, read back transposed
    for i, (a, b) in enumerate(prods):
        if i in (3, 5, 7):
            (b.T @ a.T).T
        else:
            a @ b
def contiguous_copies():
    for a, b in prods: np.ascontiguousarray(a) @ np.ascontiguousarray(b)
variants = [plain, with_out, transposed_weight_grads, contiguous_copies]
res = {v.__name__: [] for v in variants}
for v in variants:
    for _ in range(20): v()
for r in range(15):
    for v in variants[r % 4:] + variants[:r % 4]:
        c = time.process_time()
        for _ in range(10): v()
        res[v.__name__].append((time.process_time() - c) / 10 * 1e3)
print(f"load {os.getloadavg()[0]:.1f}; the 8 W3 products per step, ms (median / min), one thread")
for k, t in res.items(): print(f"  {k:26s} {statistics.median(t):6.3f} / {min(t):6.3f}")
