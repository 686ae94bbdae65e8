#!/usr/bin/env python
"""W6 (one LeNet-5 training step, ``examples/lenet.py``, batch 64) phase by phase, derivgen against
PyTorch: conv1, relu + pool1, conv2, relu + pool2, the linear layers with the loss, backward, the SGD
step. One thread (the thread variables are set before numpy starts OpenBLAS), thread CPU time, steps
alternating between the libraries; medians and minima in ms. Nothing here asserts on a timing.

    python benchmarks/w6_phases.py [--rounds 60]
"""
import os

# times compiled kernels: no interpreted first calls (derivgen/kernels/interpreted.py), which would
# put numpy-expression calls and Numba's import into the first timed repeats
os.environ.setdefault("DERIVGEN_INTERPRETED_CALLS", "0")

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PHASES = ("conv1", "relu+pool1", "conv2", "relu+pool2", "fc+loss", "backward", "sgd")


def build(lib):
    sys.argv = [sys.argv[0]] + (["--torch"] if lib.__name__ == "torch" else [])
    spec = importlib.util.spec_from_file_location(f"lenet_{lib.__name__}",
                                                  os.path.join(os.path.dirname(HERE), "examples", "lenet.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rng = np.random.default_rng(0)
    model = mod.LeNet5()
    model.load_state_dict(mod.numpy_weights(model, rng))
    images, labels = mod.synthetic_digits(64, rng)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = lib.nn.CrossEntropyLoss()
    F = lib.nn.functional
    clock = time.thread_time

    def step(times):
        t = [clock()]
        optimizer.zero_grad()
        a = model.conv1(images)
        t.append(clock())
        a = model.pool(F.relu(a))
        t.append(clock())
        a = model.conv2(a)
        t.append(clock())
        a = model.pool(F.relu(a))
        t.append(clock())
        a = F.relu(model.fc2(F.relu(model.fc1(lib.flatten(a, 1)))))
        loss = loss_fn(model.fc3(a), labels)
        t.append(clock())
        loss.backward()
        t.append(clock())
        optimizer.step()
        loss.item()
        t.append(clock())
        for name, start, end in zip(PHASES, t, t[1:]):
            times.setdefault(name, []).append(end - start)
    return step


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args()
    import torch

    import derivgen
    torch.set_num_threads(1)
    steps = {"derivgen": build(derivgen), "torch": build(torch)}
    times = {"derivgen": {}, "torch": {}}
    for step in steps.values():
        for _ in range(5):
            step({})
    for r in range(args.rounds):
        for name in (("derivgen", "torch") if r % 2 else ("torch", "derivgen")):
            steps[name](times[name])
    print(f"{'phase':12s} {'derivgen median / min':>22s} {'torch median / min':>20s} {'ratio (med)':>11s}")
    for phase in PHASES:
        d, t = times["derivgen"][phase], times["torch"][phase]
        md, mt = statistics.median(d) * 1e3, statistics.median(t) * 1e3
        print(f"{phase:12s} {md:10.3f} / {min(d) * 1e3:7.3f} {mt:10.3f} / {min(t) * 1e3:7.3f} {md / mt:10.2f}x")


if __name__ == "__main__":
    main()
