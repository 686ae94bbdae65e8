"""LeNet-5 on synthetic 28x28 images: Conv2d, MaxPool2d, Linear, CrossEntropyLoss and SGD with momentum.

The same file runs on PyTorch with ``--torch`` (only the import changes). The images are fixed
patterns plus noise from numpy, and the weights are drawn with numpy and loaded through
``load_state_dict``, so both libraries start from the same model and print the same losses.
"""
import sys

import numpy as np

if "--torch" in sys.argv:
    import torch
else:
    import derivgen as torch
nn = torch.nn
F = torch.nn.functional


class LeNet5(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, classes)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def synthetic_digits(n, rng):
    """``n`` images of 10 classes: each class a fixed random 28x28 pattern, plus noise."""
    patterns = rng.standard_normal((10, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, n)
    images = patterns[labels] + 0.5 * rng.standard_normal((n, 1, 28, 28)).astype(np.float32)
    return torch.from_numpy(images), torch.from_numpy(labels.astype(np.int64))


def numpy_weights(model, rng):
    """The model's state dict redrawn from numpy (fan-in uniform, as torch's default init bounds)."""
    state = {}
    for name, p in model.state_dict().items():
        fan_in = int(np.prod(p.shape[1:])) if p.dim() > 1 else None
        bound = 1.0 / np.sqrt(fan_in) if fan_in else 0.1
        state[name] = torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32))
    return state


def main(steps=30, batch=64):
    rng = np.random.default_rng(0)
    model = LeNet5()
    model.load_state_dict(numpy_weights(model, rng))
    images, labels = synthetic_digits(batch * 4, rng)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(steps):
        i = (step % 4) * batch
        x, y = images[i:i + batch], labels[i:i + batch]
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        if step % 5 == 4:
            print(f"step {step + 1:2d}  loss {loss.item():.4f}")
    with torch.no_grad():
        accuracy = (model(images).argmax(1) == labels).float().mean().item()
    print(f"training accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
