"""Code printers for the two ways a formula runs.

``KernelPrinter`` prints the scalar body of a Numba loop: every literal goes through ``_l(v, _zero)`` so
it takes the kernel's dtype (a float32 kernel never computes in float64), small integer powers are
unrolled, and Heaviside/sign/Max/Min/Piecewise print as float32-safe expressions.

``ArrayPrinter`` prints it over whole numpy arrays (the kernel's ``_array`` form, which runs before
Numba is loaded: derivgen/kernels/interpreted.py): the same literals in the kernel's dtype, numpy's
ufuncs for the functions, ``np.where`` for choices.

``GraphPrinter`` prints the same expression as calls of derivgen ops on Tensors, so the backward can
itself be differentiated (``create_graph=True``).
"""
import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

from ..symbolic.parse import NONE


def _is_int(e, lo, hi):
    return e.is_Integer and lo <= int(e) <= hi


class KernelPrinter(PythonCodePrinter):
    """Scalar code for one element; ``names`` maps a symbol to how it is read (``grad[i]``, ``alpha``)."""

    _FUNCS = {
        "exp": "_exp", "log": "_log", "sin": "math.sin", "cos": "math.cos", "tan": "math.tan",
        "asin": "math.asin", "acos": "math.acos", "atan": "math.atan", "sinh": "math.sinh", "cosh": "math.cosh",
        "tanh": "_tanh", "asinh": "math.asinh", "acosh": "math.acosh", "atanh": "math.atanh",
        "erf": "math.erf", "erfc": "math.erfc", "log1p": "math.log1p", "expm1": "math.expm1",
        "log2": "math.log2", "log10": "math.log10", "floor": "np.floor", "ceiling": "np.ceil",
        "sign": "_sign", "atan2": "math.atan2",
    }

    def __init__(self, names, zero="_zero"):
        super().__init__({"fully_qualified_modules": False})
        self.names = names
        self.zero = zero

    def lit(self, v):
        return f"_l({v}, {self.zero})"

    def _print_Symbol(self, e):
        try:
            return self.names[e.name]
        except KeyError:
            raise KeyError(f"kernel printer: no binding for symbol {e.name}") from None

    def _print_Integer(self, e):
        return self.lit(int(e))

    _print_One = _print_Zero = _print_NegativeOne = _print_Integer

    def _print_Half(self, e):
        return self.lit(0.5)

    def _print_Rational(self, e):
        return self.lit(repr(float(e)))

    def _print_Float(self, e):
        return self.lit(repr(float(e)))

    def _print_Pi(self, e):
        return self.lit(repr(float(sp.pi)))

    def _print_Exp1(self, e):
        return self.lit(repr(float(sp.E)))

    def _print_Infinity(self, e):
        return self.lit("np.inf")

    def _print_NegativeInfinity(self, e):
        return self.lit("-np.inf")

    def _print_BooleanTrue(self, e):
        return "True"

    def _print_BooleanFalse(self, e):
        return "False"

    def _print_Pow(self, e, rational=False):
        b, x = e.args
        base = self.parenthesize(b, 100)
        if _is_int(x, 2, 4):
            return "(" + "*".join([base] * int(x)) + ")"
        if x == 1:
            return self._print(b)
        if _is_int(x, -4, -1):
            return f"({self.lit(1)}/(" + "*".join([base] * -int(x)) + "))"
        if x == sp.S.Half:
            return f"math.sqrt({self._print(b)})"
        if x == -sp.S.Half:
            return f"({self.lit(1)}/math.sqrt({self._print(b)}))"
        if b == sp.E:
            return f"_exp({self._print(x)})"
        return f"_pow({self._print(b)}, {self._print(x)})"

    def _print_Function(self, e):
        name = type(e).__name__
        if name == "exp2":
            return f"_exp({self.lit(repr(float(sp.log(2))))}*{self.parenthesize(e.args[0], 50)})"
        if name in self._FUNCS:
            return f"{self._FUNCS[name]}({', '.join(self._print(a) for a in e.args)})"
        raise ValueError(f"no kernel spelling for function {name}")

    _print_exp = _print_log = _print_sin = _print_cos = _print_tan = _print_Function
    _print_asin = _print_acos = _print_atan = _print_sinh = _print_cosh = _print_tanh = _print_Function
    _print_asinh = _print_acosh = _print_atanh = _print_erf = _print_erfc = _print_Function
    _print_log1p = _print_expm1 = _print_log2 = _print_log10 = _print_exp2 = _print_Function
    _print_floor = _print_ceiling = _print_sign = _print_atan2 = _print_Function

    def _print_Abs(self, e):
        return f"abs({self._print(e.args[0])})"

    def _print_Heaviside(self, e):
        x = self._print(e.args[0])
        h0 = e.args[1] if len(e.args) > 1 else sp.S.Half
        if h0 == 0:
            return f"({self.lit(1)} if {x} > {self.lit(0)} else {self.lit(0)})"
        return (f"({self.lit(1)} if {x} > {self.lit(0)} else ({self._print(h0)} if {x} == {self.lit(0)} "
                f"else {self.lit(0)}))")

    def _print_DiracDelta(self, e):
        return self.lit(0)

    def _minmax(self, e, fn):
        args = [self._print(a) for a in e.args]
        out = args[0]
        for a in args[1:]:
            out = f"{fn}({out}, {a})"
        return out

    def _print_Max(self, e):
        return self._minmax(e, "_max")  # NaN-propagating, as torch's maximum/clamp/relu

    def _print_Min(self, e):
        return self._minmax(e, "_min")

    def _print_Piecewise(self, e):
        out = None
        for value, cond in reversed(e.args):
            v = self._print(value)
            if out is None:
                out = v
            else:
                out = f"({v} if {self._print(cond)} else {out})"
        return out

    def _print_Relational(self, e):
        ops = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
        return f"({self._print(e.lhs)} {ops[e.rel_op]} {self._print(e.rhs)})"

    def _print_And(self, e):
        return "(" + " and ".join(self._print(a) for a in e.args) + ")"

    def _print_Or(self, e):
        return "(" + " or ".join(self._print(a) for a in e.args) + ")"

    def _print_Not(self, e):
        return f"(not {self._print(e.args[0])})"


class ArrayPrinter(KernelPrinter):
    """The kernel's expression over whole arrays (and numbers): numpy's ufuncs where the scalar body calls
    ``math``, ``np.where`` where it chooses, and the NaN rules of the scalar helpers (derivgen/kernels/
    array_helpers.py). Literals are ``_lit(v, _zero)``, a number of the kernel's dtype, so a float32
    expression stays float32 as in the compiled loop. A function numpy has no ufunc for (``erf``) raises
    ValueError: that kernel has no array form and always runs compiled."""

    _FUNCS = {
        "exp": "np.exp", "log": "np.log", "sin": "np.sin", "cos": "np.cos", "tan": "np.tan",
        "asin": "np.arcsin", "acos": "np.arccos", "atan": "np.arctan", "sinh": "np.sinh", "cosh": "np.cosh",
        "tanh": "np.tanh", "asinh": "np.arcsinh", "acosh": "np.arccosh", "atanh": "np.arctanh",
        "log1p": "np.log1p", "expm1": "np.expm1", "log2": "np.log2", "log10": "np.log10",
        "floor": "np.floor", "ceiling": "np.ceil", "sign": "_sign_of", "atan2": "np.arctan2",
    }

    def lit(self, v):
        return f"_lit({v}, {self.zero})"

    def _print_Pow(self, e, rational=False):
        b, x = e.args
        if x == sp.S.Half:
            return f"np.sqrt({self._print(b)})"
        if x == -sp.S.Half:
            return f"({self.lit(1)}/np.sqrt({self._print(b)}))"
        if b == sp.E:
            return f"np.exp({self._print(x)})"
        if _is_int(x, 2, 4) or x == 1 or _is_int(x, -4, -1):
            return super()._print_Pow(e, rational)
        return f"_power({self._print(b)}, {self._print(x)})"

    def _print_Function(self, e):
        if type(e).__name__ == "exp2":
            return f"np.exp({self.lit(repr(float(sp.log(2))))}*{self.parenthesize(e.args[0], 50)})"
        return super()._print_Function(e)

    _print_exp = _print_log = _print_sin = _print_cos = _print_tan = _print_Function
    _print_asin = _print_acos = _print_atan = _print_sinh = _print_cosh = _print_tanh = _print_Function
    _print_asinh = _print_acosh = _print_atanh = _print_erf = _print_erfc = _print_Function
    _print_log1p = _print_expm1 = _print_log2 = _print_log10 = _print_exp2 = _print_Function
    _print_floor = _print_ceiling = _print_sign = _print_atan2 = _print_Function

    def _print_Abs(self, e):
        return f"np.abs({self._print(e.args[0])})"

    def _print_Heaviside(self, e):
        x = self._print(e.args[0])
        h0 = e.args[1] if len(e.args) > 1 else sp.S.Half
        if h0 == 0:
            return f"np.where({x} > {self.lit(0)}, {self.lit(1)}, {self.lit(0)})"
        return (f"np.where({x} > {self.lit(0)}, {self.lit(1)}, np.where({x} == {self.lit(0)}, "
                f"{self._print(h0)}, {self.lit(0)}))")

    def _print_Max(self, e):
        return self._minmax(e, "_maximum")

    def _print_Min(self, e):
        return self._minmax(e, "_minimum")

    def _print_Piecewise(self, e):
        out = None
        for value, cond in reversed(e.args):
            v = self._print(value)
            out = v if out is None else f"np.where({self._print(cond)}, {v}, {out})"
        return out

    def _logic(self, fn, args):
        out = self._print(args[0])
        for a in args[1:]:
            out = f"{fn}({out}, {self._print(a)})"
        return out

    def _print_And(self, e):
        return self._logic("np.logical_and", e.args)

    def _print_Or(self, e):
        return self._logic("np.logical_or", e.args)

    def _print_Not(self, e):
        return f"np.logical_not({self._print(e.args[0])})"


class ValuePrinter(PythonCodePrinter):
    """Plain Python for non-tensor arguments (dims, sizes, numbers, None) and opaque calls' arguments."""

    def __init__(self, names=None, call=None):
        super().__init__({"fully_qualified_modules": False})
        self.names = names or {}
        self.call = call

    def _print_Symbol(self, e):
        if e == NONE:
            return "None"
        return self.names.get(e.name, e.name)

    def _print_Integer(self, e):
        return str(int(e))

    def _print_Float(self, e):
        return repr(float(e))

    def _print_Rational(self, e):
        return repr(float(e))

    def _print_Half(self, e):
        return "0.5"

    def _print_BooleanTrue(self, e):
        return "True"

    def _print_BooleanFalse(self, e):
        return "False"

    def _print_Tuple(self, e):
        items = [self._print(a) for a in e.args]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    def _print_Function(self, e):
        if self.call is not None:
            return self.call(e)
        return super()._print_Function(e)


# Python spellings of elementwise functions applied to plain numbers in the graph path (default: math.<name>)
_NUMBER_FUNCS = {"floor": "np.floor", "ceiling": "np.ceil", "sign": "np.sign",
                 "exp2": "np.exp2"}


class GraphPrinter(ValuePrinter):
    """Tensor-op code: the formula as differentiable derivgen ops (used when create_graph=True)."""

    _UNARY = {"exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
              "atanh", "erf", "erfc", "log1p", "expm1", "log2", "log10", "exp2", "sign", "floor", "ceiling",
              "atan2"}

    def __init__(self, names, call, available_ops):
        super().__init__(names, call)
        self.available = available_ops
        self.needed_ops = set()
        self.tensor_names = set()

    def op(self, name):
        self.needed_ops.add(name)
        return f"_ops.{name}"

    def _print_Pow(self, e, rational=False):
        b, x = e.args
        base = self._print(b)
        if not self.is_tensor(e):
            return f"(float({base}) ** {self._print(x)})"
        if x == -1:
            if "reciprocal" in self.available:
                return f"{self.op('reciprocal')}({base})"
            return f"{self.op('div')}(1.0, {base})"
        if x == sp.S.Half and "sqrt" in self.available:
            return f"{self.op('sqrt')}({base})"
        if x == -sp.S.Half and "rsqrt" in self.available:
            return f"{self.op('rsqrt')}({base})"
        if x.is_Integer and int(x) < 0:
            return f"{self.op('div')}(1.0, {self.op('pow')}({base}, {-int(x)}))"
        if b == sp.E:
            return f"{self.op('exp')}({self._print(x)})"
        return f"{self.op('pow')}({base}, {self._print(x)})"

    def _print_Mul(self, e):
        num, den = [], []
        for f in e.as_ordered_factors():
            if f.is_Pow and f.args[1].is_Number and f.args[1] < 0:
                den.append(f.args[0] ** -f.args[1])
            else:
                num.append(f)
        if num and num[0] == -1:
            num = num[1:]
            sign = "-"
        else:
            sign = ""
        n = " * ".join(self.parenthesize(f, 50) for f in num) if num else "1.0"
        if den:
            d = " * ".join(self.parenthesize(f, 50) for f in den)
            return f"{sign}({n}) / ({d})"
        return f"{sign}{n}"

    def _print_Add(self, e, order=None):
        terms = list(e.as_ordered_terms())
        out = self._print(terms[0])
        for t in terms[1:]:
            s = self._print(t)
            if s.startswith("-"):
                out = f"{out} - {s[1:]}" if not t.is_Add else f"{out} + ({s})"
            else:
                out = f"{out} + {s}"
        return f"({out})"

    def _print_Function(self, e):
        name = type(e).__name__
        if name in self._UNARY and not self.is_tensor(e):
            # a function of plain numbers (pow.Scalar's ``log(self)``): Python math, not a tensor op
            fn = _NUMBER_FUNCS.get(name, f"math.{name}")
            return f"float({fn}({', '.join(self._print(a) for a in e.args)}))"
        if name in self._UNARY:
            opname = {"ceiling": "ceil"}.get(name, name)
            return f"{self.op(opname)}({', '.join(self._print(a) for a in e.args)})"
        return super()._print_Function(e)

    _print_exp = _print_log = _print_sin = _print_cos = _print_tan = _print_Function
    _print_asin = _print_acos = _print_atan = _print_sinh = _print_cosh = _print_tanh = _print_Function
    _print_asinh = _print_acosh = _print_atanh = _print_erf = _print_erfc = _print_Function
    _print_log1p = _print_expm1 = _print_log2 = _print_log10 = _print_exp2 = _print_Function
    _print_floor = _print_ceiling = _print_sign = _print_atan2 = _print_Function

    def _print_Abs(self, e):
        if not self.is_tensor(e):
            return f"abs({self._print(e.args[0])})"
        return f"{self.op('abs')}({self._print(e.args[0])})"

    def _print_Heaviside(self, e):
        return f"{self.op('where')}({self._print(e.args[0])} > 0, 1.0, 0.0)"

    def _print_DiracDelta(self, e):
        return "0.0"

    def _print_Max(self, e):
        return self._fold_minmax(e, "max", "maximum", "clamp_min")

    def _print_Min(self, e):
        return self._fold_minmax(e, "min", "minimum", "clamp_max")

    def _fold_minmax(self, e, builtin, tensor_op, scalar_op):
        # torch's maximum/minimum take two tensors: a plain-number bound (hardtanh's min_val) goes through
        # clamp_min/clamp_max, which keep NaN the same way; numbers alone use Python's max/min
        tensors = [a for a in e.args if self.is_tensor(a)]
        numbers = [a for a in e.args if not self.is_tensor(a)]
        if not tensors:
            return f"{builtin}({', '.join(self._print(a) for a in numbers)})"
        out = self._print(tensors[0])
        for a in tensors[1:]:
            out = f"{self.op(tensor_op)}({out}, {self._print(a)})"
        for a in numbers:
            out = f"{self.op(scalar_op)}({out}, {self._print(a)})"
        return out

    def _print_Piecewise(self, e):
        # A branch without tensors (``... if exponent != 0 else grad * 0`` simplifies to 0) must still be a
        # tensor when the branch is picked by a Python conditional: fill one shaped like a tensor of e.
        like = [] if any(self.is_tensor(c) for _, c in e.args) else \
            sorted((s for s in e.free_symbols if s.name in self.tensor_names), key=lambda s: (s.name != "grad", s.name))
        out = None
        for value, cond in reversed(e.args):
            v = self._print(value)
            if like and not self.is_tensor(value):
                v = f"_fns.full_like_graph({self._print(like[0])}, {v})"
            if out is None:
                out = v
            elif self.is_tensor(cond):
                out = f"{self.op('where')}({self._print(cond)}, {v}, {out})"
            else:  # a condition on plain numbers (exponent != 0) is a Python conditional
                out = f"({v} if {self._print(cond)} else {out})"
        return out

    def is_tensor(self, e):
        return any(s.name in self.tensor_names for s in e.free_symbols)

    def _print_Relational(self, e):
        return f"({self._print(e.lhs)} {e.rel_op} {self._print(e.rhs)})"

    def _print_And(self, e):
        out = self._print(e.args[0])
        for a in e.args[1:]:
            out = f"{self.op('logical_and')}({out}, {self._print(a)})"
        return out

    def _print_Or(self, e):
        out = self._print(e.args[0])
        for a in e.args[1:]:
            out = f"{self.op('logical_or')}({out}, {self._print(a)})"
        return out

    def _print_Not(self, e):
        return f"{self.op('logical_not')}({self._print(e.args[0])})"

    def _print_Integer(self, e):
        return f"{int(e)}"

    def _print_Float(self, e):
        return repr(float(e))

    def _print_Pi(self, e):
        return repr(float(sp.pi))
