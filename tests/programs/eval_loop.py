"""Train and evaluation modes: model.eval() with torch.no_grad() in a validation loop, Dropout and
BatchNorm behaving differently in train and eval, inference_mode and set_grad_enabled."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32)).reshape(p.shape) * 0.3)
x = torch.arange(24, dtype=torch.float32).reshape(6, 4) / 10
y = torch.tensor([0, 1, 0, 1, 1, 0])

print(model.training, [m.training for m in model])
model.eval()
print(model.training, [m.training for m in model])
with torch.no_grad():
    a = model(x)
    b = model(x)
print(torch.equal(a, b), a.requires_grad, a.grad_fn)
print(model[1].running_mean, model[1].num_batches_tracked)

model.train()
out = model[:2](x)
print(model[1].num_batches_tracked, bool(torch.allclose(out.mean(0), model[1].bias.detach(), atol=1e-5)))
print(model[1].running_mean)
drop = nn.Dropout(p=0.5)
z = drop(torch.ones(1000))
print(sorted(set(z.tolist())), drop)
drop.eval()
print(torch.equal(drop(torch.ones(10)), torch.ones(10)))


def evaluate(model, data):
    model.eval()
    correct, total, loss_sum = 0, 0, 0.0
    criterion = nn.CrossEntropyLoss(reduction="sum")
    with torch.no_grad():
        for xb, yb in data:
            logits = model(xb)
            loss_sum += criterion(logits, yb).item()
            correct += (logits.argmax(dim=1) == yb).sum().item()
            total += yb.size(0)
    model.train()
    return loss_sum / total, correct / total


batches = [(x[:3], y[:3]), (x[3:], y[3:])]
loss, acc = evaluate(model, batches)
print(f"val loss {loss:.4f} acc {acc:.3f}", model.training)

with torch.inference_mode():
    r = model.eval()(x)
print(r.requires_grad, r.is_inference())
with torch.set_grad_enabled(False):
    print(model(x).requires_grad)
print(torch.is_grad_enabled())


@torch.no_grad()
def predict(m, inp):
    return m(inp).argmax(1)


print(predict(model, x).dtype, torch.is_grad_enabled())
