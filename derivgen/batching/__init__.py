"""vmap's batching machinery: the batched tensor, the rule registry and the rules.

A ``BatchedTensor`` is one vmap level's view of a tensor that carries an extra (batch) dimension: it
reports the per-example (logical) shape, and every op that reaches it runs as one op on the physical
value, whose batch dimension is always dimension 0. The interceptor (``dispatch``; registered in
``core.observe`` while a vmap runs) sends each generated op whose arguments hold a BatchedTensor to its
batching rule: rules derived from the table's schemas (``derived_rules``: elementwise rows broadcast,
rows with a ``dim`` shift it) and hand rules for the others (``hand_rules``); an op with neither runs
once per example (torch's slow fallback, with its performance warning).
"""
from derivgen.batching.tensor import BatchedTensor, add_batch_dim, remove_batch_dim  # noqa: F401
from derivgen.batching.registry import RULES, register  # noqa: F401
from derivgen.batching.dispatch import active_levels, rule_for, vmap_level  # noqa: F401
from derivgen.batching import hand_rules as _hand_rules  # noqa: F401  (registers the hand rules)
