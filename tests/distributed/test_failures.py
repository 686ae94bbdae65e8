"""A failing rank ends the whole job with a clear error instead of leaving the others waiting."""
import time

from tests.support.mpi import run_mpi


def test_uncaught_exception_aborts_every_rank():
    start = time.monotonic()
    proc = run_mpi("failing_rank.py", "raise", timeout=120)
    took = time.monotonic() - start
    assert proc.returncode != 0
    assert "ValueError: rank 1 fails on purpose" in proc.stderr
    assert "derivgen.distributed: rank 1 raised ValueError; aborting all ranks" in proc.stderr
    assert "rank 0 finished" not in proc.stdout
    assert took < 100


def test_a_rank_that_never_joins_times_out():
    start = time.monotonic()
    proc = run_mpi("failing_rank.py", "stall", timeout=100)
    took = time.monotonic() - start
    assert proc.returncode != 0
    assert "RuntimeError: [Rank 0] collective operation timeout: all_reduce did not complete within 3000 " \
           "milliseconds" in proc.stderr, proc.stderr
    assert "rank 0 raised RuntimeError; aborting all ranks" in proc.stderr
    assert took < 90  # the stalled rank sleeps 120 s: the abort ended it
