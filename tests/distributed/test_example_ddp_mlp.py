"""examples/ddp_mlp.py prints the same losses on 1 and on 2 processes."""
import os
import subprocess
import sys

from tests.support.mpi import REPO, check, run_mpi, require_mpi

EXAMPLE = os.path.join(REPO, "examples", "ddp_mlp.py")


def losses(stdout):
    return [float(line.split()[-1]) for line in stdout.splitlines() if line.startswith("epoch")]


def test_one_and_two_processes_print_the_same_losses():
    require_mpi()
    one = subprocess.run([sys.executable, EXAMPLE, "--epochs", "3"], capture_output=True, text=True, cwd=REPO,
                         timeout=300)
    assert one.returncode == 0, one.stderr
    two = check(run_mpi(os.path.relpath(EXAMPLE, os.path.join(REPO, "tests", "distributed", "workers")),
                        "--epochs", "3"))
    a, b = losses(one.stdout), losses(two.stdout)
    assert len(a) == 3 and len(b) == 3
    assert a[2] < a[0]
    for x, y in zip(a, b):
        assert abs(x - y) <= 1e-10 * abs(x)
