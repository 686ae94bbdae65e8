"""Linear regression with nn.Linear, MSELoss and SGD on noisy data from a seeded NumPy generator."""
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(0)
x_train = np.linspace(0, 10, 50, dtype=np.float32).reshape(-1, 1)
y_train = (2.5 * x_train + 1.0 + rng.normal(0, 0.5, size=x_train.shape)).astype(np.float32)


class LinearRegression(nn.Module):
    def __init__(self, input_dim, output_dim):
        super(LinearRegression, self).__init__()
        self.linear = nn.Linear(input_dim, output_dim)

    def forward(self, x):
        return self.linear(x)


model = LinearRegression(1, 1)
with torch.no_grad():
    model.linear.weight.fill_(0.0)
    model.linear.bias.fill_(0.0)
print(model)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs = torch.from_numpy(x_train)
targets = torch.from_numpy(y_train)
print(inputs.shape, targets.dtype)
for epoch in range(300):
    outputs = model(inputs)
    loss = criterion(outputs, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if (epoch + 1) % 50 == 0:
        print(f"Epoch [{epoch + 1}/300], Loss: {loss.item():.4f}")
w, b = model.linear.weight.item(), model.linear.bias.item()
print(f"w = {w:.3f}, b = {b:.3f}")
with torch.no_grad():
    predicted = model(torch.tensor([[0.0], [5.0]])).numpy()
print(np.round(predicted, 2).tolist())
print(type(predicted).__name__, predicted.dtype)

X = torch.cat([torch.ones(50, 1), inputs], dim=1).double()
normal = torch.linalg.inv(X.T @ X) @ X.T @ targets.double()
print([round(v, 3) for v in normal.flatten().tolist()])
