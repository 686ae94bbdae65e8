"""Sample inputs for the rows of formulas.yaml that cannot be sampled automatically (rows with a
hand-written forward, optional or str arguments, indices, multi-output rows), for the table-wide
gradcheck (tests/ops/test_gradcheck_table.py). Values stay away from kinks and ties so that central
differences are valid; kinks themselves are covered against torch in tests/parity/test_parity_ops.py."""
import numpy as np

from derivgen.core.generator import Generator
from derivgen.core.tensor import Tensor
from tests.support.samples import Sample, register, rng_for, tensor


def _t(rng, dtype, *shape, lo=0.25, hi=2.0, signed=True):
    return tensor(rng, shape, dtype, lo, hi, signed)


def _distinct(rng, dtype, *shape, scale=1.0):
    """Values with pairwise gaps >= 0.05 (no ties for max/sort/topk, so differences stay valid)."""
    n = int(np.prod(shape)) if shape else 1
    vals = (np.arange(n) * 0.1 + 0.05) * scale
    rng.shuffle(vals)
    return Tensor._make(np.asarray((vals - vals.mean()).reshape(shape), dtype=dtype.np))


def _idx(values):
    return Tensor._make(np.asarray(values, dtype=np.int64))


def _mask(rng, *shape):
    return Tensor._make(rng.random(shape) > 0.5)


def _simple(name, make):
    @register(name)
    def _fn(entry, dtype):
        return make(rng_for(entry.name, dtype), dtype)
    return _fn


# ---- unary rows with hand-written forwards --------------------------------------------------------------

_simple("logit", lambda r, d: [
    Sample((_t(r, d, 3, 4, lo=0.1, hi=0.9, signed=False),), {}, [0]),
    Sample((_t(r, d, 3, 4, lo=0.2, hi=0.8, signed=False), 0.1), {}, [0], "eps inside: no clamping"),
    Sample((Tensor._make(np.array([0.05, 0.5, 0.97], d.np)), 0.1), {}, [0], "eps clamps the ends")])
for _name in ("floor", "ceil", "round", "trunc", "frac"):
    _simple(_name, lambda r, d: [Sample((Tensor._make((_t(r, d, 3, 4)._array + 0.3).astype(d.np)),), {}, [0])])
_simple("round.decimals", lambda r, d: [Sample((_t(r, d, 3, 4),), {"decimals": 1}, [0])])
_simple("clamp", lambda r, d: [
    Sample((_t(r, d, 3, 4), -0.9, 0.9), {}, [0], "both bounds"),
    Sample((_t(r, d, 3, 4), 0.3), {}, [0], "min only"), Sample((_t(r, d, 3, 4), None, 0.6), {}, [0], "max only")])
_simple("clamp.Tensor", lambda r, d: [
    Sample((_t(r, d, 3, 4), _t(r, d, 3, 4), _t(r, d, 4)), {}, [0, 1, 2], "both bounds"),
    Sample((_t(r, d, 3, 4), _t(r, d, 3, 1)), {}, [0, 1], "min only, broadcast"),
    Sample((_t(r, d, 3, 4), None, _t(r, d, 3, 4)), {}, [0, 2], "max only")])
_simple("nan_to_num", lambda r, d: [Sample((_t(r, d, 3, 4),), {}, [0]),
                                    Sample((_t(r, d, 3, 4), 0.0, 1.0, -1.0), {}, [0], "all replacements given")])
_simple("gelu", lambda r, d: [Sample((_t(r, d, 3, 4),), {}, [0]),
                              Sample((_t(r, d, 3, 4),), {"approximate": "tanh"}, [0], "tanh")])

# masked_fill.Tensor takes a 0-dim value only (torch refuses others)
_simple("masked_fill.Tensor", lambda r, d: [
    Sample((_t(r, d, 3, 4), _mask(r, 3, 4), _t(r, d)), {}, [0, 2], "0-dim value"),
    Sample((_t(r, d, 3, 4), _mask(r, 4), _t(r, d)), {}, [0, 2], "broadcast mask")])

# ---- binary rows with hand-written forwards -------------------------------------------------------------

_simple("div.Tensor_mode", lambda r, d: [
    Sample((_t(r, d, 3, 4), _t(r, d, 3, 4, lo=0.5)), {"rounding_mode": None}, [0, 1], "true division"),
    Sample((_t(r, d, 3, 4), _t(r, d, 4, lo=0.5)), {"rounding_mode": "floor"}, [0, 1], "floor: zero gradient"),
    Sample((_t(r, d, 3, 4), _t(r, d, 3, 4, lo=0.5)), {"rounding_mode": "trunc"}, [0, 1], "trunc")])
_simple("div.Scalar_mode", lambda r, d: [
    Sample((_t(r, d, 3, 4), 0.7), {"rounding_mode": None}, [0]),
    Sample((_t(r, d, 3, 4), 0.7), {"rounding_mode": "trunc"}, [0], "trunc")])


def _apart(r, d, *shape):
    a = _t(r, d, *shape)
    b = Tensor._make((a._array + np.where(r.random(shape) > 0.5, 0.5, -0.5)).astype(d.np))
    return a, b


def _fmaxmin(r, d):
    a, b = _apart(r, d, 3, 4)
    nan_a = Tensor._make(np.array([1.0, np.nan, 3.0], d.np))
    nan_b = Tensor._make(np.array([2.0, 1.0, np.nan], d.np))
    return [Sample((a, b), {}, [0, 1]), Sample((nan_a, nan_b), {}, [0, 1], "NaN on either side")]


_simple("fmax", _fmaxmin)
_simple("fmin", _fmaxmin)


def _mod_samples(r, d):
    x = Tensor._make(np.array([[0.3, 1.7, -0.4], [2.2, -1.3, 0.9]], d.np))
    return x


_simple("remainder.Scalar", lambda r, d: [Sample((_mod_samples(r, d), 0.75), {}, [0])])
_simple("fmod.Scalar", lambda r, d: [Sample((_mod_samples(r, d), 0.75), {}, [0])])
_simple("remainder.Tensor", lambda r, d: [
    Sample((_mod_samples(r, d), Tensor._make(np.array([0.75, -0.8, 0.7], d.np))), {}, [0, 1])])
_simple("fmod.Tensor", lambda r, d: [
    Sample((_mod_samples(r, d), Tensor._make(np.array([0.75, -0.8, 0.7], d.np))), {}, [0, 1])])

# ---- reductions ---------------------------------------------------------------------------------------

_simple("prod", lambda r, d: [Sample((_t(r, d, 3, 4),), {}, [0]),
                              Sample((Tensor._make(np.array([[1.5, 0.0], [2.0, -1.0]], d.np)),), {}, [0], "one zero")])
_simple("prod.dim_int", lambda r, d: [
    Sample((_t(r, d, 3, 4), 1), {}, [0]),
    Sample((Tensor._make(np.array([[1.5, 0.0, 0.5], [0.0, 0.0, 2.0]], d.np)), 0, True), {}, [0], "zeros, keepdim")])
for _name in ("max.dim", "min.dim"):
    _simple(_name, lambda r, d: [Sample((_distinct(r, d, 3, 4), 1), {}, [0]),
                                 Sample((_distinct(r, d, 3, 4), 0, True), {}, [0], "keepdim")])
for _name in ("max", "min"):
    _simple(_name, lambda r, d: [Sample((_distinct(r, d, 3, 4),), {}, [0])])
for _name in ("amax", "amin"):
    _simple(_name, lambda r, d: [Sample((_distinct(r, d, 3, 4), [1]), {}, [0]),
                                 Sample((_distinct(r, d, 2, 3, 4), [0, 2], True), {}, [0], "dims, keepdim"),
                                 Sample((_distinct(r, d, 3, 4),), {}, [0], "all dims")])
for _name in ("argmax", "argmin"):
    _simple(_name, lambda r, d: [Sample((_distinct(r, d, 3, 4),), {}, [0]),
                                 Sample((_distinct(r, d, 3, 4), 1, True), {}, [0], "dim, keepdim")])
_simple("logsumexp", lambda r, d: [Sample((_t(r, d, 3, 4), [1]), {}, [0]),
                                   Sample((_t(r, d, 2, 3, 4), [0, 2], True), {}, [0], "dims, keepdim")])
for _name in ("var.correction", "std.correction", "var_mean.correction", "std_mean.correction"):
    _simple(_name, lambda r, d: [
        Sample((_t(r, d, 3, 4),), {}, [0], "all elements"),
        Sample((_t(r, d, 3, 4), [1]), {"correction": 0}, [0], "dim, correction 0"),
        Sample((_t(r, d, 2, 3, 4), [0, 2]), {"keepdim": True}, [0], "dims, keepdim")])
_simple("linalg_vector_norm", lambda r, d: [
    Sample((_t(r, d, 3, 4),), {}, [0], "2-norm"), Sample((_t(r, d, 3, 4), 1, [1]), {}, [0], "1-norm over dim"),
    Sample((_distinct(r, d, 3, 4), float("inf"), [0], True), {}, [0], "inf-norm, keepdim"),
    Sample((_t(r, d, 3, 4), 3), {}, [0], "3-norm"), Sample((_t(r, d, 3, 4), 0.5, [1]), {}, [0], "0.5-norm")])
_simple("cumsum", lambda r, d: [Sample((_t(r, d, 3, 4), 1), {}, [0]), Sample((_t(r, d, 3, 4), 0), {}, [0])])
_simple("cumprod", lambda r, d: [
    Sample((_t(r, d, 3, 4), 1), {}, [0]),
    Sample((Tensor._make(np.array([[1.5, 0.0, 0.5, 2.0], [0.7, 1.2, 0.0, 0.0]], d.np)), 1), {}, [0], "zeros")])

# ---- linear algebra -------------------------------------------------------------------------------------

_simple("addmm", lambda r, d: [
    Sample((_t(r, d, 3, 5), _t(r, d, 3, 4), _t(r, d, 4, 5)), {}, [0, 1, 2]),
    Sample((_t(r, d, 5), _t(r, d, 3, 4), _t(r, d, 4, 5)), {"beta": 0.5, "alpha": 2.0}, [0, 1, 2], "bias, scaled")])
_simple("baddbmm", lambda r, d: [
    Sample((_t(r, d, 2, 3, 5), _t(r, d, 2, 3, 4), _t(r, d, 2, 4, 5)), {"alpha": 0.5}, [0, 1, 2])])

# ---- shape ops and indexing ---------------------------------------------------------------------------

_simple("squeeze.dims", lambda r, d: [Sample((_t(r, d, 1, 3, 1, 4), [0, 2]), {}, [0]),
                                      Sample((_t(r, d, 3, 1), [0, 1]), {}, [0], "a dim that is not 1")])
_simple("squeeze_", lambda r, d: [Sample((_t(r, d, 3, 1, 4),), {}, [0])])
_simple("squeeze_.dim", lambda r, d: [Sample((_t(r, d, 3, 1, 4), 1), {}, [0])])
_simple("squeeze_.dims", lambda r, d: [Sample((_t(r, d, 1, 3, 1), [0, 2]), {}, [0])])
# in-place view rows: the row functions compute self's new view out of place (the gradcheck's input)
_simple("transpose_", lambda r, d: [Sample((_t(r, d, 2, 3, 4), 0, 2), {}, [0]),
                                    Sample((_t(r, d, 3, 4), -1, 0), {}, [0], "negative dim")])
_simple("t_", lambda r, d: [Sample((_t(r, d, 3, 4),), {}, [0]), Sample((_t(r, d, 4),), {}, [0], "1-D")])
_simple("unsqueeze_", lambda r, d: [Sample((_t(r, d, 3, 4), 1), {}, [0]), Sample((_t(r, d, 3, 4), -1), {}, [0])])
_simple("as_strided_", lambda r, d: [Sample((_t(r, d, 3, 4), [2, 2], [4, 1], 1), {}, [0]),
                                     Sample((_t(r, d, 3, 4), [2, 3], [1, 1]), {}, [0], "overlapping windows")])
_simple("_reshape_alias", lambda r, d: [Sample((_t(r, d, 3, 4), [4, 3], [3, 1]), {}, [0])])
_simple("repeat", lambda r, d: [Sample((_t(r, d, 3, 4), [2, 1]), {}, [0]),
                                Sample((_t(r, d, 3), [2, 2]), {}, [0], "new leading dim")])
_simple("index.Tensor", lambda r, d: [
    Sample((_t(r, d, 3, 4), [_idx([0, 2, 0])]), {}, [0], "repeated rows"),
    Sample((_t(r, d, 3, 4), [None, _idx([3, 1])]), {}, [0], "second dim"),
    Sample((_t(r, d, 3, 4), [_mask(r, 3, 4)]), {}, [0], "boolean mask"),
    Sample((_t(r, d, 3, 4), [_idx([0, 1]), _idx([2, 3])]), {}, [0], "two index tensors")])
_simple("index_put", lambda r, d: [
    Sample((_t(r, d, 3, 4), [_idx([0, 2])], _t(r, d, 2, 4)), {}, [0, 2], "assign rows"),
    Sample((_t(r, d, 3, 4), [_idx([0, 2, 0])], _t(r, d, 4), True), {}, [0, 2], "accumulate, broadcast values")])
_simple("gather", lambda r, d: [Sample((_t(r, d, 3, 4), 1, _idx([[0, 3], [1, 1], [2, 0]])), {}, [0]),
                                Sample((_t(r, d, 3, 4), 0, _idx([[0, 2, 1, 0]])), {}, [0], "smaller index")])
_simple("scatter.src", lambda r, d: [
    Sample((_t(r, d, 3, 4), 1, _idx([[0, 3], [1, 2], [2, 0]]), _t(r, d, 3, 2)), {}, [0, 3])])
_simple("scatter.value", lambda r, d: [Sample((_t(r, d, 3, 4), 1, _idx([[0, 3], [1, 2], [2, 0]]), 1.5), {}, [0])])
_simple("scatter_add", lambda r, d: [
    Sample((_t(r, d, 3, 4), 1, _idx([[0, 3, 0], [1, 1, 2], [2, 0, 2]]), _t(r, d, 3, 3)), {}, [0, 3])])
_simple("index_select", lambda r, d: [Sample((_t(r, d, 3, 4), 1, _idx([0, 3, 0])), {}, [0])])
_simple("index_add", lambda r, d: [
    Sample((_t(r, d, 3, 4), 1, _idx([0, 3, 0]), _t(r, d, 3, 3)), {}, [0, 3]),
    Sample((_t(r, d, 3, 4), 0, _idx([2, 2]), _t(r, d, 2, 4)), {"alpha": 0.5}, [0, 3], "alpha")])
_simple("flip", lambda r, d: [Sample((_t(r, d, 3, 4), [0]), {}, [0]), Sample((_t(r, d, 2, 3, 4), [0, 2]), {}, [0])])
_simple("roll", lambda r, d: [Sample((_t(r, d, 3, 4), [1], [1]), {}, [0]), Sample((_t(r, d, 3, 4), [5]), {}, [0], "flat"),
                              Sample((_t(r, d, 3, 4), [1, -2], [0, 1]), {}, [0], "two dims")])
for _name in ("tril", "triu"):
    _simple(_name, lambda r, d: [Sample((_t(r, d, 3, 4),), {}, [0]), Sample((_t(r, d, 2, 3, 4), 1), {}, [0], "batch, k=1")])
_simple("diagonal", lambda r, d: [Sample((_t(r, d, 3, 4),), {}, [0]), Sample((_t(r, d, 2, 3, 4), 1, 1, 2), {}, [0]),
                                  Sample((_t(r, d, 4, 3), -1), {}, [0], "negative offset")])
_simple("diagonal_backward", lambda r, d: [Sample((_t(r, d, 3), [3, 4], 0, 0, 1), {}, [0]),
                                           Sample((_t(r, d, 2, 3), [2, 3, 4], 1, 1, 2), {}, [0])])
_simple("constant_pad_nd", lambda r, d: [Sample((_t(r, d, 3, 4), [1, 2]), {}, [0]),
                                         Sample((_t(r, d, 3, 4), [1, 1, 2, 0], 1.5), {}, [0], "two dims, value"),
                                         Sample((_t(r, d, 3, 4), [-1, 1]), {}, [0], "negative pad crops")])
_simple("sort", lambda r, d: [Sample((_distinct(r, d, 3, 4), 1), {}, [0]),
                              Sample((_distinct(r, d, 3, 4), 0, True), {}, [0], "descending")])
_simple("topk", lambda r, d: [Sample((_distinct(r, d, 3, 4), 2), {}, [0]),
                              Sample((_distinct(r, d, 3, 4), 2, 0, False), {}, [0], "smallest along dim 0")])
_simple("sort.stable", lambda r, d: [Sample((_distinct(r, d, 3, 4),), {"stable": True, "dim": 1}, [0]),
                                     Sample((_distinct(r, d, 3, 4),), {"stable": False, "dim": 0, "descending": True},
                                            [0], "descending")])
_simple("count_nonzero.dim_IntList", lambda r, d: [Sample((_t(r, d, 3, 4), [0, 1]), {}, [0]),
                                                   Sample((_t(r, d, 3, 4), [-1]), {}, [0], "last dim")])
_simple("count_nonzero", lambda r, d: [Sample((_t(r, d, 3, 4),), {}, [0]),
                                       Sample((_t(r, d, 3, 4), 1), {}, [0], "one dim")])
_simple("kthvalue", lambda r, d: [Sample((_distinct(r, d, 3, 4), 2), {}, [0]),
                                  Sample((_distinct(r, d, 3, 4), 3, 0, True), {}, [0], "dim 0, keepdim")])

# ---- torch.nn.functional rows ----------------------------------------------------------------------------

_simple("_softmax", lambda r, d: [Sample((_t(r, d, 3, 4), 1, False), {}, [0]), Sample((_t(r, d, 2, 3, 4), 0, False), {}, [0])])
_simple("_log_softmax", lambda r, d: [Sample((_t(r, d, 3, 4), 1, False), {}, [0]),
                                      Sample((_t(r, d, 2, 3, 4), -1, False), {}, [0])])


def _loss(r, d, extra=()):
    out = []
    for red in (0, 1, 2):
        out.append(Sample((_t(r, d, 3, 4), _t(r, d, 3, 4), red) + tuple(extra), {}, [0, 1], f"reduction {red}"))
    return out


_simple("mse_loss", lambda r, d: _loss(r, d))
_simple("smooth_l1_loss", lambda r, d: _loss(r, d, (0.5,)))
_simple("huber_loss", lambda r, d: _loss(r, d, (0.7,)))
_simple("nll_loss_forward", lambda r, d: [
    Sample((_t(r, d, 3, 4), _idx([1, 0, 3]), None, 1, -100), {}, [0], "mean"),
    Sample((_t(r, d, 3, 4), _idx([1, 0, 3]), _t(r, d, 4, lo=0.5, signed=False), 2, 0), {}, [0], "weight, ignore, sum"),
    Sample((_t(r, d, 3, 4), _idx([1, 0, 3]), _t(r, d, 4, lo=0.5, signed=False), 1, -100), {}, [0], "weight, mean"),
    Sample((_t(r, d, 3, 4), _idx([1, 0, 3]), None, 0, -100), {}, [0], "none"),
    Sample((_t(r, d, 4), _idx(2), None, 1, -100), {}, [0], "1-D input")])
_simple("binary_cross_entropy", lambda r, d: [
    Sample((_t(r, d, 3, 4, lo=0.1, hi=0.9, signed=False), _t(r, d, 3, 4, lo=0.1, hi=0.9, signed=False)), {}, [0, 1]),
    Sample((_t(r, d, 3, 4, lo=0.1, hi=0.9, signed=False), _t(r, d, 3, 4, lo=0.1, hi=0.9, signed=False),
            _t(r, d, 4, lo=0.5, signed=False), 2), {}, [0, 1], "weight, sum")])
_simple("binary_cross_entropy_with_logits", lambda r, d: [
    Sample((_t(r, d, 3, 4), _t(r, d, 3, 4, lo=0.1, hi=0.9, signed=False)), {}, [0, 1]),
    Sample((_t(r, d, 3, 4), _t(r, d, 3, 4, lo=0.1, hi=0.9, signed=False), _t(r, d, 4, lo=0.5, signed=False),
            _t(r, d, 4, lo=0.5, signed=False), 0), {}, [0, 1], "weight, pos_weight, none")])
_simple("native_layer_norm", lambda r, d: [
    Sample((_t(r, d, 3, 4), [4], None, None, 1e-5), {}, [0], "no affine"),
    Sample((_t(r, d, 3, 4), [4], _t(r, d, 4), _t(r, d, 4), 1e-5), {}, [0, 2, 3], "affine"),
    Sample((_t(r, d, 2, 3, 4), [3, 4], _t(r, d, 3, 4), None, 1e-5), {}, [0, 2], "2-D normalized shape")])
_simple("embedding", lambda r, d: [
    Sample((_t(r, d, 4, 5), _idx([[1, 0, 3], [3, 3, 2]])), {}, [0]),
    Sample((_t(r, d, 4, 5), _idx([1, 3, 3, 2]), 0), {}, [0], "a padding_idx that is not looked up")])

# ---- convolution, pooling, normalisation ----------------------------------------------------------------

_simple("convolution", lambda r, d: [
    Sample((_t(r, d, 2, 3, 6, 5), _t(r, d, 4, 3, 3, 2), _t(r, d, 4), [1, 1], [0, 0], [1, 1], False, [0, 0], 1), {},
           [0, 1, 2], "2-D, bias"),
    Sample((_t(r, d, 2, 4, 7, 6), _t(r, d, 4, 2, 3, 3), None, [2, 1], [1, 2], [1, 2], False, [0, 0], 2), {},
           [0, 1], "stride, padding, dilation, 2 groups"),
    Sample((_t(r, d, 2, 4, 3, 4), _t(r, d, 4, 1, 3, 2), _t(r, d, 2), [2, 2], [1, 0], [1, 1], True, [1, 0], 2), {},
           [0, 1, 2], "transposed, output_padding, groups"),
    Sample((_t(r, d, 2, 3, 9), _t(r, d, 2, 3, 3), _t(r, d, 2), [2], [1], [2], False, [0], 1), {},
           [0, 1, 2], "1-D, strided, dilated"),
    Sample((_t(r, d, 1, 2, 4), _t(r, d, 2, 3, 3), None, [3], [1], [1], True, [2], 1), {}, [0, 1], "1-D transposed")])
_simple("max_pool2d_with_indices", lambda r, d: [
    Sample((_distinct(r, d, 2, 2, 5, 6), [2, 2]), {}, [0], "2x2"),
    Sample((_distinct(r, d, 2, 5, 6), [3, 2], [2, 1], [1, 1], [1, 2], True), {}, [0],
           "unbatched, padding, dilation, ceil_mode")])
_simple("avg_pool2d", lambda r, d: [
    Sample((_t(r, d, 2, 2, 5, 6), [2, 2]), {}, [0], "2x2"),
    Sample((_t(r, d, 2, 2, 5, 6), [3, 2], [2, 2], [1, 1], True, False), {}, [0], "padding not counted, ceil_mode"),
    Sample((_t(r, d, 2, 5, 6), [3, 3], [2, 1], [1, 1], False, True, 4), {}, [0], "unbatched, divisor_override")])
_simple("_adaptive_avg_pool2d", lambda r, d: [Sample((_t(r, d, 2, 2, 5, 7), [3, 4]), {}, [0]),
                                              Sample((_t(r, d, 2, 5, 6), [5, 2]), {}, [0], "unbatched")])
_simple("max_pool3d_with_indices", lambda r, d: [
    Sample((_distinct(r, d, 1, 2, 4, 4, 3), [2, 2, 2]), {}, [0], "2x2x2"),
    Sample((_distinct(r, d, 2, 5, 4, 5), [3, 2, 3], [2, 1, 2], [1, 0, 1], [1, 2, 1], True), {}, [0],
           "unbatched, padding, dilation, ceil_mode")])
_simple("avg_pool3d", lambda r, d: [
    Sample((_t(r, d, 1, 2, 4, 5, 4), [2, 2, 2]), {}, [0], "2x2x2"),
    Sample((_t(r, d, 2, 5, 4, 5), [3, 2, 3], [2, 2, 1], [1, 1, 1], True, False), {}, [0],
           "unbatched, padding not counted, ceil_mode"),
    Sample((_t(r, d, 1, 2, 4, 4, 4), [2, 3, 2], [1, 1, 2], [1, 1, 0], False, True, 4), {}, [0], "divisor_override")])
_simple("_adaptive_avg_pool3d", lambda r, d: [Sample((_t(r, d, 1, 2, 4, 5, 6), [3, 2, 4]), {}, [0]),
                                              Sample((_t(r, d, 2, 3, 4, 5), [2, 4, 5]), {}, [0], "unbatched")])
_simple("adaptive_max_pool2d", lambda r, d: [Sample((_distinct(r, d, 2, 2, 5, 7), [3, 4]), {}, [0]),
                                             Sample((_distinct(r, d, 2, 6, 5), [4, 5]), {}, [0], "unbatched")])
for _name in ("reflection_pad", "replication_pad"):
    _simple(f"{_name}1d", lambda r, d: [Sample((_t(r, d, 2, 5), [2, 3]), {}, [0]),
                                        Sample((_t(r, d, 2, 3, 5), [1, -1]), {}, [0], "batched, cropping")])
    _simple(f"{_name}2d", lambda r, d: [Sample((_t(r, d, 2, 4, 5), [1, 3, 2, 0]), {}, [0]),
                                        Sample((_t(r, d, 1, 2, 4, 5), [1, 2, -1, 3]), {}, [0], "batched, cropping")])
    _simple(f"{_name}3d", lambda r, d: [Sample((_t(r, d, 2, 3, 4, 5), [1, 2, 0, 2, 2, 1]), {}, [0]),
                                        Sample((_t(r, d, 1, 2, 3, 4, 5), [-1, 2, 0, 2, 2, 1]), {}, [0],
                                               "batched, cropping")])
_simple("rrelu_with_noise", lambda r, d: [
    Sample((_t(r, d, 3, 4), _t(r, d, 3, 4)), {}, [0], "eval"),
    Sample((_t(r, d, 3, 4), _t(r, d, 3, 4), 0.1, 0.3, False), {}, [0], "eval, mean slope"),
    Sample((_t(r, d, 3, 4), _t(r, d, 3, 4), 0.2, 0.2, True), {}, [0], "training, single slope (deterministic)")])
_simple("rrelu_with_noise_", lambda r, d: [
    Sample((_t(r, d, 3, 4), _t(r, d, 3, 4)), {}, [0], "eval"),
    Sample((_t(r, d, 3, 4), _t(r, d, 3, 4), 0.2, 0.2, True), {}, [0], "training, single slope (deterministic)")])
_simple("adaptive_max_pool3d", lambda r, d: [Sample((_distinct(r, d, 1, 2, 4, 5, 6), [3, 2, 4]), {}, [0]),
                                             Sample((_distinct(r, d, 2, 5, 3, 4), [2, 3, 4]), {}, [0], "unbatched")])
_simple("native_batch_norm", lambda r, d: [
    Sample((_t(r, d, 3, 2, 4), _t(r, d, 2), _t(r, d, 2), _t(r, d, 2), _t(r, d, 2, lo=0.5, signed=False), True, 0.1,
            1e-5), {}, [0, 1, 2], "train, running stats"),
    Sample((_t(r, d, 3, 2, 2, 2), None, None, None, None, True, 0.1, 1e-5), {}, [0], "train, no affine, no stats"),
    Sample((_t(r, d, 4, 3), _t(r, d, 3), None, _t(r, d, 3), _t(r, d, 3, lo=0.5, signed=False), False, 0.1, 1e-5), {},
           [0, 1], "eval")])
_simple("native_group_norm", lambda r, d: [
    Sample((_t(r, d, 2, 4, 3), _t(r, d, 4), _t(r, d, 4), 2, 4, 3, 2, 1e-5), {}, [0, 1, 2], "affine"),
    Sample((_t(r, d, 2, 6, 2, 2), None, None, 2, 6, 4, 3, 1e-5), {}, [0], "no affine")])

# ---- fill / zero ---------------------------------------------------------------------------------------

for _name in ("fill.Scalar", "fill_.Scalar"):
    _simple(_name, lambda r, d: [Sample((_t(r, d, 3, 4), 2.5), {}, [0])])
for _name in ("fill.Tensor", "fill_.Tensor"):
    _simple(_name, lambda r, d: [Sample((_t(r, d, 3, 4), _t(r, d)), {}, [0, 1])])
_simple("zero_", lambda r, d: [Sample((_t(r, d, 3, 4),), {}, [0])])

_simple("as_strided", lambda r, d: [Sample((_t(r, d, 3, 4), [2, 2], [4, 1], 1), {}, [0]),
                                    Sample((_t(r, d, 3, 4), [3, 2], [1, 2]), {}, [0], "overlapping-free transpose"),
                                    Sample((_t(r, d, 3, 4), [2, 3], [1, 1]), {}, [0], "overlapping windows")])
_simple("copy_", lambda r, d: [Sample((_t(r, d, 3, 4), _t(r, d, 3, 4)), {}, [0, 1]),
                               Sample((_t(r, d, 3, 4), _t(r, d, 4)), {}, [0, 1], "broadcast src")])

_simple("unsafe_split.Tensor", lambda r, d: [Sample((_t(r, d, 5, 3), 2), {}, [0], "uneven"),
                                             Sample((_t(r, d, 3, 4), 2, 1), {}, [0], "dim 1")])
_simple("unsafe_split_with_sizes", lambda r, d: [Sample((_t(r, d, 5, 3), [2, 3]), {}, [0]),
                                                 Sample((_t(r, d, 3, 4), [1, 1, 2], -1), {}, [0], "dim -1")])
# (index and source of 4 elements: shapes that broadcast to self's, as the in-place variant's tests expect)
_simple("put", lambda r, d: [
    Sample((_t(r, d, 3, 4), _idx([1, -1, 5, 0]), _t(r, d, 4)), {}, [0, 2], "distinct positions"),
    Sample((_t(r, d, 3, 4), _idx([1, 1, -2, 7]), _t(r, d, 4), True), {}, [0, 2], "accumulate, repeated position")])
_simple("take", lambda r, d: [Sample((_t(r, d, 3, 4), _idx([[0, 11], [-1, 0]])), {}, [0], "repeated, negative")])

# ---- random in-place rows: each call draws again, so the samples pass a generator that hands out the same
# stream on every call (central differences then see only how the values depend on the inputs: not at all)


class _SameDraws(Generator):
    """A Generator whose stream restarts at every draw."""

    @property
    def _np(self):
        return np.random.default_rng(0)

    @_np.setter
    def _np(self, value):
        pass


def _same():
    return {"generator": _SameDraws()}


_simple("uniform_", lambda r, d: [Sample((_t(r, d, 3, 4), -1.0, 2.0), _same(), [0])])
_simple("normal_", lambda r, d: [Sample((_t(r, d, 3, 4), 0.5, 2.0), _same(), [0])])
_simple("bernoulli", lambda r, d: [Sample((_t(r, d, 3, 4, lo=0.2, hi=0.8, signed=False),), _same(), [0])])
_simple("bernoulli.p", lambda r, d: [Sample((_t(r, d, 3, 4), 0.3), _same(), [0])])
_simple("bernoulli_.Tensor", lambda r, d: [
    Sample((_t(r, d, 3, 4), _t(r, d, 3, 4, lo=0.2, hi=0.8, signed=False)), _same(), [0, 1]),
    Sample((_t(r, d, 3, 4), _t(r, d, 4, lo=0.2, hi=0.8, signed=False)), _same(), [0, 1], "broadcast p")])
_simple("bernoulli_.float", lambda r, d: [Sample((_t(r, d, 3, 4), 0.3), _same(), [0])])
_simple("exponential_", lambda r, d: [Sample((_t(r, d, 3, 4), 1.5), _same(), [0])])
_simple("geometric_", lambda r, d: [Sample((_t(r, d, 3, 4), 0.4), _same(), [0])])
_simple("log_normal_", lambda r, d: [Sample((_t(r, d, 3, 4), 0.5, 0.7), _same(), [0])])
_simple("cauchy_", lambda r, d: [Sample((_t(r, d, 3, 4), 1.0, 0.5), _same(), [0])])
_simple("random_.from", lambda r, d: [Sample((_t(r, d, 3, 4), -3, 9), _same(), [0]),
                                      Sample((_t(r, d, 3, 4), 5, None), _same(), [0], "to the dtype's end")])
_simple("random_.to", lambda r, d: [Sample((_t(r, d, 3, 4), 7), _same(), [0])])
_simple("random_", lambda r, d: [Sample((_t(r, d, 3, 4),), _same(), [0])])

# ---- fused LSTM layer: (input, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse, batch_sizes, mode, hidden_size,
# num_layers, has_biases, bidirectional, batch_first, train); without biases the forward ignores weight2/3
_simple("mkldnn_rnn_layer", lambda r, d: [
    Sample((_t(r, d, 3, 2, 3), _t(r, d, 8, 3, lo=0.1, hi=0.6), _t(r, d, 8, 2, lo=0.1, hi=0.6), _t(r, d, 8, lo=0.1, hi=0.6),
            _t(r, d, 8, lo=0.1, hi=0.6), _t(r, d, 2, 2, lo=0.1, hi=0.6), _t(r, d, 2, 2, lo=0.1, hi=0.6),
            False, [], 2, 2, 1, True, False, False, True), {}, [0, 1, 2, 3, 4, 5, 6], "forward, biases"),
    Sample((_t(r, d, 4, 1, 2), _t(r, d, 12, 2, lo=0.1, hi=0.6), _t(r, d, 12, 3, lo=0.1, hi=0.6),
            _t(r, d, 12, 2), _t(r, d, 12, 3), _t(r, d, 1, 3, lo=0.1, hi=0.6), _t(r, d, 1, 3, lo=0.1, hi=0.6),
            True, [], 2, 3, 2, False, True, False, False), {}, [0, 1, 2, 5, 6], "reverse, no biases")])
_simple("gelu_backward", lambda r, d: [Sample((_t(r, d, 3, 4), _t(r, d, 3, 4)), {}, [0, 1]),
                                       Sample((_t(r, d, 3, 4), _t(r, d, 3, 4)), {"approximate": "tanh"}, [0, 1],
                                              "tanh")])

# ---- rows without a derivative: any / all over a dim, floating-point class tests ----------------------------
for _name in ("any", "isnan", "isinf", "isfinite", "isposinf", "isneginf"):
    _simple(_name, lambda r, d: [Sample((Tensor._make(np.array([[0.0, 1.5, np.nan], [np.inf, -np.inf, -2.0]],
                                                                 d.np)),), {}, [0])])
for _name in ("all.dim", "any.dim"):
    _simple(_name, lambda r, d: [Sample((Tensor._make(np.array([[0.0, 1.5, 2.0], [1.0, 3.0, -2.0]], d.np)), 1), {}, [0]),
                                 Sample((Tensor._make(np.array([[0.0, 1.5], [1.0, 3.0]], d.np)), 0, True), {}, [0],
                                        "keepdim")])

# ---- selection and structure rows, linear algebra, embedding bags -----------------------------------------------
_simple("glu", lambda r, d: [Sample((_t(r, d, 3, 4),), {}, [0]), Sample((_t(r, d, 4, 3), 0), {}, [0], "dim 0")])
_simple("_prelu_kernel", lambda r, d: [Sample((_t(r, d, 3, 4), _t(r, d, 3, 4, lo=0.1, hi=0.5)), {}, [0, 1]),
                                       Sample((_t(r, d, 2, 3, 4), _t(r, d, 1, 3, 1, lo=0.1, hi=0.5)), {}, [0, 1],
                                              "a weight per channel"),
                                       Sample((_t(r, d, 3, 4), _t(r, d, lo=0.1, hi=0.5)), {}, [0, 1], "one weight")])
for _name in ("cummax", "cummin"):
    _simple(_name, lambda r, d: [Sample((_distinct(r, d, 3, 4), 1), {}, [0]), Sample((_distinct(r, d, 3, 4), 0), {}, [0])])
_simple("median", lambda r, d: [Sample((_distinct(r, d, 3, 4),), {}, [0]), Sample((_distinct(r, d, 5),), {}, [0], "odd count")])
_simple("median.dim", lambda r, d: [Sample((_distinct(r, d, 3, 4), 1), {}, [0]),
                                    Sample((_distinct(r, d, 3, 5), 0, True), {}, [0], "keepdim")])
_simple("norm.Scalar", lambda r, d: [Sample((_t(r, d, 3, 4),), {}, [0]), Sample((_t(r, d, 3, 4), 3), {}, [0], "3-norm")])
_simple("norm.ScalarOpt_dim", lambda r, d: [Sample((_t(r, d, 3, 4), 2, [1]), {}, [0]),
                                            Sample((_t(r, d, 3, 4), 1, [0], True), {}, [0], "1-norm, keepdim"),
                                            Sample((_t(r, d, 3, 4), None, [1]), {}, [0], "p None")])


def _well_conditioned(r, d, *shape):
    a = r.standard_normal(shape) * 0.3 + np.eye(shape[-1]) * 2.0
    return Tensor._make(a.astype(d.np))


_simple("linalg_inv_ex", lambda r, d: [Sample((_well_conditioned(r, d, 3, 3),), {}, [0]),
                                       Sample((_well_conditioned(r, d, 2, 3, 3),), {}, [0], "batched")])
_simple("_linalg_det", lambda r, d: [Sample((_well_conditioned(r, d, 3, 3),), {}, [0]),
                                     Sample((_well_conditioned(r, d, 2, 2, 2),), {}, [0], "batched")])
_simple("trace", lambda r, d: [Sample((_t(r, d, 3, 4),), {}, [0])])
_simple("diag_embed", lambda r, d: [Sample((_t(r, d, 2, 3),), {}, [0]),
                                    Sample((_t(r, d, 3), 1, 0, 1), {}, [0], "offset, dims 0 and 1"),
                                    Sample((_t(r, d, 2, 3), -1, 0, 2), {}, [0], "negative offset")])
_simple("masked_select", lambda r, d: [Sample((_t(r, d, 3, 4), _mask(r, 3, 4)), {}, [0]),
                                       Sample((_t(r, d, 3, 4), _mask(r, 4)), {}, [0], "broadcast mask")])
_simple("_embedding_bag", lambda r, d: [
    Sample((_t(r, d, 5, 3), _idx([0, 2, 4, 1, 2]), _idx([0, 2])), {}, [0], "sum"),
    Sample((_t(r, d, 5, 3), _idx([0, 2, 4, 1, 2]), _idx([0, 3, 3])), {"mode": 1}, [0], "mean, an empty bag"),
    Sample((_distinct(r, d, 5, 3), _idx([0, 2, 4, 1, 2]), _idx([0, 2])), {"mode": 2}, [0], "max"),
    Sample((_t(r, d, 5, 3), _idx([0, 2, 4, 1]), _idx([0, 2]), False, 0, False, _t(r, d, 4)), {}, [0, 6],
           "per_sample_weights"),
    Sample((_t(r, d, 5, 3), _idx([0, 2, 4, 1, 2]), _idx([0, 2])), {"padding_idx": 2}, [0], "padding_idx")])
_simple("diagonal_copy", lambda r, d: [Sample((_t(r, d, 3, 4),), {}, [0]), Sample((_t(r, d, 3, 4), 1), {}, [0], "offset")])
_simple("nansum", lambda r, d: [Sample((_t(r, d, 3, 4),), {}, [0]), Sample((_t(r, d, 3, 4), [1]), {}, [0], "dim"),
                                Sample((Tensor._make(np.array([[1.0, np.nan], [0.5, 2.0]], d.np)), [0], True), {}, [0],
                                       "a NaN, keepdim")])
_simple("soft_margin_loss", lambda r, d: [
    Sample((_t(r, d, 3, 4), Tensor._make(np.where(r.random((3, 4)) > 0.5, 1.0, -1.0).astype(d.np))), {}, [0]),
    Sample((_t(r, d, 3, 4), Tensor._make(np.where(r.random((3, 4)) > 0.5, 1.0, -1.0).astype(d.np)), 2), {}, [0],
           "sum"),
    Sample((_t(r, d, 3, 4), Tensor._make(np.where(r.random((3, 4)) > 0.5, 1.0, -1.0).astype(d.np)), 0), {}, [0],
           "none")])
_simple("upsample_nearest2d", lambda r, d: [Sample((_t(r, d, 1, 2, 3, 4), [6, 8]), {}, [0], "doubling"),
                                            Sample((_t(r, d, 2, 1, 3, 4), [5, 7]), {}, [0]),
                                            Sample((_t(r, d, 1, 1, 3, 4), [4, 6], 1.5, 1.5), {}, [0], "scales")])
_simple("upsample_bilinear2d", lambda r, d: [Sample((_t(r, d, 1, 2, 3, 4), [5, 7], False), {}, [0]),
                                             Sample((_t(r, d, 2, 1, 3, 4), [6, 5], True), {}, [0], "align_corners"),
                                             Sample((_t(r, d, 1, 1, 3, 4), [4, 6], False, 1.5, 1.5), {}, [0], "scales")])
