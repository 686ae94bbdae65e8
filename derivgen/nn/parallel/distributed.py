"""``DistributedDataParallel``: torch's data-parallel wrapper over ``derivgen.distributed``.

Construction broadcasts rank 0's parameters and buffers; each backward all-reduces the gradients in
buckets while it runs (see ``reducer.py``), so every rank ends the step with the same averaged
gradients and, after the same optimizer step, the same parameters.
"""
from contextlib import contextmanager

from derivgen.core.grad_mode import is_grad_enabled
from derivgen.distributed.collectives import broadcast
from derivgen.distributed.process_group import default_world
from derivgen.nn.modules.module import Module
from derivgen.nn.parallel.reducer import Reducer


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, init_sync=True):
        super().__init__()
        world = default_world()
        if process_group is not None:
            raise ValueError("derivgen.distributed has one process group, WORLD; pass process_group=None")
        if gradient_as_bucket_view or static_graph:
            raise NotImplementedError("derivgen's DistributedDataParallel supports neither gradient_as_bucket_view "
                                      "nor static_graph")
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self.module = module
        self.device_ids = device_ids
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._world = world
        if init_sync:
            self._sync_module_states()
        self.reducer = Reducer(params, world, self.bucket_bytes_cap, find_unused_parameters)

    def _sync_module_states(self):
        """Rank 0's parameters and buffers everywhere, so every replica starts the same."""
        if self._world.size == 1:
            return
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            broadcast(t.detach(), 0)

    def forward(self, *inputs, **kwargs):
        self.reducer.check_previous_finished()
        if self.broadcast_buffers and self.require_forward_param_sync and self._world.size > 1:
            for b in self.module.buffers():
                broadcast(b.detach(), 0)
        output = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_backward(output if self.find_unused_parameters else None)
        return output

    @contextmanager
    def no_sync(self):
        """Backward passes of forwards run inside this context accumulate gradients locally; the first
        synchronised backward after it all-reduces the accumulated sums."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old
