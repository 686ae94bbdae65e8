"""``derivgen.utils.data``: datasets, samplers, ``DataLoader`` (in-process or with worker processes),
``get_worker_info`` and ``default_collate``, as torch's."""
from derivgen.utils.data.dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset,
                                         TensorDataset, random_split)
from derivgen.utils.data.sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                                         SubsetRandomSampler, WeightedRandomSampler)
from derivgen.utils.data.collate import default_collate, default_convert
from derivgen.utils.data.dataloader import DataLoader
from derivgen.utils.data.distributed import DistributedSampler
from derivgen.utils.data._worker import WorkerInfo, get_worker_info

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset", "Subset", "random_split",
           "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler", "default_collate", "default_convert", "DataLoader", "DistributedSampler",
           "WorkerInfo", "get_worker_info"]
