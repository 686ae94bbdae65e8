"""Derive gradients with sympy and prove hand-written formulas against them by numeric probing.

``simplify(a - b) == 0`` is slow and incomplete (it cannot prove relu's Heaviside against a Piecewise);
evaluating both sides at random points of the op's domain is fast and catches real mistakes.
"""
import math
import random

import sympy as sp

GRAD = sp.Symbol("grad", real=True)


def torch_conventions(e):
    """sympy's Heaviside(0) is 1/2 but torch's relu'(0) is 0; d sign/dx is 0 almost everywhere."""
    e = e.replace(sp.Heaviside, lambda *a: sp.Heaviside(a[0], 0))
    return e.replace(sp.DiracDelta, lambda *a: sp.S.Zero)


def derive_vjp(forward, wrt, grad=GRAD):
    """``grad * d forward / d wrt``, with torch's conventions at kinks."""
    return torch_conventions(grad * sp.diff(forward, wrt))


def light_simplify(e):
    """A cheaper equivalent of ``e`` when one is easy to find: ``factor_terms(together(e))`` (one
    division instead of several, 0.05 s for a whole table) is kept only if it has fewer operations.
    ``sp.simplify`` is not used: seconds per formula, and often no better (numba-sympy.md §1.4)."""
    candidate = sp.factor_terms(sp.together(e))
    return candidate if sp.count_ops(candidate) < sp.count_ops(e) else e


def _heaviside(x, h0=0.5):
    return 1.0 if x > 0 else (float(h0) if x == 0 else 0.0)


def _sign(x):
    return (x > 0) - (x < 0)


_MODULES = [{"Heaviside": _heaviside, "DiracDelta": lambda *a: 0.0, "sign": _sign, "Max": max, "Min": min,
             "exp2": lambda x: 2.0 ** x, "log2": math.log2, "log10": math.log10, "log1p": math.log1p,
             "expm1": math.expm1}, "math"]


def _evaluator(expr, symbols):
    return sp.lambdify(symbols, expr, modules=_MODULES)


def probe_equal(hand, derived, symbols, domains=None, n_points=64, seed=0, rtol=1e-8):
    """Compare two scalar expressions at random points. Returns (ok, message, n_valid_points).

    ``domains`` maps a symbol name to (lo, hi); by default values are drawn from [-3, 3], then from
    (0.05, 3) and (1.05, 3) when too few points fall inside the functions' domain."""
    return probe_evaluators(_evaluator(hand, symbols), _evaluator(derived, symbols), symbols, domains, n_points,
                            seed, rtol)


def probe_evaluators(f_hand, f_der, symbols, domains=None, n_points=64, seed=0, rtol=1e-8):
    """``probe_equal`` on two functions already made from expressions by ``_evaluator``."""
    rng = random.Random(seed)
    valid = 0
    for lo, hi in ((-3.0, 3.0), (0.05, 3.0), (1.05, 3.0)):
        for _ in range(n_points):
            point = []
            for s in symbols:
                a, b = (domains or {}).get(s.name, (lo, hi))
                point.append(rng.uniform(a, b))
            try:
                h = float(f_hand(*point))
                d = float(f_der(*point))
            except (ValueError, ZeroDivisionError, OverflowError, TypeError):
                continue
            if not (math.isfinite(h) and math.isfinite(d)):
                continue
            valid += 1
            if abs(h - d) > rtol * max(1.0, abs(d)):
                pt = ", ".join(f"{s.name}={v:.6g}" for s, v in zip(symbols, point))
                return False, f"at {pt}: formula gives {h:.10g} but d(forward) gives {d:.10g}", valid
        if valid >= n_points // 3:
            break
    if valid < 8:
        return False, f"could not find enough points where both sides are finite ({valid})", valid
    return True, "", valid
