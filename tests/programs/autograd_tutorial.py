"""A gentle introduction to torch.autograd: gradients of a function of two leaves, the DAG, freezing."""
import torch
from torch import nn

a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)
Q = 3 * a ** 3 - b ** 2
external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)
print(9 * a ** 2 == a.grad)
print(-2 * b == b.grad)
print(a.grad, b.grad)

x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)
a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")

model = nn.Sequential(nn.Linear(10, 4), nn.ReLU(), nn.Linear(4, 2))
for param in model.parameters():
    param.requires_grad = False
model[2] = nn.Linear(4, 3)
print([p.requires_grad for p in model.parameters()])
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
out = model(torch.ones(1, 10)).sum()
out.backward()
print(model[0].weight.grad, model[2].weight.grad.shape)

x = torch.tensor(3.0, requires_grad=True)
y = x ** 2 + 2 * x
y.backward()
print(x.grad)
x.grad.zero_()
y = x ** 3
y.backward()
print(x.grad)

w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
loss = (w * w).sum()
loss.backward()
print(w.grad)
with torch.no_grad():
    w -= 0.1 * w.grad
print(w, w.requires_grad, w.is_leaf)
w.grad = None
print(w.grad)

v = torch.tensor([1.0, -1.0], requires_grad=True)
u = v.detach()
print(u.requires_grad, u.is_leaf, v.data, type(v.data) is torch.Tensor)
v.data.mul_(3)
print(v)
