"""``derivgen run --nproc N script``: the launcher's command line, and a real 2-process run."""
import os
import sys

from derivgen.cli import main
from derivgen.launch import find_launcher
from tests.support.mpi import require_mpi
from tests.support.runner import run_python


def test_dry_run_prints_the_launcher_command(capsys):
    require_mpi()
    assert main(["run", "--nproc", "4", "--hostfile", "hosts.txt", "--dry-run", "train.py", "--epochs", "2"]) == 0
    assert capsys.readouterr().out.split() == [find_launcher(), "-n", "4", "-hostfile", "hosts.txt",
                                               sys.executable, "train.py", "--epochs", "2"]


def test_run_starts_the_script_on_every_rank(tmp_path):
    require_mpi()
    script = tmp_path / "ranks.py"
    script.write_text("import sys, derivgen as torch, derivgen.distributed as dist\n"
                      "dist.init_process_group()\n"
                      "t = torch.tensor([float(dist.get_rank())])\n"
                      "dist.all_reduce(t)\n"
                      "line = f'rank {dist.get_rank()} of {dist.get_world_size()}: {t.item()} {sys.argv[1:]}'\n"
                      # one file per rank: the launcher forwards the ranks' stdout in chunks that may interleave
                      f"open(f'{tmp_path}/out-{{dist.get_rank()}}.txt', 'w').write(line)\n")
    proc = run_python(f"import sys; from derivgen.cli import main; sys.exit(main(['run', '--nproc', '2', "
                      f"{str(script)!r}, 'a']))", timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = sorted((tmp_path / f"out-{r}.txt").read_text() for r in range(2))
    assert lines == ["rank 0 of 2: 1.0 ['a']", "rank 1 of 2: 1.0 ['a']"]


def test_the_launcher_command_needs_neither_the_runtime_nor_mpi4py():
    """``derivgen run`` only builds a command line: launch.py imports the standard library alone, and
    building the command starts no MPI (mpi4py stays unimported)."""
    import ast
    import derivgen.launch
    tree = ast.parse(open(derivgen.launch.__file__).read())
    imported = {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported == {"os", "shutil", "sys"}
    proc = run_python("import sys, argparse; from derivgen.cli import launcher_command\n"
                      "cmd = launcher_command(argparse.Namespace(nproc=2, hostfile=None, launcher='mpiexec', "
                      "script='t.py', script_args=[]))\n"
                      "print(cmd[:3], 'mpi4py' in sys.modules)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['mpiexec', '-n', '2'] False"


def test_nproc_must_be_positive(capsys):
    assert main(["run", "--nproc", "0", "train.py"]) == 2
    assert "--nproc must be at least 1" in capsys.readouterr().err
