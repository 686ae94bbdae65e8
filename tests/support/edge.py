"""The runtime edge-case corpus's machinery (tests/edge): a case is an expression over the library
(``fn(t)`` with ``t`` being derivgen or torch) and an expected outcome, recorded from PyTorch 2.13
and asserted against both libraries through the ``torch`` fixture, so that the PyTorch run proves the
expectation and the derivgen run checks it.

An outcome is ``ok(value, ...)`` (each tensor as ``(dtype name, shape, values)``, other values as
they are) or ``raises(type name, message)`` (the message's first line must start with it).
"""
import math
from dataclasses import dataclass

nan = math.nan
inf = math.inf


@dataclass(frozen=True)
class Case:
    id: str
    fn: object

    def __repr__(self):
        return self.id


def ok(*values):
    return ("ok",) + values


def raises(type_name, message):
    return ("raises", type_name, message)


def grad_of(t, fn, data, dtype="float64"):
    """``(fn(x), x.grad)`` for a leaf ``x`` made from ``data`` after ``fn(x).sum().backward()``."""
    x = t.tensor(data, dtype=getattr(t, dtype), requires_grad=True)
    y = fn(x)
    y.sum().backward()
    return y, x.grad


def _tensor_like(v):
    return hasattr(v, "dtype") and hasattr(v, "shape") and hasattr(v, "tolist")


def observe(t, fn):
    """What a user sees of ``fn(t)``: its values (tensors as dtype name, shape, values) or its error."""
    try:
        out = fn(t)
    except Exception as exc:  # noqa: BLE001 - the error is the observation
        lines = str(exc).splitlines()
        return ("raises", type(exc).__name__, lines[0] if lines else "")
    if not isinstance(out, tuple):  # a tuple (named or not, torch's return types too) is its items
        out = (out,)
    return ("ok",) + tuple(_observe_value(v) for v in out)


def _observe_value(v):
    if _tensor_like(v):
        return (str(v.dtype).split(".")[-1], list(v.shape), v.detach().tolist())
    if isinstance(v, (tuple, list)) and not hasattr(v, "_fields"):
        return type(v)(_observe_value(x) for x in v)
    if hasattr(v, "_fields"):  # a named tuple of tensors (max(dim) -> values, indices)
        return tuple(_observe_value(x) for x in v)
    return v


def _close(a, b, rtol):
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y, rtol) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a == b and type(a) is type(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= rtol * max(abs(a), abs(b)) + 1e-30
    return a == b


def _rtol(value):
    return 1e-5 if value[0] == "float32" else 1e-9


def matches(got, expected):
    """Whether an observation matches an expected outcome (float32 values to 1e-5, float64 to 1e-9)."""
    if got[0] != expected[0]:
        return False
    if got[0] == "raises":
        return got[1] == expected[1] and got[2].startswith(expected[2])
    if len(got) != len(expected):
        return False
    for g, e in zip(got[1:], expected[1:]):
        if _tensor_like_obs(e):
            if not (_tensor_like_obs(g) and g[0] == e[0] and list(g[1]) == list(e[1]) and _close(g[2], e[2], _rtol(e))):
                return False
        elif isinstance(e, tuple) and isinstance(g, tuple):
            if not matches(("ok",) + g, ("ok",) + e):
                return False
        elif not _close(g, e, 1e-9):
            return False
    return True


def _tensor_like_obs(v):
    return isinstance(v, tuple) and len(v) == 3 and isinstance(v[0], str) and isinstance(v[1], list)


def check(t, case, expected):
    got = observe(t, case.fn)
    assert matches(got, expected), f"{case.id} under {t.__name__}:\n  got      {got!r}\n  expected {expected!r}"


def record(cases):
    """The expected outcomes of ``cases`` under PyTorch, as source text for an EXPECTED dict."""
    import torch
    lines = ["EXPECTED = {"]
    for c in cases:
        got = observe(torch, c.fn)
        if got[0] == "ok":
            lines.append(f"    {c.id!r}: ok{_fmt(got[1:])},")
        else:
            lines.append(f"    {c.id!r}: raises({got[1]!r}, {got[2]!r}),")
    lines.append("}")
    return "\n".join(lines)


def _fmt(values):
    text = repr(tuple(values))
    return text[:-2] + ")" if len(values) == 1 else text


__all__ = ["Case", "ok", "raises", "grad_of", "observe", "matches", "check", "record", "nan", "inf"]
