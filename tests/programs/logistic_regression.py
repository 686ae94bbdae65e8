"""Logistic regression: binary classification with sigmoid + BCELoss, then BCEWithLogitsLoss, and the
accuracy of thresholded predictions."""
import numpy as np
import torch
from torch import nn

rng = np.random.default_rng(1)
n = 200
x0 = rng.normal(loc=[-1.0, -1.0], scale=0.8, size=(n // 2, 2))
x1 = rng.normal(loc=[1.0, 1.0], scale=0.8, size=(n // 2, 2))
X = torch.tensor(np.concatenate([x0, x1]), dtype=torch.float32)
y = torch.cat([torch.zeros(n // 2), torch.ones(n // 2)]).unsqueeze(1)
print(X.shape, y.shape, y.sum().item())


class LogisticRegression(nn.Module):
    def __init__(self, n_inputs):
        super().__init__()
        self.linear = nn.Linear(n_inputs, 1)

    def forward(self, x):
        return torch.sigmoid(self.linear(x))


model = LogisticRegression(2)
nn.init.zeros_(model.linear.weight)
nn.init.constant_(model.linear.bias, 0.0)
criterion = nn.BCELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for epoch in range(100):
    y_pred = model(X)
    loss = criterion(y_pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if (epoch + 1) % 20 == 0:
        print(f"epoch: {epoch + 1}, loss = {loss.item():.4f}")

with torch.no_grad():
    y_predicted = model(X)
    y_predicted_cls = y_predicted.round()
    acc = y_predicted_cls.eq(y).sum() / float(y.shape[0])
    print(f"accuracy: {acc.item():.4f}")
    print(y_predicted_cls.dtype, acc.dtype, (y_predicted > 0.5).float().mean().item())

model2 = nn.Linear(2, 1)
with torch.no_grad():
    model2.weight.zero_()
    model2.bias.zero_()
loss_fn = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))
opt = torch.optim.Adam(model2.parameters(), lr=0.1)
for step in range(60):
    opt.zero_grad()
    loss = loss_fn(model2(X), y)
    loss.backward()
    opt.step()
print(f"{loss.item():.4f}", loss.grad_fn.name())
print(torch.round(model2.weight.detach(), decimals=2))
print(((model2(X) > 0) == y.bool()).float().mean())
