"""utils.data against PyTorch: batching, lengths, drop_last, default_collate of every container kind,
datasets and their errors; shuffling is a permutation, reproducible with a seeded generator."""
import collections

import numpy as np
import pytest


def _values(batch):
    """A batch as plain Python, tensors as (dtype name, values), to compare across libraries."""
    if hasattr(batch, "dtype") and hasattr(batch, "tolist"):
        return (str(batch.dtype).split(".")[-1], batch.tolist())
    if isinstance(batch, dict):
        return {k: _values(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(_values(v) for v in batch)
    return batch


@pytest.fixture
def expected(request):
    return request.param


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (4, True), (10, False),
                                                  (16, False), (16, True)])
def test_batches_and_length(torch, batch_size, drop_last):
    x = torch.arange(10.0).reshape(10, 1)
    y = torch.arange(10)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch_size,
                                         drop_last=drop_last)
    batches = [_values(b) for b in loader]
    full = 10 // batch_size
    assert len(loader) == len(batches) == (full if drop_last or 10 % batch_size == 0 else full + 1)
    flat = [v for b in batches for v in b[1][1]]
    assert flat == list(range(len(flat)))
    assert all(b[0][0] == "float32" and b[1][0] == "int64" for b in batches)
    if batches:
        assert batches[0][0][1] == [[float(i)] for i in range(min(batch_size, 10))]


SAMPLES = [
    [1, 2, 3],
    [1.5, 2.0],
    [True, False],
    ["a", "b"],
    [(1, 2.0), (3, 4.0)],
    [[1, 2], [3, 4]],
    [{"x": 1.0, "y": [1, 2]}, {"x": 2.0, "y": [3, 4]}],
    [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
    [np.float64(1.5), np.float64(2.5)],
    [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
]


@pytest.mark.parametrize("samples", SAMPLES, ids=[repr(s)[:30] for s in SAMPLES])
def test_default_collate(torch, samples):
    got = _values(torch.utils.data.default_collate(samples))
    import torch as real
    assert got == _values(real.utils.data.default_collate(samples))


def test_default_collate_of_tensors_and_named_tuples(torch):
    Point = collections.namedtuple("Point", "x y")
    batch = torch.utils.data.default_collate([Point(torch.ones(2), 1), Point(torch.zeros(2), 2)])
    assert type(batch) is Point
    assert batch.x.tolist() == [[1.0, 1.0], [0.0, 0.0]] and batch.y.tolist() == [1, 2]
    nested = torch.utils.data.default_collate([{"a": (torch.tensor(1.0), "s")}] * 2)
    assert list(nested) == ["a"] and nested["a"][0].tolist() == [1.0, 1.0] and nested["a"][1] == ("s", "s")


def test_default_collate_errors(torch):
    with pytest.raises(RuntimeError, match="^each element in list of batch should be of equal size$"):
        torch.utils.data.default_collate([[1, 2], [3]])
    with pytest.raises(TypeError) as info:
        torch.utils.data.default_collate([object()])
    assert str(info.value) == ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                               "found <class 'object'>")


def test_tensor_dataset_and_subset(torch):
    x, y = torch.arange(6.0), torch.arange(6)
    ds = torch.utils.data.TensorDataset(x, y)
    assert len(ds) == 6 and [v.item() for v in ds[4]] == [4.0, 4]
    sub = torch.utils.data.Subset(ds, [5, 1, 3])
    assert len(sub) == 3 and sub[0][1].item() == 5 and sub[2][0].item() == 3.0
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        torch.utils.data.TensorDataset(x, torch.arange(5))


def test_batch_size_none_converts_without_batching(torch):
    ds = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    out = list(torch.utils.data.DataLoader(ds, batch_size=None))
    assert [_values(b) for b in out] == [("float64", [1.0, 2.0]), ("float64", [3.0, 4.0])]


def test_custom_dataset_and_collate_fn(torch):
    class Squares(torch.utils.data.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"i": i, "sq": float(i * i)}
    loader = torch.utils.data.DataLoader(Squares(), batch_size=2, collate_fn=lambda b: [s["sq"] for s in b])
    assert list(loader) == [[0.0, 1.0], [4.0, 9.0], [16.0]]
    with pytest.raises(NotImplementedError):
        torch.utils.data.Dataset()[0]


def test_iterable_dataset(torch):
    class Count(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(7))
    assert [b.tolist() for b in torch.utils.data.DataLoader(Count(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in torch.utils.data.DataLoader(Count(), batch_size=3, drop_last=True)] == [[0, 1, 2],
                                                                                                       [3, 4, 5]]


def test_argument_errors(torch):
    ds = list(range(4))
    sampler = torch.utils.data.SequentialSampler(ds)
    with pytest.raises(ValueError, match="^sampler option is mutually exclusive with shuffle$"):
        torch.utils.data.DataLoader(ds, sampler=sampler, shuffle=True)
    batch_sampler = torch.utils.data.BatchSampler(sampler, 2, False)
    with pytest.raises(ValueError, match="^batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                         "sampler, and drop_last$"):
        torch.utils.data.DataLoader(ds, batch_sampler=batch_sampler, batch_size=3)
    with pytest.raises(ValueError, match="^batch_size should be a positive integer value, but got batch_size=0$"):
        torch.utils.data.DataLoader(ds, batch_size=0)
    with pytest.raises(ValueError, match="^num_workers option should be non-negative"):
        torch.utils.data.DataLoader(ds, num_workers=-1)
    assert [b.tolist() for b in torch.utils.data.DataLoader(ds, batch_sampler=batch_sampler)] == [[0, 1], [2, 3]]


def test_shuffle_is_a_permutation_reproducible_with_a_generator(torch):
    ds = torch.utils.data.TensorDataset(torch.arange(20))

    def epoch_orders(seed, epochs=3):
        loader = torch.utils.data.DataLoader(ds, batch_size=6, shuffle=True,
                                             generator=torch.Generator().manual_seed(seed))
        first = [v for (b,) in loader for v in b.tolist()]
        return first, [sorted(v for (b,) in loader for v in b.tolist()) for _ in range(epochs)]
    first, sorted_epochs = epoch_orders(5)
    again, _ = epoch_orders(5)
    other, _ = epoch_orders(6)
    assert first == again                      # same seed, same order
    assert first != other                      # another seed, another order
    assert all(e == list(range(20)) for e in sorted_epochs)  # every epoch is a permutation
    loader = torch.utils.data.DataLoader(ds, batch_size=20, shuffle=True, generator=torch.Generator().manual_seed(1))
    e1, e2 = (next(iter(loader))[0].tolist() for _ in range(2))
    assert e1 != e2 and sorted(e1) == sorted(e2) == list(range(20))  # each epoch draws a new permutation


def test_random_split(torch):
    ds = list(range(10))
    a, b = torch.utils.data.random_split(ds, [7, 3], generator=torch.Generator().manual_seed(0))
    assert len(a) == 7 and len(b) == 3 and sorted(list(a) + list(b)) == ds
    parts = torch.utils.data.random_split(ds, [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [5, 3, 2]
    with pytest.raises(ValueError, match="^Sum of input lengths does not equal the length of the input dataset!$"):
        torch.utils.data.random_split(ds, [3, 3])
    again = torch.utils.data.random_split(ds, [7, 3], generator=torch.Generator().manual_seed(0))
    assert list(again[0]) == list(a)
