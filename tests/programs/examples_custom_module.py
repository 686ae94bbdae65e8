"""Learning PyTorch with examples, steps 7-8: a custom nn.Module with scalar Parameters, then a dynamic
network whose depth changes per forward pass (Python's random) and reuses one parameter."""
import math
import random

import torch


class Polynomial3(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.1))
        self.b = torch.nn.Parameter(torch.tensor(-0.2))
        self.c = torch.nn.Parameter(torch.tensor(0.3))
        self.d = torch.nn.Parameter(torch.tensor(-0.1))

    def forward(self, x):
        return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

    def string(self):
        return f"y = {self.a.item():.2f} + {self.b.item():.2f} x + {self.c.item():.2f} x^2 + {self.d.item():.2f} x^3"


x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
model = Polynomial3()
print(model)
print([(n, p.shape, p.requires_grad) for n, p in model.named_parameters()])
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
for t in range(2000):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 500 == 499:
        print(t, f"{loss.item():.3g}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"Result: {model.string()}")


class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.0, dtype=torch.float64))
        self.b = torch.nn.Parameter(torch.tensor(0.8, dtype=torch.float64))
        self.c = torch.nn.Parameter(torch.tensor(0.0, dtype=torch.float64))
        self.d = torch.nn.Parameter(torch.tensor(-0.1, dtype=torch.float64))
        self.e = torch.nn.Parameter(torch.tensor(0.0, dtype=torch.float64))

    def forward(self, x):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        return (f"y = {self.a.item():.4f} + {self.b.item():.4f} x + {self.c.item():.4f} x^2 + "
                f"{self.d.item():.4f} x^3 + {self.e.item():.4f} x^4 ? + {self.e.item():.4f} x^5 ?")


random.seed(0)
x = torch.linspace(-math.pi, math.pi, 2000, dtype=torch.float64)
y = torch.sin(x)
model = DynamicNet()
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(3000):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 1000 == 999:
        print(t, f"{loss.item():.6f}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"Result: {model.string()}")
print(len(list(model.parameters())), model.e.grad is not None)
