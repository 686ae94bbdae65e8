"""``derivgen.utils.data``: datasets, samplers, ``DataLoader`` and ``default_collate``, as torch's."""
from derivgen.utils.data.dataset import Dataset, IterableDataset, Subset, TensorDataset, random_split
from derivgen.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from derivgen.utils.data.collate import default_collate, default_convert
from derivgen.utils.data.dataloader import DataLoader
from derivgen.utils.data.distributed import DistributedSampler

__all__ = ["Dataset", "IterableDataset", "Subset", "TensorDataset", "random_split", "Sampler", "SequentialSampler",
           "RandomSampler", "BatchSampler", "default_collate", "default_convert", "DataLoader",
           "DistributedSampler"]
