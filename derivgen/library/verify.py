"""The numeric check of a built op library's non-elementwise rows, run by ``derivgen library build`` and
``derivgen library check`` in a subprocess (the generator never imports user code or the runtime).

For every row with formulas and no elementwise forward, on each of its ``samples:``: a float64
gradient check (the row's VJP against central differences) and, when every helper it calls has a graph
version, a gradgradcheck. Failures print as ``file:line: entry 'NAME': reason``; the exit status is 1.

    python -m derivgen.library.verify PACKAGE [--path DIR]...
"""
import argparse
import sys

import numpy as np


def sample_inputs(row, sample, seed):
    """(Tensor arguments in schema order, other arguments by name) for one ``samples:`` item."""
    from derivgen.core.dtypes import float64
    from derivgen.ops.factories import tensor
    rng = np.random.default_rng(seed)
    tensors, others = [], {}
    for name, value in sample.items():
        if name in row["tensor_args"]:
            if isinstance(value, dict) and "values" in value:
                data = np.asarray(value["values"], dtype=np.float64)
            elif isinstance(value, list) and all(isinstance(n, int) for n in value):
                data = rng.standard_normal(value)
            else:
                raise ValueError(f"sample for '{name}' must be a shape list like [3, 4] or {{values: [...]}}")
            tensors.append((name, tensor(data, dtype=float64, requires_grad=True)))
        else:
            others[name] = value
    missing = [a for a in row["tensor_args"] if a not in sample]
    if missing:
        raise ValueError(f"sample gives no value for the Tensor argument(s) {missing}")
    order = {a: i for i, a in enumerate(row["tensor_args"])}
    tensors.sort(key=lambda nt: order[nt[0]])
    return tensors, others


def check_row(ops, row, table_file):
    """Return the failure messages of one row (empty when it passes)."""
    from derivgen.autograd import gradcheck, gradgradcheck
    fn = getattr(ops, row["row"])
    failures = []
    for i, sample in enumerate(row["samples"]):
        where = f"{table_file}:{row['samples_line']}: entry '{row['name']}':"
        try:
            tensors, others = sample_inputs(row, sample, seed=i)
        except ValueError as exc:
            failures.append(f"{where} sample {i}: {exc}")
            continue
        names = [n for n, _ in tensors]

        def call(*ts):
            return fn(**dict(zip(names, ts)), **others)
        inputs = tuple(t for _, t in tensors)
        checks = [("gradient", gradcheck)] + ([("second-order gradient", gradgradcheck)] if row["graph_check"] else [])
        for what, check in checks:
            try:
                check(call, inputs)
            except Exception as exc:  # a failed check, or the formula raising on the sample
                reason = " ".join(str(exc).split())
                failures.append(f"{where} the {what} of the formula disagrees with finite differences on "
                                f"sample {i} ({type(exc).__name__}: {reason[:600]})")
                break
    return failures


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m derivgen.library.verify")
    parser.add_argument("package")
    parser.add_argument("--path", action="append", default=[], help="a folder to import from (first wins)")
    args = parser.parse_args(argv)
    sys.path[:0] = args.path
    from derivgen.library.load import load_library, read_manifest
    import importlib
    _, manifest = read_manifest(args.package)
    try:
        load_library(args.package)
    except Exception as exc:
        print(f"{manifest['table_file']}: the built library does not import: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        return 1
    ops = importlib.import_module(f"{args.package}.ops")
    failures, checked = [], 0
    for row in manifest["rows"]:
        if row["check"]:
            failures += check_row(ops, row, manifest["table_file"])
            checked += 1
    for f in failures:
        print(f, file=sys.stderr)
    if not failures:
        print(f"derivgen: {checked} non-elementwise row(s) of {manifest['table_file']} pass the numeric check")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
