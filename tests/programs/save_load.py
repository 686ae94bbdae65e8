"""Saving and loading: a model's state_dict and an optimizer's through torch.save / torch.load to a
temporary file, load_state_dict into a fresh model, a checkpoint dict, and strict=False."""
import os
import tempfile

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


torch.manual_seed(0)
model = Net()
x = torch.linspace(-1, 1, 12).reshape(4, 3)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for _ in range(3):
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
print(list(model.state_dict().keys()))
print({k: tuple(v.shape) for k, v in model.state_dict().items()})
print(model.state_dict()["bn.num_batches_tracked"])

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "model_weights.pth")
    torch.save(model.state_dict(), path)
    model2 = Net()
    result = model2.load_state_dict(torch.load(path, weights_only=True))
    print(result)
    model.eval()
    model2.eval()
    with torch.no_grad():
        print(torch.equal(model(x), model2(x)))

    ckpt = os.path.join(d, "checkpoint.tar")
    torch.save({"epoch": 3, "model_state_dict": model.state_dict(), "optimizer_state_dict": opt.state_dict(),
                "loss": 0.25}, ckpt)
    checkpoint = torch.load(ckpt)
    print(sorted(checkpoint.keys()), checkpoint["epoch"], checkpoint["loss"])
    opt2 = torch.optim.Adam(model2.parameters(), lr=0.5)
    opt2.load_state_dict(checkpoint["optimizer_state_dict"])
    print(opt2.param_groups[0]["lr"], opt2.state_dict()["state"][0]["step"])
    print(sorted(opt2.state_dict()["state"][0].keys()))

    t = torch.tensor([[1, 2], [3, 4]])
    tpath = os.path.join(d, "tensors.pt")
    torch.save({"a": t, "b": [t * 2, 3.5]}, tpath)
    loaded = torch.load(tpath)
    print(loaded["a"], loaded["b"][0], loaded["b"][1], loaded["a"].dtype)

sd = model.state_dict()
del sd["fc2.bias"]
sd["extra.weight"] = torch.zeros(1)
res = Net().load_state_dict(sd, strict=False)
print(res.missing_keys, res.unexpected_keys)
try:
    Net().load_state_dict(sd)
except RuntimeError as e:
    print(type(e).__name__, str(e).splitlines()[0])
try:
    bad = dict(model.state_dict())
    bad["fc1.weight"] = torch.zeros(5, 3)
    Net().load_state_dict(bad)
except RuntimeError as e:
    print(str(e).splitlines()[1].strip())
