"""DistributedDataParallel scenarios on each rank; results go to <out>/<scenario>_rank<r>.npz.

    train   3 SGD steps, rank r on rows [r*B, (r+1)*B) of the batch in <out>/data.npz
    no_sync a backward inside no_sync, then a synchronised one
    unused  find_unused_parameters=True with a layer only rank 0 uses and one nobody uses, then the
            same module with find_unused_parameters=False (the next forward must raise)
"""
import sys

import numpy as np

import derivgen as torch
import derivgen.distributed as dist
from derivgen.nn.parallel import DistributedDataParallel as DDP

out, scenario = sys.argv[1], sys.argv[2]
dist.init_process_group("mpi")
rank, size = dist.get_rank(), dist.get_world_size()
torch.manual_seed(100 + rank)  # different initial weights on each rank: DDP must broadcast rank 0's
data = np.load(f"{out}/data.npz")
res = {}


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8), torch.nn.Tanh(),
                               torch.nn.Linear(8, 1)).double()


def local(name):
    a = data[name]
    n = a.shape[0] // size
    return torch.tensor(a[rank * n:(rank + 1) * n])


def save_params(prefix, module):
    for k, p in module.named_parameters():
        res[f"{prefix}{k}"] = p.detach().numpy().copy()


def save_grads(prefix, module):
    for k, p in module.named_parameters():
        res[f"{prefix}{k}"] = np.array(np.nan) if p.grad is None else p.grad.numpy().copy()


if scenario == "train":
    model = mlp()
    ddp = DDP(model, bucket_cap_mb=300 / 2**20)  # ~300-byte buckets: several all-reduces per backward
    res["buckets"] = len(ddp.reducer.buckets)
    save_params("init.", model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    x, y = local("x"), local("y")
    for step in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        opt.step()
        res[f"loss{step}"] = loss.item()
    save_params("final.", model)
elif scenario == "no_sync":
    model = mlp()
    ddp = DDP(model)
    save_params("init.", model)
    with ddp.no_sync():
        torch.nn.functional.mse_loss(ddp(local("x")), local("y")).backward()
    save_grads("local.", model)
    torch.nn.functional.mse_loss(ddp(local("x2")), local("y2")).backward()
    save_grads("synced.", model)
elif scenario == "unused":
    class Branches(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(4, 1).double()
            self.b = torch.nn.Linear(4, 1).double()
            self.never = torch.nn.Linear(4, 1).double()

        def forward(self, x, use_b):
            y = self.a(x)
            return y + self.b(x) if use_b else y

    model = Branches()
    ddp = DDP(model, find_unused_parameters=True, bucket_cap_mb=40 / 2**20)
    save_params("init.", model)
    ddp(local("x"), use_b=rank == 0).sum().backward()
    save_grads("grad.", model)
    strict = DDP(Branches(), find_unused_parameters=False)
    strict(local("x"), use_b=True).sum().backward()
    try:
        strict(local("x"), use_b=True)
        res["error"] = "no error"
    except RuntimeError as exc:
        res["error"] = str(exc)
np.savez(f"{out}/{scenario}_rank{rank}.npz", **res)
