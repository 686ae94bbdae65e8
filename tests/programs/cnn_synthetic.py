"""A small CNN (Conv2d, BatchNorm2d, MaxPool2d, Dropout, Flatten, Linear) on synthetic 1x12x12 images of
horizontal vs vertical bars: print(model), parameter shapes, a few SGD steps, eval accuracy."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(3)
images = np.zeros((32, 1, 12, 12), dtype=np.float32)
labels = np.zeros(32, dtype=np.int64)
for i in range(32):
    pos = rng.integers(2, 10)
    if i % 2 == 0:
        images[i, 0, pos, 1:11] = 1.0
    else:
        images[i, 0, 1:11, pos] = 1.0
        labels[i] = 1
images += rng.normal(0, 0.1, size=images.shape).astype(np.float32)
x = torch.from_numpy(images)
y = torch.from_numpy(labels)


class SmallCNN(nn.Module):
    def __init__(self, num_classes=2):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 4, kernel_size=3, padding=1),
            nn.BatchNorm2d(4),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(4, 8, kernel_size=3),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Dropout(p=0.25),
            nn.Linear(8 * 2 * 2, 16),
            nn.ReLU(),
            nn.Linear(16, num_classes),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


model = SmallCNN()
with torch.no_grad():
    for name, p in model.named_parameters():
        if name.endswith("weight") and p.dim() > 1:
            fan_in = p[0].numel()
            p.copy_(torch.from_numpy(rng.normal(0, (2.0 / fan_in) ** 0.5, size=tuple(p.shape)).astype(np.float32)))
        elif name.endswith("bias"):
            p.zero_()
print(model)
for name, p in model.named_parameters():
    print(name, tuple(p.shape))
print([name for name, _ in model.named_buffers()])
print(model.features[0], model.features[1].num_batches_tracked)

out = model.features(x[:2])
print(out.shape, F.max_pool2d(x[:1], 2).shape, torch.flatten(out, 1).shape)

model.classifier[1].p = 0.0
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
criterion = nn.CrossEntropyLoss()
model.train()
for step in range(15):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    if step % 5 == 4:
        print(f"step {step + 1}: loss {loss.item():.3f}")
print(model.features[1].num_batches_tracked, model.features[1].running_mean.shape)
print(loss.grad_fn.name(), model.features[0].weight.grad.shape)

model.eval()
with torch.no_grad():
    pred = model(x).argmax(1)
    print("accuracy", (pred == y).float().mean().item())
print(model.training, model.features[1].training)
