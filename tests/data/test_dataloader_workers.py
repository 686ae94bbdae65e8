"""DataLoader with worker processes against PyTorch: the same batches, in order, as without workers;
iterable datasets split with get_worker_info; worker seeds and worker_init_fn; persistent workers over
several epochs; in_order=False; a worker's exception re-raised with torch's text; the argument errors;
and the spawn start method (the dataset here is importable, as spawn requires)."""
import importlib

import pytest


def _data(torch):
    return importlib.import_module(torch.__name__ + ".utils.data")


def _values(batches):
    return [[t.tolist() for t in b] if isinstance(b, (list, tuple)) else b.tolist() for b in batches]


class SquareDataset:
    """A map-style dataset importable by spawned workers (module level): sample i is (i, i*i)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i, i * i


@pytest.mark.parametrize("batch_size,drop_last", [(3, False), (4, True), (1, False)])
def test_workers_give_the_batches_of_a_single_process(torch, batch_size, drop_last):
    data = _data(torch)
    ds = data.TensorDataset(torch.arange(22.0).reshape(11, 2), torch.arange(11))
    plain = _values(data.DataLoader(ds, batch_size=batch_size, drop_last=drop_last))
    loader = data.DataLoader(ds, batch_size=batch_size, drop_last=drop_last, num_workers=2, prefetch_factor=3)
    assert _values(loader) == plain
    assert len(loader) == len(plain)


def test_shuffle_with_a_seeded_generator_is_reproducible(torch):
    data = _data(torch)
    ds = data.TensorDataset(torch.arange(12))

    def epoch(workers):
        g = torch.Generator().manual_seed(5)
        return _values(data.DataLoader(ds, batch_size=4, shuffle=True, generator=g, num_workers=workers))

    with_workers = epoch(2)
    assert with_workers == epoch(2) == epoch(0)
    assert sorted(i for b in with_workers for i in b[0]) == list(range(12))


def test_iterable_dataset_split_by_worker_info(torch):
    data = _data(torch)

    class Numbers(data.IterableDataset):
        def __iter__(self):
            info = data.get_worker_info()
            assert info.num_workers == 3
            return iter(range(info.id, 10, info.num_workers))

    assert data.get_worker_info() is None
    assert _values(data.DataLoader(Numbers(), batch_size=2, num_workers=3)) == [
        [0, 3], [1, 4], [2, 5], [6, 9], [7], [8]]
    assert list(data.DataLoader(Numbers(), batch_size=None, num_workers=3)) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]


def test_worker_seeds_and_init_fn(torch):
    data = _data(torch)

    class Report(data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            info = data.get_worker_info()
            return [info.id, info.seed, torch.initial_seed(), getattr(info.dataset, "init_by", -1)]

    def init_fn(worker_id):
        data.get_worker_info().dataset.init_by = worker_id

    def rows_of(loader):
        return [[t.item() for t in batch] for batch in loader]

    g = torch.Generator().manual_seed(3)
    rows = rows_of(data.DataLoader(Report(), num_workers=2, worker_init_fn=init_fn, generator=g))
    assert [r[0] for r in rows] == [0, 1, 0, 1]
    assert all(r[1] == r[2] for r in rows)  # the worker's generator is seeded with info.seed
    assert rows[1][1] == rows[0][1] + 1  # base_seed + worker_id
    assert [r[3] for r in rows] == [0, 1, 0, 1]
    g = torch.Generator().manual_seed(3)
    again = rows_of(data.DataLoader(Report(), num_workers=2, worker_init_fn=init_fn, generator=g))
    assert again == rows


def test_persistent_workers_across_epochs(torch):
    data = _data(torch)

    class Count(data.Dataset):
        def __init__(self):
            self.calls = 0

        def __len__(self):
            return 5

        def __getitem__(self, i):
            self.calls += 1  # in the worker's copy: grows across epochs only if the worker persists
            return [i, self.calls]

    loader = data.DataLoader(Count(), batch_size=5, num_workers=1, persistent_workers=True)
    first = _values(loader)
    second = _values(loader)
    assert first == [[[0, 1, 2, 3, 4], [1, 2, 3, 4, 5]]]
    assert second == [[[0, 1, 2, 3, 4], [6, 7, 8, 9, 10]]]
    fresh = data.DataLoader(Count(), batch_size=5, num_workers=1)
    assert _values(fresh) == _values(fresh) == first


def test_out_of_order_results(torch):
    data = _data(torch)
    ds = data.TensorDataset(torch.arange(9))
    got = _values(data.DataLoader(ds, batch_size=2, num_workers=2, in_order=False))
    assert sorted(i for b in got for i in b[0]) == list(range(9)) and len(got) == 5


def test_worker_exception(torch):
    data = _data(torch)

    class Bad(data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i == 2:
                raise ValueError("bad index 2")
            return i

    loader = data.DataLoader(Bad(), num_workers=2)
    with pytest.raises(ValueError) as info:
        list(loader)
    text = str(info.value)
    assert text.startswith("Caught ValueError in DataLoader worker process 0.\n"
                           "Original Traceback (most recent call last):")
    assert text.rstrip().endswith("ValueError: bad index 2")

    class BadKey(data.Dataset):
        def __len__(self):
            return 1

        def __getitem__(self, i):
            return {}["missing"]

    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        list(data.DataLoader(BadKey(), num_workers=1))


def test_worker_argument_errors(torch):
    data = _data(torch)
    ds = data.TensorDataset(torch.arange(3))
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified in multiprocessing.let "
                                         "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor "
                                         "to None."):
        data.DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        data.DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="multiprocessing_context can only be used with multi-process loading "
                                         r"\(num_workers > 0\), but got num_workers=0"):
        data.DataLoader(ds, multiprocessing_context="fork")
    with pytest.raises(ValueError, match="multiprocessing_context option should specify a valid start method in"):
        data.DataLoader(ds, num_workers=1, multiprocessing_context="teleport")
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        data.DataLoader(ds, num_workers=-1)


def test_spawn_start_method():
    """derivgen only: a spawned worker imports the library afresh (tens of seconds), and torch's spawn
    path is not what this checks (pickling derivgen's dataset, collate and tensors)."""
    import derivgen as torch
    data = _data(torch)
    loader = data.DataLoader(SquareDataset(5), batch_size=2, num_workers=1, multiprocessing_context="spawn")
    assert _values(loader) == [[[0, 1], [0, 1]], [[2, 3], [4, 9]], [[4], [16]]]


def test_workers_after_multithreaded_kernels_in_the_parent(torch):
    """The parent has run multi-threaded kernels (arrays past the parallel threshold) before forking; the
    workers compute on large arrays too (they run serial kernels: a forked OpenMP pool would abort them)."""
    data = _data(torch)
    x = torch.randn(700, 700)
    assert float((x.exp() * x.sin() + 1).sum()) != 0

    class Big(data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            a = torch.ones(600, 600) * i
            return (a.exp() * a.sin()).sum()

    loader = data.DataLoader(Big(), batch_size=2, num_workers=2, timeout=300)
    values = [round(v, 1) for b in loader for v in b.tolist()]
    expected = [round(600 * 600 * __import__("math").exp(i) * __import__("math").sin(i), 1) for i in range(4)]
    assert values == pytest.approx(expected, rel=1e-4)
