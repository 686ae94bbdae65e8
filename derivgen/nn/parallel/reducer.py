"""The reducer: all-reduces gradients bucket by bucket while backward is still running.

Each parameter's post-accumulate-grad hook copies its finished gradient into its bucket's buffer;
when a bucket's last gradient arrives its non-blocking all-reduce starts (buckets start in index order
on every rank, so all ranks issue the same collectives in the same order). When the backward ends
(``queue_callback``) the reducer waits for the remaining reductions, divides by the world size and
writes the averages back into ``param.grad``.
"""
import time

import numpy as np

from derivgen.core.tensor import Tensor, bump_version
from derivgen.distributed.collectives import wait_for
from derivgen.engine.execute import queue_callback
from derivgen.nn.parallel.buckets import assign_buckets

_UNFINISHED_REDUCTION = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
    "that your module has parameters that were not used in producing loss. You can enable unused parameter "
    "detection by passing the keyword argument `find_unused_parameters=True` to "
    "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs participate "
    "in calculating loss. If you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` function. Please include "
    "the loss function and the structure of the return value of `forward` of your module when reporting this "
    "issue (e.g. list, dict, iterable).\nParameter indices which did not receive grad for rank {rank}: {indices}")


class Reducer:
    def __init__(self, params, world, bucket_cap_bytes, find_unused_parameters):
        self.params = params
        self.world = world
        self.find_unused = find_unused_parameters
        self.buckets = assign_buckets(params, bucket_cap_bytes)
        # parameter id -> (its index in params, its bucket, its place in the bucket)
        self.where = {}
        index = {id(p): i for i, p in enumerate(params)}
        for b in self.buckets:
            for j, p in enumerate(b.params):
                self.where[id(p)] = (index[id(p)], b, j)
        self.locally_used = np.zeros(len(params), np.int32)
        self.ready = np.zeros(len(params), bool)
        self.armed = False
        self.unfinished = None
        self.next_bucket = 0
        self.callback_queued = False
        # perf_counter stamps of the last synchronised backward (see benchmarks/ddp_scaling.py)
        self.timings = {}
        self.handles = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]

    # ---- per iteration ----------------------------------------------------------------------
    def check_previous_finished(self):
        if self.unfinished is not None:
            indices, self.unfinished = self.unfinished, None
            raise RuntimeError(_UNFINISHED_REDUCTION.format(rank=self.world.rank, indices=" ".join(map(str, indices))))

    def prepare_for_backward(self, outputs=None):
        """Arm the hooks for the next backward; with ``find_unused_parameters`` the parameters that
        ``outputs`` do not depend on are ready at once, with zero gradients."""
        for b in self.buckets:
            b.pending = len(b.params)
            b.request = None
        self.ready[:] = False
        self.locally_used[:] = 0
        self.next_bucket = 0
        self.callback_queued = False
        self.timings = {}
        self.armed = True
        if self.find_unused:
            reached = _leaves_reached(outputs)
            for p in self.params:
                if id(p) not in reached:
                    i, b, j = self.where[id(p)]
                    b.slot(j)[...] = 0
                    self._mark_ready(i, b)

    def _grad_ready(self, param):
        if not self.armed:
            return
        i, b, j = self.where[id(param)]
        if self.ready[i]:
            raise RuntimeError(f"Expected to mark a variable ready only once. Parameter at index {i} has been "
                               "marked as ready twice. This means that multiple autograd engine hooks have "
                               "fired for this particular parameter during this iteration.")
        np.copyto(b.slot(j), param.grad._array)
        self.locally_used[i] = 1
        if not self.callback_queued:
            self.callback_queued = True
            queue_callback(self._finish_backward)
        self._mark_ready(i, b)
        self._launch_ready_buckets()
        self._drive_progress()

    def _mark_ready(self, i, bucket):
        self.ready[i] = True
        bucket.pending -= 1

    def _launch_ready_buckets(self):
        MPI = self.world.MPI
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            b = self.buckets[self.next_bucket]
            if "first_launch" not in self.timings:
                self.timings["first_launch"] = time.perf_counter()
            b.request = self.world.comm.Iallreduce(MPI.IN_PLACE, b.buffer, op=MPI.SUM)
            self.next_bucket += 1

    def _drive_progress(self):
        """MPI advances non-blocking transfers only inside MPI calls: test the running ones."""
        running = [b.request for b in self.buckets[:self.next_bucket]]
        if running:
            self.world.MPI.Request.Testall(running)

    def _finish_backward(self):
        self.armed = False
        self.timings["backward_end"] = time.perf_counter()
        self._launch_ready_buckets()
        used = self.locally_used
        if self.find_unused:
            used = self.locally_used.copy()
            request = self.world.comm.Iallreduce(self.world.MPI.IN_PLACE, used, op=self.world.MPI.MAX)
            wait_for(request, self.world.timeout, "DistributedDataParallel unused-parameter map all_reduce")
        for b in self.buckets[:self.next_bucket]:
            wait_for(b.request, self.world.timeout, f"DistributedDataParallel bucket {b.index} all_reduce")
        self.timings["reduced"] = time.perf_counter()
        if self.next_bucket < len(self.buckets):
            # a parameter never got its gradient: torch reports it when the next iteration starts
            self.unfinished = [i for i in range(len(self.params)) if not self.ready[i]]
            return
        for b in self.buckets:
            np.divide(b.buffer, self.world.size, out=b.buffer)
            for j, p in enumerate(b.params):
                i = self.where[id(p)][0]
                if used[i]:
                    _write_grad(p, b.slot(j))


def _write_grad(param, averaged):
    g = param.grad
    if g is not None and g._array.flags.writeable and g._array.shape == averaged.shape:
        np.copyto(g._array, averaged)
        bump_version(g)
    else:
        param.grad = Tensor._make(averaged.copy())


def _leaves_reached(outputs):
    """ids of the leaf tensors whose AccumulateGrad nodes the tensors in ``outputs`` lead to."""
    seen, reached = set(), set()
    stack = [t.grad_fn for t in _tensors_in(outputs) if t.grad_fn is not None]
    reached.update(id(t) for t in _tensors_in(outputs) if t.grad_fn is None and t.requires_grad)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        leaf = getattr(node, "variable", None)
        if leaf is not None:
            reached.add(id(leaf))
        stack.extend(fn for fn, _ in node.next_functions if fn is not None)
    return reached


def _tensors_in(obj):
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _tensors_in(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _tensors_in(x)
