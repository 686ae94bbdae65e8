"""Rank 1 fails (``raise``: an uncaught exception; ``stall``: it never joins), rank 0 waits in all_reduce."""
import datetime
import sys
import time

import derivgen as torch
import derivgen.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=3))
if dist.get_rank() == 1:
    if mode == "raise":
        raise ValueError("rank 1 fails on purpose")
    time.sleep(120)
dist.all_reduce(torch.ones(3))
print("rank 0 finished the all_reduce", flush=True)
