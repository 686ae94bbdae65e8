"""A wall-clock budget for the sympy work on one table row.

The mechanism is ``signal.setitimer(ITIMER_REAL)``: when the budget runs out, SIGALRM interrupts
whatever sympy is doing and ``BudgetExceeded`` is raised in its place. It is simple and needs no
cooperation from sympy, but it exists only on POSIX and only in the main thread; elsewhere (Windows,
a worker thread) the budget is not enforced and the static bounds of ``parse.check_bounds`` are the
only protection.
"""
import contextlib
import signal
import threading

ROW_BUDGET_S = 20.0


class BudgetExceeded(Exception):
    pass


def _enforceable():
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def time_budget(seconds):
    """Raise BudgetExceeded in the body if it runs longer than ``seconds`` (where enforceable)."""
    if not _enforceable() or seconds is None:
        yield
        return

    def _expired(signum, frame):
        raise BudgetExceeded(seconds)

    previous = signal.signal(signal.SIGALRM, _expired)
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_delay:
            signal.setitimer(signal.ITIMER_REAL, old_delay, old_interval)
