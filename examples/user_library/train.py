"""Train with the example library's ops: fit w so that rownorm(softsign(x * w)) matches a target.

Run after `derivgen library build ops.yaml --package myproj_ops` (with myproj and myproj_ops importable).
Prints the loss of each step and the node names of the graph."""
import derivgen as torch

myproj = torch.load_library("myproj_ops")

torch.manual_seed(0)
x = torch.randn(16, 4, dtype=torch.float64)
target = myproj.rownorm(myproj.softsign(x * 2.0))
w = torch.ones(4, dtype=torch.float64, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.5)
losses = []
for step in range(8):
    opt.zero_grad()
    y = myproj.rownorm((x * w).softsign())
    loss = ((y - target) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
    print(f"step {step}: loss {loss.item():.6f}")
print("nodes:", y.grad_fn.name(), y.grad_fn.next_functions[0][0].name())
print("loss decreased:", losses[-1] < losses[0])
