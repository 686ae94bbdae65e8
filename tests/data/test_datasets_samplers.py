"""utils.data against PyTorch: ConcatDataset / ChainDataset (and ``+``), Subset and random_split with a
generator, SubsetRandomSampler, WeightedRandomSampler (draws, errors), BatchSampler over any sampler.
Random orders are derivgen's own: they are checked as permutations / draws that a seed reproduces."""
import pytest


def _data(torch):
    return torch.utils.data


def test_concat_dataset(torch):
    data = _data(torch)
    a = data.TensorDataset(torch.arange(3))
    b = data.TensorDataset(torch.arange(10, 15))
    cat = data.ConcatDataset([a, b])
    assert len(cat) == 8 and cat.cumulative_sizes == [3, 8]
    assert [cat[i][0].item() for i in range(8)] == [0, 1, 2, 10, 11, 12, 13, 14]
    assert cat[-1][0].item() == 14 and cat[-8][0].item() == 0
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        cat[-9]
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        data.ConcatDataset([])
    assert len(a + b) == 8 and isinstance(a + b, data.ConcatDataset)
    loader = data.DataLoader(cat, batch_size=3)
    assert [batch[0].tolist() for batch in loader] == [[0, 1, 2], [10, 11, 12], [13, 14]]


def test_chain_dataset(torch):
    data = _data(torch)

    class Count(data.IterableDataset):
        def __init__(self, lo, hi):
            self.lo, self.hi = lo, hi

        def __iter__(self):
            return iter(range(self.lo, self.hi))

        def __len__(self):
            return self.hi - self.lo

    chain = data.ChainDataset([Count(0, 3), Count(7, 9)])
    assert list(chain) == [0, 1, 2, 7, 8] and len(chain) == 5
    assert list(Count(0, 2) + Count(5, 6)) == [0, 1, 5]
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        data.ConcatDataset([Count(0, 1)])
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(data.ChainDataset([data.TensorDataset(torch.arange(2))]))
    assert [b.tolist() for b in data.DataLoader(chain, batch_size=2)] == [[0, 1], [2, 7], [8]]


def test_random_split_with_generator(torch):
    data = _data(torch)
    ds = data.TensorDataset(torch.arange(10))
    g1 = torch.Generator().manual_seed(42)
    g2 = torch.Generator().manual_seed(42)
    s1 = data.random_split(ds, [0.5, 0.3, 0.2], generator=g1)
    s2 = data.random_split(ds, [0.5, 0.3, 0.2], generator=g2)
    assert [len(s) for s in s1] == [5, 3, 2]
    assert [s.indices for s in s1] == [s.indices for s in s2]
    assert sorted(i for s in s1 for i in s.indices) == list(range(10))
    assert all(isinstance(s, data.Subset) for s in s1)
    assert [len(s) for s in data.random_split(ds, [0.34, 0.33, 0.33])] == [4, 3, 3]
    with pytest.warns(UserWarning) as record:
        data.random_split(data.TensorDataset(torch.arange(2)), [0.9, 0.05, 0.05])
    assert [str(w.message) for w in record] == [
        f"Length of split at index {i} is 0. This might result in an empty dataset." for i in (1, 2)]
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        data.random_split(ds, [3, 3])


def test_subset_random_sampler(torch):
    data = _data(torch)
    indices = [3, 7, 11, 19]
    s = data.SubsetRandomSampler(indices, generator=torch.Generator().manual_seed(0))
    first, second = list(s), list(s)
    assert sorted(first) == indices and sorted(second) == indices and len(s) == 4
    again = data.SubsetRandomSampler(indices, generator=torch.Generator().manual_seed(0))
    assert list(again) == first
    batches = list(data.BatchSampler(data.SubsetRandomSampler(indices), 3, drop_last=False))
    assert [len(b) for b in batches] == [3, 1]


def test_weighted_random_sampler(torch):
    data = _data(torch)
    s = data.WeightedRandomSampler([0.1, 0.0, 0.9, 0.0], 200, generator=torch.Generator().manual_seed(1))
    draws = list(s)
    assert len(draws) == 200 == len(s)
    assert set(draws) <= {0, 2} and draws.count(2) > draws.count(0)
    assert s.weights.dtype == torch.float64
    again = data.WeightedRandomSampler([0.1, 0.0, 0.9, 0.0], 200, generator=torch.Generator().manual_seed(1))
    assert list(again) == draws
    no_repl = list(data.WeightedRandomSampler([1.0, 2.0, 3.0, 4.0], 4, replacement=False))
    assert sorted(no_repl) == [0, 1, 2, 3]
    assert len(set(data.WeightedRandomSampler([1.0, 0.0, 0.0], 2, replacement=False))) == 2
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        list(data.WeightedRandomSampler([1.0, 1.0], 3, replacement=False))
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        data.WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=True"):
        data.WeightedRandomSampler([1.0], True)
    with pytest.raises(ValueError, match="replacement should be a boolean value, but got replacement=1"):
        data.WeightedRandomSampler([1.0], 2, replacement=1)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence but given weights have shape \(2, 1\)"):
        data.WeightedRandomSampler([[1.0], [2.0]], 2)


def test_dataloader_with_sampler_and_batch_sampler(torch):
    data = _data(torch)
    ds = data.TensorDataset(torch.arange(6))
    loader = data.DataLoader(ds, sampler=[5, 3, 1], batch_size=2)
    assert [b[0].tolist() for b in loader] == [[5, 3], [1]]
    loader = data.DataLoader(ds, batch_sampler=[[0, 5], [2], [4, 1, 3]])
    assert [b[0].tolist() for b in loader] == [[0, 5], [2], [4, 1, 3]] and len(loader) == 3
    loader = data.DataLoader(ds, batch_size=4, pin_memory=True, collate_fn=lambda batch: [s[0].item() for s in batch])
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found, then "
                                         "device pinned memory won't be used."):
        assert list(loader) == [[0, 1, 2, 3], [4, 5]]
