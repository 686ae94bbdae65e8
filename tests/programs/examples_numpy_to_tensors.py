"""Learning PyTorch with examples, steps 1-2: fit y = sin(x) with a third-order polynomial by hand-written
gradient descent, first in NumPy, then with tensors (float64 in both, fixed starting coefficients)."""
import math

import numpy as np
import torch

x = np.linspace(-math.pi, math.pi, 2000)
y = np.sin(x)
a, b, c, d = 0.1, -0.2, 0.3, -0.1
learning_rate = 1e-6
for t in range(2000):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = np.square(y_pred - y).sum()
    if t % 400 == 399:
        print(t, f"{loss:.8f}")
    grad_y_pred = 2.0 * (y_pred - y)
    grad_a = grad_y_pred.sum()
    grad_b = (grad_y_pred * x).sum()
    grad_c = (grad_y_pred * x ** 2).sum()
    grad_d = (grad_y_pred * x ** 3).sum()
    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d
print(f"Result: y = {a:.6f} + {b:.6f} x + {c:.6f} x^2 + {d:.6f} x^3")

dtype = torch.float64
device = torch.device("cpu")
x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)
a = torch.tensor(0.1, device=device, dtype=dtype)
b = torch.tensor(-0.2, device=device, dtype=dtype)
c = torch.tensor(0.3, device=device, dtype=dtype)
d = torch.tensor(-0.1, device=device, dtype=dtype)
for t in range(2000):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum().item()
    if t % 400 == 399:
        print(t, f"{loss:.8f}")
    grad_y_pred = 2.0 * (y_pred - y)
    grad_a = grad_y_pred.sum()
    grad_b = (grad_y_pred * x).sum()
    grad_c = (grad_y_pred * x ** 2).sum()
    grad_d = (grad_y_pred * x ** 3).sum()
    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d
print(f"Result: y = {a.item():.6f} + {b.item():.6f} x + {c.item():.6f} x^2 + {d.item():.6f} x^3")
print(a.dtype, a.shape, y_pred.shape, x.device)
