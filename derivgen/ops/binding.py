"""Python argument binding: picks the table row (overload) a Python call means, as PyTorch's
PythonArgParser does, trying the rows of one name in table order.

A Python number passed for a ``Tensor`` argument becomes a wrapped 0-dim tensor, which is why
``x * 2`` binds ``mul.Tensor`` (``MulBackward0`` with a ``(None, 0)`` edge), as in PyTorch.
"""
import numbers

import numpy as np

from derivgen.core.dtypes import dtype as _DType
from derivgen.core.tensor import _RAW_DATA, Tensor, python_number, wrap_scalar

_MISSING = object()
# The exact types of values that _convert returns unchanged for a parameter kind (a number for a Tensor
# parameter is wrapped, an int for an int list becomes a tuple: those are not here)
_AS_IS = {"tensor": frozenset((Tensor,)), "int": frozenset((int,)), "scalar": frozenset((int, float)),
          "bool": frozenset((bool,))}


def _as_is(p):
    """The exact types _convert passes through unchanged for parameter ``p`` (None too where it may be
    None: ``x[1:]``'s ``end``), or None when every value needs converting."""
    accepted = _AS_IS.get(p.kind)
    if accepted is not None and (p.optional or p.default is None):
        accepted = accepted | {type(None)}
    return accepted


class Param:
    __slots__ = ("name", "type", "default", "kwonly", "kind", "optional")

    def __init__(self, name, type_, default=_MISSING, kwonly=False):
        self.name = name
        self.type = type_
        self.default = default
        self.kwonly = kwonly
        self.optional = type_.endswith("?")
        base = type_.rstrip("?")
        if base.startswith("Tensor") and base.endswith("[]"):
            self.kind = "tensor_list"
        elif base.startswith("Tensor"):
            self.kind = "tensor"
        elif base in ("Scalar", "float", "SymFloat"):
            self.kind = "scalar"
        elif base in ("int", "SymInt"):
            self.kind = "int"
        elif base.startswith(("int[", "SymInt[")):
            self.kind = "int_list"
        elif base == "bool":
            self.kind = "bool"
        elif base.startswith("bool["):
            self.kind = "bool_list"
        elif base == "ScalarType":
            self.kind = "dtype"
        elif base == "str":
            self.kind = "str"
        else:
            self.kind = "any"


class Overload:
    """One row's Python signature and the generated function that implements it."""
    __slots__ = ("fn", "params", "positional", "schema", "kwonly_names", "required", "as_is", "kwonly_as_is")

    def __init__(self, fn, params, schema):
        self.fn = fn
        self.params = params
        self.positional = [p for p in params if not p.kwonly]
        self.kwonly_names = [p.name for p in params if p.kwonly]
        self.schema = schema
        # For the fast path of `x.sin()` / `torch.mm(a, b)` / `x.unsqueeze(0)`: how many parameters have
        # no default (those must all be given), and per leading positional parameter the exact types
        # _convert passes through unchanged (a Tensor for a Tensor, an int for an int, ...), up to the
        # first parameter whose values always need converting
        self.required = sum(1 for p in params if p.default is _MISSING)
        as_is = []
        for p in self.positional:
            accepted = _as_is(p)
            if accepted is None:
                break
            as_is.append(accepted)
        # (a required keyword-only parameter always goes through the parser, which names it when missing)
        self.as_is = tuple(as_is) if not any(p.kwonly and p.default is _MISSING for p in params) else ()
        # the same for keyword-only parameters (``value=`` of addcmul_), by name
        self.kwonly_as_is = {p.name: _as_is(p) for p in params if p.kwonly and p.kind in _AS_IS}

    def call(self, values):
        n = len(self.positional)
        if not self.kwonly_names:
            return self.fn(*values)
        return self.fn(*values[:n], **dict(zip(self.kwonly_names, values[n:])))


def _convert(p, v, first=False):
    """The value for parameter ``p``, or _MISSING when ``v`` does not fit it. A number fits a Tensor
    parameter (as a wrapped number) except the first one, as in torch (``torch.add(2, x)`` is an error)."""
    if v is None:
        return None if p.optional or p.default is None else _MISSING
    k = p.kind
    if k == "tensor":
        if isinstance(v, Tensor):
            return v
        if first or p.optional or _strict[0]:  # a number binds to an optional Tensor nowhere (clamp(x, min=0))
            return _MISSING
        if isinstance(v, (numbers.Number, np.number, np.bool_)) and not isinstance(v, complex):
            return wrap_scalar(python_number(v))
        return _MISSING
    if k == "scalar":
        if isinstance(v, (bool, numbers.Number, np.bool_)) and not isinstance(v, complex):
            return python_number(v)
        if isinstance(v, Tensor) and v._array.ndim == 0 and p.type.startswith("Scalar") and v._wrapped:
            return v.item()
        return _MISSING
    if k == "int":
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            return int(v)
        if isinstance(v, Tensor) and v._array.ndim == 0 and v._array.dtype.kind in "iu":
            return int(v.item())
        return _MISSING
    if k == "int_list":
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            return (int(v),)
        if isinstance(v, (tuple, list)) and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool)
                                                for x in v):
            return tuple(int(x) for x in v)
        return _MISSING
    if k == "bool":
        return bool(v) if isinstance(v, (bool, np.bool_)) else _MISSING
    if k == "tensor_list":
        if isinstance(v, (tuple, list)) and all(isinstance(x, Tensor) for x in v):
            return list(v)
        return _MISSING
    if k == "dtype":
        return v if isinstance(v, _DType) else _MISSING
    if k == "str":
        return v if isinstance(v, str) else _MISSING
    return v


def bind(overload, args, kwargs):
    """Converted positional arguments for ``overload``, or None when the call does not fit it."""
    params = overload.params
    positional = overload.positional
    values = [_MISSING] * len(params)
    nargs = len(args)
    if nargs > len(positional):
        # torch allows int lists as varargs: x.view(2, 3), x.permute(1, 0), x.expand(2, 3)
        last = len(positional) - 1
        if (last >= 0 and positional[last].kind == "int_list" and nargs - last >= 1
                and all(isinstance(a, (int, np.integer)) for a in args[last:])):
            args = tuple(args[:last]) + (tuple(args[last:]),)
            nargs = len(args)
        else:
            return None
    for i in range(nargs):
        v = _convert(params[i], args[i], i == 0)
        if v is _MISSING:
            return None
        values[i] = v
    if kwargs:
        index = {p.name: i for i, p in enumerate(params)}
        for name, v in kwargs.items():
            i = index.get(name)
            if i is None and name == "input":
                i = index.get("self", 0)  # torch's function form spells the schema's `self` `input`
            if i is None or values[i] is not _MISSING:
                return None
            v = _convert(params[i], v, i == 0)
            if v is _MISSING:
                return None
            values[i] = v
    for i, p in enumerate(params):
        if values[i] is _MISSING:
            if p.default is _MISSING:
                return None
            values[i] = p.default
    return values


# torch's PythonArgParser lets a Python number stand for a Tensor argument only for these ops
# (should_allow_numbers_as_tensors); for every other op a number first looks for a Scalar overload
# (x.scatter(1, i, 2.0) is scatter.value), and is wrapped only when no overload takes it as a Scalar.
NUMBERS_AS_TENSORS = {"add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "true_divide", "floor_divide",
                      "rsub", "to", "_to_copy", "copy_"}
_strict = [False]


def dispatch(name, overloads, args, kwargs):
    if kwargs and "out" in kwargs:
        from derivgen.ops.out_arg import call_with_out
        return call_with_out(name, lambda a, k: dispatch(name, overloads, a, k), args, kwargs)
    if len(overloads) == 1:
        # one row, given values it takes as they are for its leading parameters and keyword-only ones, the
        # rest left to their defaults: nothing to convert, so skip the parser (the row function's
        # parameters and defaults are the schema's)
        ov = overloads[0]
        if ov.required <= len(args) <= len(ov.as_is):
            for a, accepted in zip(args, ov.as_is):
                if type(a) not in accepted:
                    break
            else:
                if not kwargs:
                    return ov.fn(*args)
                kwonly = ov.kwonly_as_is
                for n, v in kwargs.items():
                    accepted = kwonly.get(n)
                    if accepted is None or type(v) not in accepted:
                        break
                else:
                    return ov.fn(*args, **kwargs)
    key = _route_key(overloads, args, kwargs)
    if key is not None:
        route = _routes.get(key)
        if route is not None:
            if route.direct:
                return route.overload.fn(*args, **kwargs)
            values = route.values(args, kwargs)
            if values is not None:
                return route.overload.call(values)
        else:
            return _dispatch_learning(name, overloads, args, kwargs, key)
    return _dispatch_general(name, overloads, args, kwargs)


def _dispatch_general(name, overloads, args, kwargs):
    ov, values, _ = _pick(name, overloads, args, kwargs)
    return ov.call(values)


def _pick(name, overloads, args, kwargs):
    """The first row the call binds to (trying the rows strictly first where torch does, see
    NUMBERS_AS_TENSORS), its converted values, and whether the strict pass found it. The row runs after
    the parser is done, so calls it makes are parsed on their own terms."""
    if len(overloads) > 1 and name not in NUMBERS_AS_TENSORS:
        _strict[0] = True
        try:
            for ov in overloads:
                values = bind(ov, args, kwargs)
                if values is not None:
                    return ov, values, True
        finally:
            _strict[0] = False
    for ov in overloads:
        values = bind(ov, args, kwargs)
        if values is not None:
            return ov, values, False
    raise TypeError(_mismatch_message(name, overloads, args, kwargs))


# Routes: which row a call binds to depends only on the argument "shape" that _route_key records
# (positional count, keyword names in order, and each value's type, refined where _convert looks at more
# than the type), so the row found once by the general parser is reused for later calls of that shape
# without trying the other rows. Calls with values the key cannot describe always take the parser.
_routes = {}
_ROUTES_MAX = 4096
_PLAIN = frozenset((int, float, bool, type(None), str, _DType, np.float32, np.float64, np.int64, np.int32,
                    np.bool_))


def _value_key(v):
    t = type(v)
    if t is Tensor or isinstance(v, Tensor):
        try:
            a = _RAW_DATA.__get__(v)  # a deferred value's Pending (shape, dtype) is not computed here
        except AttributeError:  # a tensor with no array of its own (vmap's BatchedTensor): the parser decides
            return _UNROUTED
        # _convert reads a 0-dim tensor's wrapping and dtype kind (Scalar and int parameters)
        return t if a.ndim else (t, v._wrapped, a.dtype.kind)
    if t in _PLAIN:
        return t
    if t is tuple or t is list:
        # int lists and Tensor lists are decided by their items' types
        if not v:
            return (t, None)
        if all(type(x) is int for x in v):
            return (t, int)
        if all(isinstance(x, Tensor) for x in v):
            return (t, Tensor)
    return _UNROUTED


_UNROUTED = object()


def _route_key(overloads, args, kwargs):
    key = [id(overloads), len(args)]
    for a in args:
        if type(a) is Tensor:  # _value_key's most common case, inlined
            try:
                d = _RAW_DATA.__get__(a)
            except AttributeError:
                return None
            key.append(Tensor if d.ndim else (Tensor, a._wrapped, d.dtype.kind))
            continue
        k = _value_key(a)
        if k is _UNROUTED:
            return None
        key.append(k)
    if kwargs:
        for n, v in kwargs.items():
            k = _value_key(v)
            if k is _UNROUTED:
                return None
            key.append(n)
            key.append(k)
    return tuple(key)


class _Route:
    """The row a call shape binds to, and for each of its parameters where the value comes from: a
    positional index, a keyword name, or the default; values whose type the row takes as it is are passed
    without conversion. ``direct``: every given value passes as it is and every keyword is the row
    function's own parameter name, so ``overload.fn(*args, **kwargs)`` is the call (the row functions'
    defaults are the schema's). ``fold``: where int varargs begin (``x.view(2, 3)``), which the last
    positional int list takes as one tuple, as bind folds them; None when there are none."""
    __slots__ = ("overload", "plan", "strict", "direct", "fold")

    def __init__(self, overload, strict, args, kwargs):
        self.overload = overload
        self.strict = strict
        self.fold = None
        plan = []
        params = overload.params
        index = {p.name: i for i, p in enumerate(params)}
        sources = [None] * len(params)
        nargs = len(args)
        if nargs > len(overload.positional):
            last = len(overload.positional) - 1
            if last < 0 or overload.positional[last].kind != "int_list" or any(type(a) is not int for a in args[last:]):
                raise _NotRoutable
            self.fold = last
            args = tuple(args[:last]) + (tuple(args[last:]),)
            nargs = len(args)
        for i in range(nargs):
            sources[i] = i
        for n in kwargs:
            i = index.get(n)
            if i is None and n == "input":
                i = index.get("self", 0)
            sources[i] = n
        for i, p in enumerate(params):
            src = sources[i]
            if src is None:
                plan.append((None, p.default, False, False))
                continue
            v = args[src] if type(src) is int else kwargs[src]
            plan.append((src, p, not _passes_as_is(p, v), i == 0))
        self.plan = plan
        self.direct = (self.fold is None and not any(convert for _, _, convert, _ in plan)
                       and _takes_schema_call(overload, kwargs))

    def values(self, args, kwargs):
        if self.fold is not None:
            args = tuple(args[:self.fold]) + (tuple(args[self.fold:]),)
        values = []
        for src, p, convert, first in self.plan:
            if src is None:
                values.append(p)
                continue
            v = args[src] if type(src) is int else kwargs[src]
            if convert:
                if self.strict:
                    _strict[0] = True
                    try:
                        v = _convert(p, v, first)
                    finally:
                        _strict[0] = False
                else:
                    v = _convert(p, v, first)
                if v is _MISSING:
                    return None
            values.append(v)
        return values


def _takes_schema_call(overload, kwargs):
    """Whether the row function's own signature binds a call as the schema does: every keyword given
    is one of its parameter names, and every parameter's default is the schema's."""
    fn = overload.fn
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    if tuple(p.name for p in overload.params) != names or any(n not in names for n in kwargs):
        return False
    defaults = dict(zip(code.co_varnames[code.co_argcount - len(fn.__defaults__ or ()):code.co_argcount],
                        fn.__defaults__ or ()))
    defaults.update(fn.__kwdefaults__ or {})
    return all(p.default is _MISSING if p.name not in defaults else defaults[p.name] is p.default
               or (type(defaults[p.name]) is type(p.default) and defaults[p.name] == p.default)
               for p in overload.params)


class _NotRoutable(Exception):
    pass


def _passes_as_is(p, v):
    """Whether _convert would return ``v`` itself for parameter ``p``."""
    t = type(v)
    k = p.kind
    if v is None:
        return p.optional or p.default is None
    if k == "tensor":
        return isinstance(v, Tensor)
    if k == "scalar":
        return t in (int, float, bool)
    if k == "int":
        return t is int
    if k == "bool":
        return t is bool
    if k == "str":
        return t is str
    if k == "dtype":
        return isinstance(v, _DType)
    return k == "any"


def _dispatch_learning(name, overloads, args, kwargs, key):
    """The general parser, remembering the row it picks for this call shape."""
    ov, values, strict = _pick(name, overloads, args, kwargs)
    _learn(key, ov, strict, args, kwargs)
    return ov.call(values)


def _learn(key, ov, strict, args, kwargs):
    try:
        route = _Route(ov, strict, args, kwargs)
    except _NotRoutable:
        return
    if len(_routes) >= _ROUTES_MAX:
        _routes.clear()
    _routes[key] = route


def _type_name(v):
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, (list, tuple)):
        return f"{type(v).__name__} of [{', '.join(_type_name(x) for x in v)}]"
    return type(v).__name__


def _mismatch_message(name, overloads, args, kwargs):
    got = ", ".join([_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    lines = [f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:"]
    for ov in overloads:
        parts = []
        star = False
        for p in ov.params:
            if p.kwonly and not star:
                parts.append("*")
                star = True
            parts.append(f"{p.type} {p.name}")
        lines.append(f" * ({', '.join(parts)})   [{ov.schema}]")
    return "\n".join(lines)
