"""The benchmarks' step workers: each library timed in a process of its own (benchmarks/step_workers.py).

No timing is compared; these check the protocol the benchmark's figures rest on: a worker builds the
step the parent names, returns its first loss, times the steps it is asked for and reports failures.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCHMARKS)

import step_workers  # noqa: E402


WORKER_SCRIPT = textwrap.dedent("""
    import os
    import sys

    sys.path.insert(0, {benchmarks!r})
    from step_workers import serve

    def build(workload):
        if workload == "broken":
            raise ValueError("no such workload: broken")
        calls = [0]

        def step():
            calls[0] += 1
            if workload == "fails-later" and calls[0] > 1:
                raise RuntimeError("step failed on call %d" % calls[0])
            return {{"count": float(calls[0]), "pid": float(os.getpid()),
                    "env": float(os.environ.get("DERIVGEN_TEST_WORKER_ENV", "0")),
                    "fails-later": 0.0}}[workload]
        return step

    if __name__ == "__main__":
        assert sys.argv[1:] == ["--_child-steps", "toy"], sys.argv
        sys.exit(serve(build))
""")


def start_toy(tmp_path):
    script = tmp_path / "toy_worker.py"
    script.write_text(WORKER_SCRIPT.format(benchmarks=BENCHMARKS))
    return step_workers.StepWorker(str(script), "toy")


@pytest.fixture
def worker(tmp_path):
    w = start_toy(tmp_path)
    yield w
    if w.proc.poll() is None:
        w.close()


def test_build_returns_the_first_loss_and_warms_up(worker):
    assert worker.build("count", warmup_s=0.0, min_steps=3) == 1.0
    wall, cpu = worker.time(count=1, settle=0.0)
    assert wall > 0 and cpu >= 0


def test_steps_run_in_another_process(worker):
    assert worker.build("pid", warmup_s=0.0, min_steps=1) != float(os.getpid())


def test_time_reports_seconds_per_step_of_a_block(worker):
    worker.build("count", warmup_s=0.0, min_steps=1)
    wall, cpu = worker.time(count=50, settle=0.01)
    assert wall > 0 and cpu >= 0


def test_a_failing_build_is_reported_with_its_traceback(worker):
    with pytest.raises(RuntimeError, match="(?s)toy step worker, build: .*ValueError: no such workload: broken"):
        worker.build("broken", warmup_s=0.0, min_steps=1)
    # the worker keeps serving after a failure
    assert worker.build("count", warmup_s=0.0, min_steps=1) == 1.0


def test_a_failing_step_is_reported(worker):
    with pytest.raises(RuntimeError, match="step failed on call 2"):
        worker.build("fails-later", warmup_s=0.0, min_steps=2)


def test_drop_and_close_end_the_worker_cleanly(worker):
    worker.build("count", warmup_s=0.0, min_steps=1)
    worker.drop()
    with pytest.raises(RuntimeError, match="TypeError"):
        worker.time(count=1, settle=0.0)  # no step after drop
    worker.close()
    assert worker.proc.returncode == 0


def test_a_worker_that_dies_is_reported(worker):
    worker.proc.kill()
    worker.proc.wait()
    with pytest.raises(RuntimeError, match="the toy step worker exited"):
        worker.build("count", warmup_s=0.0, min_steps=1)


def test_workers_start_from_the_launch_environment(tmp_path, monkeypatch):
    """What the parent's imports set in os.environ after launch does not reach a worker."""
    monkeypatch.setitem(step_workers.LAUNCH_ENV, "DERIVGEN_TEST_WORKER_ENV", "7")
    monkeypatch.setenv("DERIVGEN_TEST_WORKER_ENV", "9")
    w = start_toy(tmp_path)
    try:
        assert w.build("env", warmup_s=0.0, min_steps=1) == 7.0
    finally:
        w.close()


def test_run_py_numpy_worker_builds_the_same_step_as_the_parent():
    """run.py's own worker: the numpy reference of W1 gives the loss the parent computes in-process."""
    import run as bench_run
    step = bench_run.build("W1", "numpy", {"numpy": np})[0]
    expected = step_workers.as_float(step())
    w = step_workers.StepWorker(os.path.join(BENCHMARKS, "run.py"), "numpy")
    try:
        assert w.build("W1", warmup_s=0.0, min_steps=1) == pytest.approx(expected, rel=1e-6)
        wall, cpu = w.time(count=1, settle=0.0)
        assert wall > 0
        w.drop()
    finally:
        w.close()
    assert w.proc.returncode == 0
