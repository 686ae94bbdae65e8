"""The micrograd-style sanity check: scalar expressions in float64, their values and gradients."""
import torch

x = torch.Tensor([-4.0]).double()
x.requires_grad = True
z = 2 * x + 2 + x
q = z.relu() + z * x
h = (z * z).relu()
y = h + q + q * x
y.backward()
xpt, ypt = x, y
print(ypt.data.item(), xpt.grad.item())
print(y.grad_fn.name(), y.dtype, x.type())

a = torch.Tensor([-4.0]).double()
b = torch.Tensor([2.0]).double()
a.requires_grad = True
b.requires_grad = True
c = a + b
d = a * b + b ** 3
c = c + c + 1
c = c + 1 + c + (-a)
d = d + d * 2 + (b + a).relu()
d = d + 3 * d + (b - a).relu()
e = c - d
f = e ** 2
g = f / 2.0
g = g + 10.0 / f
g.backward()
apt, bpt, gpt = a, b, g
tol = 1e-6
print(f"{gpt.data.item():.6f}", f"{apt.grad.item():.6f}", f"{bpt.grad.item():.6f}")
print(abs(gpt.data.item() - 24.70408163265306) < tol, abs(apt.grad.item() - 138.83381924198252) < tol)
print(g, a.grad, b.grad)

n = torch.tensor(0.8814, requires_grad=True)
o = torch.tanh(2.0 * n - 1.0)
o.backward()
print(f"{o.item():.4f}", f"{n.grad.item():.4f}")
