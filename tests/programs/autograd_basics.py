"""Automatic differentiation with torch.autograd: a one-layer network, its graph, gradients, disabling
tracking, and Jacobian-vector products."""
import numpy as np
import torch

x = torch.ones(5)
y = torch.zeros(3)
w = torch.tensor(np.linspace(-1.0, 1.0, 15).reshape(5, 3), dtype=torch.float32, requires_grad=True)
b = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")
print(z.grad_fn.name(), loss.grad_fn.name(), [n.name() for n, _ in z.grad_fn.next_functions])

loss.backward()
print(w.grad)
print(b.grad)
print(f"loss = {loss.item():.6f}")

z = torch.matmul(x, w) + b
print(z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad)
z = torch.matmul(x, w) + b
z_det = z.detach()
print(z_det.requires_grad)

inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")

try:
    y = (inp * 2).sum()
    y.backward()
    y.backward()
except RuntimeError as e:
    print(type(e).__name__, str(e).split(".")[0])

try:
    torch.ones(2, requires_grad=True).sum().backward(torch.ones(2))
except RuntimeError as e:
    print(type(e).__name__, e)

try:
    (torch.ones(2, requires_grad=True) * 2).backward()
except RuntimeError as e:
    print(type(e).__name__, e)
