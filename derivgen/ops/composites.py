"""Composite ops: Python compositions of table ops, as torch's CompositeImplicitAutograd functions
are, so their graphs have torch's shape (``reshape`` is a ``ViewBackward0`` when it can view, and
``CloneBackward0`` + ``UnsafeViewBackward0`` when it must copy; ``matmul`` picks dot/mv/mm/bmm)."""
import numpy as np

from derivgen.core import dtypes as _dt
from derivgen.core.device import check_device
from derivgen.core.tensor import Tensor
from derivgen.core.registry import aten
from derivgen.core.sizes import infer_size
from derivgen.core.sizes import wrap_dim
from derivgen.core.generator import numpy_generator
from derivgen.ops.out_arg import with_out as _with_out


def _size_args(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def reshape(self, *shape, **kwargs):
    """torch's reshape: a view (ViewBackward0) of a contiguous tensor, _reshape_alias
    (ReshapeAliasBackward0) when a non-contiguous tensor can still be viewed, else clone + _unsafe_view.
    The shape is varargs, one sequence, or torch's keyword ``shape=``."""
    if kwargs:
        if shape or set(kwargs) != {"shape"}:
            raise TypeError(f"reshape() got an unexpected keyword argument '{next(k for k in kwargs if k != 'shape')}'"
                            if set(kwargs) - {"shape"} else "reshape() got multiple values for argument 'shape'")
        shape = (kwargs["shape"],)
    shape = _size_args(shape)
    a = self._array
    resolved = _resolve(shape, a.size)  # reshape's own error for a size that does not fit
    if a.flags.c_contiguous:  # always a view
        if all(type(s) is int for s in shape):
            return aten.view_default(self, shape)  # the row the parser picks for plain ints, without it
        return aten.view(self, shape)
    try:
        viewed = np.reshape(a, resolved, copy=False)
    except ValueError:
        return aten._unsafe_view(aten.clone(self), shape)
    strides = tuple(s // max(viewed.itemsize, 1) for s in viewed.strides)
    return aten._reshape_alias(self, viewed.shape, strides)


def _resolve(shape, numel):
    return infer_size(shape, numel)


def matmul(self, other):
    """torch's _matmul_impl: dot / mv / unsqueeze+mm+squeeze_ / mm, the batch folded into one mm or mv
    when one side has >= 3 dims and the other <= 2 (transposing when the left side is the small one),
    else expand + reshape + bmm + _unsafe_view."""
    ops = aten
    a, b = self.dim(), other.dim()
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a}D and {b}D")
    if a == 1 and b == 1:
        return ops.dot(self, other)
    if a == 2 and b == 1:
        return ops.mv(self, other)
    if a == 1 and b == 2:
        return ops.squeeze_(ops.mm(ops.unsqueeze(self, 0), other), 0)
    if a == 2 and b == 2:
        return ops.mm(self, other)
    if (a >= 3 and b <= 2) or (b >= 3 and a <= 2):
        transpose = b > a
        t1 = ops.transpose(other, -2, -1) if transpose else self
        t2 = (ops.t(self) if a == 2 else self) if transpose else other
        sizes = tuple(t1.shape)
        out_shape = sizes[:-1]
        folded = reshape(t1, (int(np.prod(out_shape)), sizes[-1]))
        if t2.dim() == 2:
            out = ops._unsafe_view(ops.mm(folded, t2), out_shape + (t2.shape[1],))
            return contiguous(ops.transpose(out, -2, -1)) if transpose else out
        return ops._unsafe_view(ops.mv(folded, t2), out_shape)
    n, m1 = self.shape[-2], self.shape[-1]
    m2, p = other.shape[-2], other.shape[-1]
    batch = tuple(np.broadcast_shapes(tuple(self.shape[:-2]), tuple(other.shape[:-2])))
    nb = int(np.prod(batch))
    if m1 != m2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{nb}, {m1}] but got: "
                           f"[{nb}, {m2}].")
    xb = reshape(ops.expand(self, batch + (n, m1)), (nb, n, m1))
    yb = reshape(ops.expand(other, batch + (m2, p)), (nb, m2, p))
    return ops._unsafe_view(ops.bmm(xb, yb), batch + (n, p))


def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False, memory_format=None):
    """torch's three forms: ``to(dtype)``, ``to(device=None, dtype=None)`` (a device, a device string
    such as ``"cpu"``) and ``to(other)`` (``other``'s dtype and device); ``self`` when nothing changes."""
    for a in args:
        if isinstance(a, _dt.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, bool):
            pass  # non_blocking: copies on the CPU are synchronous
        elif a is not None:
            device = a
    if device is not None:  # none given: the tensor stays where it is, whatever the default device
        check_device(device)
    if dtype is None or (_dt.to_numpy_dtype(dtype) == self._array.dtype and not copy):
        return aten.clone(self) if copy else self
    return aten._to_copy(self, dtype=dtype)


def flatten(self, start_dim=0, end_dim=-1):
    nd = self.dim()
    s, e = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if nd == 0:
        return reshape(self, (1,))
    if s == e:
        return self
    shape = tuple(self.shape[:s]) + (-1,) + tuple(self.shape[e + 1:])
    return reshape(self, shape)


def expand_as(self, other):
    return aten.expand(self, tuple(other.shape))


def view_as(self, other):
    return aten.view(self, tuple(other.shape))


def reshape_as(self, other):
    return reshape(self, tuple(other.shape))


def type_as(self, other):
    return to(self, other.dtype)


def contiguous(self, memory_format=None):
    if self._array.flags.c_contiguous:
        return self
    return aten.clone(self)


def T(self):  # noqa: N802 - torch spelling
    """torch's ``.T`` is permute with reversed dims for every rank (PermuteBackward0, also for 2-D)."""
    nd = self.dim()
    return aten.permute(self, tuple(range(nd - 1, -1, -1)))


def square(self):
    return aten.pow(self, 2)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(self):
    """torch.selu is elu with fixed constants (EluBackward0)."""
    return aten.elu(self, _SELU_ALPHA, _SELU_SCALE)


def selu_(self):
    """torch.selu_ is elu_ with the same constants (EluBackward1)."""
    return aten.elu_(self, _SELU_ALPHA, _SELU_SCALE)


def mT(self):  # noqa: N802 - torch spelling
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor.")
    return aten.transpose(self, -2, -1)


def _unbiased_to_correction(unbiased, correction):
    if unbiased is not None:
        if correction is not None:
            raise RuntimeError("Cannot specify both unbiased and correction")
        return 1 if unbiased else 0
    return correction


def _var_args(args, kwargs):
    """torch's var/std overloads: (dim, unbiased, keepdim), (unbiased), (dim, *, correction, keepdim)."""
    args = list(args)
    dim = kwargs.pop("dim", None)
    unbiased = kwargs.pop("unbiased", None)
    keepdim = kwargs.pop("keepdim", False)
    correction = kwargs.pop("correction", None)
    if kwargs:
        raise TypeError(f"unexpected keyword argument(s) {sorted(kwargs)}")
    if args and isinstance(args[0], bool):
        unbiased = args.pop(0)
    if args:
        dim = args.pop(0)
    if args:
        unbiased = args.pop(0)
    if args:
        keepdim = args.pop(0)
    return dim, _unbiased_to_correction(unbiased, correction), keepdim


def var(self, *args, **kwargs):
    dim, correction, keepdim = _var_args(args, kwargs)
    return aten.var(self, dim, correction=correction, keepdim=keepdim)


def std(self, *args, **kwargs):
    dim, correction, keepdim = _var_args(args, kwargs)
    return aten.std(self, dim, correction=correction, keepdim=keepdim)


def var_mean(self, *args, **kwargs):
    dim, correction, keepdim = _var_args(args, kwargs)
    return tuple(aten.var_mean(self, dim, correction=correction, keepdim=keepdim))


def std_mean(self, *args, **kwargs):
    dim, correction, keepdim = _var_args(args, kwargs)
    return tuple(aten.std_mean(self, dim, correction=correction, keepdim=keepdim))


def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm: vector norms go to linalg_vector_norm (LinalgVectorNormBackward0), 'fro' is ord 2."""
    if isinstance(p, str):
        if p != "fro":
            raise RuntimeError(f"derivgen: norm(p={p!r}) is not supported (vector norms and 'fro' are)")
        p = 2
    if isinstance(dim, int):
        dim = (dim,)
    return aten.linalg_vector_norm(self, p, dim, keepdim, dtype=dtype)


def vector_norm(x, ord=2, dim=None, keepdim=False, dtype=None):
    if isinstance(dim, int):
        dim = (dim,)
    return aten.linalg_vector_norm(x, ord, dim, keepdim, dtype=dtype)


def split(self, split_size_or_sections, dim=0):
    if isinstance(split_size_or_sections, (list, tuple)):
        return tuple(aten.split_with_sizes(self, list(split_size_or_sections), dim))
    return tuple(aten.split(self, split_size_or_sections, dim))


def chunk(self, chunks, dim=0):
    """torch.chunk is split with ceil(size / chunks) (SplitBackward0)."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = self.shape[wrap_dim(dim, self.dim())]
    size = -(-n // chunks) if n else 0
    if size == 0:
        return tuple(aten.split_with_sizes(self, [0] * chunks, dim)) if n == 0 else (self,)
    return tuple(aten.split(self, size, dim))


def unsafe_chunk(self, chunks, dim=0):
    """torch.unsafe_chunk: chunk's pieces from unsafe_split (UnsafeSplitBackward0), not tracked as views."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = self.shape[wrap_dim(dim, self.dim())]
    size = -(-n // chunks)
    if size == 0 and n == 0:
        return tuple(aten.unsafe_split_with_sizes(self, [0] * chunks, dim))
    return tuple(aten.unsafe_split(self, size, dim))


def tensor_split(self, indices_or_sections, dim=0):
    """torch.tensor_split: one slice (SliceBackward0) per piece."""
    d = wrap_dim(dim, self.dim())
    n = self.shape[d]
    if isinstance(indices_or_sections, (list, tuple)):
        bounds = [0] + [min(max(int(i), 0), n) for i in indices_or_sections] + [n]
    else:
        k = int(indices_or_sections)
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        bounds = [0]
        for i in range(k):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    return tuple(aten.slice(self, d, bounds[i], max(bounds[i], bounds[i + 1]), 1) for i in range(len(bounds) - 1))


def narrow(self, dim, start, length):
    d = wrap_dim(dim, self.dim())
    n = self.shape[d]
    if start < -n or start > n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    start = start % n if start < 0 else start
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return aten.slice(self, d, start, start + length, 1)


def unflatten(self, dim, sizes):
    d = wrap_dim(dim, self.dim())
    given = list(sizes)
    sizes = list(sizes)
    if -1 in sizes:
        known = int(np.prod([s for s in sizes if s != -1]))
        sizes[sizes.index(-1)] = self.shape[d] // known if known else 0
    if int(np.prod(sizes)) != self.shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {given} don't multiply up to the size of dim {dim} "
                           f"({self.shape[d]}) in the input tensor")
    return aten.view(self, tuple(self.shape[:d]) + tuple(sizes) + tuple(self.shape[d + 1:]))


def atleast_1d(t):
    return reshape(t, (1,)) if t.dim() == 0 else t


def atleast_2d(t):
    if t.dim() == 0:
        return reshape(t, (1, 1))
    if t.dim() == 1:
        return aten.unsqueeze(t, 0)
    return t


def atleast_3d(t):
    """torch's atleast_3d: () -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    if t.dim() == 0:
        return reshape(t, (1, 1, 1))
    if t.dim() == 1:
        return aten.unsqueeze(aten.unsqueeze(t, 0), 2)
    if t.dim() == 2:
        return aten.unsqueeze(t, 2)
    return t


def dstack(tensors):
    return aten.cat([atleast_3d(t) for t in tensors], 2)


def hstack(tensors):
    ts = [t if t.dim() else reshape(t, (1,)) for t in tensors]
    return aten.cat(ts, 0 if ts[0].dim() == 1 else 1)


def vstack(tensors):
    return aten.cat([atleast_2d(t) for t in tensors], 0)


def outer(self, vec2):
    """torch.outer is self.reshape(-1, 1) * vec2 (ViewBackward0 + MulBackward0)."""
    return aten.mul(reshape(self, (self.shape[0], 1)), vec2)


def linear(input, weight, bias=None):  # noqa: A002 - torch spelling
    """torch's linear: addmm for 2-D input with bias; a flattened addmm (view, addmm, view) for other
    contiguous inputs with a 1-D bias; otherwise matmul with weight.t() and an in-place add_ of the bias."""
    ops = aten
    if input.dim() == 0 or weight.dim() == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {input.dim()}D and "
                           f"{weight.dim()}D")
    if input.dim() == 2 and bias is not None:
        return ops.addmm(bias, input, ops.t(weight))
    if bias is not None and input.is_contiguous() and (input.dim() == 3 or bias.dim() == 1):
        sizes = tuple(input.shape)
        flat = reshape(input, (int(np.prod(sizes[:-1])), sizes[-1]))
        out = ops.addmm(bias, flat, ops.t(weight))
        return ops.view(out, sizes[:-1] + (out.shape[1],))
    out = matmul(input, ops.t(weight))
    if bias is not None:
        out = ops.add_(out, bias)
    return out


def einsum(equation, *operands):
    """torch's einsum for explicit or implicit equations without ellipsis or repeated labels: operands are
    unsqueezed and permuted to (output labels, contraction labels), then contracted left to right by
    sumproduct_pair (permute, reshape, bmm, view, permute) and the contraction dims viewed away."""
    ops = aten
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    if "." in eq:
        raise NotImplementedError("derivgen: einsum with an ellipsis is not supported")
    lhs, arrow, rhs = eq.partition("->")
    op_labels = lhs.split(",")
    if len(op_labels) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(operands) > len(op_labels) else
                           "einsum(): fewer operands were provided than specified in the equation")
    counts = {}
    operands = list(operands)
    for i, (labels, op) in enumerate(zip(op_labels, operands)):
        if len(labels) != op.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(labels)}) does not match "
                               f"the number of dimensions ({op.dim()}) for operand {i} and no ellipsis was given")
        for c in labels:
            counts[c] = counts.get(c, 0) + 1
        if len(set(labels)) != len(labels):  # a repeated label takes the diagonal, as torch's einsum
            seen, j = {}, 0
            for c in labels:
                if c in seen:
                    d = seen[c]
                    if op.shape[j] != op.shape[d]:
                        raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but the sizes "
                                           f"don't match, {op.shape[j]} != {op.shape[d]}")
                    op = aten.diagonal(op, 0, d, j)
                    op = aten.permute(op, list(range(d)) + [op.dim() - 1] + list(range(d, op.dim() - 1)))
                else:
                    seen[c] = j
                    j += 1
            operands[i] = op
            op_labels[i] = "".join(seen)
    order = lambda c: (c.islower(), c)  # noqa: E731 - torch orders labels A-Z then a-z
    out_labels = list(rhs) if arrow else sorted((c for c in counts if counts[c] == 1), key=order)
    perm_index = {c: i for i, c in enumerate(out_labels)}
    n_out = len(out_labels)
    for c in sorted(counts, key=order):
        if c not in perm_index:
            perm_index[c] = len(perm_index)
    total = len(perm_index)
    dim_counts = [0] * total
    sizes = {}
    permuted = []
    for labels, op in zip(op_labels, operands):
        perm = [-1] * total
        dim = 0
        for c, size in zip(labels, op.shape):
            if size != 1:
                if sizes.get(c, 1) not in (1, size):
                    raise RuntimeError(f"einsum(): subscript {c} has size {size} for operand {len(permuted)} which "
                                       f"does not broadcast with previously seen size {sizes[c]}")
                sizes[c] = size
                dim_counts[perm_index[c]] += 1
            perm[perm_index[c]] = dim
            dim += 1
        for k in range(total):
            if perm[k] == -1:
                op = ops.unsqueeze(op, dim)
                perm[k] = dim
                dim += 1
        permuted.append(ops.permute(op, tuple(perm)))
    while len(permuted) > 1:
        a, b = permuted.pop(0), permuted.pop(0)
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(n_out, total):
            sa, sb = a.shape[d] != 1, b.shape[d] != 1
            if sa and sb:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if sa:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif sb:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = ops.sum(a, a_sum, True)
        if b_sum:
            b = ops.sum(b, b_sum, True)
        permuted.insert(0, _sumproduct_pair(a, b, sum_dims))
    result = permuted[0]
    if total > n_out:
        if len(operands) > 1:
            return ops.view(result, tuple(result.shape[:n_out]))
        return ops.sum(result, list(range(n_out, total)))
    return result


def _sumproduct_pair(left, right, sum_dims):
    """(left * right).sum(sum_dims, keepdim=True) by permute, reshape, bmm, view and permute (torch's)."""
    ops = aten
    if not sum_dims:
        return ops.mul(left, right)
    ndim = left.dim()
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = ops.sum(left, [i], True)
            elif sr:
                right = ops.sum(right, [i], True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    if lo and ro and ro[-1] < lo[0]:
        left, right = right, left
        lo, ro = ro, lo
        lo_size, ro_size = ro_size, lo_size
    out_size = [left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims) + \
        [right.shape[d] for d in ro]
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [-1] * len(out_size)
    for i, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = i
    left = reshape(ops.permute(left, tuple(lperm)), (lro_size, lo_size, sum_size))
    right = reshape(ops.permute(right, tuple(rperm)), (lro_size, sum_size, ro_size))
    result = ops.bmm(left, right)
    return ops.permute(ops.view(result, tuple(out_size)), tuple(operm))


def dropout(input, p=0.5, train=True, generator=None):  # noqa: A002 - torch spelling
    """torch's CPU dropout: ``input * (bernoulli(1 - p) / (1 - p))`` (MulBackward0; the mask has no grad).
    ``generator`` (a ``derivgen.Generator``, such as ``derivgen.manual_seed`` returns, or a numpy Generator)
    makes the mask reproducible."""
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0:
        return input
    rng = numpy_generator(generator)
    dt = input._array.dtype
    if p == 1:
        noise = np.zeros(input._array.shape, dt)
    else:
        noise = (rng.random(input._array.shape) >= p).astype(dt) / dt.type(1 - p)
    return aten.mul(input, Tensor._make(noise))


def softmax(self, dim, dtype=None):
    x = to(self, dtype) if dtype is not None else self
    return aten._softmax(x, dim, False)


def log_softmax(self, dim, dtype=None):
    x = to(self, dtype) if dtype is not None else self
    return aten._log_softmax(x, dim, False)


def where_method(self, condition, other):
    """``Tensor.where(condition, other)`` is ``where(condition, self, other)``."""
    return aten.where(condition, self, other)


def _binary_or_reduction(reduce_name, binary_name):
    def fn(self, *args, **kwargs):
        other = args[0] if args else kwargs.get("other")
        if isinstance(other, Tensor) and len(args) <= 1 and set(kwargs) <= {"other"}:
            return getattr(aten, binary_name)(self, other)  # torch.max(a, b) is maximum (MaximumBackward0)
        return getattr(aten, reduce_name)(self, *args, **kwargs)
    fn.__name__ = reduce_name
    fn.__doc__ = f"``{reduce_name}`` over all elements or a dim (namedtuple), or ``{binary_name}`` of two tensors."
    return fn


max_or_maximum = _binary_or_reduction("max", "maximum")
min_or_minimum = _binary_or_reduction("min", "minimum")


def swapdims(self, dim0, dim1):
    """torch's alias of ``transpose`` (TransposeBackward0); ``swapaxes`` is another name for it."""
    return aten.transpose(self, dim0, dim1)


def swapdims_(self, dim0, dim1):
    """torch's alias of ``transpose_`` (TransposeBackward1)."""
    return aten.transpose_(self, dim0, dim1)


# Composite functions exposed as ``derivgen.<name>`` and as Tensor methods (installed by operators.install).
FUNCTIONS = {
    "reshape": reshape, "matmul": _with_out("matmul", matmul), "flatten": flatten, "square": square, "selu": selu, "selu_": selu_,
    "var": var,
    "std": std, "var_mean": var_mean, "std_mean": std_mean, "norm": norm, "split": split, "chunk": chunk,
    "unsafe_chunk": unsafe_chunk,
    "tensor_split": tensor_split, "narrow": narrow, "unflatten": unflatten, "hstack": hstack, "vstack": vstack,
    "dstack": dstack, "atleast_3d": atleast_3d,
    "outer": outer, "einsum": einsum, "atleast_1d": atleast_1d, "atleast_2d": atleast_2d, "dropout": dropout,
    "softmax": softmax, "log_softmax": log_softmax, "max": max_or_maximum, "min": min_or_minimum,
    "swapdims": swapdims, "swapaxes": swapdims,
}
from derivgen.ops.resize import resize_, resize_as_  # noqa: E402  (Tensor methods only)
from derivgen.ops.tensor_set import set_  # noqa: E402  (a Tensor method only)
from derivgen.ops.factories import NEW_METHODS  # noqa: E402  (Tensor methods only)

METHODS = {
    "resize_": resize_, "resize_as_": resize_as_, "set_": set_,
    "reshape": reshape, "flatten": flatten, "expand_as": expand_as, "view_as": view_as,
    "reshape_as": reshape_as, "type_as": type_as, "contiguous": contiguous, "to": to, "matmul": matmul,
    "square": square, "var": var, "std": std, "norm": norm, "split": split, "chunk": chunk,
    "unsafe_chunk": unsafe_chunk,
    "tensor_split": tensor_split, "narrow": narrow, "unflatten": unflatten, "outer": outer,
    "softmax": softmax, "log_softmax": log_softmax, "where": where_method, "max": max_or_maximum, "min": min_or_minimum,
    "swapdims": swapdims, "swapaxes": swapdims, "swapdims_": swapdims_, "swapaxes_": swapdims_,
}
METHODS.update(NEW_METHODS)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(t):
    return t.numel()
