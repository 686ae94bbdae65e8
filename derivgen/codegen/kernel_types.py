"""The scalar kinds of an elementwise kernel's expression: the typing rules a ``forward:`` must pass.

A kernel computes one number (or bool) per element from its arrays' elements and its numbers, with
``KernelPrinter``'s spellings. Each node of the parsed expression tree has a rule saying which kinds
it accepts and which it returns, over three kinds:

* ``BOOL``: comparisons and logic (``self > 0``, ``and``); the kernel writes a bool array;
* ``INT``: an input element, an integer literal, and what +, -, *, non-negative integer powers, abs,
  max/min, sign and selections (``where``) make of them: integer inputs stay integers (torch keeps such
  ops integral), so an int64 kernel is exact;
* ``FLOAT``: everything else (division, fractional powers, transcendental functions, float literals),
  which computes integer inputs in the default float dtype.

Anything without a rule (a tuple, ``None``, a tensor-valued call such as ``@``, metadata, nan) would be
printed into a kernel that fails to compile, or to print, only when the op first runs; the rules refuse
it here, with the reason, before any code is written. Nothing is compiled to decide.
"""
import sympy as sp
from sympy.functions.elementary.piecewise import ExprCondPair

from .printers import KernelPrinter

BOOL, INT, FLOAT = "bool", "int", "float"

_LOGIC = (sp.core.relational.Relational, sp.And, sp.Or, sp.Not, sp.logic.boolalg.BooleanAtom)
# kind-preserving arithmetic: the result is FLOAT if any argument is, else INT
_CLOSED = (sp.Add, sp.Mul, sp.Abs, sp.Max, sp.Min, sp.sign)
# always FLOAT: the printer's math functions, and the step functions of derivatives at kinks
_FLOAT_FUNCS = set(KernelPrinter._FUNCS) | {"exp2"}
_FLOAT_STEP = (sp.Heaviside, sp.DiracDelta, sp.floor, sp.ceiling, sp.exp, sp.log)
_CONSTANTS = (sp.Integer, sp.Rational, sp.Float, sp.core.numbers.Infinity, sp.core.numbers.NegativeInfinity,
              sp.core.numbers.Pi, sp.core.numbers.Exp1)


class KernelTypeError(Exception):
    """``expr`` has no kernel: the message says which node and why."""


def _join(kinds):
    return FLOAT if FLOAT in kinds else INT


def _own_problem(node, bound):
    """Why ``node`` itself (not its arguments) has no kernel rule, or None."""
    if isinstance(node, sp.Symbol):
        if bound is not None and node.name not in bound:
            return f"'{node.name}' has no per-element value in a kernel"
    elif isinstance(node, sp.Tuple) and not isinstance(node, ExprCondPair):
        return "a tuple is not a number"
    elif isinstance(node, sp.core.function.AppliedUndef):
        return f"'{type(node).__name__}' is not an elementwise function"
    elif isinstance(node, (sp.core.numbers.NaN, sp.core.numbers.ComplexInfinity)):
        return "the expression is undefined (nan)"
    elif isinstance(node, sp.Function) and not isinstance(node, _CLOSED + _FLOAT_STEP + (sp.Piecewise,) + _LOGIC) \
            and type(node).__name__ not in _FLOAT_FUNCS:
        return f"'{type(node).__name__}' has no kernel spelling"
    elif node.is_number and not isinstance(node, _CONSTANTS) and not node.free_symbols and isinstance(node, sp.Atom):
        return f"the constant {node} is not a real number"
    return None


def scalar_kind(expr, bound=None):
    """The kind (BOOL, INT or FLOAT) of ``expr``'s value per element, its free symbols being the
    elements and numbers of ``bound`` (None: any symbol). Raises KernelTypeError. A node is checked
    before its arguments, so the first problem reported is the outermost one, left to right."""
    problem = _own_problem(expr, bound)
    if problem:
        raise KernelTypeError(problem)
    args = [scalar_kind(a, bound) for a in expr.args] if not isinstance(expr, sp.Atom) else []
    if isinstance(expr, sp.Symbol) or expr.is_Integer:
        return INT
    if isinstance(expr, _LOGIC):
        return BOOL
    if isinstance(expr, ExprCondPair):
        # a selection is exact on integers only if its condition is: ``where(x > 0.5, x, 0)`` compares
        # in float, so integer inputs compute as floats
        return _join([args[0], FLOAT if _compares_floats(expr.args[1]) else INT])
    if isinstance(expr, sp.Piecewise):
        return _join(args)
    if isinstance(expr, _CLOSED):
        return _join(args)
    if expr.is_Pow:
        exponent = expr.args[1]
        return args[0] if exponent.is_Integer and int(exponent) >= 0 else FLOAT
    return FLOAT


def _compares_floats(cond):
    """True when a condition compares a FLOAT operand somewhere (its logic nodes are BOOL themselves)."""
    if isinstance(cond, _LOGIC) and not isinstance(cond, sp.logic.boolalg.BooleanAtom):
        return any(_compares_floats(a) if isinstance(a, _LOGIC) else scalar_kind(a) == FLOAT for a in cond.args)
    return False


def kernel_problem(expr, bound):
    """Why ``expr`` cannot be a kernel over the names in ``bound``, or None."""
    try:
        scalar_kind(expr, bound)
    except KernelTypeError as exc:
        return str(exc)
    return None


def kind_or_float(expr):
    """``scalar_kind`` of an expression the lowering already accepted; FLOAT where no rule applies."""
    try:
        return scalar_kind(expr)
    except KernelTypeError:
        return FLOAT
