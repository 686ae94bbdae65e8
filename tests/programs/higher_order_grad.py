"""torch.autograd.grad: first and second derivatives with create_graph, Hessian-vector products,
gradients of non-scalar outputs with grad_outputs, allow_unused, retain_graph, and hooks."""
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x ** 3).sum()
(dy_dx,) = torch.autograd.grad(y, x, create_graph=True)
print(dy_dx)
(d2y,) = torch.autograd.grad(dy_dx.sum(), x)
print(d2y)

w = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
v = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
f = (w.sin() * w).sum()
g, = torch.autograd.grad(f, w, create_graph=True)
hvp, = torch.autograd.grad(g, w, grad_outputs=v)
print(torch.round(hvp, decimals=4))

a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(3.0, requires_grad=True)
out = a * a * b
ga, gb = torch.autograd.grad(out, (a, b), retain_graph=True)
print(ga, gb)
unused = torch.tensor(1.0, requires_grad=True)
print(torch.autograd.grad(out, [a, unused], allow_unused=True, retain_graph=True))
print(torch.autograd.grad(out, [a, unused], allow_unused=True, materialize_grads=True, retain_graph=True))
try:
    torch.autograd.grad(out, [a, unused])
except RuntimeError as e:
    print("RuntimeError:", e)

z = torch.tensor([1.0, 2.0], requires_grad=True)
seen = []
h = z.register_hook(lambda grad: seen.append(grad.clone()) or grad * 2)
(z * z).sum().backward()
print(seen, z.grad)
h.remove()
z.grad = None
(z * z).sum().backward()
print(z.grad)

p = torch.tensor([0.5, -0.5], requires_grad=True)
q = p.exp()
q.retain_grad()
q.sum().backward()
print(q.grad, p.grad, q.is_leaf, p.is_leaf)

x = torch.linspace(-1, 1, 5, requires_grad=True)
jac = torch.autograd.functional.jacobian(lambda t: t ** 2, x)
print(jac)
hess = torch.autograd.functional.hessian(lambda t: (t ** 3).sum(), x)
print(hess.diagonal())
print(torch.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (torch.tensor([0.3, 0.7], dtype=torch.float64, requires_grad=True),)))

with torch.autograd.set_detect_anomaly(True):
    r = torch.tensor([4.0], requires_grad=True)
    r.sqrt().backward()
print(r.grad)
