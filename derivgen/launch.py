"""Where the MPI launcher is, for ``derivgen run`` (no runtime imports: the CLI loads this).

The ``mpich`` wheel puts ``mpiexec`` in the environment's ``bin`` folder, beside the interpreter; the
launcher of the MPI library mpi4py was built for must be used, so that one is preferred over any
other ``mpiexec`` on PATH.
"""
import os
import shutil
import sys


def find_launcher():
    for name in ("mpiexec", "mpirun"):
        beside = os.path.join(os.path.dirname(sys.executable), name)
        if os.access(beside, os.X_OK):
            return beside
    for name in ("mpiexec", "mpirun"):
        found = shutil.which(name)
        if found:
            return found
    raise FileNotFoundError("no MPI launcher (mpiexec) found beside this Python or on PATH; "
                            "install one with: pip install 'derivgen[distributed]'")
