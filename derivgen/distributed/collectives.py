"""Collectives over the default group, in place on derivgen tensors, as torch's.

Each one starts MPI's non-blocking form on the tensors' numpy arrays (no copies where the layout
allows: ``all_reduce``, ``broadcast``, ``all_gather_into_tensor`` and ``reduce_scatter_tensor`` pass
the arrays themselves) and returns a ``Work`` whose ``wait()`` finishes it; with ``async_op=False``
it is waited for at once. Every wait is bounded by the process group's timeout.
"""
import os
import time

import numpy as np

from derivgen.core.tensor import Tensor, bump_version
from derivgen.distributed.process_group import _check_group, default_world
from derivgen.distributed.reduce_op import ReduceOp, mpi_op

# polls of a request before each further poll also yields the core (ranks may share cores)
_SPINS_BEFORE_YIELDING = 64


class Work:
    """A started collective (torch's ``Work``): ``wait()`` blocks until it is complete on this rank
    and returns True; ``is_completed()`` asks without blocking."""
    __slots__ = ("_request", "_finish", "_name", "_done")

    def __init__(self, request, name, finish=None):
        self._request = request
        self._name = name
        self._finish = finish
        self._done = False

    def is_completed(self):
        if not self._done and self._request.Test():
            self._complete()
        return self._done

    def wait(self, timeout=None):
        if self._done:
            return True
        world = default_world()
        limit = timeout.total_seconds() if timeout is not None else world.timeout
        wait_for(self._request, limit, self._name)
        self._complete()
        return True

    def _complete(self):
        self._done = True
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()


def wait_for(request, limit, name):
    """Poll ``request`` (which also drives MPI's progress) until it completes or ``limit`` seconds
    have passed; a timeout raises, and the uncaught error then aborts the job."""
    if request.Test():
        return
    deadline = time.monotonic() + limit
    spins = 0
    while not request.Test():
        spins += 1
        if spins > _SPINS_BEFORE_YIELDING:
            if time.monotonic() > deadline:
                world = default_world()
                raise RuntimeError(
                    f"[Rank {world.rank}] collective operation timeout: {name} did not complete within "
                    f"{int(limit * 1000)} milliseconds (another rank has not joined it: it is stuck, "
                    "failed, or called a different collective)")
            os.sched_yield()


def _run(request, name, async_op, finish=None):
    work = Work(request, name, finish)
    if async_op:
        return work
    work.wait()
    return None


def _array(tensor, op_name, arg="tensor"):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{op_name}(): argument '{arg}' must be a Tensor, not {type(tensor).__name__}")
    a = tensor._array
    if not a.flags.c_contiguous:
        raise ValueError("Tensors must be contiguous")
    if a.dtype == np.bool_:
        raise TypeError(f"{op_name}(): bool tensors are not supported by the MPI backend")
    return a


def _writable(tensor, op_name, arg="tensor"):
    a = _array(tensor, op_name, arg)
    if not a.flags.writeable:
        raise ValueError(f"{op_name}(): '{arg}' shares read-only memory (an expanded view); clone() it first")
    return a


def _modified(*tensors):
    def bump():
        for t in tensors:
            bump_version(t)
    return bump


def _then(*steps):
    def run():
        for step in steps:
            step()
    return run


def _average(array, world_size, op_name):
    if array.dtype.kind not in "fc":
        raise RuntimeError(f"{op_name}(): ReduceOp.AVG needs a floating point tensor, got {array.dtype} "
                           "(use ReduceOp.SUM and divide)")
    return lambda: np.divide(array, world_size, out=array)


def _same_dtype(out, inp, op_name):
    if out.dtype != inp.dtype:
        raise TypeError(f"{op_name}(): output tensor must have the same type as input tensor "
                        f"(got {out.dtype} and {inp.dtype})")


def barrier(group=None, async_op=False, device_ids=None):
    _check_group(group)
    world = default_world()
    return _run(world.comm.Ibarrier(), "barrier", async_op)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over every rank, in place (``MPI_Iallreduce`` with ``MPI_IN_PLACE``)."""
    _check_group(group)
    world = default_world()
    a = _writable(tensor, "all_reduce")
    steps = [_average(a, world.size, "all_reduce")] if op is ReduceOp.AVG else []
    request = world.comm.Iallreduce(world.MPI.IN_PLACE, a, op=mpi_op(world.MPI, op))
    return _run(request, "all_reduce", async_op, _then(*steps, _modified(tensor)))


def broadcast(tensor, src, group=None, async_op=False, group_src=None):
    _check_group(group)
    world = default_world()
    src = group_src if group_src is not None else src
    if not isinstance(src, int) or not 0 <= src < world.size:
        raise ValueError(f"broadcast(): src={src!r} is not a rank of the group (world size {world.size})")
    a = _writable(tensor, "broadcast") if world.rank != src else _array(tensor, "broadcast")
    finish = _modified(tensor) if world.rank != src else None
    return _run(world.comm.Ibcast(a, root=src), "broadcast", async_op, finish)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's ``tensor`` into ``tensor_list`` (one tensor per rank, in rank order)."""
    _check_group(group)
    world = default_world()
    a = _array(tensor, "all_gather")
    if not isinstance(tensor_list, (list, tuple)) or len(tensor_list) != world.size:
        got = len(tensor_list) if isinstance(tensor_list, (list, tuple)) else type(tensor_list).__name__
        raise ValueError(f"all_gather(): tensor_list must hold one tensor per rank ({world.size}), got {got}")
    outs = [_writable(t, "all_gather", "tensor_list") for t in tensor_list]
    for o in outs:
        _same_dtype(o, a, "all_gather")
        if o.size != a.size:
            raise ValueError(f"all_gather(): each tensor in tensor_list must have the input's {a.size} elements, "
                             f"got one of {o.size}")
    gathered = np.empty((world.size, a.size), a.dtype)

    def scatter_locally():
        for o, row in zip(outs, gathered):
            o.reshape(-1)[...] = row

    request = world.comm.Iallgather(a, gathered)
    return _run(request, "all_gather", async_op, _then(scatter_locally, _modified(*tensor_list)))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's ``input_tensor`` concatenated (or stacked) into ``output_tensor``, without copies."""
    _check_group(group)
    world = default_world()
    a = _array(input_tensor, "all_gather_into_tensor", "input_tensor")
    out = _writable(output_tensor, "all_gather_into_tensor", "output_tensor")
    _same_dtype(out, a, "all_gather_into_tensor")
    if out.size != world.size * a.size:
        raise ValueError("output tensor size must be equal to world_size times input tensor size "
                         f"({out.size} != {world.size} * {a.size})")
    request = world.comm.Iallgather(a, out)
    return _run(request, "all_gather_into_tensor", async_op, _modified(output_tensor))


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list`` (one tensor per rank) over every rank; rank ``r`` gets entry ``r``."""
    _check_group(group)
    world = default_world()
    out = _writable(output, "reduce_scatter", "output")
    if not isinstance(input_list, (list, tuple)) or len(input_list) != world.size:
        got = len(input_list) if isinstance(input_list, (list, tuple)) else type(input_list).__name__
        raise ValueError(f"reduce_scatter(): input_list must hold one tensor per rank ({world.size}), got {got}")
    ins = [_array(t, "reduce_scatter", "input_list") for t in input_list]
    for i in ins:
        _same_dtype(out, i, "reduce_scatter")
        if i.size != out.size:
            raise ValueError(f"reduce_scatter(): each tensor in input_list must have the output's {out.size} "
                             f"elements, got one of {i.size}")
    stacked = np.concatenate([i.reshape(-1) for i in ins])
    return _reduce_scatter_block(world, stacked, out, output, op, "reduce_scatter", async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """``reduce_scatter`` with the inputs as one tensor of ``world_size`` equal chunks, without copies."""
    _check_group(group)
    world = default_world()
    out = _writable(output, "reduce_scatter_tensor", "output")
    a = _array(input, "reduce_scatter_tensor", "input")
    _same_dtype(out, a, "reduce_scatter_tensor")
    if a.size != world.size * out.size:
        raise ValueError("input tensor must be the same size as output size times world size "
                         f"({a.size} != {out.size} * {world.size})")
    return _reduce_scatter_block(world, a, out, output, op, "reduce_scatter_tensor", async_op)


def _reduce_scatter_block(world, source, out, output, op, name, async_op):
    steps = [_average(out, world.size, name)] if op is ReduceOp.AVG else []
    request = world.comm.Ireduce_scatter_block(source, out, op=mpi_op(world.MPI, op))
    return _run(request, name, async_op, _then(*steps, _modified(output)))
