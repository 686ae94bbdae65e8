"""Op coverage at PyTorch parity: each case runs one Python expression under torch and under derivgen on
the same inputs and compares forward values, the graph (node names and edges, breadth-first from the
outputs) and every gradient, in float32 and float64. See tests/support/parity.py."""
import math

import pytest

from tests.support.parity import Case, E, I, Idx, Mask, compare_case, torch

if torch is None:  # pragma: no cover
    pytest.skip("SKIPPED LOUDLY: PyTorch (the oracle of the parity tests) is not installed; install the CPU "
                "wheel to run tests/parity/test_parity_ops.py", allow_module_level=True)

X = I(3, 4)
Y = I(3, 4)
POS = I(3, 4, kind="pos")
UNIT = I(3, 4, kind="unit")
KINKS = E([[-2.0, -1.0, -0.5, 0.0], [0.5, 1.0, 2.0, 3.0], [-3.0, 6.0, -6.0, 0.25]])
TAILS = E([[-100.0, -30.0, -20.0, 0.0], [20.0, 30.0, 100.0, 1e-3]])

UNARY = [
    ("abs", lambda T, F, x: x.abs(), [X]), ("abs-kinks", lambda T, F, x: T.abs(x), [KINKS]),
    ("neg", lambda T, F, x: -x, [X]), ("neg-fn", lambda T, F, x: T.neg(x), [X]),
    ("exp", lambda T, F, x: x.exp(), [X]), ("exp2", lambda T, F, x: x.exp2(), [X]),
    ("expm1", lambda T, F, x: T.expm1(x), [X]), ("log", lambda T, F, x: x.log(), [POS]),
    ("log2", lambda T, F, x: x.log2(), [POS]), ("log10", lambda T, F, x: T.log10(x), [POS]),
    ("log1p", lambda T, F, x: x.log1p(), [POS]), ("sqrt", lambda T, F, x: x.sqrt(), [POS]),
    ("rsqrt", lambda T, F, x: x.rsqrt(), [POS]), ("reciprocal", lambda T, F, x: x.reciprocal(), [I(3, 4, kind="nonzero")]),
    ("square", lambda T, F, x: x.square(), [X]), ("square-fn", lambda T, F, x: T.square(x), [X]),
    ("sin", lambda T, F, x: x.sin(), [X]), ("cos", lambda T, F, x: x.cos(), [X]), ("tan", lambda T, F, x: x.tan(), [UNIT]),
    ("asin", lambda T, F, x: x.asin(), [UNIT]), ("acos", lambda T, F, x: x.acos(), [UNIT]),
    ("atan", lambda T, F, x: x.atan(), [X]), ("sinh", lambda T, F, x: x.sinh(), [X]),
    ("cosh", lambda T, F, x: x.cosh(), [X]), ("tanh", lambda T, F, x: x.tanh(), [X]),
    ("tanh-tails", lambda T, F, x: x.tanh(), [TAILS]),
    ("asinh", lambda T, F, x: x.asinh(), [X]), ("acosh", lambda T, F, x: x.acosh(), [I(3, 4, kind="gt1")]),
    ("atanh", lambda T, F, x: x.atanh(), [UNIT]), ("sigmoid", lambda T, F, x: x.sigmoid(), [X]),
    ("sigmoid-tails", lambda T, F, x: T.sigmoid(x), [TAILS]),
    ("logit", lambda T, F, x: x.logit(), [I(3, 4, kind="prob")]),
    ("logit-eps", lambda T, F, x: x.logit(eps=0.1), [I(3, 4, kind="prob")]),
    ("erf", lambda T, F, x: x.erf(), [X]), ("erfc", lambda T, F, x: T.erfc(x), [X]),
    ("sign", lambda T, F, x: x.sign(), [KINKS]), ("floor", lambda T, F, x: x.floor(), [X]),
    ("ceil", lambda T, F, x: x.ceil(), [X]), ("round", lambda T, F, x: x.round(), [X]),
    ("round-decimals", lambda T, F, x: x.round(decimals=2), [X]), ("trunc", lambda T, F, x: x.trunc(), [X]),
    ("frac", lambda T, F, x: x.frac(), [X]),
    ("clamp", lambda T, F, x: x.clamp(-0.5, 0.5), [X]), ("clamp-min", lambda T, F, x: x.clamp(min=0), [KINKS]),
    ("clamp-max", lambda T, F, x: T.clamp(x, max=0.5), [KINKS]),
    ("clamp-tensor", lambda T, F, x, lo: x.clamp(min=lo), [X, Y]),
    ("clamp-tensor-both", lambda T, F, x, lo, hi: T.clamp(x, lo, hi), [X, I(3, 4), I(4)]),
    ("clamp_min", lambda T, F, x: T.clamp_min(x, 0.1), [KINKS]), ("clamp_max", lambda T, F, x: x.clamp_max(0.1), [KINKS]),
    ("pow-scalar", lambda T, F, x: x ** 2, [X]), ("pow-method", lambda T, F, x: x.pow(3), [X]),
    ("pow-frac", lambda T, F, x: x ** 0.5, [POS]), ("pow-tensor", lambda T, F, x, y: x ** y, [POS, Y]),
    ("rpow", lambda T, F, x: 2 ** x, [X]), ("pow-fn-scalar-base", lambda T, F, x: T.pow(2, x), [X]),
    ("relu", lambda T, F, x: x.relu(), [KINKS]), ("relu-F", lambda T, F, x: F.relu(x), [X]),
    ("gelu", lambda T, F, x: F.gelu(x), [KINKS]), ("gelu-tanh", lambda T, F, x: F.gelu(x, approximate="tanh"), [KINKS]),
    ("silu", lambda T, F, x: F.silu(x), [KINKS]), ("silu-tails", lambda T, F, x: F.silu(x), [TAILS]),
    ("mish", lambda T, F, x: F.mish(x), [KINKS]), ("softplus", lambda T, F, x: F.softplus(x), [KINKS]),
    ("softplus-beta", lambda T, F, x: F.softplus(x, beta=2, threshold=3), [KINKS]),
    ("softplus-tails", lambda T, F, x: F.softplus(x), [TAILS]),
    ("elu", lambda T, F, x: F.elu(x), [KINKS]), ("elu-alpha", lambda T, F, x: F.elu(x, alpha=0.5), [X]),
    ("selu", lambda T, F, x: F.selu(x), [KINKS]), ("celu", lambda T, F, x: F.celu(x, 2.0), [KINKS]),
    ("leaky_relu", lambda T, F, x: F.leaky_relu(x), [KINKS]),
    ("leaky_relu-slope", lambda T, F, x: F.leaky_relu(x, 0.2), [X]),
    ("hardtanh", lambda T, F, x: F.hardtanh(x), [KINKS]), ("relu6", lambda T, F, x: F.relu6(x), [KINKS]),
    ("hardsigmoid", lambda T, F, x: F.hardsigmoid(x), [KINKS]), ("hardswish", lambda T, F, x: F.hardswish(x), [KINKS]),
    ("nan_to_num", lambda T, F, x: T.nan_to_num(x, nan=0.5), [E([[math.nan, math.inf, -math.inf, 1.5]])]),
    ("nan_to_num-default", lambda T, F, x: x.nan_to_num(), [E([[math.nan, 2.0, -math.inf, 1.5]])]),
]

BINARY = [
    ("add", lambda T, F, x, y: x + y, [X, Y]), ("add-bcast", lambda T, F, x, y: x + y, [I(3, 1), I(4)]),
    ("add-alpha", lambda T, F, x, y: T.add(x, y, alpha=2), [X, Y]), ("add-number", lambda T, F, x: x + 2, [X]),
    ("radd", lambda T, F, x: 2 + x, [X]), ("sub", lambda T, F, x, y: x - y, [X, I(4)]),
    ("sub-alpha", lambda T, F, x, y: x.sub(y, alpha=0.5), [X, Y]), ("rsub", lambda T, F, x: 2 - x, [X]),
    ("sub-number", lambda T, F, x: x - 2, [X]), ("mul", lambda T, F, x, y: x * y, [X, I(1, 4)]),
    ("mul-number", lambda T, F, x: x * 3, [X]), ("rmul", lambda T, F, x: 3 * x, [X]),
    ("div", lambda T, F, x, y: x / y, [X, I(3, 4, kind="nonzero")]), ("div-number", lambda T, F, x: x / 2, [X]),
    ("rdiv", lambda T, F, x: 2 / x, [I(3, 4, kind="nonzero")]),
    ("div-floor", lambda T, F, x, y: T.div(x, y, rounding_mode="floor"), [X, I(3, 4, kind="nonzero")]),
    ("div-trunc-number", lambda T, F, x: T.div(x, 0.3, rounding_mode="trunc"), [X]),
    ("div-mode-none", lambda T, F, x, y: x.div(y, rounding_mode=None), [X, I(3, 4, kind="nonzero")]),
    ("maximum", lambda T, F, x, y: T.maximum(x, y), [X, Y]),
    ("maximum-ties", lambda T, F, x, y: T.maximum(x, y), [E([1.0, 2.0, 3.0]), E([1.0, 0.0, 3.0])]),
    ("minimum", lambda T, F, x, y: T.minimum(x, y), [X, I(4)]),
    ("fmax", lambda T, F, x, y: T.fmax(x, y), [E([1.0, math.nan, 3.0, 0.0]), E([2.0, 1.0, math.nan, 0.0])]),
    ("fmin", lambda T, F, x, y: T.fmin(x, y), [E([1.0, math.nan, 3.0, -1.0]), E([2.0, 1.0, math.nan, 0.0])]),
    ("atan2", lambda T, F, x, y: T.atan2(x, y), [X, Y]), ("hypot", lambda T, F, x, y: T.hypot(x, y), [X, Y]),
    ("remainder", lambda T, F, x, y: T.remainder(x, y), [X, I(3, 4, kind="nonzero")]),
    ("remainder-number", lambda T, F, x: T.remainder(x, 0.7), [X]), ("mod", lambda T, F, x: x % 0.7, [X]),
    ("fmod", lambda T, F, x, y: T.fmod(x, y), [X, I(3, 4, kind="nonzero")]),
    ("fmod-number", lambda T, F, x: x.fmod(0.7), [X]),
    ("where", lambda T, F, x, y: T.where(x > 0, x, y), [X, Y]),
    ("where-number", lambda T, F, x: T.where(x > 0, x, 0.0), [X]),
    ("where-bcast", lambda T, F, c, x, y: T.where(c, x, y), [Mask(3, 4), I(4), I(3, 1)]),
    ("where-method", lambda T, F, x, y: x.where(x > 0, y), [X, Y]),
    ("max-binary", lambda T, F, x, y: T.max(x, y), [X, Y]), ("min-binary-method", lambda T, F, x, y: x.min(y), [X, Y]),
    ("lerp", lambda T, F, x, y: T.lerp(x, y, 0.3), [X, Y]), ("lerp-big", lambda T, F, x, y: x.lerp(y, 0.8), [X, Y]),
    ("lerp-tensor", lambda T, F, x, y, w: T.lerp(x, y, w), [X, Y, I(3, 4, kind="prob")]),
    ("addcmul", lambda T, F, x, y, z: T.addcmul(x, y, z, value=2), [X, Y, I(4)]),
    ("addcdiv", lambda T, F, x, y, z: x.addcdiv(y, z, value=0.5), [X, Y, I(3, 4, kind="nonzero")]),
    ("eq", lambda T, F, x, y: x == y, [E([1.0, 2.0]), E([1.0, 3.0])]), ("ne", lambda T, F, x: x != 2.0, [E([1.0, 2.0])]),
    ("lt", lambda T, F, x, y: x < y, [X, Y]), ("le", lambda T, F, x, y: T.le(x, y), [X, Y]),
    ("gt-number", lambda T, F, x: x > 0, [X]), ("ge", lambda T, F, x, y: x.ge(y), [X, Y]),
]


TIES = E([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, -1.0, 2.0], [0.5, -4.0, 0.5, 0.25]])
ZEROS = E([[1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 3.0, 0.5], [2.0, -0.5, 1.5, 1.25]])
B3 = I(2, 3, 4)

REDUCTIONS = [
    ("sum", lambda T, F, x: x.sum(), [X]), ("sum-dim", lambda T, F, x: x.sum(0), [X]),
    ("sum-dims-keepdim", lambda T, F, x: T.sum(x, (0, 2), keepdim=True), [B3]),
    ("mean", lambda T, F, x: x.mean(), [X]), ("mean-dim", lambda T, F, x: x.mean(1, keepdim=True), [X]),
    ("mean-dims", lambda T, F, x: x.mean((0, 1)), [B3]),
    ("prod", lambda T, F, x: x.prod(), [X]), ("prod-zero", lambda T, F, x: x.prod(), [ZEROS]),
    ("prod-dim", lambda T, F, x: x.prod(1), [X]), ("prod-dim-zeros", lambda T, F, x: T.prod(x, 0, keepdim=True), [ZEROS]),
    ("max", lambda T, F, x: x.max(), [X]), ("max-ties", lambda T, F, x: x.max(), [TIES]),
    ("max-dim", lambda T, F, x: x.max(1), [X]), ("max-dim-keepdim", lambda T, F, x: T.max(x, 0, keepdim=True), [X]),
    ("max-dim-values", lambda T, F, x: x.max(dim=1).values, [X]),
    ("min", lambda T, F, x: x.min(), [TIES]), ("min-dim", lambda T, F, x: x.min(0)[0], [X]),
    ("min-dim-indices", lambda T, F, x: x.min(1).indices, [X]),
    ("amax", lambda T, F, x: x.amax(1), [TIES]), ("amin", lambda T, F, x: T.amin(x, (0, 1)), [TIES]),
    ("amax-keepdim", lambda T, F, x: x.amax(0, keepdim=True), [TIES]),
    ("argmax", lambda T, F, x: x.argmax(1), [X]), ("argmin", lambda T, F, x: T.argmin(x), [X]),
    ("argmax-keepdim", lambda T, F, x: x.argmax(0, keepdim=True), [X]),
    ("logsumexp", lambda T, F, x: x.logsumexp(1), [X]), ("logsumexp-dims", lambda T, F, x: T.logsumexp(x, (0, 1)), [X]),
    ("logsumexp-keepdim", lambda T, F, x: x.logsumexp(0, keepdim=True), [X]),
    ("var", lambda T, F, x: x.var(), [X]), ("var-dim", lambda T, F, x: x.var(1), [X]),
    ("var-unbiased-false", lambda T, F, x: x.var(1, unbiased=False, keepdim=True), [X]),
    ("var-correction", lambda T, F, x: T.var(x, (0, 1), correction=0), [B3]),
    ("std", lambda T, F, x: x.std(), [X]), ("std-dim", lambda T, F, x: x.std(0, keepdim=True), [X]),
    ("std-correction2", lambda T, F, x: x.std(1, correction=2), [X]),
    ("var_mean", lambda T, F, x: T.var_mean(x, 1), [X]), ("std_mean", lambda T, F, x: T.std_mean(x), [X]),
    ("std_mean-dim", lambda T, F, x: T.std_mean(x, 0, keepdim=True), [X]),
    ("norm", lambda T, F, x: x.norm(), [X]), ("norm-p1", lambda T, F, x: x.norm(p=1), [X]),
    ("norm-inf", lambda T, F, x: x.norm(float("inf")), [X]), ("norm-dim", lambda T, F, x: x.norm(dim=1), [X]),
    ("norm-fro", lambda T, F, x: T.norm(x, p="fro"), [X]), ("norm-p3", lambda T, F, x: x.norm(3, dim=0, keepdim=True), [X]),
    ("linalg.norm", lambda T, F, x: T.linalg.norm(x), [I(5)]),
    ("linalg.vector_norm", lambda T, F, x: T.linalg.vector_norm(x, 3, dim=1), [X]),
    ("cumsum", lambda T, F, x: x.cumsum(1), [X]), ("cumsum-0", lambda T, F, x: T.cumsum(x, dim=0), [X]),
    ("cumprod", lambda T, F, x: x.cumprod(1), [X]), ("cumprod-zeros", lambda T, F, x: x.cumprod(1), [ZEROS]),
]

LINALG = [
    ("mm", lambda T, F, a, b: T.mm(a, b), [X, I(4, 5)]), ("mm-noncontig", lambda T, F, a, b: a.mm(b), [I(3, 4, noncontig=True), I(4, 2)]),
    ("bmm", lambda T, F, a, b: T.bmm(a, b), [B3, I(2, 4, 5)]),
    ("mv", lambda T, F, a, v: T.mv(a, v), [X, I(4)]), ("dot", lambda T, F, a, b: a.dot(b), [I(4), I(4)]),
    ("outer", lambda T, F, a, b: T.outer(a, b), [I(3), I(4)]),
    ("matmul-1-1", lambda T, F, a, b: a @ b, [I(4), I(4)]), ("matmul-2-1", lambda T, F, a, b: a @ b, [X, I(4)]),
    ("matmul-1-2", lambda T, F, a, b: a @ b, [I(3), X]), ("matmul-2-2", lambda T, F, a, b: T.matmul(a, b), [X, I(4, 2)]),
    ("matmul-3-1", lambda T, F, a, b: a @ b, [B3, I(4)]), ("matmul-1-3", lambda T, F, a, b: a @ b, [I(3), B3]),
    ("matmul-3-2", lambda T, F, a, b: a @ b, [B3, I(4, 5)]), ("matmul-2-3", lambda T, F, a, b: a @ b, [I(5, 3), B3]),
    ("matmul-3-3", lambda T, F, a, b: a @ b, [B3, I(2, 4, 5)]),
    ("matmul-4-3-bcast", lambda T, F, a, b: a @ b, [I(2, 1, 3, 4), I(5, 4, 2)]),
    ("matmul-3-2-noncontig", lambda T, F, a, b: a.transpose(0, 1) @ b, [B3, I(4, 2)]),
    ("addmm", lambda T, F, c, a, b: T.addmm(c, a, b), [I(3, 5), X, I(4, 5)]),
    ("addmm-bcast-scaled", lambda T, F, c, a, b: T.addmm(c, a, b, beta=0.5, alpha=2), [I(5), X, I(4, 5)]),
    ("baddbmm", lambda T, F, c, a, b: T.baddbmm(c, a, b, alpha=0.5), [I(2, 3, 5), B3, I(2, 4, 5)]),
    ("einsum-mm", lambda T, F, a, b: T.einsum("ij,jk->ik", a, b), [X, I(4, 5)]),
    ("einsum-bmm", lambda T, F, a, b: T.einsum("bij,bjk->bik", a, b), [B3, I(2, 4, 5)]),
    ("einsum-dot", lambda T, F, a, b: T.einsum("i,i->", a, b), [I(4), I(4)]),
    ("einsum-transpose", lambda T, F, a: T.einsum("ij->ji", a), [X]),
    ("einsum-rowdot", lambda T, F, a, b: T.einsum("ij,ij->i", a, b), [X, Y]),
    ("einsum-outer", lambda T, F, a, b: T.einsum("i,j->ij", a, b), [I(3), I(4)]),
    ("einsum-implicit", lambda T, F, a, b: T.einsum("ij,jk", a, b), [X, I(4, 5)]),
    ("einsum-sum", lambda T, F, a: T.einsum("ij->", a), [X]),
    ("einsum-bcast-out", lambda T, F, a, b: T.einsum("ij,kj->ki", a, b), [X, I(5, 4)]),
    ("linear", lambda T, F, x, w: F.linear(x, w), [X, I(5, 4)]),
    ("linear-bias", lambda T, F, x, w, b: F.linear(x, w, b), [X, I(5, 4), I(5)]),
    ("linear-3d-bias", lambda T, F, x, w, b: F.linear(x, w, b), [B3, I(5, 4), I(5)]),
    ("linear-1d-bias", lambda T, F, x, w, b: F.linear(x, w, b), [I(4), I(5, 4), I(5)]),
    ("linear-1d", lambda T, F, x, w: F.linear(x, w), [I(4), I(5, 4)]),
    ("linear-4d-bias", lambda T, F, x, w, b: F.linear(x, w, b), [I(2, 2, 3, 4), I(5, 4), I(5)]),
    ("linear-noncontig-bias", lambda T, F, x, w, b: F.linear(x.transpose(0, 1), w, b), [I(3, 2, 4), I(5, 4), I(5)]),
]

IDX = E([0, 2, 0])
SHAPE = [
    ("view", lambda T, F, x: x.view(12), [X]), ("view-tuple", lambda T, F, x: x.view((2, -1)), [X]),
    ("reshape-view", lambda T, F, x: x.reshape(2, 6), [X]), ("reshape-copy", lambda T, F, x: x.t().reshape(12), [X]),
    ("flatten", lambda T, F, x: x.flatten(), [B3]), ("flatten-1", lambda T, F, x: T.flatten(x, 1), [B3]),
    ("unflatten", lambda T, F, x: x.unflatten(1, (2, 2)), [X]),
    ("permute", lambda T, F, x: x.permute(2, 0, 1), [B3]), ("transpose", lambda T, F, x: x.transpose(0, 1), [X]),
    ("t", lambda T, F, x: x.t(), [X]), ("T", lambda T, F, x: x.T, [X]), ("mT", lambda T, F, x: x.mT, [B3]),
    ("squeeze", lambda T, F, x: x.unsqueeze(1).squeeze(), [X]), ("squeeze-dim", lambda T, F, x: x.squeeze(1), [I(3, 1, 4)]),
    ("squeeze-dims", lambda T, F, x: x.squeeze((0, 1)), [I(1, 1, 4)]),
    ("squeeze_", lambda T, F, x: (x * 1).squeeze_(1), [I(3, 1, 4)]),
    ("unsqueeze", lambda T, F, x: x.unsqueeze(-1), [X]),
    ("expand", lambda T, F, x: x.expand(2, 3, 4), [X]), ("expand-1", lambda T, F, x: x.expand(3, -1), [I(3, 1)]),
    ("expand_as", lambda T, F, x, y: x.expand_as(y), [I(4), Y]),
    ("repeat", lambda T, F, x: x.repeat(2, 1), [X]), ("repeat-lead", lambda T, F, x: x.repeat(2, 1, 3), [X]),
    ("cat", lambda T, F, x, y: T.cat([x, y]), [X, I(2, 4)]), ("cat-1", lambda T, F, x, y: T.cat((x, y), 1), [X, I(3, 2)]),
    ("stack", lambda T, F, x, y: T.stack([x, y], 1), [X, Y]),
    ("hstack", lambda T, F, x, y: T.hstack([x, y]), [X, Y]), ("vstack", lambda T, F, x, y: T.vstack([x, y]), [X, Y]),
    ("hstack-1d", lambda T, F, x, y: T.hstack([x, y]), [I(3), I(4)]), ("vstack-1d", lambda T, F, x, y: T.vstack([x, y]), [I(4), I(4)]),
    ("split", lambda T, F, x: x.split(2, 1), [X]), ("split-uneven", lambda T, F, x: T.split(x, 2), [I(5, 2)]),
    ("split-list", lambda T, F, x: x.split([1, 3], 1), [X]), ("chunk", lambda T, F, x: x.chunk(2, 1), [X]),
    ("chunk-uneven", lambda T, F, x: T.chunk(x, 3, 0), [I(5, 2)]),
    ("unbind", lambda T, F, x: x.unbind(1), [X]), ("unbind-fn", lambda T, F, x: T.unbind(x), [X]),
    ("tensor_split", lambda T, F, x: x.tensor_split(3, 1), [X]),
    ("tensor_split-list", lambda T, F, x: T.tensor_split(x, [1, 2], 1), [X]),
    ("narrow", lambda T, F, x: x.narrow(1, 1, 2), [X]), ("select", lambda T, F, x: x.select(1, 2), [X]),
    ("getitem-int", lambda T, F, x: x[1], [X]), ("getitem-col", lambda T, F, x: x[:, 2], [X]),
    ("getitem-step", lambda T, F, x: x[1:5:2], [I(6, 2)]), ("getitem-none", lambda T, F, x: x[..., None], [X]),
    ("getitem-step2", lambda T, F, x: x[:, ::2], [X]), ("getitem-neg", lambda T, F, x: x[-1, 1:], [X]),
    ("getitem-tensor", lambda T, F, x, i: x[i], [X, Idx(4, hi=3)]),
    ("getitem-tensor-col", lambda T, F, x, i: x[:, i], [X, Idx(2, hi=4)]),
    ("getitem-mask", lambda T, F, x: x[x > 0], [X]), ("getitem-list", lambda T, F, x: x[[0, 2], [1, 3]], [X]),
    ("getitem-tensor-dup", lambda T, F, x, i: x[i], [X, IDX]),
    ("getitem-slice-tensor", lambda T, F, x, i: x[1:, i], [X, Idx(3, hi=4)]),
    ("gather", lambda T, F, x, i: x.gather(1, i), [X, Idx(3, 2, hi=4)]),
    ("gather-small", lambda T, F, x, i: T.gather(x, 0, i), [X, Idx(2, 4, hi=3)]),
    ("scatter", lambda T, F, x, i, y: x.scatter(1, i, y), [X, E([[0], [1], [2]]), I(3, 1)]),
    ("scatter-value", lambda T, F, x, i: x.scatter(1, i, 2.0), [X, E([[0], [1], [2]])]),
    ("scatter_add", lambda T, F, x, i, y: x.scatter_add(1, i, y), [X, Idx(3, 6, hi=4), I(3, 6)]),
    ("index_select", lambda T, F, x, i: x.index_select(1, i), [X, IDX]),
    ("index_add", lambda T, F, x, i, y: x.index_add(1, i, y), [X, IDX, I(3, 3)]),
    ("index_add-alpha", lambda T, F, x, i, y: T.index_add(x, 0, i, y, alpha=2), [X, IDX, I(3, 4)]),
    ("masked_fill", lambda T, F, x, m: x.masked_fill(m, 0.0), [X, Mask(3, 4)]),
    ("masked_fill-bcast", lambda T, F, x, m: x.masked_fill(m, -1.0), [X, Mask(4)]),
    ("masked_fill-tensor", lambda T, F, x, m, v: x.masked_fill(m, v), [X, Mask(3, 4), E(1.5)]),
    ("flip", lambda T, F, x: x.flip(0), [X]), ("flip-dims", lambda T, F, x: T.flip(x, (0, 2)), [B3]),
    ("roll", lambda T, F, x: x.roll(1, 1), [X]), ("roll-flat", lambda T, F, x: x.roll(5), [X]),
    ("roll-dims", lambda T, F, x: x.roll((1, -2), (0, 1)), [X]),
    ("tril", lambda T, F, x: x.tril(), [X]), ("triu", lambda T, F, x: T.triu(x, 1), [X]),
    ("tril-batch", lambda T, F, x: x.tril(-1), [B3]),
    ("diagonal", lambda T, F, x: x.diagonal(), [X]), ("diagonal-offset", lambda T, F, x: T.diagonal(x, 1, 1, 2), [B3]),
    ("diagonal-neg", lambda T, F, x: x.diagonal(-1), [X]),
    ("pad", lambda T, F, x: F.pad(x, (1, 2)), [X]), ("pad-value", lambda T, F, x: F.pad(x, (1, 1, 2, 0), value=1.0), [X]),
    ("pad-negative", lambda T, F, x: F.pad(x, (-1, 1)), [X]),
    ("contiguous", lambda T, F, x: x.t().contiguous(), [X]), ("contiguous-noop", lambda T, F, x: (x * 1).contiguous(), [X]),
    ("clone", lambda T, F, x: x.clone(), [X]),
]

MULTI = [
    ("sort", lambda T, F, x: x.sort(1), [X]), ("sort-desc", lambda T, F, x: T.sort(x, 0, descending=True), [X]),
    ("sort-values-only", lambda T, F, x: x.sort().values, [X]),
    ("topk", lambda T, F, x: x.topk(2, 1), [X]), ("topk-smallest", lambda T, F, x: T.topk(x, 2, 0, largest=False), [X]),
    ("split-all-used", lambda T, F, x: sum(p.sum() for p in x.split(1, 0)), [X]),
    ("split-one-unused", lambda T, F, x: x.split(1, 0)[1] * 2, [X]),
    ("chunk-two-of-three", lambda T, F, x: (lambda c: c[0] + c[2])(x.chunk(3, 0)), [X]),
    ("unbind-one-used", lambda T, F, x: x.unbind(1)[3].exp(), [X]),
    ("max-values-and-reuse", lambda T, F, x: (lambda m: m.values * x.sum(1))(x.max(1)), [X]),
    ("var_mean-only-mean", lambda T, F, x: T.var_mean(x, 1)[1] * 3, [X]),
    ("var_mean-only-var", lambda T, F, x: T.var_mean(x, 0)[0].exp(), [X]),
    ("std_mean-both", lambda T, F, x: (lambda r: r[0] * r[1])(T.std_mean(x, 1)), [X]),
    ("topk-then-sort", lambda T, F, x: x.topk(3, 1).values.sort(1).values, [X]),
]

TGT = E([1, 0, 3])
PROBS = E([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25], [0.7, 0.1, 0.1, 0.1]])
NN = [
    ("softmax", lambda T, F, x: F.softmax(x, 1), [X]), ("softmax-0", lambda T, F, x: T.softmax(x, 0), [X]),
    ("log_softmax", lambda T, F, x: F.log_softmax(x, 1), [X]), ("log_softmax-3d", lambda T, F, x: F.log_softmax(x, -1), [B3]),
    ("sigmoid-F", lambda T, F, x: F.sigmoid(x), [X]), ("tanh-F", lambda T, F, x: F.tanh(x), [X]),
    ("dropout-eval", lambda T, F, x: F.dropout(x, 0.5, training=False), [X]),
    ("mse_loss", lambda T, F, x, y: F.mse_loss(x, y), [X, Y]),
    ("mse_loss-sum", lambda T, F, x, y: F.mse_loss(x, y, reduction="sum"), [X, Y]),
    ("mse_loss-none", lambda T, F, x, y: F.mse_loss(x, y, reduction="none"), [X, Y]),
    ("l1_loss", lambda T, F, x, y: F.l1_loss(x, y), [X, Y]), ("l1_loss-none", lambda T, F, x, y: F.l1_loss(x, y, reduction="none"), [X, Y]),
    ("smooth_l1_loss", lambda T, F, x, y: F.smooth_l1_loss(x, y), [X, Y]),
    ("smooth_l1_loss-beta", lambda T, F, x, y: F.smooth_l1_loss(x, y, beta=0.5, reduction="sum"), [X, Y]),
    ("huber_loss", lambda T, F, x, y: F.huber_loss(x, y, delta=0.7), [X, Y]),
    ("huber_loss-none", lambda T, F, x, y: F.huber_loss(x, y, reduction="none"), [X, Y]),
    ("nll_loss", lambda T, F, x, t: F.nll_loss(x, t), [X, TGT]),
    ("nll_loss-weight-ignore-sum", lambda T, F, x, t, w: F.nll_loss(x, t, weight=w, ignore_index=0, reduction="sum"),
     [X, TGT, I(4, kind="pos", grad=False)]),
    ("nll_loss-weight-mean", lambda T, F, x, t, w: F.nll_loss(x, t, weight=w), [X, TGT, I(4, kind="pos", grad=False)]),
    ("nll_loss-none", lambda T, F, x, t: F.nll_loss(x, t, reduction="none"), [X, TGT]),
    ("nll_loss-1d", lambda T, F, x, t: F.nll_loss(x, t), [I(4), E(2)]),
    ("cross_entropy", lambda T, F, x, t: F.cross_entropy(x, t), [X, TGT]),
    ("cross_entropy-smoothing", lambda T, F, x, t: F.cross_entropy(x, t, label_smoothing=0.1), [X, TGT]),
    ("cross_entropy-smoothing-ignore", lambda T, F, x, t: F.cross_entropy(x, t, ignore_index=0, label_smoothing=0.2),
     [X, TGT]),
    ("cross_entropy-smoothing-weight", lambda T, F, x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.1),
     [X, TGT, I(4, kind="pos", grad=False)]),
    ("cross_entropy-probs", lambda T, F, x, t: F.cross_entropy(x, t), [X, PROBS]),
    ("cross_entropy-probs-smoothing", lambda T, F, x, t: F.cross_entropy(x, t, label_smoothing=0.1), [X, PROBS]),
    ("cross_entropy-probs-none", lambda T, F, x, t: F.cross_entropy(x, t, reduction="none"), [X, PROBS]),
    ("binary_cross_entropy", lambda T, F, p, t: F.binary_cross_entropy(p, t), [I(3, 4, kind="prob"), I(3, 4, kind="prob", grad=False)]),
    ("binary_cross_entropy-weight", lambda T, F, p, t, w: F.binary_cross_entropy(p, t, weight=w, reduction="sum"),
     [I(3, 4, kind="prob"), I(3, 4, kind="prob"), I(4, kind="pos", grad=False)]),
    ("bce_with_logits", lambda T, F, x, t: F.binary_cross_entropy_with_logits(x, t), [X, I(3, 4, kind="prob", grad=False)]),
    ("bce_with_logits-pos_weight", lambda T, F, x, t, w: F.binary_cross_entropy_with_logits(x, t, pos_weight=w),
     [X, I(3, 4, kind="prob"), I(4, kind="pos", grad=False)]),
    ("kl_div-batchmean", lambda T, F, x, t: F.kl_div(F.log_softmax(x, 1), t, reduction="batchmean"), [X, PROBS]),
    ("kl_div-sum", lambda T, F, x, t: F.kl_div(x, t, reduction="sum"), [X, PROBS]),
    ("kl_div-log_target", lambda T, F, x, y: F.kl_div(x, F.log_softmax(y, 1), reduction="sum", log_target=True), [X, Y]),
    ("layer_norm", lambda T, F, x: F.layer_norm(x, (4,)), [X]),
    ("layer_norm-affine", lambda T, F, x, w, b: F.layer_norm(x, (4,), w, b), [X, I(4), I(4)]),
    ("layer_norm-2d", lambda T, F, x, w: F.layer_norm(x, (3, 4), w), [B3, I(3, 4)]),
    ("normalize", lambda T, F, x: F.normalize(x), [X]), ("normalize-p1", lambda T, F, x: F.normalize(x, p=1, dim=0), [X]),
    ("one_hot", lambda T, F, t: F.one_hot(t), [TGT]), ("one_hot-n", lambda T, F, t: F.one_hot(t, 5), [TGT]),
    ("embedding", lambda T, F, t, w: F.embedding(t, w), [E([[1, 0, 3], [3, 3, 2]]), I(4, 5)]),
    ("embedding-padding", lambda T, F, t, w: F.embedding(t, w, padding_idx=3), [E([[1, 0, 3], [3, 3, 2]]), I(4, 5)]),
    ("xlogy", lambda T, F, x, y: T.xlogy(x, y), [E([0.0, 1.0, 2.0, 0.0]), E([0.5, 2.0, 3.0, 0.0])]),
]

INPLACE = [
    ("add_", lambda T, F, x, y: (x * 1).add_(y), [X, Y]), ("sub_", lambda T, F, x: (x * 1).sub_(2), [X]),
    ("mul_", lambda T, F, x, y: (x * 1).mul_(y), [X, Y]), ("div_", lambda T, F, x: (x * 1).div_(2), [X]),
    ("iadd", lambda T, F, x, y: (lambda z: (z.__iadd__(y), z)[1])(x * 1), [X, I(4)]),
    ("clamp_", lambda T, F, x: (x * 1).clamp_(0, 1), [X]), ("clamp_-min", lambda T, F, x: (x * 1).clamp_(min=0.5), [X]),
    ("zero_", lambda T, F, x: (x * 1).zero_(), [X]), ("fill_", lambda T, F, x: (x * 1).fill_(2.0), [X]),
    ("fill_-tensor", lambda T, F, x, v: (x * 1).fill_(v), [X, E(3.0)]),
    ("masked_fill_", lambda T, F, x: (lambda z: z.masked_fill_(z > 0, 0.0))(x * 1), [X]),
    ("inplace-then-use", lambda T, F, x: (lambda z: (z.mul_(2), z * z)[1])(x.sin()), [X]),
    ("squeeze_-then-mm", lambda T, F, v, m: v @ m, [I(3), X]),
    ("relu_", lambda T, F, x: (x * 1).relu_(), [KINKS]), ("sigmoid_", lambda T, F, x: (x * 1).sigmoid_(), [X]),
    ("exp_", lambda T, F, x: (x * 1).exp_(), [X]), ("pow_", lambda T, F, x: (x * 1).pow_(2), [X]),
    ("F.relu-inplace", lambda T, F, x: F.relu(x * 1, inplace=True), [X]),
    ("copy_", lambda T, F, x, y: (x * 1).copy_(y), [X, Y]),
    ("copy_-bcast", lambda T, F, x, y: (x * 1).copy_(y), [X, I(4)]),
    ("setitem-select", lambda T, F, x, y: _setitem(x * 1, 1, y[0]), [X, Y]),
    ("setitem-number", lambda T, F, x: _setitem(x * 1, (slice(None), 1), 0.0), [X]),
    ("setitem-slice", lambda T, F, x, y: _setitem(x * 1, slice(0, 2), y), [X, I(2, 4)]),
    ("setitem-mask", lambda T, F, x: (lambda z: _setitem(z, z > 0, 0.0))(x * 1), [X]),
    ("setitem-index", lambda T, F, x, y: _setitem(x * 1, T.tensor([0, 2]), y), [X, I(2, 4)]),
    ("setitem-leaf-no-grad", lambda T, F, x, y: (lambda z: (_setitem(z, 1, y[0]), z * x)[1])(T.zeros(3, 4, dtype=x.dtype)),
     [X, Y]),
    ("view-inplace", lambda T, F, x: (lambda z: (z[0].mul_(2), z)[1])(x * 1), [X]),
    ("view-inplace-t", lambda T, F, x, y: (lambda z: (z.t().add_(y), z)[1])(x * 1), [X, I(4, 3)]),
    ("view-inplace-then-view", lambda T, F, x: (lambda z: (lambda v: (v.add_(1), v)[1])(z[:, 1:3]))(x * 1), [X]),
    ("view-of-view-inplace", lambda T, F, x: (lambda z: (z[1:][0].mul_(3), z)[1])(x * 1), [X]),
    ("view-inplace-zero_", lambda T, F, x: (lambda z: (z[1].zero_(), z)[1])(x * 1), [X]),
    ("view-inplace-clamp_", lambda T, F, x: (lambda z: (z[:, 0].clamp_(min=0), z)[1])(x * 1), [X]),
]


def _setitem(z, index, value):
    z[index] = value
    return z


def _cases(rows):
    return [Case(i, f, list(inp)) for i, f, inp in rows]


ALL = _cases(UNARY) + _cases(BINARY) + _cases(REDUCTIONS) + _cases(LINALG) + _cases(SHAPE) + _cases(MULTI) + \
    _cases(NN) + _cases(INPLACE)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ALL, ids=lambda c: c.id)
def test_parity(case, dtype):
    if dtype not in case.dtypes:
        pytest.skip(f"{case.id} is not defined for {dtype} in torch")
    problems = compare_case(case, dtype)
    assert not problems, f"{case.id} ({dtype}):\n  " + "\n  ".join(problems)
