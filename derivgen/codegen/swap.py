"""Replace ``generated/`` as a whole: render beside it, prove the new package imports, then rename.

The new tree is built in a temporary folder next to the target (same file system, so renames are
atomic): files that do not change are hard links to the current ones (copies where links are not
possible), so their bytes and modification times, and the Numba caches in ``__pycache__``, are kept.
A fresh interpreter then imports the new tree as ``derivgen.generated``, each node module included;
only if that succeeds is the old folder renamed aside and the new one renamed into place. The same
interpreter, which has the new runtime loaded anyway, also runs the numerical check of the backward of
the rows without a forward expression (``derivgen.formula_check``, given the checks as JSON on stdin);
a row that fails it replaces nothing either. A failure at any step leaves ``generated/`` exactly as it
was. An unchanged table writes nothing at all.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

IMPORT_TIMEOUT_S = 300

_IMPORT_CHECK = """
import importlib.util, json, sys
path = sys.argv[1]

class _NewTree:
    @staticmethod
    def find_spec(name, target=None, *args):
        if name == "derivgen.generated":
            return importlib.util.spec_from_file_location(name, path + "/__init__.py",
                                                          submodule_search_locations=[path])
        return None

sys.meta_path.insert(0, _NewTree)
import derivgen
if derivgen._generated_error is not None:
    raise derivgen._generated_error
from derivgen.generated import kernels, nodes, ops
assert ops.__file__.startswith(path), ops.__file__
for name in dir(nodes):  # node modules load on first use: load each one now, so that every one imports
    getattr(nodes, name)
checks = json.loads(sys.stdin.read() or "[]")
if checks:
    from derivgen.formula_check import check_rows
    problems = check_rows(checks)
else:
    problems = []
print()
print(json.dumps(problems))
"""


class ImportCheckFailed(Exception):
    pass


class FormulaCheckFailed(Exception):
    """Rows whose backward does not match finite differences: ``problems`` is [(row name, line, sentence)]."""

    def __init__(self, problems):
        super().__init__(problems[0][2])
        self.problems = problems


def changed_files(files, out_dir, existing):
    """Relative paths whose text differs from what is on disk, and generated files to remove."""
    changed = []
    for rel, text in sorted(files.items()):
        try:
            with open(os.path.join(out_dir, rel), encoding="utf-8") as fh:
                if fh.read() == text:
                    continue
        except (OSError, UnicodeDecodeError):
            pass
        changed.append(rel)
    removed = sorted(existing - set(files))
    return changed, removed


def _link_or_copy(src, dst):
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        os.unlink(path)          # never write through a hard link shared with the current tree
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def check_import(new_dir, checks=()):
    """Import ``new_dir`` as derivgen.generated in a fresh interpreter and run ``checks`` there; raise
    ImportCheckFailed, or FormulaCheckFailed."""
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = package_root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", _IMPORT_CHECK, new_dir], capture_output=True, text=True,
                          env=env, timeout=IMPORT_TIMEOUT_S, input=json.dumps(list(checks)))
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        raise ImportCheckFailed(lines[-1] if lines else f"exit status {proc.returncode}")
    # the last line is the check's result (a kernel compiling may have printed before it)
    problems = json.loads(proc.stdout.strip().splitlines()[-1])
    if problems:
        raise FormulaCheckFailed([tuple(p) for p in problems])


def _folder_mode(out_dir):
    """The mode the folder has now, or the one a new folder gets (mkdtemp's 0o700 is private)."""
    try:
        return os.stat(out_dir).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o777 & ~umask


def replace_tree(files, out_dir, existing, import_check=True, checks=()):
    """Make ``out_dir`` hold exactly ``files`` (plus its caches). Return the changed paths, each
    removed one suffixed ' (removed)'; [] when nothing had to change. ``checks`` run with the import
    check (see derivgen.formula_check)."""
    changed, removed = changed_files(files, out_dir, existing)
    if not changed and not removed:
        return []
    out_dir = os.path.abspath(out_dir)
    parent, base = os.path.split(out_dir)
    os.makedirs(parent, exist_ok=True)
    new_dir = tempfile.mkdtemp(prefix=f".{base}.new-", dir=parent)
    try:
        os.chmod(new_dir, _folder_mode(out_dir))
        if os.path.isdir(out_dir):
            shutil.copytree(out_dir, new_dir, copy_function=_link_or_copy, dirs_exist_ok=True, symlinks=True)
        for rel in changed:
            _write(os.path.join(new_dir, rel), files[rel])
        for rel in removed:
            os.unlink(os.path.join(new_dir, rel))
        if import_check:
            check_import(new_dir, checks)
        if os.path.isdir(out_dir):
            old_dir = tempfile.mkdtemp(prefix=f".{base}.old-", dir=parent)
            os.rmdir(old_dir)
            os.rename(out_dir, old_dir)
            os.rename(new_dir, out_dir)
            shutil.rmtree(old_dir, ignore_errors=True)
        else:
            os.rename(new_dir, out_dir)
    except BaseException:
        shutil.rmtree(new_dir, ignore_errors=True)
        raise
    return changed + [rel + " (removed)" for rel in removed]
