"""``default_collate``: a list of samples to one batch, as torch's: tensors and numpy arrays are
stacked along a new first dimension, Python floats become a float64 tensor, ints an int64 tensor,
bools a bool tensor, strings stay a list; dicts, named tuples and sequences are collated field by
field (a plain tuple of fields becomes a list, as in torch)."""
import collections.abc
import numbers

import numpy as np

from derivgen.core.tensor import Tensor

_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _stack(tensors):
    import derivgen
    return derivgen.stack(list(tensors), 0)


def default_collate(batch):
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(batch)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OSUV":
            raise TypeError(_ERROR.format(elem.dtype))
        return _stack([_from_numpy(b) for b in batch])
    if isinstance(elem, np.generic):
        return _from_numpy(np.array(batch))
    if isinstance(elem, bool):
        return Tensor._make(np.array(batch, dtype=np.bool_))
    if isinstance(elem, numbers.Integral):
        return Tensor._make(np.array(batch, dtype=np.int64))
    if isinstance(elem, numbers.Real):
        return Tensor._make(np.array(batch, dtype=np.float64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple keeps its type
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(samples) for samples in zip(*batch)]
    raise TypeError(_ERROR.format(type(elem)))


def _from_numpy(arr):
    from derivgen.ops.factories import tensor
    return tensor(arr)


def default_convert(data):
    """Without batching (``batch_size=None``): numpy arrays become tensors, containers are converted
    element by element, everything else is left as it is."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OSUV":
        return _from_numpy(data)
    if isinstance(data, collections.abc.Mapping):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(default_convert(d) for d in data)
    return data
