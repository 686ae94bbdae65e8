"""Fit a cubic to sin(x) on [-pi, pi] with plain tensors and ``optim.SGD`` (no ``nn.Module``).

    python examples/polynomial_fit.py           # derivgen
    python examples/polynomial_fit.py --torch   # the same program on PyTorch: the same printed losses

Four scalar tensors with ``requires_grad`` are the coefficients; each step computes the mean squared
error, backpropagates, and lets SGD with momentum (its learning rate halved every 500 steps by
``StepLR``) update them in place.
"""
import argparse
import importlib
import math

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--torch", action="store_true", help="run on PyTorch instead of derivgen")
parser.add_argument("--steps", type=int, default=2000)
args = parser.parse_args()
torch = importlib.import_module("torch" if args.torch else "derivgen")

n = 200
x = torch.arange(n, dtype=torch.float64) * (2 * math.pi / (n - 1)) - math.pi
y = torch.sin(x)

a, b, c, d = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (0.1, -0.2, 0.05, 0.3))
optimizer = torch.optim.SGD([a, b, c, d], lr=1e-3, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=500, gamma=0.5)

for step in range(1, args.steps + 1):
    prediction = a + b * x + c * x ** 2 + d * x ** 3
    loss = ((prediction - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    if step % 200 == 0:
        print(f"step {step:4d}  lr {scheduler.get_last_lr()[0]:.6f}  loss {loss.item():.10f}")

print(f"y = {a.item():.6f} + {b.item():.6f} x + {c.item():.6f} x^2 + {d.item():.6f} x^3")
