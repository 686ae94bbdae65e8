"""The elementwise functions a formula may call, as sympy builders (the allow-list)."""
import sympy as sp
from sympy.codegen.cfunctions import exp2, expm1, log1p, log2, log10


def _where(cond, a, b):
    return sp.Piecewise((a, as_condition(cond)), (b, True))


def as_condition(c):
    """A boolean tensor used as a condition means ``c != 0``."""
    if isinstance(c, (sp.core.relational.Relational, sp.logic.boolalg.Boolean)):
        return c
    return sp.Ne(c, 0)


def _clamp(x, lo=None, hi=None):
    if lo is not None and lo != sp.Symbol("None"):
        x = sp.Max(x, lo)
    if hi is not None and hi != sp.Symbol("None"):
        x = sp.Min(x, hi)
    return x


ELEMENTWISE = {
    "exp": sp.exp, "log": sp.log, "log1p": log1p, "expm1": expm1, "exp2": exp2, "log2": log2, "log10": log10,
    "sqrt": sp.sqrt, "rsqrt": lambda x: 1 / sp.sqrt(x), "reciprocal": lambda x: 1 / x, "square": lambda x: x ** 2,
    "sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "asin": sp.asin, "acos": sp.acos, "atan": sp.atan,
    "sinh": sp.sinh, "cosh": sp.cosh, "tanh": sp.tanh, "asinh": sp.asinh, "acosh": sp.acosh, "atanh": sp.atanh,
    "erf": sp.erf, "erfc": sp.erfc, "abs": sp.Abs, "sign": sp.sign, "sgn": sp.sign,
    "sigmoid": lambda x: 1 / (1 + sp.exp(-x)),
    "where": _where, "maximum": sp.Max, "minimum": sp.Min, "clamp": _clamp,
    "pow": lambda a, b: a ** b, "atan2": sp.atan2,
    "floor": sp.floor, "ceil": sp.ceiling,
    "heaviside": lambda x: sp.Heaviside(x, 0),
}

CONSTANTS = {"pi": sp.pi, "M_PI": sp.pi, "inf": sp.oo, "e": sp.E}
