"""Every collective on rank-dependent inputs; each rank saves what it got to <out>/rank<r>.npz."""
import sys

import numpy as np

import derivgen as torch
import derivgen.distributed as dist

out = sys.argv[1]
dist.init_process_group(backend="mpi")
rank, size = dist.get_rank(), dist.get_world_size()
res = {"rank": rank, "size": size, "initialized": dist.is_initialized()}


def data(shape, dtype=torch.float64):
    # rank-dependent values, reproducible by the test from the rank alone
    return torch.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape) * (rank + 2) - rank)\
        .to(dtype)


for name in ("SUM", "AVG", "MAX", "MIN", "PRODUCT"):
    t = data((2, 3))
    array_before = t._array
    version = t._version
    dist.all_reduce(t, op=getattr(dist.ReduceOp, name))
    res[f"all_reduce_{name}"] = t.numpy()
    res[f"all_reduce_{name}_in_place"] = t._array is array_before and t._version == version + 1
t = data((5,), torch.int64)
dist.all_reduce(t)
res["all_reduce_int64"] = t.numpy()
t = data((4,), torch.float32)
work = dist.all_reduce(t, async_op=True)
res["async_wait"] = work.wait()
res["async_completed"] = work.is_completed()
res["all_reduce_float32_async"] = t.numpy()

t = data((3,))
dist.broadcast(t, src=1)
res["broadcast_src1"] = t.numpy()

outs = [torch.zeros(2, 2, dtype=torch.float64) for _ in range(size)]
dist.all_gather(outs, data((2, 2)))
res["all_gather"] = np.stack([o.numpy() for o in outs])
stacked = torch.zeros(size, 3, dtype=torch.float64)
dist.all_gather_into_tensor(stacked, data((3,)))
res["all_gather_into_tensor"] = stacked.numpy()

o = torch.zeros(2, dtype=torch.float64)
dist.reduce_scatter(o, [data((2,)) * (i + 1) for i in range(size)])
res["reduce_scatter"] = o.numpy()
o = torch.zeros(3, dtype=torch.float64)
dist.reduce_scatter_tensor(o, data((size * 3,)), op=dist.ReduceOp.MAX)
res["reduce_scatter_tensor_max"] = o.numpy()
dist.barrier()
dist.destroy_process_group()
res["initialized_after_destroy"] = dist.is_initialized()
np.savez(f"{out}/rank{rank}.npz", **res)
