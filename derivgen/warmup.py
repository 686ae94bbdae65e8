"""``derivgen warmup``: compile and cache every generated kernel, float32 and float64, contiguous,
strided and with bias rows, so no first call pays Numba's compile time."""
import argparse
import sys
import time

import numpy as np

from derivgen.generated import kernels
from derivgen.kernels import interpreted
from derivgen.kernels.dispatch import Elementwise
from derivgen.progress import ProgressBar


def _kernels():
    for name in sorted(dir(kernels)):
        obj = getattr(kernels, name)
        if isinstance(obj, Elementwise):
            yield name, obj


def _exercise(k, dtype):
    contiguous = [np.ones(6, dtype) for _ in range(k.n_arrays)]
    strided = [np.ones((3, 4), dtype).T for _ in range(k.n_arrays)]
    scalars = [1] * k.n_scalars
    k(contiguous, scalars)
    if k.n_arrays:
        k(strided, scalars)
    if k.rows is not None:  # a matrix and bias rows (x @ W + b)
        k([np.ones((3, 4), dtype)] + [np.ones(4, dtype)] * (k.n_arrays - 1), scalars)


def _worker(args):
    index, jobs = args
    interpreted.stop()  # compile the kernels, even for the first calls
    items = list(_kernels())[index::jobs]
    for _, k in items:
        for dtype in (np.float32, np.float64):
            _exercise(k, dtype)
    return len(items)


def warmup(verbose=True, jobs=1):
    """Compile every kernel; with ``jobs`` > 1, in that many processes (each kernel's cache entry is its
    own file, so workers never write the same one)."""
    if jobs > 1:
        import multiprocessing
        start = time.perf_counter()
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            n = sum(pool.map(_worker, [(i, jobs) for i in range(jobs)]))
        if verbose:
            print(f"derivgen: {n} kernels compiled and cached for float32 and float64 in "
                  f"{time.perf_counter() - start:.1f} s ({jobs} processes)")
        return 0
    interpreted.stop()
    items = list(_kernels())
    total = 2 * len(items)
    start = time.perf_counter()
    done = 0
    bar = ProgressBar("derivgen warmup") if verbose else None
    for name, k in items:
        for dtype in (np.float32, np.float64):
            _exercise(k, dtype)
            done += 1
            if bar is not None:
                bar(done, total, name)
    if bar is not None:
        bar.close()
        print(f"derivgen: {len(items)} kernels compiled and cached for float32 and float64 "
              f"in {time.perf_counter() - start:.1f} s")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="derivgen warmup")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    return warmup(verbose=not args.quiet, jobs=args.jobs)


if __name__ == "__main__":
    sys.exit(main())
