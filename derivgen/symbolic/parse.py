"""Parse formula strings from the (untrusted) table into sympy expressions through an allow-list.

Nothing is ever ``eval``-ed: Python's ``ast`` parses the string, and a visitor with one method per
allowed node type builds sympy objects. Elementwise algebra becomes ordinary sympy; anything else
(reductions, shape ops, matmul, backward helpers) becomes an *opaque* ``sympy.Function`` application,
whose keyword arguments travel as trailing ``Tuple(Symbol('kw_<name>'), value)``. Tensor metadata
(``self.sym_sizes()``, ``self.shape``, ``self.scalar_type()``, ``self.sym_numel()``, ``self.dim()``)
becomes a symbol named like PyTorch's saved attribute (``self_sym_sizes``).
"""
import ast
import math
from dataclasses import dataclass, field

import sympy as sp

from .functions import CONSTANTS, ELEMENTWISE, as_condition

# Bounds checked on the Python syntax tree before sympy sees a formula: sympy's work grows with the
# tree's size and its recursion with the tree's depth, and exact integer arithmetic with the size of
# literals and exponents (``0 * 10 ** 10 ** 10`` would compute a ten-billion-digit integer first).
MAX_FORMULA_LENGTH = 2000
MAX_DEPTH = 32          # shipped formulas reach 11
MAX_NODES = 500         # shipped formulas reach 64
MAX_INT_DIGITS = 18     # an int literal fits in int64
MAX_EXPONENT = 64       # |n| of a constant exponent applied to a constant base
MAX_SYMBOLIC_EXPONENT = 1024   # |n| of a constant exponent applied to anything else
NONE = sp.Symbol("None")

_METADATA = {
    "sym_sizes": "sym_sizes", "shape": "sym_sizes", "size": "sym_sizes", "sizes": None,
    "scalar_type": "scalar_type", "dtype": "scalar_type", "options": "scalar_type",
    "sym_numel": "sym_numel", "numel": "sym_numel", "dim": "dim",
}
_LIST_METADATA = {"to_args_sizes": "args_sizes", "to_args_sizes_symint": "args_sizes",
                  "to_args_scalartypes": "args_scalartypes"}


class FormulaError(ValueError):
    pass


@dataclass
class Scope:
    """The names one formula may use."""
    tensors: set = field(default_factory=set)       # tensor-valued names (inputs, grad, grads_i, results)
    lists: set = field(default_factory=set)         # list-valued names (grads, Tensor[] inputs)
    numbers: set = field(default_factory=set)       # Scalar/int/float/bool arguments
    values: set = field(default_factory=set)        # other plain arguments (dims, sizes, dtypes)
    inline_ops: dict = field(default_factory=dict)  # elementwise table rows usable as functions
    # inline ops kept as calls of their row (a graph-path parse): the create_graph path then records the
    # row's own node (``threshold_backward`` -> ThresholdBackwardBackward0), as torch's formulas do
    row_calls: set = field(default_factory=set)
    tensor_fns: set = field(default_factory=set)    # opaque tensor functions
    meta_fns: set = field(default_factory=set)      # plain-value functions of metadata
    metadata: set = field(default_factory=set)      # metadata symbols used (filled while parsing)


def _sym(name):
    return sp.Symbol(name, real=True)


def schema_scope(schema):
    """The names a row's schema puts in scope: its Tensor, Tensor[], number and other arguments."""
    s = Scope()
    for a in schema.args:
        if a.is_tensor:
            s.tensors.add(a.name)
        elif a.is_tensor_list:
            s.lists.add(a.name)
        elif a.is_number:
            s.numbers.add(a.name)
        else:
            s.values.add(a.name)
    return s


def coerce_arith(e):
    """A comparison used in arithmetic (``grad * (self > 0)``) is 1 where true and 0 elsewhere."""
    if isinstance(e, (sp.core.relational.Relational, sp.logic.boolalg.Boolean)) and not isinstance(e, sp.Symbol):
        return sp.Piecewise((1, e), (0, True))
    return e


class _Parser(ast.NodeVisitor):
    def __init__(self, scope):
        self.scope = scope

    def generic_visit(self, node):
        raise FormulaError(f"'{type(node).__name__}' is not allowed in a formula")

    def visit_Expression(self, node):
        return self.visit(node.body)

    def visit_Constant(self, node):
        v = node.value
        if v is None:
            return NONE
        if isinstance(v, bool):
            return sp.true if v else sp.false
        if isinstance(v, int):
            return sp.Integer(v)
        if isinstance(v, float):
            if not math.isfinite(v):
                raise FormulaError(f"literal {node.value!r} is not a finite number (write inf for infinity)")
            return sp.Float(v) if not v.is_integer() else sp.Integer(int(v)) if abs(v) < 2 ** 53 else sp.Float(v)
        raise FormulaError(f"literal {v!r} is not allowed in a formula (numbers, True, False, None only)")

    def visit_Name(self, node):
        name = node.id
        if name.startswith("_"):
            raise FormulaError(f"name '{name}' is not allowed (names may not start with '_')")
        s = self.scope
        if name in s.tensors or name in s.numbers or name in s.values or name in s.lists:
            return _sym(name)
        if name in CONSTANTS:
            return CONSTANTS[name]
        if name == "True" or name == "False":
            return sp.true if name == "True" else sp.false
        raise FormulaError(f"unknown name '{name}'")

    def visit_Tuple(self, node):
        return sp.Tuple(*[self.visit(e) for e in node.elts])

    visit_List = visit_Tuple

    def visit_BinOp(self, node):
        a, b = self.visit(node.left), self.visit(node.right)
        op = type(node.op)
        if op is ast.MatMult:
            return sp.Function("matmul")(a, b)
        a, b = coerce_arith(a), coerce_arith(b)
        if op is ast.Add:
            return a + b
        if op is ast.Sub:
            return a - b
        if op is ast.Mult:
            return a * b
        if op is ast.Div:
            return a / b
        if op is ast.Pow:
            _check_exponent(a, b)
            return a ** b
        raise FormulaError(f"operator '{type(node.op).__name__}' is not allowed in a formula")

    def visit_UnaryOp(self, node):
        v = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            return -coerce_arith(v)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Not):
            return sp.Not(as_condition(v))
        raise FormulaError(f"operator '{type(node.op).__name__}' is not allowed in a formula")

    def visit_BoolOp(self, node):
        parts = [as_condition(self.visit(v)) for v in node.values]
        return sp.And(*parts) if isinstance(node.op, ast.And) else sp.Or(*parts)

    def visit_Compare(self, node):
        if len(node.ops) != 1:
            raise FormulaError("chained comparisons are not allowed; use 'and'")
        a, b = coerce_arith(self.visit(node.left)), coerce_arith(self.visit(node.comparators[0]))
        ops = {ast.Gt: sp.Gt, ast.Lt: sp.Lt, ast.GtE: sp.Ge, ast.LtE: sp.Le, ast.Eq: sp.Eq, ast.NotEq: sp.Ne}
        op = ops.get(type(node.ops[0]))
        if op is None:
            raise FormulaError(f"comparison '{type(node.ops[0]).__name__}' is not allowed")
        return op(a, b, evaluate=False)

    def visit_IfExp(self, node):
        return sp.Piecewise((coerce_arith(self.visit(node.body)), as_condition(self.visit(node.test))),
                            (coerce_arith(self.visit(node.orelse)), True))

    def visit_Subscript(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == "grads":
            idx = node.slice
            if isinstance(idx, ast.Constant) and isinstance(idx.value, int):
                name = f"grads_{idx.value}"
                self.scope.tensors.add(name)
                return _sym(name)
            raise FormulaError("grads[...] takes an integer literal")
        raise FormulaError("indexing is not allowed in a formula except grads[i]")

    def visit_Attribute(self, node):
        # `x.shape`, `x.dtype` without a call
        return self._metadata(node.value, node.attr, node)

    def _metadata(self, target, attr, node):
        if attr.startswith("_"):
            raise FormulaError(f"attribute '{attr}' is not allowed")
        if attr not in _METADATA or _METADATA[attr] is None:
            raise FormulaError(f"attribute '.{attr}' is not allowed (allowed: .shape, .sym_sizes(), "
                               ".scalar_type(), .dtype, .sym_numel(), .numel(), .dim(), and method calls)")
        if not isinstance(target, ast.Name) or target.id not in self.scope.tensors:
            raise FormulaError(f"'.{attr}' must be read from an input or output tensor by name")
        name = f"{target.id}_{_METADATA[attr]}"
        self.scope.metadata.add(name)
        return _sym(name)

    def visit_Call(self, node):
        kwargs = []
        for kw in node.keywords:
            if kw.arg is None:
                raise FormulaError("'**' arguments are not allowed")
            kwargs.append(sp.Tuple(sp.Symbol(f"kw_{kw.arg}"), self.visit(kw.value)))
        f = node.func
        if isinstance(f, ast.Attribute):
            if f.attr in _METADATA and not node.args and not kwargs:
                return self._metadata(f.value, f.attr, node)
            if f.attr.startswith("_"):
                raise FormulaError(f"method '{f.attr}' is not allowed")
            return self._call(f.attr, [self.visit(f.value)] + [self.visit(a) for a in node.args], kwargs)
        if isinstance(f, ast.Name):
            if f.id in _LIST_METADATA:
                if len(node.args) != 1 or not isinstance(node.args[0], ast.Name) or node.args[0].id not in self.scope.lists:
                    raise FormulaError(f"{f.id}() takes one Tensor[] argument by name")
                name = f"{node.args[0].id}_{_LIST_METADATA[f.id]}"
                self.scope.metadata.add(name)
                return _sym(name)
            if f.id.startswith("_"):
                raise FormulaError(f"function '{f.id}' is not allowed")
            return self._call(f.id, [self.visit(a) for a in node.args], kwargs)
        raise FormulaError("only calls of named functions or methods are allowed")

    def _call(self, name, args, kwargs):
        s = self.scope
        if name in s.inline_ops and not kwargs:
            params, builder = s.inline_ops[name]
            if len(args) > len(params):
                raise FormulaError(f"{name}() takes {len(params)} arguments, got {len(args)}")
            if name in s.row_calls and any(_tensor_valued(a, s) for a in args):
                return sp.Function(name)(*args)
            return builder(*args)
        if name in ELEMENTWISE and name not in s.tensor_fns and not kwargs:
            if name == "pow" and len(args) == 2:
                _check_exponent(*args)
            try:
                return ELEMENTWISE[name](*[coerce_arith(a) if name not in ("where",) else a for a in args])
            except TypeError as exc:
                raise FormulaError(f"bad call of {name}(): {exc}") from None
        if name in s.tensor_fns or name in s.meta_fns:
            return sp.Function(name)(*args, *kwargs)
        raise FormulaError(f"unknown function '{name}'")


def _tensor_valued(e, scope):
    """Whether a parsed argument depends on a tensor (a name in scope, or an opaque tensor function)."""
    if any(x.name in scope.tensors for x in e.free_symbols):
        return True
    return any(is_opaque(a) and type(a).__name__ in scope.tensor_fns for a in sp.preorder_traversal(e))


def _check_exponent(base, exponent):
    if not (isinstance(exponent, sp.Number) and exponent.is_finite):
        return
    limit = MAX_EXPONENT if isinstance(base, sp.Number) else MAX_SYMBOLIC_EXPONENT
    if abs(exponent) > limit:
        raise FormulaError(f"exponent {exponent} is too large (at most {limit} in magnitude here)")


def parse_formula(text, scope):
    """Parse ``text`` into a sympy expression, or raise FormulaError saying what is not allowed."""
    if not isinstance(text, str) or not text.strip():
        raise FormulaError("empty formula")
    if len(text) > MAX_FORMULA_LENGTH:
        raise FormulaError(f"formula longer than {MAX_FORMULA_LENGTH} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise FormulaError(f"syntax error in formula: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise FormulaError(f"formula nested too deeply (at most {MAX_DEPTH} levels)") from None
    check_bounds(tree)
    try:
        return _Parser(scope).visit(tree)
    except TypeError as exc:          # sympy refusing an operation (``self > True``)
        raise FormulaError(f"invalid operation: {exc}") from None
    except RecursionError:
        raise FormulaError(f"formula nested too deeply (at most {MAX_DEPTH} levels)") from None


def check_bounds(tree):
    """Refuse a syntax tree deeper than MAX_DEPTH, larger than MAX_NODES or with a huge int literal
    (an explicit stack: a recursive walk is what the bound protects against)."""
    stack, count = [(tree, 1)], 0
    while stack:
        node, depth = stack.pop()
        count += 1
        if depth > MAX_DEPTH:
            raise FormulaError(f"formula nested too deeply (at most {MAX_DEPTH} levels)")
        if count > MAX_NODES:
            raise FormulaError(f"formula too large (at most {MAX_NODES} syntax nodes)")
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool) \
                and abs(node.value) >= 10 ** MAX_INT_DIGITS:
            raise FormulaError(f"integer literal longer than {MAX_INT_DIGITS} digits")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def is_opaque(e):
    return isinstance(e, sp.core.function.AppliedUndef)
