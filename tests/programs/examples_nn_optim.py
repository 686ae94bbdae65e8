"""Learning PyTorch with examples, steps 5-6: the polynomial as nn.Sequential(Linear, Flatten) trained by
hand with model.parameters(), then with torch.optim.RMSprop (weights set from fixed values; RMSprop
runs 600 steps, before its fixed-size steps start hopping around the optimum)."""
import math

import torch

x = torch.linspace(-math.pi, math.pi, 2000, dtype=torch.float64)
y = torch.sin(x)
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
print(xx.shape, xx.dtype)


def make_model():
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1)).double()
    with torch.no_grad():
        model[0].weight.copy_(torch.tensor([[0.2, -0.1, 0.05]]))
        model[0].bias.fill_(0.1)
    return model


model = make_model()
print(model)
loss_fn = torch.nn.MSELoss(reduction="sum")
learning_rate = 1e-6
for t in range(2000):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 400 == 399:
        print(t, f"{loss.item():.8f}")
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad
linear_layer = model[0]
print(f"Result: y = {linear_layer.bias.item():.6f} + {linear_layer.weight[:, 0].item():.6f} x + "
      f"{linear_layer.weight[:, 1].item():.6f} x^2 + {linear_layer.weight[:, 2].item():.6f} x^3")
print(loss.grad_fn, y_pred.grad_fn.name())

model = make_model()
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
for t in range(600):  # later steps hop around the optimum, where rounding decides each hop
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, f"{loss.item():.8f}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
linear_layer = model[0]
print(f"Result: y = {linear_layer.bias.item():.6f} + {linear_layer.weight[:, 0].item():.6f} x + "
      f"{linear_layer.weight[:, 1].item():.6f} x^2 + {linear_layer.weight[:, 2].item():.6f} x^3")
print(optimizer)
print(sorted(optimizer.state_dict()["state"][0].keys()), optimizer.state_dict()["param_groups"][0]["lr"])
