"""What Numba itself costs a fresh process before its first result, against derivgen's first call.

Each figure is the process CPU time of one step, in a fresh subprocess, with every cache warm (``.pyc``
files and Numba's on-disk kernel cache, written by an untimed first run):

* ``import numpy`` and ``import numba`` on their own;
* the first call of a minimal ``@numba.njit(cache=True)`` function (a 1-D loop) loaded from Numba's
  cache, through Numba's own cache (which first refreshes the whole target context) and through
  ``derivgen.kernels.numba_backend``'s loader (the runtime only);
* derivgen: ``import derivgen`` and the first forward+backward of
  ``(x.sigmoid() * x.tanh() + (-(x * x)).exp()).sum()`` on 8 elements (the ``cold`` section's program).

    python benchmarks/numba_floor.py [--repeats 7] [--profile]

``--profile`` prints the top of a cProfile of the minimal function's first call through Numba's cache.
Rounds alternate the variants, so load from other processes hits them alike; medians and minima.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_FLOOR_FN = """
import numba

@numba.njit(cache=True)
def twice(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * 2.0
"""

_CHILD = r"""
import json, sys, time
c0 = time.process_time()
import numpy as np
c1 = time.process_time()
variant = sys.argv[1]
res = {"numpy_s": c1 - c0}
if variant in ("numba", "derivgen_loader"):
    import numba
    c2 = time.process_time()
    res["numba_s"] = c2 - c1
    sys.path.insert(0, sys.argv[2])
    import floor_fn
    fn = floor_fn.twice
    if variant == "derivgen_loader":
        from derivgen.kernels import numba_backend
        fn._cache = numba_backend._CachedKernels(fn.py_func)
    x = np.ones(8, np.float32)
    out = np.empty_like(x)
    prof = None
    if len(sys.argv) > 3:
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    c3 = time.process_time()
    fn(x, out)
    res["first_call_s"] = time.process_time() - c3
    if prof is not None:
        prof.disable()
        import pstats
        pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
    res["cache_hits"] = sum(fn.stats.cache_hits.values())
else:
    import derivgen as T
    c2 = time.process_time()
    res["import_derivgen_s"] = c2 - c0
    x = T.from_numpy(np.linspace(-2, 2, 8).astype(np.float32))
    x.requires_grad_(True)
    c3 = time.process_time()
    (x.sigmoid() * x.tanh() + (-(x * x)).exp()).sum().backward()
    res["first_call_s"] = time.process_time() - c3
print(json.dumps(res))
"""


def _run(variant, folder, profile=False):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    args = [sys.executable, "-c", _CHILD, variant, folder] + (["profile"] if profile else [])
    p = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env, check=True)
    if profile:
        print(p.stderr)
    return json.loads(p.stdout.strip().splitlines()[-1])


def _fmt(values):
    return f"median {statistics.median(values) * 1e3:7.1f} ms, min {min(values) * 1e3:7.1f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "floor_fn.py"), "w") as fh:
            fh.write(_FLOOR_FN)
        variants = ("numba", "derivgen_loader", "derivgen")
        for v in variants:
            _run(v, folder)  # warm: .pyc files and the kernel caches
        if args.profile:
            _run("numba", folder, profile=True)
        rows = {v: [] for v in variants}
        for r in range(args.repeats):
            order = variants[r % 3:] + variants[:r % 3]
            for v in order:
                rows[v].append(_run(v, folder))
    load = os.getloadavg()[0]
    print(f"fresh processes, warm caches, process CPU time, {args.repeats} rounds (load average {load:.1f})")
    numba_rows = rows["numba"] + rows["derivgen_loader"]
    print(f"  import numpy                                  {_fmt([r['numpy_s'] for r in numba_rows])}")
    print(f"  import numba                                  {_fmt([r['numba_s'] for r in numba_rows])}")
    print(f"  minimal njit(cache=True), Numba's cache load  {_fmt([r['first_call_s'] for r in rows['numba']])}")
    print(f"  the same, derivgen's loader                   {_fmt([r['first_call_s'] for r in rows['derivgen_loader']])}")
    print(f"  import derivgen                               {_fmt([r['import_derivgen_s'] for r in rows['derivgen']])}")
    print(f"  derivgen first forward+backward               {_fmt([r['first_call_s'] for r in rows['derivgen']])}")
    assert all(r["cache_hits"] == 1 for r in numba_rows), "the minimal function was not loaded from the cache"


if __name__ == "__main__":
    main()
