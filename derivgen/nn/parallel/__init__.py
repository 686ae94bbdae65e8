"""``derivgen.nn.parallel``: ``DistributedDataParallel`` over ``derivgen.distributed``."""
from derivgen.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
