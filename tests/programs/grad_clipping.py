"""Gradient clipping in a training step: nn.utils.clip_grad_norm_ (its returned total norm, max_norm,
norm_type) and clip_grad_value_, on fixed weights and inputs."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (i + 1))
x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
target = torch.tensor([[10.0], [-10.0]])
loss = nn.functional.mse_loss(model(x), target)
loss.backward()
norms = [p.grad.norm().item() for p in model.parameters()]
print([f"{n:.4f}" for n in norms])
total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
print(f"total norm before clipping: {total.item():.4f}", total.dtype, total.shape)
after = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
print(f"after: {after.item():.4f}")

model.zero_grad()
nn.functional.mse_loss(model(x), target).backward()
total_inf = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5, norm_type=float("inf"))
print(f"{total_inf.item():.4f}", f"{max(p.grad.abs().max().item() for p in model.parameters()):.4f}")

model.zero_grad()
nn.functional.mse_loss(model(x), target).backward()
nn.utils.clip_grad_value_(model.parameters(), clip_value=0.1)
print(max(p.grad.abs().max().item() for p in model.parameters()) <= 0.1)
print(model[0].bias.grad)

opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), target)
    loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
    opt.step()
    print(step, f"{loss.item():.4f}", f"{gn.item():.4f}")
vec = nn.utils.parameters_to_vector(model.parameters())
print(vec.shape, vec.requires_grad)
