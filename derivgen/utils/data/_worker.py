"""What runs in a ``DataLoader`` worker process: serial kernels only, seeding (torch's scheme: ``base_seed + worker_id`` for
derivgen's default generator and ``random``, torch's hash of both for numpy's global generator),
``get_worker_info``, the fetchers of map-style and iterable datasets, and the loop that answers the
main process's index requests. Errors travel back as ``ExceptionWrapper`` and are re-raised there with
torch's text ("Caught ValueError in DataLoader worker process 0. Original Traceback ...")."""
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from derivgen.config import OFF, settings
from derivgen.core.generator import manual_seed

_worker_info = None


@dataclass
class WorkerInfo:
    id: int
    num_workers: int
    seed: int
    dataset: object

    def __repr__(self):
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={self.dataset!r})")


def get_worker_info():
    """In a worker process: its ``WorkerInfo`` (id, num_workers, seed, its copy of the dataset);
    ``None`` in the main process."""
    return _worker_info


class ExceptionWrapper:
    """An exception and its formatted traceback, picklable, re-raised in another process."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - an exception type that cannot be rebuilt from a message
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    """KeyError quotes its message; this keeps the traceback readable (as torch does)."""

    def __repr__(self):
        return self


class IterableDatasetStopIteration:
    """A worker's iterable dataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class ResumeIteration:
    """Sent to persistent workers at the start of a new epoch: restart the dataset's iteration (the
    workers keep their random state, as torch's do)."""


class MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def generate_state(base_seed, worker_id):
    """numpy's seed for a worker: torch's hash of the base seed and worker id (four 32-bit words), so a
    dataset using ``np.random`` draws the same numbers as under torch for the same base seed."""
    init_a, mult_a, init_b, mult_b = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    mix_mult_l, mix_mult_r = 0xCA01F9DD, 0x4973F715
    xshift = 16
    mask32 = 0xFFFFFFFF
    entropy = [worker_id, base_seed & mask32, base_seed >> 32, 0]
    pool = [0] * 4
    hash_const_a = init_a

    def hash_(value):
        nonlocal hash_const_a
        value = (value ^ hash_const_a) & mask32
        hash_const_a = (hash_const_a * mult_a) & mask32
        value = (value * hash_const_a) & mask32
        return (value ^ (value >> xshift)) & mask32

    def mix(x, y):
        result = ((mix_mult_l * x) & mask32) - ((mix_mult_r * y) & mask32)
        result &= mask32
        return (result ^ (result >> xshift)) & mask32

    for i in range(len(pool)):
        pool[i] = hash_(entropy[i])
    for i_src in range(len(pool)):
        for i_dst in range(len(pool)):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_(pool[i_src]))
    hash_const_b = init_b
    state = []
    for i_dst in range(4):
        data_val = pool[i_dst]
        data_val = (data_val ^ hash_const_b) & mask32
        hash_const_b = (hash_const_b * mult_b) & mask32
        data_val = (data_val * hash_const_b) & mask32
        data_val = (data_val ^ (data_val >> xshift)) & mask32
        state.append(data_val)
    return state


def _seed_worker(base_seed, worker_id):
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(generate_state(base_seed, worker_id))
    return seed


def worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                base_seed, init_fn, worker_id, num_workers):
    """Answer ``(task index, sampler indices)`` requests until ``None`` arrives."""
    global _worker_info
    # one thread per worker, as torch's workers (set_num_threads(1)); besides, numba's OpenMP thread pool
    # does not survive fork: a forked child that starts a parallel kernel is terminated
    settings.parallel_threshold = OFF
    settings._derive()
    fetcher_cls = IterableFetcher if iterable else MapFetcher
    where = f"in DataLoader worker process {worker_id}"
    seed = _seed_worker(base_seed, worker_id)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    init_exception = None
    fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = fetcher_cls(dataset, auto_collation, collate_fn, drop_last)
    except Exception:  # noqa: BLE001 - reported to the main process with the first request
        init_exception = ExceptionWrapper(where=where)
    iteration_end = False
    while True:
        try:
            r = index_queue.get(timeout=5.0)
        except queue.Empty:
            continue
        if isinstance(r, ResumeIteration):
            data_queue.put((r, None))
            iteration_end = False
            fetcher = fetcher_cls(dataset, auto_collation, collate_fn, drop_last)
            continue
        if r is None:
            break
        if done_event.is_set() or iteration_end:
            continue
        idx, index = r
        if init_exception is not None:
            data = init_exception
            init_exception = None
        else:
            try:
                data = fetcher.fetch(index)
            except Exception as e:  # noqa: BLE001 - every error goes back to the main process
                if isinstance(e, StopIteration) and iterable:
                    data = IterableDatasetStopIteration(worker_id)
                    iteration_end = True
                else:
                    data = ExceptionWrapper(where=where)
        data_queue.put((idx, data))
        del data, idx, index, r
