"""DataLoader over a TensorDataset: batches, the last short batch, drop_last, iteration, a training
epoch loop, and random_split sizes."""
import torch
from torch.utils.data import DataLoader, TensorDataset, random_split

features = torch.arange(20, dtype=torch.float32).reshape(10, 2)
targets = torch.arange(10) % 3
dataset = TensorDataset(features, targets)
print(len(dataset))
print(dataset[0])
print(dataset[9][0], dataset[9][1].item())

loader = DataLoader(dataset, batch_size=4)
print(len(loader))
for batch_idx, (xb, yb) in enumerate(loader):
    print(batch_idx, xb.shape, yb.tolist())

loader = DataLoader(dataset, batch_size=4, drop_last=True)
print(len(loader), [b[0].shape[0] for b in loader])

xb, yb = next(iter(DataLoader(dataset, batch_size=3)))
print(xb)
print(yb, yb.dtype)

model = torch.nn.Linear(2, 3)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.1, -0.1], [0.0, 0.05], [-0.05, 0.1]]))
    model.bias.zero_()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = torch.nn.CrossEntropyLoss()
for epoch in range(3):
    total = 0.0
    for xb, yb in DataLoader(dataset, batch_size=5, shuffle=False):
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(f"epoch {epoch}: {total:.4f}")

g = torch.Generator().manual_seed(0)
train, val = random_split(dataset, [8, 2], generator=g)
print(len(train), len(val), type(train).__name__)
train, val = random_split(dataset, [0.7, 0.3], generator=torch.Generator().manual_seed(1))
print(len(train), len(val))
shuffled = [int(t) for _, yb in DataLoader(dataset, batch_size=10, shuffle=True) for t in yb]
print(sorted(shuffled) == sorted(targets.tolist()))
