"""``@derivgen.library.op``: a one-row op library written inline, compiled on first use.

    @derivgen.library.op("softsign(Tensor self) -> Tensor", forward="self / (1 + abs(self))", self="derived")
    def softsign(self): ...

The decorated function is replaced by the compiled op. The row is written as a one-row table into the
user cache directory (``settings.cache_dir/libraries/<hash of the row>/``) and compiled there by
``derivgen library build`` (same generator, proofs and checks) in a subprocess on the first call; later
processes find it built. Its ops live in the namespace ``namespace`` (default ``user``).
"""
import functools
import hashlib
import os
import subprocess
import sys
import threading

import yaml

from derivgen.config import settings
from derivgen.library.load import LibraryError, load_library
from derivgen.version import __version__

_lock = threading.Lock()


def _row(schema, forward, formulas, extra):
    row = {"name": schema}
    if forward is not None:
        row["forward"] = forward
    row.update(extra)
    row.update(formulas)
    return row


def _build(folder, package, table_text):
    """Write the one-row table and build it (in a subprocess) unless a build of the same text exists."""
    table = os.path.join(folder, "ops.yaml")
    os.makedirs(folder, exist_ok=True)
    built = os.path.join(folder, package, "library.json")
    try:
        with open(table, encoding="utf-8") as fh:
            same = fh.read() == table_text
    except OSError:
        same = False
    if same and os.path.exists(built):
        return
    with open(table, "w", encoding="utf-8") as fh:
        fh.write(table_text)
    proc = subprocess.run([sys.executable, "-m", "derivgen", "library", "build", table, "--package", package,
                           "--out", folder], capture_output=True, text=True)
    if proc.returncode != 0:
        raise LibraryError(f"@derivgen.library.op: the row does not build:\n{proc.stderr.strip()}")


def op(schema, *, forward=None, namespace="user", methods=False, override=False, forward_fn=None,
       samples=None, **formulas):
    """Decorate a stub with an op's schema, its elementwise ``forward`` (or ``forward_fn``, a dotted path)
    and one formula per differentiable input (``self="derived"``); returns the compiled op."""
    extra = {}
    if forward_fn is not None:
        extra["forward_fn"] = forward_fn
    if samples is not None:
        extra["samples"] = samples
    if override:
        extra["override"] = True
    doc = {"namespace": namespace, "methods": bool(methods),
           "ops": [_row(schema, forward, formulas, extra)]}
    table_text = yaml.safe_dump(doc, sort_keys=False)
    key = hashlib.sha256((__version__ + "\0" + table_text).encode()).hexdigest()[:16]
    package = f"derivgen_user_{key}"
    folder = os.path.join(settings.cache_dir, "libraries", key)
    name = schema.split("(")[0].split(".")[0]

    def decorate(stub):
        compiled = []

        @functools.wraps(stub)
        def call(*args, **kwargs):
            if not compiled:
                with _lock:
                    if not compiled:
                        _build(folder, package, table_text)
                        if folder not in sys.path:
                            sys.path.append(folder)
                        compiled.append(getattr(load_library(package), name))
            return compiled[0](*args, **kwargs)
        call.schema = schema
        return call
    return decorate
