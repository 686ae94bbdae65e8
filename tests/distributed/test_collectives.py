"""Collectives on 2 MPI processes against numpy, and the process group's errors."""
import numpy as np
import pytest

from tests.support.mpi import check, require_mpi, run_mpi
from tests.support.runner import run_python

SIZE = 2


def rank_data(rank, shape):
    return np.arange(np.prod(shape), dtype=np.float64).reshape(shape) * (rank + 2) - rank


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("collectives")
    check(run_mpi("collectives.py", out))
    return [dict(np.load(out / f"rank{r}.npz")) for r in range(SIZE)]


def every(shape):
    return [rank_data(r, shape) for r in range(SIZE)]


@pytest.mark.parametrize("name, reduce", [("SUM", np.sum), ("AVG", np.mean), ("MAX", np.max), ("MIN", np.min),
                                          ("PRODUCT", np.prod)])
def test_all_reduce_in_place(results, name, reduce):
    expected = reduce(np.stack(every((2, 3))), axis=0)
    for res in results:
        np.testing.assert_allclose(res[f"all_reduce_{name}"], expected, rtol=1e-15)
        assert res[f"all_reduce_{name}_in_place"]


def test_all_reduce_integer_and_async_float32(results):
    for res in results:
        np.testing.assert_array_equal(res["all_reduce_int64"], np.sum(np.stack(every((5,))), 0).astype(np.int64))
        assert res["async_wait"] and res["async_completed"]
        expected = np.sum(np.stack([a.astype(np.float32) for a in every((4,))]), 0)
        np.testing.assert_array_equal(res["all_reduce_float32_async"], expected)
        assert res["all_reduce_float32_async"].dtype == np.float32


def test_rank_size_and_lifecycle(results):
    assert [int(r["rank"]) for r in results] == [0, 1]
    assert all(int(r["size"]) == SIZE and r["initialized"] and not r["initialized_after_destroy"] for r in results)


def test_broadcast_all_gather_reduce_scatter(results):
    for rank, res in enumerate(results):
        np.testing.assert_array_equal(res["broadcast_src1"], rank_data(1, (3,)))
        np.testing.assert_array_equal(res["all_gather"], np.stack(every((2, 2))))
        np.testing.assert_array_equal(res["all_gather_into_tensor"], np.stack(every((3,))))
        lists = [[rank_data(r, (2,)) * (i + 1) for i in range(SIZE)] for r in range(SIZE)]
        np.testing.assert_array_equal(res["reduce_scatter"], sum(lists[r][rank] for r in range(SIZE)))
        chunks = [rank_data(r, (SIZE * 3,)).reshape(SIZE, 3)[rank] for r in range(SIZE)]
        np.testing.assert_array_equal(res["reduce_scatter_tensor_max"], np.max(chunks, 0))


def test_not_initialized_is_torchs_error(torch):
    dist = torch.distributed
    if dist.is_initialized():
        pytest.skip("a process group is already initialised in this process")
    with pytest.raises(ValueError, match="Default process group has not been initialized, please make sure to "
                                         "call init_process_group."):
        dist.get_rank()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(torch.ones(2))


def _plain_python(code, env=None):
    require_mpi()
    return run_python("import derivgen as torch, derivgen.distributed as dist\n" + code, env=env)


def test_plain_python_is_a_world_of_one_and_init_twice_fails():
    proc = _plain_python(
        "dist.init_process_group('mpi')\n"
        "t = torch.tensor([1.5, 2.0]); dist.all_reduce(t, op=dist.ReduceOp.AVG)\n"
        "print(dist.get_rank(), dist.get_world_size(), t.tolist())\n"
        "try:\n    dist.init_process_group()\nexcept ValueError as e:\n    print(e)\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["0 1 [1.5, 2.0]", "trying to initialize the default process group twice!"]


def test_process_not_started_by_the_mpi_launcher_is_refused():
    proc = _plain_python("dist.init_process_group()", env={"OMPI_COMM_WORLD_SIZE": "4"})
    assert proc.returncode != 0
    assert "RuntimeError: init_process_group: the environment says this job has 4 processes" in proc.stderr
    assert "mpiexec -n 4" in proc.stderr


def test_without_mpi4py_the_error_says_what_to_install():
    proc = run_python("import sys; sys.modules['mpi4py'] = None\n"
                      "import derivgen.distributed as dist\n"
                      "print(dist.is_initialized())\n"
                      "dist.init_process_group('mpi')\n")
    assert proc.stdout.strip() == "False"
    assert "RuntimeError: Distributed package doesn't have MPI built in." in proc.stderr
    assert "pip install 'derivgen[distributed]'" in proc.stderr


def test_bad_arguments():
    proc = _plain_python(
        "for call in (lambda: dist.init_process_group('nccl'), lambda: dist.init_process_group(timeout=5)):\n"
        "    try:\n        call()\n    except (ValueError, TypeError) as e:\n        print(type(e).__name__, e)\n"
        "dist.init_process_group()\n"
        "for call in (lambda: dist.all_reduce(torch.ones(3, 2).t()), lambda: dist.broadcast(torch.ones(2), 3),\n"
        "             lambda: dist.all_gather_into_tensor(torch.ones(3), torch.ones(2)),\n"
        "             lambda: dist.all_reduce(torch.ones(2, dtype=torch.int64), op=dist.ReduceOp.AVG)):\n"
        "    try:\n        call()\n    except (ValueError, RuntimeError) as e:\n        print(type(e).__name__, e)\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "ValueError derivgen.distributed implements only the 'mpi' backend, got backend='nccl'",
        "TypeError Expected timeout argument to be of type datetime.timedelta, got int",
        "ValueError Tensors must be contiguous",
        "ValueError broadcast(): src=3 is not a rank of the group (world size 1)",
        "ValueError output tensor size must be equal to world_size times input tensor size (3 != 1 * 2)",
        "RuntimeError all_reduce(): ReduceOp.AVG needs a floating point tensor, got int64 (use ReduceOp.SUM and "
        "divide)"]
