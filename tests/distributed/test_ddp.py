"""DistributedDataParallel on 2 MPI processes against single-process training on the whole batch."""
import numpy as np
import pytest

import derivgen as torch
from derivgen.nn.parallel.buckets import assign_buckets
from tests.support.mpi import check, run_mpi

SIZE = 2


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    path = tmp_path_factory.mktemp("ddp")
    rng = np.random.default_rng(7)
    np.savez(path / "data.npz", x=rng.standard_normal((8, 4)), y=rng.standard_normal((8, 1)),
             x2=rng.standard_normal((8, 4)), y2=rng.standard_normal((8, 1)))
    return path


def run(out, scenario):
    check(run_mpi("ddp.py", out, scenario))
    data = dict(np.load(out / "data.npz"))
    return data, [dict(np.load(out / f"{scenario}_rank{r}.npz")) for r in range(SIZE)]


def mlp_from(res, prefix="init."):
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8), torch.nn.Tanh(),
                                torch.nn.Linear(8, 1)).double()
    model.load_state_dict({k[len(prefix):]: torch.tensor(v) for k, v in res.items() if k.startswith(prefix)})
    return model


def params_of(res, prefix):
    return {k[len(prefix):]: v for k, v in res.items() if k.startswith(prefix)}


def test_training_matches_one_process_on_the_whole_batch(out):
    data, ranks = run(out, "train")
    assert int(ranks[0]["buckets"]) > 1
    for r in ranks[1:]:  # rank 0's initial weights reached every rank
        for k, v in params_of(ranks[0], "init.").items():
            np.testing.assert_array_equal(r["init." + k], v)
    model = mlp_from(ranks[0])
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.tensor(data["x"]), torch.tensor(data["y"])
    for _ in range(3):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    expected = {k: p.detach().numpy() for k, p in model.named_parameters()}
    for r in ranks:
        final = params_of(r, "final.")
        assert final.keys() == expected.keys()
        for k, v in expected.items():
            np.testing.assert_allclose(final[k], v, rtol=0, atol=1e-10)
            np.testing.assert_array_equal(final[k], params_of(ranks[0], "final.")[k])  # identical on every rank
    assert not np.allclose(ranks[0]["final.0.weight"], ranks[0]["init.0.weight"])


def test_no_sync_accumulates_locally_and_syncs_on_the_next_backward(out):
    data, ranks = run(out, "no_sync")
    model = mlp_from(ranks[0])
    n = data["x"].shape[0] // SIZE

    def local_grads(rank, x, y):
        model.zero_grad()
        torch.nn.functional.mse_loss(model(torch.tensor(data[x][rank * n:(rank + 1) * n])),
                                     torch.tensor(data[y][rank * n:(rank + 1) * n])).backward()
        return {k: p.grad.numpy().copy() for k, p in model.named_parameters()}

    first = [local_grads(r, "x", "y") for r in range(SIZE)]
    second = [local_grads(r, "x2", "y2") for r in range(SIZE)]
    for r, res in enumerate(ranks):
        for k, g in params_of(res, "local.").items():  # inside no_sync: this rank's own gradient
            np.testing.assert_allclose(g, first[r][k], rtol=0, atol=1e-12)
        for k, g in params_of(res, "synced.").items():  # then the average of the accumulated sums
            expected = sum(first[q][k] + second[q][k] for q in range(SIZE)) / SIZE
            np.testing.assert_allclose(g, expected, rtol=0, atol=1e-12)
    assert not np.allclose(ranks[0]["local.0.weight"], ranks[1]["local.0.weight"])


def test_find_unused_parameters(out):
    data, ranks = run(out, "unused")
    init = params_of(ranks[0], "init.")
    n = data["x"].shape[0] // SIZE
    for res in ranks:
        # a: used everywhere; b: only rank 0 (rank 1 contributes zeros); never: unused, grad stays None
        xs = [data["x"][r * n:(r + 1) * n] for r in range(SIZE)]
        np.testing.assert_allclose(res["grad.a.weight"], np.mean([x.sum(0, keepdims=True) for x in xs], 0), atol=1e-12)
        np.testing.assert_allclose(res["grad.a.bias"], [n], atol=1e-12)
        np.testing.assert_allclose(res["grad.b.weight"], xs[0].sum(0, keepdims=True) / SIZE, atol=1e-12)
        np.testing.assert_allclose(res["grad.b.bias"], [n / SIZE], atol=1e-12)
        assert np.isnan(res["grad.never.weight"]) and np.isnan(res["grad.never.bias"])
        assert str(res["error"]).startswith("Expected to have finished reduction in the prior iteration before "
                                            "starting a new one.")
        assert str(res["error"]).endswith(f"did not receive grad for rank {int(res is ranks[1])}: 4 5")
    assert init["a.weight"].shape == (1, 4)


def test_buckets_follow_reverse_parameter_order_and_dtype():
    params = [torch.zeros(100, dtype=torch.float64, requires_grad=True) for _ in range(5)]
    params.insert(2, torch.zeros(10, dtype=torch.float32, requires_grad=True))
    buckets = assign_buckets(params, bucket_cap_bytes=1600)
    index = {id(p): i for i, p in enumerate(params)}
    assert [[index[id(p)] for p in b.params] for b in buckets] == [[5, 4], [3, 1], [2], [0]]
    assert [b.buffer.dtype for b in buckets] == [np.float64, np.float64, np.float32, np.float64]
    assert [b.buffer.size for b in buckets] == [200, 200, 10, 100]
