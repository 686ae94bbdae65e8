"""Running code in a fresh interpreter (import-time behaviour, environment switches, cold caches)."""
import os
import subprocess
import sys

from tests.support.paths import REPO


def run_python(code, env=None, cwd=None, timeout=120):
    """Run ``code`` in a fresh interpreter; return the CompletedProcess (text mode)."""
    full_env = dict(os.environ)
    full_env.pop("PYTHONWARNINGS", None)
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env,
                          cwd=cwd or REPO, timeout=timeout)
