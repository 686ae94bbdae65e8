"""Elementwise ops on Tensors: a generated kernel (``derivgen.kernels.dispatch.Elementwise``) plus the
Tensor-level rules of a forward call: torch's type promotion with wrapped Python numbers, and deferral
of large inputs into whole-graph fusion (``derivgen.engine.fusion``).

The generated kernel modules build their forward and backward kernels from this class; backward
formulas call them with arrays (``__call__``, ``callN``), ops with Tensors (``forward``, ``forwardN``).
"""
import numpy as np
from numpy import may_share_memory as _may_share_memory

from derivgen.core.dtypes import scalar_type_name
from derivgen.core.pending import LIVE_REFS as _LIVE_PENDING
from derivgen.config import settings as _cfg
from derivgen.core.meta import contiguous_meta
from derivgen.core.tensor import result_dtype
from derivgen.engine.fusion import defer
from derivgen.kernels.promotion import can_cast
from derivgen.kernels.dispatch import (_BOOL, _ENTRY_DTYPES, _FLOAT_ZERO, _PLAIN_NUMBERS, Elementwise, _entry_scalars,
                                      _typed, _zero_of, call_cached as _call_cached, run_elementwise)

_NUMBER_KINDS = ("f", "i")


def _plain(scalars):
    """Whether every scalar is a plain int or float (others take the general path, which converts them
    inside the op's error translation)."""
    for v in scalars:
        if type(v) is not int and type(v) is not float:
            return False
    return True


def _overlaps(a, b):
    """Whether operand ``b`` may share memory with the in-place target ``a`` other than being ``a`` itself
    (arrays that both own their memory never do; views are checked by bounds)."""
    return a is not b and (a.base is not None or b.base is not None) and _may_share_memory(a, b)


class ElementwiseOp(Elementwise):
    __slots__ = ("dtype_rule", "arg_rule", "plain_scalars_pass", "float_number_passes", "_entry_inplace",
                 "_entry_inplace_number", "_entry_bool_number", "_entry_rows")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # torch's dtype-specific behaviour of this op's forward beyond the kernel (a refusal, exact
        # integer math): ``rule(tensors, scalars, out)`` raises, or returns the result array, or None
        # to run the kernel. Set by derivgen.ops.dtype_rules; consulted only off the same-dtype float
        # fast paths, where no rule applies.
        self.dtype_rule = None
        # ``rule(scalars, first)`` raises torch's error for refused Scalar argument values (CELU's alpha
        # of 0; ``first`` is the first tensor operand, whose dtype some texts name); set by
        # derivgen.ops.dtype_rules from derivgen.ops.scalar_checks, checked on every path
        self.arg_rule = None
        # True when arg_rule refuses no plain int/float: forward1/forward2 skip it for one such scalar
        self.plain_scalars_pass = False
        # True when dtype_rule (if any) never refuses a float32/float64 tensor with an int or float number
        # and plain scalars (``x + 1``, ``w.sub_(0.5)``): the number paths below may then skip it.
        # Set by derivgen.ops.dtype_rules with the rule.
        self.float_number_passes = True
        # The compiled kernels the number and in-place paths below call directly (_call_cached), per
        # operand dtype: in-place with an array / a number operand, and a comparison with a number
        self._entry_inplace = {}
        self._entry_inplace_number = {}
        self._entry_bool_number = {}
        # the _rows variant for a matrix and a row of one float dtype (_matrix_and_row)
        self._entry_rows = {}

    # forward1/forward2 repeat callN's test rather than calling it: their fallbacks differ (Tensor
    # promotion rules, fusion), and a shared helper would cost every op one more Python call (~1.5 % of W1).
    def forward1(self, t, scalars=(), cmeta=None):
        """``self.forward((t,), scalars)``: a deferred or large input takes the general path (fusion).
        ``cmeta``: ``t``'s ContiguousMeta (derivgen.core.meta) when the caller has it, or None."""
        if self.arg_rule is not None and not (self.plain_scalars_pass and len(scalars) == 1
                                              and type(scalars[0]) in _PLAIN_NUMBERS):
            self.arg_rule(scalars, t)
        if cmeta is None:
            cmeta = contiguous_meta(t)  # None: deferred, or not C-contiguous
        if cmeta is not None:
            dt = cmeta.dtype
            entry = self._entry.get(dt)
            if entry is not None and cmeta.size < _cfg.small_array:
                out = flat = np.empty(cmeta.shape, dt)
                a = t._array
                if not cmeta.one_dim:
                    flat, a = out.reshape(-1), a.reshape(-1)
                if scalars:
                    entry[0](flat, a, *_entry_scalars(scalars, dt), entry[1])
                else:
                    entry[0](flat, a, entry[1])
                return out
        return self.forward((t,), scalars)

    def forward2(self, t, u, scalars=(), cmeta=None):
        """``self.forward((t, u), scalars)``: 0-dim operands (wrapped numbers), mixed dtypes,
        broadcasting, deferred or large inputs take the general path. ``cmeta``: the ContiguousMeta
        (derivgen.core.meta) ``t`` and ``u`` share when the caller has it, or None."""
        if self.arg_rule is not None and not (self.plain_scalars_pass and len(scalars) == 1
                                              and type(scalars[0]) in _PLAIN_NUMBERS):
            self.arg_rule(scalars, t)
        if cmeta is None:
            cmeta = contiguous_meta(t)  # None: deferred, or not C-contiguous
            number = contiguous_meta(u)
            if cmeta is not number:
                if (number is not None and number.shape == () and cmeta is not None and cmeta.shape != ()
                        and cmeta.dtype in _ENTRY_DTYPES and number.dtype.kind in _NUMBER_KINDS
                        and self.float_number_passes and cmeta.size < _cfg.small_array):
                    # a float tensor and a wrapped number or 0-dim int/float tensor (``lr * g``, ``x + 1``,
                    # ``x > 0``): the tensor's dtype is the one computed in (a 0-dim operand does not promote
                    # within a category) and the result's unless it is a comparison's bool, and the kernel
                    # reads the value as a number (what the general path does, minus the promotion rules
                    # and broadcasting)
                    dt = cmeta.dtype
                    if self.returns_bool:
                        out = np.empty(cmeta.shape, np.bool_)
                        _call_cached(self._entry_bool_number, dt, self.k1d,
                                     (out.reshape(-1), t._array.reshape(-1), dt.type(u._array.item()),
                                      *_typed(scalars, dt), _zero_of(dt)))
                        return out
                    out = np.empty(cmeta.shape, dt)
                    if cmeta.one_dim:
                        self.call_number(out, t._array, u._array.item(), scalars, dt)
                    else:
                        self.call_number(out.reshape(-1), t._array.reshape(-1), u._array.item(), scalars, dt)
                    return out
                if number is not None and cmeta is not None and self.rows is not None and not self.returns_bool:
                    out = self._matrix_and_row(t._array, cmeta, u._array, number, scalars)
                    if out is not None:
                        return out
                return self.forward((t, u), scalars)
        if cmeta is not None:
            dt = cmeta.dtype
            entry = self._entry.get(dt)
            if entry is not None and cmeta.size < _cfg.small_array:
                out = flat = np.empty(cmeta.shape, dt)
                a = t._array
                b = u._array
                if not cmeta.one_dim:
                    flat, a, b = out.reshape(-1), a.reshape(-1), b.reshape(-1)
                if scalars:
                    entry[0](flat, a, b, *_entry_scalars(scalars, dt), entry[1])
                else:
                    entry[0](flat, a, b, entry[1])
                return out
        return self.forward((t, u), scalars)

    def _matrix_and_row(self, a, ca, b, cb, scalars):
        """``op(a, b)`` for a C-contiguous (R, C) matrix and a (C,) row of one float dtype, in either
        order (a linear layer's ``x @ W + b``), below the fusion and parallel thresholds: the ``_rows``
        variant that the general path picks for these operands (so the same loop and result), called
        without its promotion and broadcasting steps. ``ca``/``cb`` are the operands' ContiguousMeta.
        None for any other operands."""
        dt = ca.dtype
        if cb.dtype is not dt or dt not in _ENTRY_DTYPES:
            return None
        sa, sb = ca.shape, cb.shape
        if len(sa) == 2 and len(sb) == 1 and sa[1] == sb[0]:
            shape = sa
            args = (a, 1, b.reshape(1, sb[0]), 0)
        elif len(sa) == 1 and len(sb) == 2 and sb[1] == sa[0]:
            shape = sb
            args = (a.reshape(1, sa[0]), 0, b, 1)
        else:
            return None
        if shape[0] * shape[1] >= _cfg.small_array:
            return None
        out = np.empty(shape, dt)
        entry = self._entry_rows.get(dt)
        if entry is not None:
            entry(out, *args, *_entry_scalars(scalars, dt), _FLOAT_ZERO[dt])
        else:
            _call_cached(self._entry_rows, dt, self.rows, (out, *args, *_typed(scalars, dt), _FLOAT_ZERO[dt]))
        return out

    # The direct path of an in-place op that records nothing (``w.sub_(lr * g)`` under no_grad): the
    # generated ``<op>_`` calls it before its general path (check_inplace, node, forward into self).
    # It applies where those checks cannot refuse and the general path would run this same kernel:
    # no deferred value anywhere (check_inplace would compute them first), a tensor that is not an
    # inference tensor and not a view (the view rules of check_inplace), float32/float64 operands of
    # one shape and dtype, contiguous, self writable, below the parallel threshold, and no partial
    # overlap: the operand is self's array, or both own their memory, or their memory is disjoint (a
    # view, such as the array of ``from_numpy``, is checked by bounds). Returns False when the general
    # path is needed.
    def into1(self, t, scalars=()):
        """``t = op(t, *scalars)`` in place; False when the general path must run."""
        if self.arg_rule is not None:
            self.arg_rule(scalars, t)
        if _LIVE_PENDING or t._lazy or t._inference or t._base is not None or not _plain(scalars):
            return False
        a = t._array
        dt = a.dtype
        flags = a.flags
        if (dt not in _ENTRY_DTYPES or not flags.c_contiguous or not flags.writeable
                or a.size >= _cfg.parallel_threshold):
            return False
        self._run_inplace(self._entry_inplace, a.reshape(-1) if a.ndim != 1 else a, (), scalars, dt)
        return True

    def into2(self, t, u, scalars=()):
        """``t = op(t, u, *scalars)`` in place; False when the general path must run."""
        if self.arg_rule is not None:
            self.arg_rule(scalars, t)
        if (_LIVE_PENDING or t._lazy or u._lazy or t._inference or t._base is not None
                or not _plain(scalars)):
            return False
        a = t._array
        b = u._array
        dt = a.dtype
        flags = a.flags
        if b.ndim == 0 and a.ndim != 0:
            # ``w.mul_(0.9)``: a wrapped number or a 0-dim int/float tensor, which does not promote the
            # float tensor; read as a number, unless it may be an element of ``t`` itself (the general
            # path refuses that partial overlap)
            if (dt not in _ENTRY_DTYPES or b.dtype.kind not in _NUMBER_KINDS or self.returns_bool
                    or not self.float_number_passes or not flags.c_contiguous or not flags.writeable
                    or a.size >= _cfg.parallel_threshold
                    or _overlaps(a, b)):
                return False
            self._run_inplace(self._entry_inplace_number, a.reshape(-1) if a.ndim != 1 else a, (b.item(),),
                              scalars, dt)
            return True
        # one shared ContiguousMeta: both C-contiguous, of one shape and dtype (the metadata is cached on
        # the tensors, so this costs less than comparing the arrays' shapes, dtypes and flags)
        cm = contiguous_meta(t)
        if (cm is None or cm is not contiguous_meta(u) or dt not in _ENTRY_DTYPES or not flags.writeable
                or cm.size >= _cfg.parallel_threshold
                or _overlaps(a, b)):
            return False
        if not cm.one_dim:
            a, b = a.reshape(-1), b.reshape(-1)
        self._run_inplace(self._entry_inplace, a, (b,), scalars, dt)
        return True

    def into3(self, t, u, v, scalars=()):
        """``t = op(t, u, v, *scalars)`` in place (``v.addcmul_(g, g, value=0.001)``) for three operands of one
        shape and float dtype, under into2's other conditions; False when the general path must run."""
        if self.arg_rule is not None:
            self.arg_rule(scalars, t)
        if (_LIVE_PENDING or t._lazy or u._lazy or v._lazy or t._inference or t._base is not None
                or not _plain(scalars)):
            return False
        a = t._array
        b = u._array
        c = v._array
        cm = contiguous_meta(t)
        if (cm is None or cm is not contiguous_meta(u) or cm is not contiguous_meta(v) or a.dtype not in _ENTRY_DTYPES
                or not a.flags.writeable or cm.size >= _cfg.parallel_threshold
                or _overlaps(a, b) or _overlaps(a, c)):
            return False
        if not cm.one_dim:
            a, b, c = a.reshape(-1), b.reshape(-1), c.reshape(-1)
        self._run_inplace(self._entry_inplace, a, (b, c), scalars, a.dtype)
        return True

    def _run_inplace(self, entries, a, operands, scalars, dt):
        """``self.inplace(a, *operands, *scalars, zero)`` for C-contiguous 1-D arrays of float32/float64
        ``dt``, plain-number ``scalars`` and operands that are such arrays or one plain number
        (``entries``: one dict per operand form, array or number)."""
        entry = entries.get(dt)
        if entry is not None:
            # plain Python numbers: the compiled function converts them to dt as dt.type(v) does, faster
            # than NumPy scalars are unboxed
            entry(a, *operands, *scalars, 0.0)
            return
        # the dispatcher's first call: numbers of dt, or it would compile a version for Python numbers
        operands = [v if isinstance(v, np.ndarray) else dt.type(v) for v in operands]
        _call_cached(entries, dt, self.inplace, (a, *operands, *_typed(scalars, dt), _zero_of(dt)))

    def forward(self, tensors, scalars=(), out=None):
        """Forward use: Tensors in, so that wrapped Python numbers follow torch's promotion.

        Large float inputs (or a deferred one) may get a ``Pending`` back instead of an array: the op
        is deferred and fused with the elementwise ops around it (fusion.py); the caller's
        ``Tensor._make`` turns it into a LazyTensor."""
        if self.arg_rule is not None:
            self.arg_rule(scalars, tensors[0])
        t0 = tensors[0]
        if out is None and (t0._lazy or t0._array.size >= _cfg.fusion_threshold) and self.scalar is not None:
            pending = defer(self, tensors, scalars)
            if pending is not None:
                return pending
        arrays = [t._array for t in tensors]
        if out is None:
            res = self._fast(arrays, scalars)
            if res is not None:
                return res
        if self.dtype_rule is not None:
            res = self.dtype_rule(tensors, scalars, out)
            if res is not None:
                return res
        dt = None
        for a in arrays:
            if a.ndim == 0 or a.dtype is _BOOL:
                continue  # 0-dim tensors, wrapped numbers and bools (where's condition) do not decide a float result
            if dt is None:
                dt = a.dtype
            elif a.dtype != dt:
                dt = None
                break
        if dt is None or dt.kind != "f":
            # mixed dtypes, or ints/bools (where a float wrapped number lifts the category): full rules
            dt = result_dtype(*tensors)
        compute = self._compute(dt)
        result = self._out_dtype(dt, compute)
        if out is not None and not can_cast(result, out.dtype):
            raise RuntimeError(f"result type {scalar_type_name(result)} can't be cast to the "
                               f"desired output type {scalar_type_name(out.dtype)}")
        return run_elementwise(self.k1d, self.k2d, arrays, scalars, compute, result, out,
                               self.k1d_parallel, self.k2d_parallel, self.rows, self.inplace)
