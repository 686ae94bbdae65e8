"""Weight initialisation with nn.init through model.apply: constant, zeros/ones, eye, calculate_gain,
and the bounds and shapes of the random initialisers (their values differ between generators)."""
import math

import torch
import torch.nn as nn


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        m.bias.data.fill_(0.01)
    elif isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        nn.init.zeros_(m.bias)


net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8, 5), nn.Linear(5, 2))
result = net.apply(init_weights)
print(result is net)
print(net[3].bias)
bound = math.sqrt(6.0 / (8 + 5))
print(bool(net[3].weight.abs().max() <= bound), net[0].bias.sum().item())

w = torch.empty(3, 5)
print(nn.init.constant_(w, 0.3))
print(nn.init.ones_(w).sum().item(), nn.init.zeros_(w).abs().sum().item())
print(nn.init.eye_(torch.empty(3, 4)))
print(nn.init.calculate_gain("relu"), nn.init.calculate_gain("tanh"), nn.init.calculate_gain("leaky_relu", 0.2))
print(nn.init.calculate_gain("linear"), nn.init.calculate_gain("sigmoid"), round(nn.init.calculate_gain("selu"), 6))

u = nn.init.uniform_(torch.empty(1000), a=-0.5, b=0.5)
print(bool(u.min() >= -0.5), bool(u.max() <= 0.5), u.shape)
k = nn.init.kaiming_uniform_(torch.empty(50, 20), a=math.sqrt(5))
print(bool(k.abs().max() <= 1.0 / math.sqrt(20)))
t = nn.init.trunc_normal_(torch.empty(500), std=1.0, a=-2.0, b=2.0)
print(bool(t.abs().max() <= 2.0))
o = nn.init.orthogonal_(torch.empty(4, 4))
print(torch.allclose(o @ o.T, torch.eye(4), atol=1e-5))
n = nn.init.normal_(torch.empty(2, 3), mean=0.0, std=0.02)
print(n.shape, n.dtype, n.requires_grad)
d = nn.init.dirac_(torch.empty(2, 2, 3))
print(d)
x = nn.init.xavier_normal_(torch.empty(3, 3), gain=nn.init.calculate_gain("tanh"))
print(x.shape)

layer = nn.Linear(4, 4)
with torch.no_grad():
    layer.weight.copy_(torch.eye(4))
    layer.bias.zero_()
print(layer(torch.arange(4.0)))
try:
    nn.init.calculate_gain("foo")
except ValueError as e:
    print("ValueError:", e)
try:
    nn.init.xavier_uniform_(torch.empty(3))
except ValueError as e:
    print("ValueError:", e)
