"""Prove a row's hand-written formulas against sympy's derivative of its forward, at points chosen to
find the mistakes random points miss.

``derive.probe_evaluators`` compares the two at random points of small boxes. On top of that, a row is
probed:

- at large magnitudes (each input at +-1e3 and +-1e6, where both sides are finite): a formula wrong
  only far from the origin;
- at each input's domain edges (0 and +-1 for tensors, the ends of an int argument's range);
- at the points where a condition of the forward or of a formula switches: the zeros of the sides of
  a comparison, of ``where``'s condition, of ``abs``/``sign``/``Heaviside`` arguments and of the
  differences of ``maximum``/``minimum`` arguments (so ties ``self == other``, zeros and thresholds).
  There the derivative may not exist; the formula must give PyTorch's kind of subgradient: the
  derivative's limit from one side or the other, or their mean (relu'(0) = 0, abs'(0) = 0, maximum
  splits a tie in halves, clamp passes the gradient at its bounds);
- at ties between two differentiable inputs, jointly: when the forward is smooth along the direction
  that moves both inputs together (``maximum(x, x + t)``), the formulas' gradients must add up to the
  derivative in that direction, so a tie cannot hand the full gradient to both inputs.

Formulas that read tensor metadata are proven with a concrete shape substituted (a 2 x 3 tensor:
``sym_numel`` 6, ``dim`` 2): an elementwise row's per-element gradient cannot depend on it.
"""
import math
import random

import sympy as sp

from .derive import GRAD, _evaluator, derive_vjp, probe_evaluators

LARGE = (1e3, -1e3, 1e6, -1e6)
TENSOR_EDGES = (0.0, 1.0, -1.0)
CONCRETE_SHAPE = (2, 3)
_SWITCH_RTOL = 1e-6      # at a kink, limits are read 1e-9 (relative) to either side
_LARGE_RTOL = 1e-6       # far from the origin, two spellings of one formula round differently


def concrete_metadata(expr, names):
    """``expr`` with the metadata symbols in ``names`` replaced by a CONCRETE_SHAPE tensor's values;
    None when a symbol has no scalar value here (sizes, dtypes)."""
    subs = {}
    for s in expr.free_symbols:
        if s.name not in names:
            continue
        if s.name.endswith("_sym_numel"):
            subs[s] = sp.Integer(math.prod(CONCRETE_SHAPE))
        elif s.name.endswith("_dim"):
            subs[s] = sp.Integer(len(CONCRETE_SHAPE))
        else:
            return None
    return expr.xreplace(subs)


def switch_expressions(*exprs):
    """Expressions whose zeros are where a condition of ``exprs`` switches."""
    found = []
    for e in exprs:
        for node in sp.preorder_traversal(e):
            if isinstance(node, sp.core.relational.Relational):
                found.append(node.lhs - node.rhs)
            elif isinstance(node, (sp.Abs, sp.sign, sp.Heaviside)):
                found.append(node.args[0])
            elif isinstance(node, (sp.Max, sp.Min)):
                args = node.args
                found += [a - b for i, a in enumerate(args) for b in args[i + 1:]]
    unique = []
    for f in found:
        if f.free_symbols and f not in unique:
            unique.append(f)
    return unique


def _linear_root(expr, s):
    """``s`` as a function of the other symbols where ``expr`` is 0, if ``expr`` is linear in ``s``."""
    try:
        slope = sp.diff(expr, s)
    except (TypeError, ValueError):
        return None
    if slope == 0 or s in slope.free_symbols or isinstance(slope, sp.Derivative):
        return None
    return sp.simplify(s - expr / slope) if slope.free_symbols else s - expr / slope


class _Side:
    """One formula to prove: the hand expression and sympy's, as fast evaluators."""

    def __init__(self, arg, hand, derived, symbols):
        self.arg = arg
        self.derived = _evaluator(derived, symbols)
        self.hand = self.derived if hand == derived else _evaluator(hand, symbols)


def _value(f, point):
    try:
        v = float(f(*point))
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):
        return None
    return v if math.isfinite(v) else None


def _close(a, b, rtol):
    return abs(a - b) <= rtol * max(1.0, abs(b))


def _where(symbols, point):
    return ", ".join(f"{s.name}={v:.6g}" for s, v in zip(symbols, point))


class RowProof:
    """The hand formulas of one row (each for one argument) against ``forward``."""

    def __init__(self, forward, arg_names, tensor_args, int_args, result_name, metadata):
        self.forward = forward
        self.arg_names = set(arg_names)
        self.tensor_args = set(tensor_args)
        self.int_args = set(int_args)
        self.result = sp.Symbol(result_name, real=True)
        self.metadata = metadata
        self.items = []       # (arg, hand, derived)

    def add(self, arg, expr):
        """Queue ``expr`` (the formula for ``arg``); return False when it cannot be proven numerically
        (it calls helpers or reads metadata without a scalar value)."""
        hand = expr.xreplace({self.result: self.forward})
        hand = concrete_metadata(hand, self.metadata)
        if hand is None or any(isinstance(a, sp.core.function.AppliedUndef) for a in sp.preorder_traversal(hand)):
            return False
        x = sp.Symbol(arg, real=True)
        derived = derive_vjp(self.forward, x, GRAD)
        names = {s.name for s in hand.free_symbols | derived.free_symbols}
        if not names <= self.arg_names | {"grad"}:
            return False
        self.items.append((arg, hand, derived))
        return True

    def domains(self):
        return {a: (1.0, 4.0) for a in self.int_args}

    def check(self):
        """None when every queued formula holds, else (arg, message)."""
        if not self.items:
            return None
        domains = self.domains()
        symbols = sorted(set().union(*(h.free_symbols | d.free_symbols for _, h, d in self.items)) | {GRAD},
                         key=lambda s: s.name)
        sides = [_Side(arg, h, d, symbols) for arg, h, d in self.items]
        for side in sides:
            ok, msg, _ = probe_evaluators(side.hand, side.derived, symbols, domains)
            if not ok:
                return side.arg, msg
        rng = random.Random(3)
        for point, i, rtol in self._special_points(symbols, rng):
            bad = self._check_kink(sides, symbols, point, i, rtol)
            if bad:
                return bad
        for point, i in self._switch_points(symbols, rng):
            bad = self._check_kink(sides, symbols, point, i, _SWITCH_RTOL) or \
                (self._check_joint(sides, symbols, point, i) if len(sides) > 1 else None)
            if bad:
                return bad
        return None

    def _base_point(self, symbols, rng):
        point = []
        for s in symbols:
            lo, hi = self.domains().get(s.name, (0.05, 3.0))
            value = rng.uniform(lo, hi)
            point.append(value if s.name in self.int_args or rng.random() < 0.5 else -value)
        return point

    def _special_points(self, symbols, rng):
        """(point, index of the symbol set, rtol): large magnitudes, then domain edges."""
        reals = [i for i, s in enumerate(symbols) if s.name != "grad" and s.name not in self.int_args]
        tensors = [i for i in reals if symbols[i].name in self.tensor_args]
        for _ in range(3):
            base = self._base_point(symbols, rng)
            for i in reals:
                for v in LARGE:
                    p = list(base)
                    p[i] = v
                    yield p, i, _LARGE_RTOL
            for v in LARGE:
                if len(tensors) > 1:     # all tensor inputs large together (numbers keep their values)
                    p = list(base)
                    for i in tensors:
                        p[i] = v
                    yield p, tensors[0], _LARGE_RTOL
            for i, s in enumerate(symbols):
                edges = self.domains().get(s.name) or (TENSOR_EDGES if i in reals else ())
                for v in edges:
                    p = list(base)
                    p[i] = v
                    yield p, i, _SWITCH_RTOL

    def _switch_points(self, symbols, rng):
        """(point, index of the symbol solved for) for each switching condition and each symbol in it."""
        exprs = switch_expressions(self.forward, *(h for _, h, _ in self.items))
        index = {s: i for i, s in enumerate(symbols)}
        for expr in exprs:
            for s in sorted(expr.free_symbols, key=lambda s: s.name):
                if s not in index or s.name == "grad":
                    continue
                root = _linear_root(expr, s)
                if root is None:
                    continue
                f_root = _evaluator(root, symbols)
                for _ in range(4):
                    p = self._base_point(symbols, rng)
                    v = _value(f_root, p)
                    if v is None:
                        continue
                    p[index[s]] = v
                    yield p, index[s]

    def _limits(self, f, point, i):
        eps = 1e-9 * max(1.0, abs(point[i]))
        left, right = list(point), list(point)
        left[i] -= eps
        right[i] += eps
        return _value(f, left), _value(f, right)

    def _check_kink(self, sides, symbols, point, i, rtol):
        """Each formula at ``point`` against the derivative there, or, where the derivative jumps as
        symbol ``i`` crosses the point, against its limit from either side or their mean."""
        for side in sides:
            h = _value(side.hand, point)
            if h is None:
                continue
            at = _value(side.derived, point)
            if at is None or _close(h, at, rtol):
                continue      # no finite derivative to compare with, or agreement
            left, right = self._limits(side.derived, point, i)
            limits = [v for v in (left, right) if v is not None]
            if left is not None and right is not None:
                limits.append((left + right) / 2)
            if any(_close(h, v, _SWITCH_RTOL) for v in limits):
                continue
            shown = f"{at:.10g}"
            if limits:
                shown += ", its one-sided limits " + " and ".join(f"{v:.10g}" for v in limits[:2])
            return side.arg, f"at {_where(symbols, point)}: formula gives {h:.10g} but d(forward) gives {shown}"
        return None

    def _check_joint(self, sides, symbols, point, i):
        """At a switch point: if the sum of the derivatives is the same on both sides (the forward is
        smooth when all inputs move together), the formulas' sum must equal it."""
        hands = [_value(s.hand, point) for s in sides]
        lefts, rights = zip(*(self._limits(s.derived, point, i) for s in sides))
        if None in hands or None in lefts or None in rights:
            return None
        left, right = sum(lefts), sum(rights)
        if not _close(left, right, _SWITCH_RTOL):
            return None
        total = sum(hands)
        if _close(total, left, _SWITCH_RTOL):
            return None
        names = ", ".join(s.arg for s in sides)
        return sides[-1].arg, (f"at {_where(symbols, point)}, where a condition switches: the formulas for "
                               f"{names} add up to {total:.10g}, but moving all of them together changes the "
                               f"forward at rate {left:.10g} (the gradient is counted more than once)")
