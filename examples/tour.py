"""A guided walk through derivgen's autograd graph, following the seed documents.

Run:  python examples/tour.py
Every line printed is what the same program prints under PyTorch (with `derivgen::` in place of
`torch::` for the hand-written accumulator node).
"""
import derivgen as torch


def section(title):
    print()
    print(f"== {title} " + "=" * max(0, 70 - len(title)))


section("1. The node behind grad_fn")
x = torch.ones(3, requires_grad=True)
y = (x * x).sum()
print("y.grad_fn               ->", y.grad_fn)
print("y.grad_fn.name()        ->", y.grad_fn.name())
mul = y.grad_fn.next_functions[0][0]
print("mul node                ->", mul.name(), "with", len(mul.next_functions), "edges")
a, b = (n for n, _ in mul.next_functions)
print("edge targets            ->", a.name())
print("one accumulator, twice  ->", a is b, "; its .variable is x:", a.variable is x)
print("MulBackward0 saved      -> _saved_self is x:", mul._saved_self is x, "; _saved_other is x:", mul._saved_other is x)
print("the formula it runs     ->")
print("   " + type(mul).__doc__.strip().splitlines()[2].strip())

section("2. Edges to constants: (None, 0)")
z = x * 2
print("(x * 2).grad_fn.next_functions ->", [(n.name() if n else None, k) for n, k in z.grad_fn.next_functions])
print("the wrapped 2 is saved         ->", z.grad_fn._saved_other)

section("3. Several outputs, one node: split and output_nr")
x = torch.arange(6.0, requires_grad=True)
lo, hi = x.split(3)
print("lo.grad_fn is hi.grad_fn ->", lo.grad_fn is hi.grad_fn)
print("lo.output_nr, hi.output_nr ->", lo.output_nr, hi.output_nr)
edge = (hi * 2).sum().grad_fn.next_functions[0][0].next_functions
print("edges of MulBackward0    ->", [(n.name() if n else None, k) for n, k in edge])

section("4. Sequence numbers order the backward pass")
x = torch.ones(3, requires_grad=True)
a, b = x * 2, x * 3
c = a + b
y = c.sum()
for name, t in (("a", a), ("b", b), ("c", c), ("y", y)):
    print(f"{name}: {t.grad_fn.name():14s} _sequence_nr() = {t.grad_fn._sequence_nr()}")
acc = c.grad_fn.next_functions[0][0].next_functions[0][0]
print("accumulator:", acc.name(), acc._sequence_nr(), "(UINT64_MAX: runs as soon as it is ready)")
order = []
for t in (a, b, c, y):
    t.grad_fn.register_prehook(lambda g, n=t.grad_fn.name(): order.append(n))
y.backward()
print("backward ran, highest sequence number first:", " -> ".join(order))
print("x.grad =", x.grad)

section("5. Calling nodes by hand (the blog's walk)")
torch.manual_seed(6)
x = torch.randn(4, 4, requires_grad=True)
w = torch.randn(4, 4, requires_grad=True)
l = (x * w).sum()
back_sum = l.grad_fn
dz = back_sum(torch.tensor(1.))
back_mul = back_sum.next_functions[0][0]
dx, dw = back_mul(dz)
back_mul.next_functions[0][0](dx)
back_mul.next_functions[1][0](dw)
print("x.grad equals w:", bool((x.grad == w).all()), "; w.grad equals x:", bool((w.grad == x).all()))

section("6. unbind: one UnbindBackward0, two slots")
a, b = torch.randn(2, requires_grad=True).unbind()
c = a + b
print(c.grad_fn.next_functions)

section("7. In-place ops and the version counter")
x = torch.ones(3, requires_grad=True)
b = x + 0
c = b * b
b.add_(1)
print("b._version =", b._version, "; b.grad_fn =", b.grad_fn, "(history rewritten)")
try:
    c.sum().backward()
except RuntimeError as err:
    print("RuntimeError:", str(err)[:150], "...")

section("8. Gradients of gradients from the same table")
x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
y = (x.sin() * x).sum()
(g,) = torch.autograd.grad(y, x, create_graph=True)
print("dy/dx   =", g, "  (its grad_fn is", g.grad_fn.name() + ")")
(h,) = torch.autograd.grad(g.sum(), x)
print("d2y/dx2 =", h)

section("9. Whole-graph fusion on large arrays")
import numpy as np  # noqa: E402
from derivgen.engine import fusion  # noqa: E402

n = 1 << 20
x, w, b = (torch.randn(n, requires_grad=True) for _ in range(3))
y = (x * w + b).sigmoid() * x.tanh() + (-x * x).exp()
print("y is deferred:", y._lazy, "; graph as eager:", y.grad_fn.name(),
      [f.name() for f, _ in y.grad_fn.next_functions])
y.sum().backward()  # one fused forward loop, one fused backward loop
xs, ws, bs = (t.detach().numpy().astype(np.float64) for t in (x, w, b))
s, t = 1 / (1 + np.exp(-(xs * ws + bs))), np.tanh(xs)
expected = s * (1 - s) * ws * t + s * (1 - t * t) - 2 * xs * np.exp(-xs * xs)
print("fused x.grad matches the float64 formula:", bool(np.allclose(x.grad.numpy(), expected, rtol=1e-4, atol=1e-5)))
print("fused kernel modules used:", len(fusion._MODULES), "(compiled on first use, then loaded from the disk cache)")
