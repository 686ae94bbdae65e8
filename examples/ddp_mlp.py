"""Data-parallel training of a small MLP: the same program on 1 or N processes prints the same losses.

    python examples/ddp_mlp.py                       # one process
    mpiexec -n 2 python examples/ddp_mlp.py          # two processes (or: derivgen run --nproc 2 ...)

Each epoch walks a shuffled dataset in global batches of 64 samples; with N processes every rank
takes 64/N of each batch (DistributedSampler), DistributedDataParallel averages the gradients, and
the printed loss is the average over the ranks, which is the loss of the whole batch. Float64
throughout, so the 1-process and N-process runs agree to rounding.
"""
import argparse

import numpy as np

import derivgen as torch
import derivgen.distributed as dist
from derivgen.nn.parallel import DistributedDataParallel
from derivgen.utils.data import DataLoader, TensorDataset
from derivgen.utils.data.distributed import DistributedSampler

GLOBAL_BATCH = 64


def make_data(n=512):
    rng = np.random.default_rng(0)
    x = rng.uniform(-3.0, 3.0, (n, 2))
    y = np.sin(x[:, :1]) * np.cos(x[:, 1:]) + 0.05 * rng.standard_normal((n, 1))
    return TensorDataset(torch.tensor(x), torch.tensor(y))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args()
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    if GLOBAL_BATCH % world:
        raise SystemExit(f"the global batch of {GLOBAL_BATCH} must split evenly over {world} processes")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64), torch.nn.Tanh(),
                                torch.nn.Linear(64, 1)).double()
    ddp = DistributedDataParallel(model)
    dataset = make_data()
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=1)
    loader = DataLoader(dataset, batch_size=GLOBAL_BATCH // world, sampler=sampler)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    loss_fn = torch.nn.MSELoss()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total = torch.zeros((), dtype=torch.float64)
        for x, y in loader:
            opt.zero_grad()
            loss = loss_fn(ddp(x), y)
            loss.backward()
            opt.step()
            total += loss.detach()
        dist.all_reduce(total, op=dist.ReduceOp.AVG)
        if rank == 0:
            print(f"epoch {epoch:3d}  loss {total.item() / len(loader):.12f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
