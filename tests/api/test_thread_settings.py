"""``set_num_threads`` / ``get_num_threads`` / ``set_num_interop_threads`` / ``get_num_interop_threads``
against PyTorch: what each accepts, its error types and texts, and what the getters report afterwards.
PyTorch's inter-op count may be set once per process, so each sequence runs in a fresh process per module."""
import json
import os
import subprocess
import sys

import pytest

from tests.support.paths import REPO

pytest.importorskip("torch")

SEQUENCE = r"""
import json, sys
import numpy as np
mod = __import__(sys.argv[1])
calls = [("set_num_threads", 0), ("set_num_threads", -3), ("set_num_threads", 1.5), ("set_num_threads", "2"),
         ("set_num_threads", True), ("set_num_threads", None), ("set_num_threads", [2]),
         ("set_num_threads", np.float64(2.0)), ("set_num_threads", np.array(2)), ("set_num_threads", 2**31),
         ("set_num_threads", mod.tensor(2)), ("set_num_threads", np.int64(1)), ("get_num_threads",),
         ("set_num_threads", 3), ("get_num_threads",), ("set_num_threads", 1), ("get_num_threads",),
         ("set_num_interop_threads", 0), ("set_num_interop_threads", 2.0), ("set_num_interop_threads", 3),
         ("get_num_interop_threads",), ("set_num_interop_threads", 1), ("get_num_interop_threads",)]
out = []
for name, *args in calls:
    try:
        out.append(["ok", getattr(mod, name)(*args)])
    except Exception as e:
        out.append([type(e).__name__, str(e)])
for name, kwargs in (("set_num_threads", {"n": 2}), ("set_num_threads", {})):
    try:
        getattr(mod, name)(**kwargs)
        out.append(["ok", None])
    except TypeError as e:
        out.append(["TypeError", None])  # the texts name torch's C binding
print(json.dumps(out))
"""


def _run(module, env=None):
    proc = subprocess.run([sys.executable, "-c", SEQUENCE, module], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, **(env or {})}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_thread_settings_match_torch():
    ours, theirs = _run("derivgen"), _run("torch")
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"call {i}: derivgen {a}, torch {b}"


def test_default_thread_count_follows_omp_num_threads():
    code = "import sys; m = __import__(sys.argv[1]); print(m.get_num_threads())"
    for value in ("1", "2"):
        counts = [subprocess.run([sys.executable, "-c", code, m], capture_output=True, text=True, cwd=REPO,
                                 env={**os.environ, "OMP_NUM_THREADS": value}, timeout=120).stdout.strip()
                  for m in ("derivgen", "torch")]
        assert counts[0] == counts[1] == str(min(int(value), len(os.sched_getaffinity(0)))), counts
