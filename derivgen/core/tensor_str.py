"""Tensor printing, following PyTorch's ``torch/_tensor_str.py`` so printed lines match torch."""
import math

import numpy as np

from derivgen.core.dtypes import bool_, get_default_dtype, int64

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80
SCI_MODE = None  # None: chosen per tensor; True / False: always / never scientific notation

_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """torch.set_printoptions: a profile ('default', 'short', 'full') first, then the options given;
    ``sci_mode`` is always set (None restores the per-tensor choice), as in torch."""
    global PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH, SCI_MODE
    if profile in _PROFILES:  # another profile name changes nothing, as in torch
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = _PROFILES[profile]
    if precision is not None:
        PRECISION = precision
    if threshold is not None:
        THRESHOLD = threshold
    if edgeitems is not None:
        EDGEITEMS = edgeitems
    if linewidth is not None:
        LINEWIDTH = linewidth
    SCI_MODE = sci_mode


def get_printoptions():
    return {"precision": PRECISION, "threshold": THRESHOLD, "edgeitems": EDGEITEMS, "linewidth": LINEWIDTH,
            "sci_mode": SCI_MODE}


class _Formatter:
    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = np.asarray(values).reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        flat = flat.astype(np.float64)
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return
        fabs = np.abs(finite)
        fmin, fmax = fabs.min(), fabs.max()
        if np.any(finite != np.ceil(finite)):
            self.int_mode = False
        if SCI_MODE is None:
            self.sci_mode = bool(fmax / fmin > 1000.0 or fmax > 1.0e8 or fmin < 1.0e-4)
        else:
            self.sci_mode = SCI_MODE
        if self.sci_mode:
            fmt = f"{{:.{PRECISION}e}}"
            self.max_width = max(len(fmt.format(v)) for v in finite.tolist())
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in finite.tolist())
        else:
            fmt = f"{{:.{PRECISION}f}}"
            self.max_width = max(len(fmt.format(v)) for v in finite.tolist())

    def format(self, value):
        if self.floating:
            value = float(value)
            if self.sci_mode:
                ret = f"{{:{self.max_width}.{PRECISION}e}}".format(value)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{{:.{PRECISION}f}}".format(value)
        else:
            ret = str(value)
        return (self.max_width - len(ret)) * " " + ret


def _vector_str(a, indent, summarize, fmt):
    element_length = fmt.max_width + 2
    per_line = max(1, int(math.floor((LINEWIDTH - indent) / element_length)))
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        data = ([fmt.format(v) for v in a[:EDGEITEMS].tolist()] + [" ..."]
                + [fmt.format(v) for v in a[-EDGEITEMS:].tolist()])
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _str_with_formatter(a, indent, summarize, fmt):
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        slices = ([_str_with_formatter(a[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)] + ["..."]
                  + [_str_with_formatter(a[i], indent + 1, summarize, fmt)
                     for i in range(a.shape[0] - EDGEITEMS, a.shape[0])])
    else:
        slices = [_str_with_formatter(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(a):
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * EDGEITEMS:
        parts = [a[:EDGEITEMS], a[-EDGEITEMS:]]
    else:
        parts = [a]
    parts = [np.stack([_summarized(x) for x in p]) if a.ndim > 1 and len(p) else p for p in parts]
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _add_suffixes(body, suffixes, indent):
    out = [body]
    last_line_len = len(body) - body.rfind("\n") + 1
    for suffix in suffixes:
        # lay lines out as torch does for its own spelling (``dtype=torch.float64``), so that printed
        # lines match torch's line for line, ``torch.`` reading ``derivgen.``
        width = len(suffix.replace("derivgen.", "torch."))
        if last_line_len + width + 2 > LINEWIDTH:
            out.append(",\n" + " " * indent + suffix)
            last_line_len = indent + width
        else:
            out.append(", " + suffix)
            last_line_len += width + 2
    out.append(")")
    return "".join(out)


def tensor_repr(t, prefix="tensor("):

    a = t._array
    indent = len(prefix)
    suffixes = []
    floating = t.dtype.is_floating_point
    if a.size == 0:
        body = "[]"
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if t.dtype is not get_default_dtype():
            suffixes.append(f"dtype={t.dtype!r}")  # nothing to infer an int64/bool dtype from: always shown
    else:
        summarize = a.size > THRESHOLD
        fmt = _Formatter(_summarized(a) if summarize else a, floating)
        body = _str_with_formatter(a, indent, summarize, fmt)
    default_ok = (t.dtype is get_default_dtype()) or t.dtype in (int64, bool_)
    if not default_ok and a.size:
        suffixes.append(f"dtype={t.dtype!r}")
    try:
        fn = t.grad_fn
        name = type(fn).__name__ if fn is not None else None
    except RuntimeError:
        # a view made in no_grad mode whose memory was written since refuses a grad_fn read; torch prints this
        name = "Invalid"
    if name is not None:
        suffixes.append(f"grad_fn=<{name}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + _add_suffixes(body, suffixes, indent)
