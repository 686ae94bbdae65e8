"""DistributedSampler: torch's index assignment."""
import itertools

import pytest

import derivgen
from derivgen.utils.data.distributed import DistributedSampler


@pytest.mark.parametrize("n, replicas, drop_last", list(itertools.product([1, 5, 10, 11, 16], [1, 2, 3, 4], [False, True])))
def test_unshuffled_shares_are_torchs(n, replicas, drop_last):
    tdata = pytest.importorskip("torch.utils.data.distributed", reason="SKIPPED LOUDLY: torch is not installed")
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = tdata.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("drop_last", [False, True])
def test_shuffled_shares_partition_one_seeded_permutation(drop_last):
    n, replicas = 11, 3
    shares = [list(DistributedSampler(range(n), replicas, r, seed=5, drop_last=drop_last)) for r in range(replicas)]
    perm = derivgen.randperm(n, generator=derivgen.Generator().manual_seed(5)).tolist()
    total = len(shares[0]) * replicas
    padded = (perm + perm)[:total]
    assert [padded[r::replicas] for r in range(replicas)] == shares
    assert shares == [list(DistributedSampler(range(n), replicas, r, seed=5, drop_last=drop_last))
                      for r in range(replicas)]  # the same on every rank: a function of seed and epoch
    sampler = DistributedSampler(range(n), replicas, 0, seed=5, drop_last=drop_last)
    sampler.set_epoch(1)
    assert list(sampler) != shares[0]


def test_invalid_rank_is_torchs_error(torch):
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        torch.utils.data.distributed.DistributedSampler(range(4), num_replicas=2, rank=2)


def test_without_a_process_group_the_world_is_asked(torch):
    if torch.distributed.is_initialized():
        pytest.skip("a process group is initialised in this process")
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        torch.utils.data.distributed.DistributedSampler(range(4))
