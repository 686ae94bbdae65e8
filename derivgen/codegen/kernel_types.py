"""Which sympy expressions make a Numba kernel: the typing rules a ``forward:`` must pass.

A kernel computes one number (or bool) per element from its arrays' elements and its numbers, with
``KernelPrinter``'s spellings, all of which Numba types for float32, float64, int and bool inputs.
Anything else (a tuple, ``None``, a tensor-valued call such as ``@``, metadata, nan) would be printed
into a kernel that fails to compile, or to print, only when the op first runs; it is refused here.
"""
import sympy as sp
from sympy.functions.elementary.piecewise import ExprCondPair

from .printers import KernelPrinter

_STRUCTURE = (sp.Add, sp.Mul, sp.Pow, sp.Abs, sp.Max, sp.Min, sp.Heaviside, sp.DiracDelta, sp.Piecewise,
              sp.core.relational.Relational, sp.And, sp.Or, sp.Not, sp.logic.boolalg.BooleanAtom,
              sp.sign, sp.floor, sp.ceiling, sp.exp, sp.log)
_CONSTANTS = (sp.Integer, sp.Rational, sp.Float, sp.core.numbers.Infinity, sp.core.numbers.NegativeInfinity,
              sp.core.numbers.Pi, sp.core.numbers.Exp1)


def kernel_problem(expr, bound):
    """Why ``expr`` cannot be a kernel over the names in ``bound``, or None."""
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Symbol):
            if node.name not in bound:
                return f"'{node.name}' has no per-element value in a kernel"
        elif isinstance(node, sp.Tuple) and not isinstance(node, ExprCondPair):
            return "a tuple is not a number"
        elif isinstance(node, sp.core.function.AppliedUndef):
            return f"'{type(node).__name__}' is not an elementwise function"
        elif isinstance(node, (sp.core.numbers.NaN, sp.core.numbers.ComplexInfinity)):
            return "the expression is undefined (nan)"
        elif isinstance(node, sp.Function) and not isinstance(node, _STRUCTURE) \
                and type(node).__name__ not in KernelPrinter._FUNCS and type(node).__name__ != "exp2":
            return f"'{type(node).__name__}' has no kernel spelling"
        elif node.is_number and not isinstance(node, _CONSTANTS) and not node.free_symbols \
                and isinstance(node, sp.Atom):
            return f"the constant {node} is not a real number"
    return None
