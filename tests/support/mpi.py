"""Running a worker script under ``mpiexec -n N`` (the launcher of the MPI library mpi4py uses) with a
timeout, for the tests of ``derivgen.distributed``."""
import importlib.util
import os
import subprocess
import sys

import pytest

from tests.support.paths import REPO

WORKERS = os.path.join(REPO, "tests", "distributed", "workers")


def require_mpi():
    """Skip (loudly) when mpi4py is not installed; the only reason these tests may skip."""
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("SKIPPED LOUDLY: mpi4py is not installed; install the extra: pip install '.[distributed]'")


def mpiexec():
    from derivgen.launch import find_launcher
    return find_launcher()


def run_mpi(worker, *args, nproc=2, timeout=300, env=None):
    """Run ``tests/distributed/workers/<worker>`` on ``nproc`` processes; the CompletedProcess."""
    require_mpi()
    full_env = dict(os.environ)
    full_env.pop("PYTHONWARNINGS", None)
    full_env["PYTHONPATH"] = REPO + os.pathsep + full_env.get("PYTHONPATH", "")
    if env:
        full_env.update(env)
    cmd = [mpiexec(), "-n", str(nproc), sys.executable, os.path.join(WORKERS, worker), *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, env=full_env, cwd=REPO, timeout=timeout)


def check(proc):
    assert proc.returncode == 0, f"mpiexec failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc
