"""``derivgen.distributed``: torch's process-group API over MPI (mpi4py).

One process group, ``WORLD`` (``MPI.COMM_WORLD``), with the ``"mpi"`` backend. Collectives hand each
tensor's numpy array straight to mpi4py's buffer interface, so they work in place without copies
where torch's do. Processes are started by an MPI launcher: ``mpiexec -n 2 python train.py`` or
``derivgen run --nproc 2 train.py``; a plain ``python train.py`` is a world of one.
"""
from derivgen.distributed.reduce_op import ReduceOp
from derivgen.distributed.process_group import (
    Backend, GroupMember, destroy_process_group, get_backend, get_rank, get_world_size, group,
    init_process_group, is_available, is_initialized, is_mpi_available)
from derivgen.distributed.collectives import (
    Work, all_gather, all_gather_into_tensor, all_reduce, barrier, broadcast, reduce_scatter,
    reduce_scatter_tensor)

__all__ = ["ReduceOp", "Backend", "GroupMember", "group", "init_process_group", "destroy_process_group",
           "is_available", "is_mpi_available", "is_initialized", "get_backend", "get_rank", "get_world_size",
           "Work", "barrier", "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor",
           "reduce_scatter", "reduce_scatter_tensor"]
