"""A walk through derivgen's autograd graph, following the seed documents (placeholder, grows)."""
import derivgen as torch

x = torch.ones(3, requires_grad=True)
y = (x * x).sum()
print("y.grad_fn:", y.grad_fn, "name():", y.grad_fn.name())
