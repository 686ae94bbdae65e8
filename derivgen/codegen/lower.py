"""Lower one formula (a sympy expression) into the two code paths of a node.

Fast path: a list of statements over numpy arrays. Each maximal elementwise region becomes one fused
Numba kernel (so ``grad * result * (1 - result)`` is one pass over memory); opaque calls (reductions,
shape ops, backward helpers) become calls of their numpy implementation.

Graph path: one Python expression over Tensors using differentiable ops, for ``create_graph=True``.
"""
import re
from dataclasses import dataclass, field

import sympy as sp

from ..symbolic.parse import is_opaque
from .printers import ArrayPrinter, GraphPrinter, KernelPrinter, ValuePrinter
from .kernel_types import BOOL, FLOAT, kind_or_float

_RESERVED_KERNEL_NAMES = {"out", "i", "j", "n", "np", "math", "_l", "_elem", "_zero", "kernel", "range",
                         "prange", "_lit", "_maximum", "_minimum", "_power", "_sign_of"}
# what a whole-array body must not call: a scalar-only spelling (``math.gamma``, a builtin on one number)
# left by a printer rule ArrayPrinter does not override
_SCALAR_ONLY_CALL = re.compile(r"(?<![\w.])(math\.\w+|abs|max|min|_l|_exp|_log|_tanh|_pow|_sign|_max|_min)\(")
# builtins a kernel body may call: a parameter of that name is renamed only in kernels that call it, so
# ``clamp_max(Tensor self, Scalar max)`` keeps its parameter name where ``max`` is not called
_KERNEL_BUILTINS = ("abs", "max", "min")


@dataclass
class KernelSpec:
    """One generated elementwise kernel: ``out = expr(arrays..., scalars...)``."""
    name: str
    arrays: list
    scalars: list
    expr: object
    formula: str
    returns_bool: bool = False
    int_closed: bool = False
    body_scalar: list = field(default_factory=list)
    # the same expression over whole numpy arrays (the ``_array`` form), or None when numpy cannot spell it
    body_array: list = None
    params: list = field(default_factory=list)
    rows_params: list = field(default_factory=list)
    args_2d: str = ""
    args_rows: str = ""
    args_elem: str = ""
    args_inplace: str = ""

    def render(self):
        self._render(_RESERVED_KERNEL_NAMES)
        bodies = "\n".join(self.body_scalar)
        called = {b for b in _KERNEL_BUILTINS
                  if b in self.arrays + self.scalars and re.search(rf"(?<![\w.]){b}\(", bodies)}
        if called:
            self.body_scalar.clear()
            self._render(_RESERVED_KERNEL_NAMES | called)

    def _render(self, reserved):
        params = {a: (a + "_" if a in reserved else a) for a in self.arrays + self.scalars}
        self.params = [params[a] for a in self.arrays + self.scalars]
        # the _rows variant: every array is a C-contiguous matrix read at row i * <name>_rs (a bias row
        # is a (1, C) matrix with step 0), so the inner loop is contiguous in all of them
        self.rows_params = [p for a in self.arrays for p in (params[a], params[a] + "_rs")] + \
            [params[s] for s in self.scalars]
        # The expression is printed once, as a one-element function (inlined by Numba into every loop
        # variant, and called by whole-graph fusion); the variants differ only in how they index.
        names = {a: params[a] for a in self.arrays + self.scalars}
        temps, (reduced,) = sp.cse([self.expr], symbols=sp.numbered_symbols("_t"), optimizations="basic")
        printer = KernelPrinter(names)
        for sym, value in temps:
            names[sym.name] = sym.name
            self.body_scalar.append(f"{sym.name} = {printer.doprint(value)}")
        self.body_scalar.append(f"return {printer.doprint(reduced)}")
        self.body_array = _array_body(temps, reduced, names)

        def call_args(index):
            return "".join(f"{params[a]}{index(params[a])}, " for a in self.arrays) + \
                "".join(f"{params[s]}, " for s in self.scalars)
        # the 1-D variants read each array operand through _elem, so a one-element operand can be
        # passed as a number; the _inplace variant writes into its first array operand, which it reads
        # directly (Numba then sees one array read and written at the same index, and vectorizes)
        self.args_elem = "".join(f"_elem({params[a]}, i), " for a in self.arrays) + \
            "".join(f"{params[s]}, " for s in self.scalars)
        first = params[self.arrays[0]] if self.arrays else None
        self.args_inplace = "".join(f"{p}[i], " if p == first else f"_elem({p}, i), "
                                    for p in (params[a] for a in self.arrays)) + \
            "".join(f"{params[s]}, " for s in self.scalars)
        self.args_2d = call_args(lambda p: "[i, j]")
        self.args_rows = call_args(lambda p: f"[i * {p}_rs, j]")


def _array_body(temps, reduced, names):
    """The statements of the kernel's whole-array form, or None when one of its functions has no numpy
    spelling (then the kernel always runs compiled)."""
    printer = ArrayPrinter(names)
    try:
        lines = [f"{sym.name} = {printer.doprint(value)}" for sym, value in temps]
        lines.append(f"return {printer.doprint(reduced)}")
    except ValueError:
        return None
    if any(_SCALAR_ONLY_CALL.search(line) for line in lines):
        return None
    return lines


def is_int_closed(e):
    """True when integer inputs give integer results (see kernel_types: the kind is not FLOAT), so an
    int64 kernel is exact, as torch keeps such ops integral; otherwise ints compute as floats."""
    return kind_or_float(e) != FLOAT


def is_boolean(e):
    """True when ``e`` is a comparison or logic (its kernel writes a bool array)."""
    return kind_or_float(e) == BOOL


def is_kw(e):
    return isinstance(e, sp.Tuple) and len(e.args) == 2 and isinstance(e.args[0], sp.Symbol) \
        and e.args[0].name.startswith("kw_")


class Lowering:
    """Lowers the formulas of one table row; collects its kernels."""

    def __init__(self, scope, kernel_prefix, fast_fn, graph_fn, available_ops, local_names=None):
        self.scope = scope
        self.prefix = kernel_prefix
        self.fast_fn = fast_fn      # opaque name -> code of its numpy implementation
        self.graph_fn = graph_fn    # opaque name -> code of its Tensor implementation
        self.available_ops = available_ops
        self.kernels = []
        self.needed_ops = set()
        self.names = dict(local_names or {})
        self._tmp = 0
        # what each value the fast path names is, for the compiled backward tape (codegen/tape.py):
        # ("kernel", spec) the result of one kernel, ("branches", [(condition code or None, plan)]) a
        # choice on plain numbers; a name not here is a local passed through (``grad``, a saved tensor)
        self.plans = {}

    # ---- classification --------------------------------------------------------------------
    def tensor_valued(self, e):
        if isinstance(e, sp.Symbol):
            return e.name in self.scope.tensors or e.name in self._tmp_tensors
        if is_opaque(e):
            return type(e).__name__ in self.scope.tensor_fns
        if isinstance(e, sp.Tuple) and not isinstance(e, sp.functions.elementary.piecewise.ExprCondPair):
            return False
        return any(self.tensor_valued(a) for a in e.args)

    _tmp_tensors = frozenset()

    def _new_tmp(self):
        self._tmp += 1
        return f"_t{self._tmp}"

    # ---- fast path ---------------------------------------------------------------------------
    def fast(self, e, lines, kernel_name):
        """Append statements computing ``e`` to ``lines``; return the code naming its value."""
        if isinstance(e, sp.Symbol):
            return self.names.get(e.name, e.name)
        if is_opaque(e) and type(e).__name__ in self.scope.tensor_fns:
            call = self._call_code(e, lambda a: self.fast(a, lines, kernel_name), self.fast_fn)
            tmp = self._new_tmp()
            lines.append(f"{tmp} = {call}")
            return tmp
        if not self.tensor_valued(e):
            return self.value(e)
        if (isinstance(e, sp.Piecewise) and all(self.tensor_valued(v) for v, _ in e.args)
                and not any(self.tensor_valued(c) for _, c in e.args)):
            return self._scalar_branches(e, lines, kernel_name)
        return self._region(e, lines, kernel_name)

    def _scalar_branches(self, e, lines, kernel_name):
        """A choice on plain numbers (``grad if alpha == 1 else grad * alpha``) is a Python ``if``, so
        the cheap branch (often: pass ``grad`` through) costs no kernel."""
        tmp = self._new_tmp()
        plans = []
        for k, (value, cond) in enumerate(e.args):
            branch = []
            code = self.fast(value, branch, f"{kernel_name}_case{k}")
            if cond == sp.true:
                lines.append("else:" if k else "if True:")
                plans.append((None, self.plan_of(code)))
            else:
                lines.append(f"{'elif' if k else 'if'} {self.value(cond)}:")
                plans.append((self.value(cond), self.plan_of(code)))
            lines.extend("    " + ln for ln in branch)
            lines.append(f"    {tmp} = {code}")
        self.plans[tmp] = ("branches", plans)
        return tmp

    def plan_of(self, code):
        """What the fast path's value ``code`` is (see ``plans``): ("name", code) for a local passed through."""
        return self.plans.get(code, ("name", code))

    def _region(self, e, lines, kernel_name):
        subs = {}
        tmp_tensors = set()

        def visit(node):
            if is_opaque(node):
                if node in subs:
                    return
                name = type(node).__name__
                if name in self.scope.tensor_fns:
                    code = self.fast(node, lines, kernel_name)
                    tmp_tensors.add(code)
                else:
                    code = self._new_tmp()
                    lines.append(f"{code} = {self.value(node)}")
                subs[node] = sp.Symbol(code, real=True)
                return
            for a in node.args:
                visit(a)
        visit(e)
        region = e.xreplace(subs)
        syms = sorted(region.free_symbols, key=lambda s: (s.name not in ("grad",), s.name))
        arrays = [s.name for s in syms if s.name in self.scope.tensors or s.name in tmp_tensors]
        scalars = [s.name for s in syms if s.name not in arrays]
        name = kernel_name if not any(k.name == kernel_name for k in self.kernels) else \
            f"{kernel_name}_{sum(k.name.startswith(kernel_name) for k in self.kernels)}"
        spec = KernelSpec(name=name, arrays=arrays, scalars=scalars, expr=region, formula=str(e),
                          returns_bool=is_boolean(region), int_closed=is_int_closed(region))
        spec.render()
        self.kernels.append(spec)
        tmp = self._new_tmp()
        self.plans[tmp] = ("kernel", spec)
        arr = ", ".join(self.names.get(a, a) for a in arrays) + ("," if len(arrays) == 1 else "")
        sca = ", ".join(self.names.get(s, s) for s in scalars) + ("," if len(scalars) == 1 else "")
        if len(arrays) <= 3:
            # the fixed-arity fast path (same as _k.name((...), (...))): a node's kernel call stays cheap
            sc = f", ({sca})" if scalars else ""
            lines.append(f"{tmp} = _k.{name}.call{len(arrays)}({', '.join(self.names.get(a, a) for a in arrays)}{sc})")
        else:
            lines.append(f"{tmp} = _k.{name}(({arr}), ({sca}))")
        return tmp

    def _call_code(self, e, tensor_arg, impl):
        args, kwargs = [], []
        for a in e.args:
            if is_kw(a):
                kwargs.append(f"{a.args[0].name[3:]}={self._arg(a.args[1], tensor_arg)}")
            else:
                args.append(self._arg(a, tensor_arg))
        return f"{impl(type(e).__name__)}({', '.join(args + kwargs)})"

    def _arg(self, a, tensor_arg):
        if self.tensor_valued(a):
            return tensor_arg(a)
        return self.value(a)

    def value(self, e):
        """Plain Python for a non-tensor expression (dims, sizes, numbers, metadata calls)."""
        def call(node):
            name = type(node).__name__
            if name in self.scope.meta_fns:
                args = ", ".join(self.value(a) for a in node.args)
                return f"_fns.{name}({args})"
            raise ValueError(f"'{name}' returns a tensor and cannot be used as a plain value here")
        return ValuePrinter(self.names, call).doprint(e)

    # ---- graph path --------------------------------------------------------------------------
    def graph(self, e):
        printer = GraphPrinter(self.names, None, self.available_ops)
        printer.tensor_names = self.scope.tensors | self.scope.lists

        def call(node):
            name = type(node).__name__
            if name in self.scope.meta_fns:
                return self.value(node)
            return self._call_code(node, lambda a: printer.doprint(a), self.graph_fn)
        printer.call = call
        code = printer.doprint(e)
        self.needed_ops |= printer.needed_ops
        if not self.tensor_valued(e):
            return code
        return code
