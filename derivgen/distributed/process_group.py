"""The default process group: MPI's ``COMM_WORLD`` behind torch's ``init_process_group`` API.

mpi4py is imported only by ``init_process_group`` (importing ``mpi4py.MPI`` initialises MPI), so
``import derivgen.distributed`` costs nothing and works without it. Once a group of more than one
process exists, an uncaught exception in any rank aborts the whole job (``MPI.COMM_WORLD.Abort``) so
that the other ranks do not wait forever in a collective the failed rank will never join.
"""
import datetime
import importlib.util
import os
import stat
import sys
import time

try:
    import fcntl
    import termios
except ImportError:  # Windows: no FIONREAD on pipes; an aborting rank does not wait for its output
    fcntl = termios = None

# torch's default for CPU backends (``default_pg_timeout``)
DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)

# Environment variables through which launchers announce the job's size: MPICH/Hydra, Open MPI, PMIx
# and torchrun. A process that sees one of them above 1 while MPI reports a world of one was started
# by a launcher that MPI's library does not belong to (or by torchrun).
_LAUNCHER_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "WORLD_SIZE")

_INSTALL_HINT = "pip install 'derivgen[distributed]' (mpi4py and an MPI library)"


class Backend(str):
    """Backend names as torch spells them; only ``Backend.MPI`` is implemented."""
    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"

    def __new__(cls, name):
        return str.__new__(cls, name.lower())


class _World:
    """The one process group: the communicator and its settings while initialised."""
    __slots__ = ("comm", "MPI", "rank", "size", "timeout", "previous_excepthook")

    def __init__(self):
        self.comm = None


_world = _World()


class _ProcessGroup:
    """What ``group.WORLD`` names: the default group (every process)."""

    def rank(self):
        return get_rank()

    def size(self):
        return get_world_size()

    def __repr__(self):
        return "<derivgen.distributed.ProcessGroup WORLD>"


class GroupMember:
    WORLD = _ProcessGroup()
    NON_GROUP_MEMBER = -100


group = GroupMember


def is_available():
    """True when mpi4py can be imported (the only backend is MPI)."""
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available():
    return is_available()


def is_initialized():
    return _world.comm is not None


def load_mpi():
    """``mpi4py.MPI``, or torch's error for a build without MPI, naming what to install."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise RuntimeError("Distributed package doesn't have MPI built in. derivgen.distributed uses MPI "
                           f"through mpi4py, which is not installed: {_INSTALL_HINT}") from exc
    return MPI


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Join ``MPI.COMM_WORLD``. The launcher fixes rank and world size; ``world_size``/``rank``, when
    given, must agree with it. ``timeout`` (a ``datetime.timedelta``, 30 minutes by default) bounds
    every wait on a collective."""
    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    if backend is not None and Backend(str(backend)) != Backend.MPI:
        raise ValueError(f"derivgen.distributed implements only the 'mpi' backend, got backend={backend!r}")
    if timeout is None:
        timeout = DEFAULT_TIMEOUT
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout).__name__}")
    MPI = load_mpi()
    comm = MPI.COMM_WORLD
    size, my_rank = comm.Get_size(), comm.Get_rank()
    _check_launcher(size)
    if world_size not in (-1, None) and world_size != size:
        raise ValueError(f"init_process_group: world_size={world_size} but the MPI launcher started {size} "
                         f"processes (pass -n {world_size} to mpiexec, or leave world_size out)")
    if rank not in (-1, None) and rank != my_rank:
        raise ValueError(f"init_process_group: rank={rank} but MPI gave this process rank {my_rank}; with MPI "
                         "the launcher assigns ranks, leave rank out")
    _world.comm, _world.MPI, _world.size, _world.rank = comm, MPI, size, my_rank
    _world.timeout = timeout.total_seconds()
    _world.previous_excepthook = sys.excepthook
    if size > 1:
        sys.excepthook = _abort_job_on_uncaught_exception


def destroy_process_group(group=None):
    """Leave the default group (MPI itself stays initialised until the interpreter exits, as mpi4py
    finalises it then)."""
    _check_group(group)
    world = default_world()
    if sys.excepthook is _abort_job_on_uncaught_exception:
        sys.excepthook = world.previous_excepthook
    world.comm = None


def get_rank(group=None):
    _check_group(group)
    return default_world().rank


def get_world_size(group=None):
    _check_group(group)
    return default_world().size


def get_backend(group=None):
    _check_group(group)
    default_world()
    return Backend.MPI


def default_world():
    if _world.comm is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return _world


def _check_group(group):
    if group is not None and group is not GroupMember.WORLD:
        raise ValueError("derivgen.distributed has one process group, WORLD; pass group=None")


def _check_launcher(size):
    if size != 1:
        return
    for name in _LAUNCHER_SIZE_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 1:
            raise RuntimeError(
                f"init_process_group: the environment says this job has {value} processes ({name}={value}) but "
                "MPI started this one alone: it was not started by the launcher of the MPI library mpi4py "
                f"uses. Start it with that library's launcher (`mpiexec -n {value} python ...` from the same "
                f"environment, or `derivgen run --nproc {value} ...`), not torchrun or another MPI's mpirun.")


def _abort_job_on_uncaught_exception(exc_type, exc, tb):
    """Print the traceback as usual, then abort every rank: a rank that died must not leave the others
    blocked in a collective."""
    world = _world
    hook = world.previous_excepthook if world.comm is not None else sys.__excepthook__
    try:
        (hook or sys.__excepthook__)(exc_type, exc, tb)
        rank = world.rank if world.comm is not None else "?"
        print(f"derivgen.distributed: rank {rank} raised {exc_type.__name__}; aborting all ranks",
              file=sys.stderr)
        sys.stderr.flush()
        sys.stdout.flush()
        _wait_until_output_is_read()
    finally:
        if world.comm is not None:
            world.comm.Abort(1)


# How long an aborting rank waits for the launcher to read what it printed.
_OUTPUT_DRAIN_SECONDS = 5.0


def _wait_until_output_is_read(fds=(2, 1), limit=_OUTPUT_DRAIN_SECONDS):
    """Wait until the launcher has read the pipes ``fds`` (stderr, stdout) point to, ``limit`` seconds at most.

    The launcher forwards a rank's output asynchronously and drops what it has not read yet when the
    job aborts, so on a loaded machine the traceback would be cut off. A pipe reports through FIONREAD
    how many written bytes are still unread; output to a terminal or a file is not awaited."""
    if fcntl is None:
        return
    deadline = time.monotonic() + limit
    for fd in fds:
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                continue
        except OSError:
            continue
        while time.monotonic() < deadline:
            try:
                unread = int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)
            except OSError:
                break
            if unread == 0:
                break
            time.sleep(0.01)
    time.sleep(0.05)  # what the launcher read, it forwards next
