"""A failing rank ends the whole job with a clear error instead of leaving the others waiting."""
import os
import threading
import time

from derivgen.distributed.process_group import _wait_until_output_is_read
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


def test_an_aborting_rank_waits_until_its_output_is_read():
    # the launcher drops a rank's unread output when the job aborts: the abort waits for the reader
    read, write = os.pipe()
    os.write(write, b"Traceback (most recent call last): ...")
    reader = threading.Timer(0.3, os.read, (read, 1024))
    reader.start()
    start = time.monotonic()
    _wait_until_output_is_read((write,), limit=10)
    took = time.monotonic() - start
    reader.join()
    os.close(read)
    os.close(write)
    assert 0.3 <= took < 5


def test_the_wait_for_unread_output_is_bounded():
    read, write = os.pipe()
    os.write(write, b"nobody reads this")
    start = time.monotonic()
    _wait_until_output_is_read((write,), limit=0.2)
    took = time.monotonic() - start
    os.close(read)
    os.close(write)
    assert 0.2 <= took < 2
