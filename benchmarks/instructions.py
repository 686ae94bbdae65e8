"""W1's cost per node as machine instructions (Valgrind's callgrind), derivgen against PyTorch.

On a shared machine timings of a few milliseconds move by a factor of two between runs, which hides
changes of a few percent. Instruction counts do not move: the same program executes the same
instructions. This counts the instructions of W1's forward + backward (2,000 ops on shape-(8,) tensors,
the same chain as run.py) per node: each library runs in a process of its own under callgrind with
instrumentation switched on only around the timed steps, once for one step and once for three, and the
difference is divided by two steps and the ops per step, so start-up, imports and the instrumentation
switch itself cancel. Instructions are not time (PyTorch's C++ retires more instructions per cycle
than the interpreter loop), but for comparing two versions of derivgen they are exact.

    python benchmarks/instructions.py              # derivgen and PyTorch
    python benchmarks/instructions.py --no-torch

Needs ``valgrind`` (and its ``callgrind_control``) on PATH; a W1 run takes a minute or two under it.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# times compiled kernels: no interpreted first calls (derivgen/kernels/interpreted.py), which would
# put numpy-expression calls and Numba's import into the first timed repeats
os.environ.setdefault("DERIVGEN_INTERPRETED_CALLS", "0")

N_OPS = 2000

# The child: W1's chain (run.py's _w1_cycle), instrumentation on for ``steps`` steps only.
CHILD = r"""
import os, subprocess, sys
import numpy as np
lib, steps, n_ops = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if lib == "torch":
    import torch as m
    m.set_num_threads(1)
else:
    import derivgen as m
rng = np.random.default_rng(1)
a, b, c = (m.tensor(rng.standard_normal(8).astype(np.float32), requires_grad=True) for _ in range(3))
cycle = (lambda h: h * b, lambda h: h + c, lambda h: h.sin(), lambda h: h.exp(),
         lambda h: h.tanh(), lambda h: h - c, lambda h: h.sigmoid(), lambda h: h * a)
ops = [cycle[i % 8] for i in range(n_ops)]


def step():
    h = a
    for op in ops:
        h = op(h)
    h.sum().backward()
    a.grad = b.grad = c.grad = None


for _ in range(3):  # compiled kernels, tape kernels and caches warm
    step()
subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], capture_output=True, check=True)
for _ in range(steps):
    step()
subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], capture_output=True, check=True)
"""


def _collected(lib, steps, child):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               NUMBA_NUM_THREADS="1")
    # the interpreter itself, not a launcher script (pyenv's shims are shell scripts)
    p = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/dev/null",
                        os.path.realpath(sys.executable), child, lib, str(steps), str(N_OPS)],
                       capture_output=True, text=True, env=env)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or m is None:
        raise SystemExit(f"callgrind run of {lib} failed (exit {p.returncode}):\n{p.stderr[-2000:]}")
    return int(m.group(1))


def per_node(lib, child):
    return (_collected(lib, 3, child) - _collected(lib, 1, child)) / 2 / N_OPS


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--no-torch", action="store_true", help="count derivgen only")
    args = p.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("valgrind (with callgrind_control) is not installed: apt-get install valgrind")
    libs = ["derivgen"]
    if not args.no_torch:
        try:
            import torch  # noqa: F401
            libs.append("torch")
        except ImportError:
            print("PyTorch is not installed: counting derivgen only")
    with tempfile.TemporaryDirectory() as tmp:
        child = os.path.join(tmp, "w1_child.py")
        with open(child, "w") as f:
            f.write(CHILD)
        counts = {lib: per_node(lib, child) for lib in libs}
    for lib, n in counts.items():
        print(f"W1 {lib:9s} {n:9.0f} instructions per node (forward + backward)")
    if "torch" in counts:
        print(f"derivgen/PyTorch {counts['derivgen'] / counts['torch']:.3f}")


if __name__ == "__main__":
    main()
