"""An MLP classifier on synthetic three-class data: CrossEntropyLoss, Adam, mini-batches by slicing,
accuracy with argmax / eq / sum / item, and weights copied in from a fixed NumPy generator."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(42)
N, D, K = 60, 2, 3
X = np.zeros((N * K, D), dtype=np.float32)
y = np.zeros(N * K, dtype=np.int64)
for j in range(K):
    ix = range(N * j, N * (j + 1))
    r = np.linspace(0.0, 1, N)
    t = np.linspace(j * 4, (j + 1) * 4, N) + rng.normal(size=N) * 0.2
    X[ix] = np.c_[r * np.sin(t), r * np.cos(t)]
    y[ix] = j
X = torch.from_numpy(X)
y = torch.from_numpy(y)
print(X.shape, y.shape, y.dtype, torch.bincount(y), y.unique(return_counts=True)[1])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 3)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


model = Net()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, size=tuple(p.shape)).astype(np.float32)))
print(model)
print(sum(p.numel() for p in model.parameters() if p.requires_grad))

criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
batch_size = 36
for epoch in range(30):
    perm = torch.arange(X.shape[0]).flip(0) if epoch % 2 else torch.arange(X.shape[0])
    running = 0.0
    for i in range(0, X.shape[0], batch_size):
        idx = perm[i:i + batch_size]
        xb, yb = X[idx], y[idx]
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
        running += loss.item() * xb.size(0)
    if (epoch + 1) % 10 == 0:
        print(f"epoch {epoch + 1}: loss {running / X.shape[0]:.3f}")

model.eval()
with torch.no_grad():
    logits = model(X)
    pred = logits.argmax(dim=1)
    correct = (pred == y).sum().item()
    print(f"accuracy: {100 * correct / len(y):.1f}%", type(correct).__name__)
    correct2 = (logits.argmax(1) == y).type(torch.float).sum().item()
    print(correct2, correct == int(correct2))
    probs = F.softmax(logits, dim=1)
    print(probs.shape, bool(torch.allclose(probs.sum(1), torch.ones(len(y)))))
    _, top = torch.max(logits, 1)
    print(torch.equal(top, pred), pred[:5].tolist() == top[:5].tolist())
    loss_none = F.cross_entropy(logits, y, reduction="none")
    print(loss_none.shape, f"{loss_none.mean().item():.3f}", f"{F.nll_loss(F.log_softmax(logits, 1), y).item():.3f}")
