"""Timing each implementation's steps in a process of its own (used by run.py and models.py).

In one shared process each library's idle pool threads, its allocator state and its import's side
effects reach the other's timings (two-thread W3: derivgen 1.6 ms alone, 2.4 ms beside PyTorch); a
program that uses one of them has none of that. So each implementation runs in a step worker, a
child process that has imported only its library (and numpy), started from the environment as the
benchmark was launched. The parent still interleaves the workers round by round, so load from other
processes hits them alike.

Each timed block follows ``settle`` seconds of untimed steps of the same implementation. The worker
before it in the round leaves its thread pool spinning (OpenBLAS's workers spin for about 0.1 s), and
derivgen sizes its threads from the last 0.25 s of other processes' CPU use (derivgen/kernels/threads.py),
which includes the other workers' steps. After the settling steps a worker times the steady state of a
training loop that runs alone, as a program using that library would. That matters beside a busy
process too: a loop that runs continuously has used its fair share of the cores, while a single step
after a pause starts with the scheduler's credit for the pause (PyTorch's two-thread W3 beside one
spinning process: 1.8 ms median as single steps after pauses, 90 ms as a continuous loop).

Requests and replies are JSON lines on the worker's stdin and stdout.
"""
import gc
import json
import os
import subprocess
import sys
import time
import traceback

import numpy as np

# The environment as launched, before any library is imported: workers start from it, not from
# os.environ as the libraries imported in the parent may have left it.
LAUNCH_ENV = dict(os.environ)

SETTLE_S = 0.3


def as_float(loss):
    """A step's loss (a tensor of either library, a numpy value or a Python number) as a float."""
    if hasattr(loss, "detach"):
        loss = loss.detach().numpy()
    return float(np.asarray(loss))


class StepWorker:
    """A child process running ``script --_child-steps IMPL``, whose ``serve`` builds and times steps."""

    def __init__(self, script, impl, extra_args=()):
        self.impl = impl
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(script), *extra_args, "--_child-steps", impl],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     cwd=os.path.dirname(os.path.abspath(script)), env=LAUNCH_ENV)

    def call(self, cmd, **fields):
        try:
            self.proc.stdin.write(json.dumps({"cmd": cmd, **fields}) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            line = ""
        else:
            line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.impl} step worker exited (rc {self.proc.wait()})")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"{self.impl} step worker, {cmd}: {reply['error']}")
        return reply

    def build(self, workload, warmup_s=0.3, min_steps=2):
        """Build ``workload``'s step, run it once (its loss is returned, for the caller to compare) and
        warm it up for at least ``warmup_s`` seconds and ``min_steps`` steps."""
        return self.call("build", workload=workload, warmup_s=warmup_s, min_steps=min_steps)["loss"]

    def probe(self, clock):
        """The least of three single steps, in seconds on ``clock`` ("wall" or "cpu")."""
        return self.call("probe", clock=clock)["seconds"]

    def time(self, count=1, settle=SETTLE_S):
        """(wall, process CPU) seconds per step over ``count`` consecutive steps after ``settle`` seconds
        of untimed ones (and a garbage collection outside the timing)."""
        reply = self.call("time", count=count, settle=settle)
        return reply["wall"], reply["cpu"]

    def drop(self):
        self.call("drop")

    def close(self):
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        self.proc.wait(timeout=60)


def warm_up(step, seconds, min_steps):
    t_end = time.perf_counter() + seconds
    for i in range(max(min_steps, 1) * 1000):
        step()
        if i + 1 >= min_steps and time.perf_counter() >= t_end:
            break


def serve(build_step):
    """The worker's loop: ``build_step(workload)`` returns a step callable (returning its loss)."""
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # what the libraries print goes to stderr; the reply channel stays clean
    step = None
    for line in sys.stdin:
        msg = json.loads(line)
        try:
            cmd = msg["cmd"]
            if cmd == "build":
                step = build_step(msg["workload"])
                reply = {"loss": as_float(step())}
                warm_up(step, msg["warmup_s"], msg["min_steps"])
            elif cmd == "probe":
                clock = time.process_time if msg["clock"] == "cpu" else time.perf_counter
                one = []
                for _ in range(3):
                    t0 = clock()
                    step()
                    one.append(clock() - t0)
                reply = {"seconds": min(one)}
            elif cmd == "time":
                t_end = time.perf_counter() + msg["settle"]
                while time.perf_counter() < t_end:
                    step()
                count = msg["count"]
                gc.collect()
                c0 = time.process_time()
                t0 = time.perf_counter()
                for _ in range(count):
                    step()
                reply = {"wall": (time.perf_counter() - t0) / count, "cpu": (time.process_time() - c0) / count}
            elif cmd == "drop":
                step = None
                gc.collect()
                reply = {}
            else:
                reply = {"error": f"unknown request {cmd!r}"}
        except Exception:  # noqa: BLE001 - the parent reports it
            reply = {"error": traceback.format_exc()[-3000:]}
        replies.write(json.dumps(reply) + "\n")
    return 0
