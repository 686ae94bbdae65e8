"""Sample inputs for every row of ``formulas.yaml``: the registry every per-row test draws from.

API
---
``samples_for(entry, dtype=derivgen.float64) -> list[Sample]``
    The samples of one table row (``entry`` is a ``derivgen.table.loader.Entry`` from ``load_table``).
    An empty list means nobody wrote samples for the row; ``missing_message(entry)`` says where to
    add them (the table gradcheck fails with that message, so every row ends up tested).

``Sample(args, kwargs={}, diff_index=[...], note="")``
    One call of the row's function ``row_function(entry)`` (``derivgen.generated.ops.<row_name>``,
    e.g. ``mul_Tensor``, ``mm_default``, ``sum_dim_IntList``) as ``fn(*args, **kwargs)``.
    ``args`` hold derivgen Tensors (plain leaves that do not require grad), Python numbers, lists of
    Tensors (``Tensor[]`` arguments), sizes, dims and dtypes. ``diff_index`` lists the positions in
    ``args`` (ints; a ``str`` names a keyword argument) of the differentiable tensor arguments, the ones a
    gradcheck perturbs; a position holding a list of Tensors means every Tensor in it. A 0-dim Tensor
    with ``t._wrapped`` set stands for a Python number passed where the schema wants a Tensor (torch's
    "wrapped number": it never requires grad, and converts to a Python number for torch).
    Helpers: ``sample.leaves(requires_grad=True)`` returns ``(args, kwargs, leaves)`` with fresh leaf
    copies at the differentiable positions; ``sample.map_tensors(fn)`` maps every Tensor (e.g. to torch).

``register(name, extend=False)``
    Decorator for a function ``fn(entry, dtype) -> iterable of Sample`` keyed by the row's full name
    (``entry.name``: ``"mm"``, ``"sum.dim_IntList"``, ``"pow.Tensor_Scalar"``). By default it replaces the
    automatic samples of the row; with ``extend=True`` its samples are added to them. Several
    registrations for one name all contribute (the replacing ones drop the automatic samples).

Automatic samples exist for elementwise rows (rows with ``forward:``): every Tensor argument a random
(3, 4) tensor, plus a broadcasting variant ((3, 4) with (4,), and (3, 1) with (1, 4)), a 0-dim variant, a
wrapped-number variant (a Python number for a non-first Tensor argument), a non-contiguous variant, and
Scalar arguments as fixed numbers. Values stay inside each op's domain: the forward expression is
parsed with derivgen's own formula parser, and arguments of ``log``/``sqrt``/non-integer powers are drawn
positive, denominators away from 0, ``asin``/``acos``/``atanh`` arguments inside (-1, 1), ``acosh``'s
above 1, ``log1p``'s above -1; other values are drawn with magnitude in [0.25, 2] (away from kinks).

At import this module also imports every ``tests/support/samples_rows.py`` (other test modules registering samples
with the same decorator: ``from tests.support.samples import Sample, register``).
"""
import zlib
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

import derivgen
from derivgen.core.tensor import Tensor, wrap_scalar

__all__ = ["Sample", "register", "samples_for", "missing_message", "row_function", "call_row", "tensor",
           "rng_for", "input_domains"]



@dataclass
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    diff_index: list = field(default_factory=list)
    note: str = ""

    def __repr__(self):
        def show(v):
            if isinstance(v, Tensor):
                return f"{'number' if v._wrapped else 'T'}{list(v.shape)}"
            if isinstance(v, (list, tuple)) and v and all(isinstance(x, Tensor) for x in v):
                return "[" + ", ".join(show(x) for x in v) + "]"
            return repr(v)
        inner = ", ".join([show(a) for a in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs.items()])
        return f"Sample({inner}; diff={self.diff_index}{'; ' + self.note if self.note else ''})"

    def _get(self, pos, args, kwargs):
        return kwargs[pos] if isinstance(pos, str) else args[pos]

    def leaves(self, requires_grad=True):
        """``(args, kwargs, leaves)``: a copy of the call with fresh leaf Tensors (requiring grad when asked)
        at the differentiable positions, and those leaves in order (list arguments contribute each Tensor)."""
        args, kwargs = list(self.args), dict(self.kwargs)
        leaves = []

        def fresh(t):
            c = Tensor._make(t._array.copy())
            if requires_grad:
                c.requires_grad_(True)
            leaves.append(c)
            return c
        for pos in self.diff_index:
            v = self._get(pos, args, kwargs)
            if isinstance(v, (list, tuple)):
                new = [fresh(t) for t in v]
            else:
                new = fresh(v)
            if isinstance(pos, str):
                kwargs[pos] = new
            else:
                args[pos] = new
        return tuple(args), kwargs, leaves

    def map_tensors(self, fn):
        """``(args, kwargs)`` with every Tensor (also inside lists) replaced by ``fn(tensor)``."""
        def m(v):
            if isinstance(v, Tensor):
                return fn(v)
            if isinstance(v, list) and v and all(isinstance(x, Tensor) for x in v):
                return [fn(x) for x in v]
            return v
        return tuple(m(a) for a in self.args), {k: m(v) for k, v in self.kwargs.items()}


_REGISTRY = {}


def register(name, extend=False):
    """``@register("mm")``: the decorated ``fn(entry, dtype)`` supplies samples of the row ``name``."""
    def deco(fn):
        _REGISTRY.setdefault(name, []).append((fn, extend))
        return fn
    return deco


def rng_for(entry_name, dtype, salt=""):
    """A reproducible generator per row (and dtype), so failures replay."""
    return np.random.default_rng(zlib.crc32(f"{entry_name}|{dtype!r}|{salt}".encode()))


def tensor(rng, shape, dtype, lo=0.25, hi=2.0, signed=True):
    """A random Tensor with magnitudes in [lo, hi] (random signs when ``signed``)."""
    a = rng.uniform(lo, hi, size=shape)
    if signed:
        a = a * rng.choice([-1.0, 1.0], size=shape)
    return Tensor._make(np.asarray(a, dtype=dtype.np))


def row_function(entry):
    """The generated per-row function: ``derivgen.generated.ops.<row_name>``. A row whose kernel writes into
    ``self`` (``elu_``) is called on a clone of ``self``: a leaf requiring grad cannot be written in place,
    and the sample must keep its values for the next call."""
    from derivgen.generated import ops
    row = getattr(ops, entry.schema.row_name)
    if not entry.writes_into_self:
        return row

    def on_a_clone(self, *args, **kwargs):
        return row(self.clone(), *args, **kwargs)
    return on_a_clone


def call_row(entry, args, kwargs):
    return row_function(entry)(*args, **kwargs)


def missing_message(entry):
    return (f"no sample inputs for table row '{entry.name}' ({entry.file}:{entry.line}): every row must be "
            f"gradchecked. Add a sample with `@register(\"{entry.name}\")` (a function (entry, dtype) -> "
            f"[Sample(args, kwargs, diff_index)]) in tests/support/samples.py or tests/support/samples_rows.py; "
            f"see the docstring of tests/support/samples.py.")


def suits_inplace(entry, sample):
    """Whether ``sample`` can run the row's in-place form: self is differentiable and the result has self's
    shape (for an elementwise row: the broadcast of the tensor arguments is self's shape; an index row's
    other arguments have shapes of their own)."""
    if 0 not in sample.diff_index:
        return False
    if not entry.forward:  # the result must have self's shape (addmm's self may be a broadcast bias)
        with derivgen.no_grad():
            out = call_row(entry, sample.args, sample.kwargs)
        first = out[0] if isinstance(out, (tuple, list)) else out
        return tuple(first.shape) == sample.args[0]._array.shape
    shapes = [a._array.shape for a in sample.args if isinstance(a, Tensor)]
    return np.broadcast_shapes(*shapes) == sample.args[0]._array.shape


def samples_for(entry, dtype=None):
    dtype = dtype or derivgen.float64
    regs = _REGISTRY.get(entry.name, [])
    out = []
    if all(extend for _, extend in regs):
        out.extend(_auto_samples(entry, dtype))
    for fn, _ in regs:
        out.extend(fn(entry, dtype))
    return out


# ---- automatic samples for elementwise rows -------------------------------------------------------

_SCALAR_VALUES = (1.7, 0.6, 1.3, 0.8)


def _forward_expr(entry):
    from derivgen.symbolic.parse import parse_formula, schema_scope
    return parse_formula(entry.forward, schema_scope(entry.schema))


# domain kinds, from most to least restrictive when several apply
_KIND_ORDER = ("unit", "gt1", "pos", "gtm1", "nonzero")


def _constrain(found, expr, kind, names):
    if isinstance(expr, sp.Symbol):
        targets = [expr] if expr.name in names else []
    else:
        targets = [s for s in expr.free_symbols if s.name in names]
        if kind in ("unit", "gt1", "gtm1"):
            kind = "pos" if kind != "unit" else "unit"
    for s in targets:
        old = found.get(s.name)
        if old is None or _KIND_ORDER.index(kind) < _KIND_ORDER.index(old):
            found[s.name] = kind


def input_domains(entry):
    """{argument name: domain kind} for the Tensor/Scalar arguments of an elementwise row whose values are
    constrained: 'pos' (> 0), 'nonzero', 'unit' (inside (-1, 1)), 'gt1' (> 1), 'gtm1' (> -1)."""
    from sympy.codegen.cfunctions import log1p, log2, log10
    expr = _forward_expr(entry)
    names = {a.name for a in entry.schema.args if a.is_tensor or a.is_number}
    found = {}
    for node in sp.preorder_traversal(expr):
        if isinstance(node, (sp.log, log2, log10)):
            if not node.args[0].is_positive:
                _constrain(found, node.args[0], "pos", names)
        elif isinstance(node, log1p):
            _constrain(found, node.args[0], "gtm1", names)
        elif isinstance(node, (sp.asin, sp.acos, sp.atanh)):
            _constrain(found, node.args[0], "unit", names)
        elif isinstance(node, sp.acosh):
            _constrain(found, node.args[0], "gt1", names)
        elif isinstance(node, sp.Pow):
            base, ex = node.args
            if base.is_positive:
                continue
            if ex.is_Integer:
                if int(ex) < 0 and not base.is_nonzero:
                    _constrain(found, base, "nonzero", names)
            else:
                _constrain(found, base, "pos", names)
    return found


def _values(rng, shape, dtype, kind):
    if kind == "pos":
        return tensor(rng, shape, dtype, 0.5, 2.0, signed=False)
    if kind == "nonzero":
        return tensor(rng, shape, dtype, 0.5, 2.0, signed=True)
    if kind == "unit":
        return tensor(rng, shape, dtype, 0.1, 0.85, signed=True)
    if kind == "gt1":
        return tensor(rng, shape, dtype, 1.2, 3.0, signed=False)
    if kind == "gtm1":
        return Tensor._make(np.asarray(rng.uniform(-0.6, 2.0, size=shape), dtype=dtype.np))
    return tensor(rng, shape, dtype, 0.25, 2.0, signed=True)


# Python numbers for wrapped-number variants, exact in float32: torch computes with a wrapped float in the
# default dtype, so a value float32 rounds would make the two backward paths differ by float32 rounding.
_WRAPPED_VALUES = {"pos": 1.5, "nonzero": -1.25, "unit": 0.5, "gt1": 1.75, "gtm1": 0.75}


def _is_mask(entry, arg):
    return arg.name in entry.non_differentiable and arg.name in ("condition", "mask")


def _auto_samples(entry, dtype):
    if entry.forward is None:
        return []
    schema = entry.schema
    domains = input_domains(entry)
    rng = rng_for(entry.name, dtype)
    tensor_args = [a for a in schema.args if a.is_tensor]
    diff_names = {a.name for a in entry.differentiable_args} if entry.formulas else \
        {a.name for a in tensor_args}

    def make(shapes, wrapped=(), noncontig=False, note=""):
        args, kwargs, diff = [], {}, []
        scalar_i = 0
        t_i = 0
        for a in schema.args:
            if a.is_tensor:
                shape = shapes[t_i]
                if _is_mask(entry, a):
                    v = Tensor._make(rng.random(shape) > 0.5)
                elif a.name in wrapped:
                    v = wrap_scalar(_WRAPPED_VALUES.get(domains.get(a.name), -1.25))
                else:
                    v = _values(rng, shape, dtype, domains.get(a.name))
                    if noncontig and t_i == 0 and len(shape) == 2:
                        v = Tensor._make(np.ascontiguousarray(v._array.T).T)
                    if a.name in diff_names:
                        diff.append(a.name if a.kwonly else len(args))
                t_i += 1
            elif a.is_number:
                base = a.type.rstrip("?")
                if base in ("int", "SymInt"):
                    v = 2
                elif base == "bool":
                    v = True
                else:
                    v = _SCALAR_VALUES[scalar_i % len(_SCALAR_VALUES)]
                    scalar_i += 1
            elif a.has_default:
                continue
            else:
                return None  # a non-Tensor, non-number argument without a default: needs a registration
            if a.kwonly:
                kwargs[a.name] = v
            else:
                args.append(v)
        return Sample(tuple(args), kwargs, diff, note)

    n = len(tensor_args)
    variants = [make([(3, 4)] * n, note="same shape"),
                make([(3, 4)] * n, noncontig=True, note="non-contiguous first argument")]
    if n >= 2:
        variants.append(make([(3, 4)] + [(4,)] * (n - 1), note="broadcast (3, 4) with (4,)"))
        variants.append(make([(3, 1)] + [(1, 4)] * (n - 1), note="broadcast (3, 1) with (1, 4)"))
        variants.append(make([(3, 4)] * (n - 1) + [()], note="0-dim last tensor argument"))
        last = tensor_args[-1]
        if not _is_mask(entry, last):
            variants.append(make([(3, 4)] * (n - 1) + [()], wrapped=(last.name,),
                                 note="wrapped number for the last tensor argument"))
    else:
        variants.append(make([()], note="0-dim"))
        variants.append(make([(5,)], note="1-D"))
    return [v for v in variants if v is not None]


# ---- explicit samples for the rows without an elementwise forward ----------------------------------------

def _t(rng, dtype, *shape):
    return tensor(rng, shape, dtype)


@register("pow.Tensor_Scalar", extend=True)
def _pow_scalar_exponents(entry, dtype):
    rng = rng_for(entry.name, dtype, "exponents")
    out = []
    for e in (2, 3, 0, 1, -1.5, 0.5):
        out.append(Sample((tensor(rng, (3, 4), dtype, 0.5, 2.0, signed=False), e), {}, [0], f"exponent {e}"))
    out.append(Sample((_t(rng, dtype, 3, 4), 2), {}, [0], "negative base, integer exponent"))
    return out


@register("all")
def _all(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 4),), {}, [0])]


@register("bmm")
def _bmm(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 2, 3, 4), _t(rng, dtype, 2, 4, 5)), {}, [0, 1])]


@register("cat")
def _cat(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample(([_t(rng, dtype, 2, 3), _t(rng, dtype, 1, 3), _t(rng, dtype, 3, 3)], 0), {}, [0], "dim 0"),
            Sample(([_t(rng, dtype, 2, 3), _t(rng, dtype, 2, 1)], -1), {}, [0], "dim -1")]


@register("stack")
def _stack(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample(([_t(rng, dtype, 3, 4), _t(rng, dtype, 3, 4)], 0), {}, [0], "dim 0"),
            Sample(([_t(rng, dtype, 3, 4), _t(rng, dtype, 3, 4), _t(rng, dtype, 3, 4)], 2), {}, [0], "dim 2")]


@register("clone")
def _clone(entry, dtype):
    rng = rng_for(entry.name, dtype)
    nc = Tensor._make(_t(rng, dtype, 4, 3)._array.T)
    return [Sample((_t(rng, dtype, 3, 4),), {}, [0]), Sample((nc,), {}, [0], "non-contiguous")]


@register("_to_copy")
def _to_copy(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 4),), {}, [0], "no dtype"),
            Sample((_t(rng, dtype, 3, 4),), {"dtype": dtype}, [0], "same dtype")]


@register("dot")
def _dot(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 5), _t(rng, dtype, 5)), {}, [0, 1])]


@register("expand")
def _expand(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 1), [2, 3, 4]), {}, [0], "new leading dim and singleton"),
            Sample((_t(rng, dtype, 4), [3, -1]), {}, [0], "-1 keeps a size"),
            Sample((_t(rng, dtype), [2, 3]), {}, [0], "0-dim")]


@register("mean")
def _mean(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 4),), {}, [0]), Sample((_t(rng, dtype),), {}, [0], "0-dim")]


@register("mean.dim")
def _mean_dim(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 4, 2), [1]), {}, [0]),
            Sample((_t(rng, dtype, 3, 4, 2), [0, 2], True), {}, [0], "keepdim"),
            Sample((_t(rng, dtype, 3, 4), -1), {}, [0], "dim -1")]


@register("sum")
def _sum(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 4),), {}, [0]), Sample((_t(rng, dtype),), {}, [0], "0-dim")]


@register("sum.dim_IntList")
def _sum_dim(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 4, 2), [1]), {}, [0]),
            Sample((_t(rng, dtype, 3, 4, 2), [0, 2], True), {}, [0], "keepdim"),
            Sample((_t(rng, dtype, 3, 4), -1), {}, [0], "dim -1")]


@register("mm")
def _mm(entry, dtype):
    rng = rng_for(entry.name, dtype)
    nc = Tensor._make(_t(rng, dtype, 4, 3)._array.T)
    return [Sample((_t(rng, dtype, 3, 4), _t(rng, dtype, 4, 5)), {}, [0, 1]),
            Sample((nc, _t(rng, dtype, 4, 2)), {}, [0, 1], "non-contiguous self")]


@register("mv")
def _mv(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 4), _t(rng, dtype, 4)), {}, [0, 1])]


@register("permute")
def _permute(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 2, 3, 4), [2, 0, 1]), {}, [0]),
            Sample((_t(rng, dtype, 2, 3, 4), [-1, 1, 0]), {}, [0], "negative dim")]


@register("select.int")
def _select(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 4), 1, 2), {}, [0]), Sample((_t(rng, dtype, 3, 4), 0, -1), {}, [0], "index -1")]


@register("select_backward")
def _select_backward(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 4), [3, 4], 0, 1), {}, [0]),
            Sample((_t(rng, dtype, 3), [3, 4], 1, -1), {}, [0], "index -1")]


@register("slice.Tensor")
def _slice(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 5, 4), 0, 1, 4, 1), {}, [0]),
            Sample((_t(rng, dtype, 5, 4), 1, None, None, 2), {}, [0], "step 2"),
            Sample((_t(rng, dtype, 5, 4), -1, -3, None, 1), {}, [0], "negative start")]


@register("slice_backward")
def _slice_backward(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 2, 4), [5, 4], 0, 1, 3, 1), {}, [0]),
            Sample((_t(rng, dtype, 5, 2), [5, 4], 1, 0, 4, 2), {}, [0], "step 2")]


@register("split.Tensor")
def _split(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 5, 3), 2), {}, [0], "uneven"),
            Sample((_t(rng, dtype, 3, 4), 2, 1), {}, [0], "dim 1")]


@register("split_with_sizes")
def _split_with_sizes(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 5, 3), [2, 3]), {}, [0]),
            Sample((_t(rng, dtype, 3, 4), [1, 1, 2], -1), {}, [0], "dim -1")]


@register("squeeze")
def _squeeze(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 1, 4),), {}, [0]), Sample((_t(rng, dtype, 1, 1),), {}, [0], "all ones")]


@register("squeeze.dim")
def _squeeze_dim(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 1, 4), 1), {}, [0]),
            Sample((_t(rng, dtype, 3, 4), 0), {}, [0], "size is not 1: no-op")]


@register("t")
def _t_op(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 4),), {}, [0]), Sample((_t(rng, dtype, 4),), {}, [0], "1-D")]


@register("transpose.int")
def _transpose(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 2, 3, 4), 0, 2), {}, [0]), Sample((_t(rng, dtype, 3, 4), -1, 0), {}, [0])]


@register("unbind.int")
def _unbind(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 4),), {}, [0]), Sample((_t(rng, dtype, 3, 4), 1), {}, [0], "dim 1")]


@register("unsqueeze")
def _unsqueeze(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 4), 1), {}, [0]), Sample((_t(rng, dtype, 3, 4), -1), {}, [0])]


@register("view")
def _view(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 4), [2, 6]), {}, [0]), Sample((_t(rng, dtype, 3, 4), [-1]), {}, [0])]


@register("_unsafe_view")
def _unsafe_view(entry, dtype):
    rng = rng_for(entry.name, dtype)
    return [Sample((_t(rng, dtype, 3, 4), [4, 3]), {}, [0])]


# ---- other modules' registrations ------------------------------------------------------------------

from tests.support import samples_rows  # noqa: E402,F401  pyflakes: registration import  (registers the hand-written samples)
