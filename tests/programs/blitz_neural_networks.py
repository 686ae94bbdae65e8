"""The 60-minute blitz's LeNet: print(net), its parameters, a forward pass, backward with a given
gradient, MSELoss and the grad_fn chain behind it, conv1.bias.grad before and after backward, and a
manual SGD update then torch.optim.SGD (weights and inputs from fixed values)."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, input):
        c1 = F.relu(self.conv1(input))
        s2 = F.max_pool2d(c1, (2, 2))
        c3 = F.relu(self.conv2(s2))
        s4 = F.max_pool2d(c3, 2)
        s4 = torch.flatten(s4, 1)
        f5 = F.relu(self.fc1(s4))
        f6 = F.relu(self.fc2(f5))
        output = self.fc3(f6)
        return output


rng = np.random.default_rng(9)
net = Net()
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.1, 0.1, size=tuple(p.shape)).astype(np.float32)))
print(net)
params = list(net.parameters())
print(len(params))
print(params[0].size())

input = torch.from_numpy(rng.standard_normal((1, 1, 32, 32)).astype(np.float32))
out = net(input)
print(out.shape, out.grad_fn)
net.zero_grad()
out.backward(torch.ones(1, 10))
print(net.conv1.bias.grad.shape)

output = net(input)
target = torch.arange(10, dtype=torch.float32) / 10
target = target.view(1, -1)
criterion = nn.MSELoss()
loss = criterion(output, target)
print(f"{loss.item():.4f}")
print(loss.grad_fn)
print(loss.grad_fn.next_functions[0][0])
print(loss.grad_fn.next_functions[0][0].next_functions[0][0])
print([type(n).__name__ if n is not None else None for n, _ in loss.grad_fn.next_functions[0][0].next_functions])

net.zero_grad()
print("conv1.bias.grad before backward")
print(net.conv1.bias.grad)
loss.backward()
print("conv1.bias.grad after backward")
print(net.conv1.bias.grad.shape, bool(net.conv1.bias.grad.abs().sum() > 0))

learning_rate = 0.01
for f in net.parameters():
    f.data.sub_(f.grad.data * learning_rate)
print(f"{criterion(net(input), target).item():.4f}")

import torch.optim as optim

optimizer = optim.SGD(net.parameters(), lr=0.01)
for _ in range(3):
    optimizer.zero_grad()
    output = net(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()
    print(f"{loss.item():.4f}")
