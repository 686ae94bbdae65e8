"""The batching rules, one per op row (the generated function's name: ``mul_Tensor``, ``sum_dim_IntList``),
and the vmap levels active on this thread.

A rule is ``rule(fn, kwargs, level) -> result``: ``fn`` the row's function, ``kwargs`` its arguments by
schema name (some are BatchedTensors of ``level``, the innermost level among them); the result holds
BatchedTensors of ``level``. Hand rules are registered here with ``register``; other rows get a rule
derived from their schema (``derived_rules``) on first use.
"""
import threading

RULES = {}


def register(*row_names):
    """Decorator: ``rule`` batches the rows named (generated function names)."""
    def deco(rule):
        for name in row_names:
            RULES[name] = rule
        return rule
    return deco


class _Levels(threading.local):
    def __init__(self):
        self.sizes = {}  # active vmap level -> its batch size
        self.randomness = {}  # vmap level -> its randomness mode ('error', 'same' or 'different')
        self.next = 1


LEVELS = _Levels()


def batch_size(level):
    return LEVELS.sizes[level]
