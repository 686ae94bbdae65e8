"""The nn.Module API programs lean on: named_parameters / named_modules / children, parameter counts,
freezing with requires_grad_, register_buffer, hooks, apply, to(dtype), zero_grad, and Sequential
indexing and slicing."""
from collections import OrderedDict

import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.act = nn.ReLU()
        self.register_buffer("scale", torch.tensor(2.0))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = self.act(x)
        return x * self.scale


model = MLP([4, 8, 8, 2])
print(model)
for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | requires_grad: {param.requires_grad}")
print([name for name, _ in model.named_modules()])
print([type(m).__name__ for m in model.children()])
print(sum(p.numel() for p in model.parameters()), len(list(model.buffers())), model.scale)

for p in model.layers[0].parameters():
    p.requires_grad_(False)
trainable = [n for n, p in model.named_parameters() if p.requires_grad]
print(trainable)
opt = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.1)
print(len(opt.param_groups[0]["params"]))

activations = {}


def hook(module, inp, out):
    activations[type(module).__name__] = out.shape


handle = model.layers[1].register_forward_hook(hook)
x = torch.ones(3, 4)
out = model(x)
print(activations, out.shape)
handle.remove()
model(x)
print(len(activations))

out.sum().backward()
print(model.layers[0].weight.grad, model.layers[2].weight.grad.shape)
model.zero_grad()
print(model.layers[2].weight.grad)

seq = nn.Sequential(OrderedDict([("fc1", nn.Linear(2, 3)), ("relu", nn.ReLU()), ("fc2", nn.Linear(3, 1))]))
print(seq.fc1, seq[0] is seq.fc1, seq[-1], len(seq))
print(seq[:2])
seq.add_module("out", nn.Sigmoid())
print([name for name, _ in seq.named_children()])
seq.append(nn.Identity())
print(len(seq), seq.get_submodule("fc2"))

double = seq.to(torch.float64)
print(double.fc1.weight.dtype, double is seq)
seq.float()


def zero_bias(m):
    if isinstance(m, nn.Linear):
        nn.init.zeros_(m.bias)


seq.apply(zero_bias)
print(seq.fc1.bias, seq.fc2.bias.sum().item())
print(seq.state_dict().keys())
print(isinstance(seq.fc1.weight, nn.Parameter), isinstance(seq.fc1.weight, torch.Tensor))
try:
    model.nonexistent
except AttributeError as e:
    print("AttributeError:", e)
try:
    nn.Linear(3, 2)(torch.ones(2, 4))
except RuntimeError as e:
    print("RuntimeError:", e)
