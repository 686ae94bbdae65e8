"""``derivgen library build`` and ``derivgen library check``: the command side of user op libraries.

Build renders the package in memory (every elementwise formula proven on the way), writes it to a
temporary folder, runs the numeric check of the non-elementwise rows there in a subprocess (the runtime
imports the user's forwards; this process never does), and only then writes it to ``--out``. Check does
the same without writing and reports stale files as well."""
import os
import subprocess
import sys
import tempfile

from ..table import TableError
from .library import MANIFEST_FILE, build_library
from .render import stale_files, write_files


def verify(package, folders):
    """Run the numeric check of a built package found in ``folders``; return (ok, its output)."""
    cmd = [sys.executable, "-m", "derivgen.library.verify", package]
    for f in folders:
        cmd += ["--path", os.path.abspath(f)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()


def _out_dir(args):
    return os.path.abspath(args.out or os.path.dirname(os.path.abspath(args.table)))


def _find_package(args, out):
    """The package a previous build wrote for this table (``library check`` without ``--package``)."""
    if args.package:
        return args.package
    table_file = os.path.basename(args.table)
    import json
    for name in sorted(os.listdir(out)):
        path = os.path.join(out, name, MANIFEST_FILE)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as fh:
                if json.load(fh).get("table_file") == table_file:
                    return name
    return None


def cmd_library_build(args):
    out = _out_dir(args)
    try:
        files, manifest = build_library(args.table, args.package)
    except TableError as exc:
        print(f"derivgen library: error: {exc}", file=sys.stderr)
        print("derivgen library: nothing was written", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="derivgen-library-") as tmp:
        write_files(files, os.path.join(tmp, args.package), import_check=False)
        ok, text = verify(args.package, [tmp, os.path.dirname(os.path.abspath(args.table)), os.getcwd()])
    if not ok:
        print(text, file=sys.stderr)
        print("derivgen library: error: the numeric check failed; nothing was written", file=sys.stderr)
        return 1
    target = os.path.join(out, args.package)
    changed = write_files(files, target, import_check=False)
    print(text)
    print(f"derivgen library: {target}: {len(changed)} of {len(files)} files written "
          f"(namespace '{manifest['namespace']}', {len(manifest['rows'])} ops)")
    return 0


def cmd_library_check(args):
    out = _out_dir(args)
    package = _find_package(args, out)
    if package is None:
        print(f"derivgen library check: no built library for {args.table} in {out}: run `derivgen library "
              f"build {args.table} --package NAME`", file=sys.stderr)
        return 1
    try:
        files, _ = build_library(args.table, package)
    except TableError as exc:
        print(f"derivgen library check: error: {exc}", file=sys.stderr)
        return 1
    target = os.path.join(out, package)
    stale = stale_files(files, target)
    if stale:
        print(f"derivgen library check: {target} is stale (does not match {args.table}):", file=sys.stderr)
        for rel in stale:
            print(f"  {rel}", file=sys.stderr)
        print(f"derivgen library check: run `derivgen library build {args.table} --package {package}`",
              file=sys.stderr)
        return 1
    ok, text = verify(package, [out, os.path.dirname(os.path.abspath(args.table)), os.getcwd()])
    if not ok:
        print(text, file=sys.stderr)
        return 1
    print(text)
    print(f"derivgen library check: {target} is current ({len(files)} files)")
    return 0


def add_parser(sub):
    lib = sub.add_parser("library", help="build or check a user op library from its own table (ops.yaml)")
    lsub = lib.add_subparsers(dest="library_command", required=True)
    b = lsub.add_parser("build", help="compile ops.yaml into an importable package")
    b.add_argument("table", help="the user table, e.g. ops.yaml")
    b.add_argument("--package", required=True, help="the package to write, e.g. myproj_ops")
    b.add_argument("--out", help="the folder to write the package into (default: beside the table)")
    b.set_defaults(func=cmd_library_build)
    c = lsub.add_parser("check", help="exit 1 if the built package is stale or a formula check fails")
    c.add_argument("table")
    c.add_argument("--package", help="the package (default: the one built from this table in --out)")
    c.add_argument("--out", help="the folder holding the package (default: beside the table)")
    c.set_defaults(func=cmd_library_check)
