"""``derivgen`` command line: ``generate`` (rewrite or ``--check`` generated/) and ``warmup``."""
import argparse
import os
import sys
import time


def _project_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _default_table():
    cwd = os.path.join(os.getcwd(), "formulas.yaml")
    return cwd if os.path.exists(cwd) else os.path.join(_project_root(), "formulas.yaml")


def cmd_generate(args):
    from .codegen.render import render_all, stale_files, write_files
    from .codegen.swap import ImportCheckFailed
    from .table import TableError
    table = args.table or _default_table()
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(table)), "generated")
    start = time.perf_counter()
    try:
        files = render_all(table)
    except TableError as exc:
        print(f"derivgen: error: {exc}", file=sys.stderr)
        print("derivgen: nothing in generated/ was changed", file=sys.stderr)
        return 2
    if args.check:
        stale = stale_files(files, out)
        if stale:
            print(f"derivgen: {out} is stale (does not match {table}):", file=sys.stderr)
            for rel in stale:
                print(f"  {rel}", file=sys.stderr)
            print("derivgen: run `derivgen generate` and commit the result", file=sys.stderr)
            return 1
        print(f"derivgen: {out} is current ({len(files)} files, {time.perf_counter() - start:.2f} s)")
        return 0
    try:
        changed = write_files(files, out)
    except ImportCheckFailed as exc:
        print(f"derivgen: error: the generated package does not import: {exc}", file=sys.stderr)
        print("derivgen: nothing in generated/ was changed", file=sys.stderr)
        return 2
    took = time.perf_counter() - start
    if changed:
        print(f"derivgen: wrote {len(changed)} of {len(files)} files in {out} ({took:.2f} s)")
        for rel in changed:
            print(f"  {rel}")
    else:
        print(f"derivgen: {out} already current, nothing changed ({len(files)} files, {took:.2f} s)")
    return 0


def cmd_warmup(args):
    from .warmup import warmup
    return warmup(verbose=not args.quiet, jobs=args.jobs)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="derivgen", description="derivgen: formula table -> autograd nodes")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="regenerate generated/ from formulas.yaml")
    g.add_argument("--table", help="the formula table (default: ./formulas.yaml)")
    g.add_argument("--out", help="output folder (default: generated/ beside the table)")
    g.add_argument("--check", action="store_true", help="only check that generated/ is current; exit 1 if not")
    g.set_defaults(func=cmd_generate)
    w = sub.add_parser("warmup", help="compile and cache every kernel (float32 and float64)")
    w.add_argument("--quiet", action="store_true")
    w.add_argument("--jobs", type=int, default=1, help="compile in this many processes")
    w.set_defaults(func=cmd_warmup)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
