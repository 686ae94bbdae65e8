"""``derivgen`` command line: ``generate`` (rewrite or ``--check`` generated/), ``warmup``, ``explain``
(a node class's row, formulas and kernels), ``graph`` (draw a script's autograd graph), ``run``
(start a script on several processes through the MPI launcher), ``library`` (build or check a user op
library) and ``cache`` (the user cache directory).

This module is on the generator side and imports nothing of the runtime: ``warmup`` and ``graph`` need
it, so they run it in a subprocess."""
import argparse
import os
import subprocess
import sys
import time


def _project_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _default_table():
    cwd = os.path.join(os.getcwd(), "formulas.yaml")
    return cwd if os.path.exists(cwd) else os.path.join(_project_root(), "formulas.yaml")


def cmd_generate(args):
    from .codegen.render import render_table, stale_files, write_files
    from .codegen.swap import ImportCheckFailed
    from .table import TableError
    table = args.table or _default_table()
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(table)), "generated")
    from .progress import ProgressBar, wanted
    bar = ProgressBar("derivgen generate") if wanted(args.progress) else None
    start = time.perf_counter()
    try:
        generation = render_table(table, progress=bar)
    except TableError as exc:
        if bar is not None:
            bar.close()
        print(f"derivgen: error: {exc}", file=sys.stderr)
        print("derivgen: nothing in generated/ was changed", file=sys.stderr)
        return 2
    if bar is not None:
        bar.close()
    files = generation.files
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
        changed = write_files(files, out, generation=generation)
    except ImportCheckFailed as exc:
        print(f"derivgen: error: the generated package does not import: {exc}", file=sys.stderr)
        print("derivgen: nothing in generated/ was changed", file=sys.stderr)
        return 2
    except TableError as exc:  # a backward that does not match finite differences
        print(f"derivgen: error: {exc}", file=sys.stderr)
        print("derivgen: nothing in generated/ was changed", file=sys.stderr)
        return 2
    took = time.perf_counter() - start
    if generation.unchecked:
        print(f"derivgen: not checked numerically (no samples in {os.path.basename(table)[:-5]}.samples.yaml): "
              f"{', '.join(generation.unchecked)}", file=sys.stderr)
    if changed:
        print(f"derivgen: wrote {len(changed)} of {len(files)} files in {out} ({took:.2f} s)")
        for rel in changed:
            print(f"  {rel}")
    else:
        print(f"derivgen: {out} already current, nothing changed ({len(files)} files, {took:.2f} s)")
    return 0


def cmd_warmup(args):
    # the runtime compiles the kernels; the generator side only starts it (it never imports the runtime)
    cmd = [sys.executable, "-m", "derivgen.warmup", "--jobs", str(args.jobs)] + (["--quiet"] if args.quiet else [])
    return subprocess.call(cmd)


def cmd_explain(args):
    from .explain import ExplainError, explain
    table = args.table or _default_table()
    generated = args.generated or os.path.join(os.path.dirname(os.path.abspath(table)), "generated")
    try:
        sys.stdout.write(explain(args.node, generated))
    except (ExplainError, OSError) as exc:
        print(f"derivgen explain: error: {exc}", file=sys.stderr)
        return 2
    return 0


def cmd_graph(args):
    """Run ``python -m derivgen.viz`` (the runtime) in a subprocess with the arguments as given."""
    import subprocess
    return subprocess.run([sys.executable, "-m", "derivgen.viz"] + args.graph_args).returncode


def launcher_command(args):
    """The MPI launcher's command line for ``derivgen run``: ``mpiexec -n N [-hostfile F] python script ...``
    (built here, without importing the runtime or mpi4py)."""
    from .launch import find_launcher
    launcher = args.launcher or find_launcher()
    cmd = [launcher, "-n", str(args.nproc)]
    if args.hostfile:
        cmd += ["-hostfile", args.hostfile]
    return cmd + [sys.executable, args.script, *args.script_args]


def cmd_run(args):
    import subprocess
    if args.nproc < 1:
        print(f"derivgen: error: --nproc must be at least 1, got {args.nproc}", file=sys.stderr)
        return 2
    try:
        cmd = launcher_command(args)
    except FileNotFoundError as exc:
        print(f"derivgen: error: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    return subprocess.call(cmd)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="derivgen", description="derivgen: formula table -> autograd nodes")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="regenerate generated/ from formulas.yaml")
    g.add_argument("--table", help="the formula table (default: ./formulas.yaml)")
    g.add_argument("--out", help="output folder (default: generated/ beside the table)")
    g.add_argument("--check", action="store_true", help="only check that generated/ is current; exit 1 if not")
    g.add_argument("--progress", action="store_true", help="show a progress bar (default: only on a terminal)")
    g.set_defaults(func=cmd_generate)
    w = sub.add_parser("warmup", help="compile and cache every kernel (float32 and float64)")
    w.add_argument("--quiet", action="store_true")
    w.add_argument("--jobs", type=int, default=1, help="compile in this many processes")
    w.set_defaults(func=cmd_warmup)
    r = sub.add_parser("run", help="run a script on several processes through the MPI launcher (mpiexec)")
    r.add_argument("--nproc", type=int, required=True, help="number of processes")
    r.add_argument("--hostfile", help="the launcher's host file, to spread processes over several machines")
    r.add_argument("--launcher", help="the launcher program (default: mpiexec beside this Python, else on PATH)")
    r.add_argument("--dry-run", action="store_true", help="print the launcher command instead of running it")
    r.add_argument("script")
    r.add_argument("script_args", nargs=argparse.REMAINDER)
    r.set_defaults(func=cmd_run)
    e = sub.add_parser("explain", help="show a node class's table row, how its formulas were made, its kernels")
    e.add_argument("node", help="a node class name, e.g. MulBackward0")
    e.add_argument("--table", help="the formula table (default: ./formulas.yaml)")
    e.add_argument("--generated", help="the generated folder (default: generated/ beside the table)")
    e.set_defaults(func=cmd_explain)
    from .codegen import library_cmd
    from . import cachedir
    library_cmd.add_parser(sub)
    cachedir.add_parser(sub)
    gr = sub.add_parser("graph", add_help=False,
                        help="run a script and draw its autograd graph (see `derivgen graph --help`)")
    gr.add_argument("graph_args", nargs=argparse.REMAINDER)
    gr.set_defaults(func=cmd_graph)
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "graph":  # every argument, --help included, belongs to the graph command
        return cmd_graph(argparse.Namespace(graph_args=argv[1:]))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
