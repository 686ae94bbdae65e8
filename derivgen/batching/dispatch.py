"""The interceptor that sends ops on BatchedTensors to their batching rules, and the vmap levels that
install it."""
from derivgen.core import observe
from derivgen.core.generator import set_draw_guard
from derivgen.batching.derived_rules import derive
from derivgen.batching.registry import LEVELS, RULES
from derivgen.batching.tensor import BatchedTensor


def _max_level(values):
    level = None
    for v in values:
        if isinstance(v, BatchedTensor):
            if level is None or v._level > level:
                level = v._level
        elif isinstance(v, (list, tuple)):
            for x in v:
                if isinstance(x, BatchedTensor) and (level is None or x._level > level):
                    level = x._level
    return level


def rule_for(fn):
    rule = RULES.get(fn.__name__)
    if rule is None:
        rule = RULES[fn.__name__] = derive(fn)
    return rule


def _intercept(name, fn, kwargs):
    level = _max_level(kwargs.values())
    if level is None or level not in LEVELS.sizes:
        return NotImplemented
    if any(getattr(v, "_fw_grads", None) for v in kwargs.values() if isinstance(v, BatchedTensor)):
        # the forward-mode rules compute tangents on arrays: a batched dual would lose its tangent
        raise RuntimeError("vmap: dual tensors (forward_ad.make_dual) of batched tensors are not supported; use "
                           "derivgen.func.jvp or jacfwd inside vmap, which run one JVP per example")
    return rule_for(fn)(fn, kwargs, level)


class vmap_level:  # noqa: N801 - a context manager, like torch's
    """A new vmap level for ``batch_size`` examples; the interceptor is installed while any level is
    active on this thread."""

    def __init__(self, batch_size, randomness="error"):
        self.batch_size = batch_size
        self.randomness = randomness
        self.level = None
        self._previous_guard = None

    def __enter__(self):
        self.level = LEVELS.next
        LEVELS.next += 1
        if not LEVELS.sizes:
            observe.add_interceptor(_intercept)
        LEVELS.sizes[self.level] = self.batch_size
        LEVELS.randomness[self.level] = self.randomness
        self._previous_guard = set_draw_guard(_check_random_draw)
        return self.level

    def __exit__(self, *exc):
        set_draw_guard(self._previous_guard)
        del LEVELS.sizes[self.level]
        LEVELS.randomness.pop(self.level, None)
        LEVELS.next -= 1
        if not LEVELS.sizes:
            observe.remove_interceptor(_intercept)
        return False


def _check_random_draw():
    """Called before every random draw while a vmap level exists (suspended ones included: a per-example
    loop runs inside the vmap): torch's 'error' mode refuses it."""
    modes = set(LEVELS.randomness.values())
    if not modes:
        return
    if "error" in modes:
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                           "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
                           "of vmap")
    # A draw here cannot tell a factory (torch: one draw shared, or one per example) from a random op on a
    # batched tensor (per example, or one shared), so neither mode can be honoured without per-op rules.
    raise NotImplementedError(f"vmap: randomness={sorted(modes)[0]!r} is not supported by derivgen: random "
                              "operations inside vmap are refused; draw the random values outside vmap and pass "
                              "them in as inputs")


def active_levels():
    return sorted(LEVELS.sizes)


class suspended_level:  # noqa: N801 - a context manager
    """Level ``level`` inactive for a while: code run per example of it (the transforms' per-example
    loops) sees plain examples, and makes no new batched leaves for that level."""

    def __init__(self, level):
        self.level = level
        self.size = None

    def __enter__(self):
        self.size = LEVELS.sizes.pop(self.level)
        if not LEVELS.sizes:
            observe.remove_interceptor(_intercept)

    def __exit__(self, *exc):
        if not LEVELS.sizes:
            observe.add_interceptor(_intercept)
        LEVELS.sizes[self.level] = self.size
        return False
