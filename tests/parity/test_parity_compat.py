"""PyTorch parity of the surface the corpus of real programs (tests/programs/) and the namespace audit
(tests/api/test_namespace_audit.py) brought in: each case runs under torch and under derivgen on the same
inputs and compares values, dtypes, graphs (node names and edges) and gradients in float32 and float64
(tests/support/parity.py); each error case compares the exception's type and text."""
import pytest

from tests.support.parity import Case, E, I, Idx, Mask, compare_case, torch

if torch is None:  # pragma: no cover
    pytest.skip("SKIPPED LOUDLY: PyTorch (the oracle of the parity tests) is not installed; install the CPU "
                "wheel to run tests/parity/test_parity_compat.py", allow_module_level=True)

import derivgen  # noqa: E402

X = I(3, 4)
Y = I(3, 4)
POS = I(3, 4, kind="pos")
UNIT = I(3, 4, kind="unit")
KINKS = E([[-2.0, -1.0, -0.5, 0.0], [0.5, 1.0, 2.0, 3.0], [-3.0, 6.0, -6.0, 0.25]])
SPECIAL = E([[0.0, -1.5, float("nan"), 2.0], [float("inf"), -float("inf"), -0.0, 1e-30]], grad=False)


def _scatter_into(T, x, make):
    out = x * 1
    make(out)
    return out


ROWS = [
    # elementwise rows
    ("sgn", lambda T, F, x: x.sgn(), [KINKS]), ("sgn-fn", lambda T, F, x: T.sgn(x), [X]),
    ("sgn_", lambda T, F, x: (x * 1).sgn_(), [X]),
    ("deg2rad", lambda T, F, x: T.deg2rad(x), [X]), ("rad2deg", lambda T, F, x: x.rad2deg(), [X]),
    ("deg2rad_", lambda T, F, x: T.deg2rad_(x * 1), [X]),
    ("logsigmoid", lambda T, F, x: F.logsigmoid(x), [KINKS]),
    ("logsigmoid-tails", lambda T, F, x: F.logsigmoid(x), [E([[-100.0, -30.0, 30.0, 100.0]])]),
    ("softshrink", lambda T, F, x: F.softshrink(x), [KINKS]), ("softshrink-lambd", lambda T, F, x: F.softshrink(x, 1.0), [X]),
    ("hardshrink", lambda T, F, x: F.hardshrink(x, 0.75), [KINKS]), ("hardshrink-method", lambda T, F, x: x.hardshrink(), [X]),
    ("logaddexp", lambda T, F, x, y: T.logaddexp(x, y), [X, Y]),
    ("logaddexp-equal", lambda T, F, x: T.logaddexp(x, x), [X]),
    ("logaddexp-inf", lambda T, F, x, y: T.logaddexp(x, y),
     [E([float("inf"), -float("inf"), 1.0], grad=False), E([float("inf"), -float("inf"), float("inf")], grad=False)]),
    # rows without a derivative
    ("isnan", lambda T, F, x: (T.isnan(x), x.isnan()), [SPECIAL]), ("isinf", lambda T, F, x: (T.isinf(x), x.isinf()), [SPECIAL]),
    ("isfinite", lambda T, F, x: (T.isfinite(x), x.isfinite()), [SPECIAL]),
    ("isposinf", lambda T, F, x: T.isposinf(x), [SPECIAL]), ("isneginf", lambda T, F, x: x.isneginf(), [SPECIAL]),
    ("isnan-int", lambda T, F, i: (T.isnan(i), T.isinf(i), T.isfinite(i)), [Idx(5, hi=3)]),
    ("any-all", lambda T, F, x: (x.any(), T.any(x > 0), (x > 0).all(), x.any(1), T.all(x > -5, dim=0, keepdim=True)), [X]),
    ("any-int", lambda T, F, i: (i.any(), i.all(), T.any(i, 0)), [Idx(2, 3, hi=2)]),
    ("any-0dim", lambda T, F, x: (x.sum().any(0), x.sum().all(-1)), [X]),
    # index rows in place
    ("scatter_-src", lambda T, F, x, s: (x * 1).scatter_(1, T.tensor([[0, 3], [1, 2], [2, 0]]), s), [X, I(3, 2)]),
    ("scatter_-value", lambda T, F, x: (x * 1).scatter_(0, T.tensor([[0, 1, 2, 0]]), value=1.5), [X]),
    ("scatter_-0dim-index", lambda T, F, x: (x * 1).scatter_(0, T.tensor(2), value=1), [I(4)]),
    ("scatter_add_", lambda T, F, x, s: (x * 1).scatter_add_(0, T.tensor([[0, 1, 0, 2]]), s), [X, I(1, 4)]),
    ("index_add_", lambda T, F, x, s: (x * 1).index_add_(0, T.tensor([0, 2, 0]), s), [X, I(3, 4)]),
    ("index_add_-alpha", lambda T, F, x, s: (x * 1).index_add_(1, T.tensor([3, 1]), s, alpha=2), [X, I(3, 2)]),
    ("index_put_", lambda T, F, x, v: (x * 1).index_put_((T.tensor([0, 2]),), v), [X, I(4)]),
    ("index_put_-fn-accumulate", lambda T, F, x, v: T.index_put_(x * 1, (T.tensor([1, 1]), T.tensor([0, 0])), v,
                                                                 accumulate=True), [X, I(2)]),
    ("gather-0dim-index", lambda T, F, x: x.gather(0, T.tensor(2)), [I(4)]),
    # in-place forms of unary and binary rows
    ("acos_", lambda T, F, x: (x * 0.5).acos_(), [UNIT]), ("floor_", lambda T, F, x: (x * 1).floor_(), [X]),
    ("log1p_-fn", lambda T, F, x: T.log1p_(x.abs() * 1), [X]), ("reciprocal_", lambda T, F, x: (x * 1).reciprocal_(), [POS]),
    ("round_-decimals", lambda T, F, x: (x * 1).round_(decimals=1), [X]), ("tanh_", lambda T, F, x: (x * 1).tan_(), [UNIT]),
    ("sign_", lambda T, F, x: (x * 1).sign_(), [KINKS]), ("clamp_-tensor", lambda T, F, x, lo: (x * 1).clamp_(min=lo), [X, Y]),
    ("atan2_", lambda T, F, x, y: (x * 1).atan2_(y), [X, Y]), ("lerp_", lambda T, F, x, y: (x * 1).lerp_(y, 0.3), [X, Y]),
    ("addcmul_", lambda T, F, x, y, z: (x * 1).addcmul_(y, z, value=0.5), [X, Y, I(3, 4)]),
    ("cumsum_", lambda T, F, x: (x * 1).cumsum_(1), [X]), ("tril_", lambda T, F, x: (x * 1).tril_(), [X]),
    ("addmm_", lambda T, F, x, a, b: (x * 1).addmm_(a, b), [X, I(3, 2), I(2, 4)]),
    ("nan_to_num_", lambda T, F, x: T.nan_to_num_(x * 1), [X]), ("xlogy_", lambda T, F, x, y: (x * 1).xlogy_(y), [POS, POS]),
    # selection, structure and linear-algebra rows
    ("prelu", lambda T, F, x, w: F.prelu(x, w), [I(2, 3, 4), E([0.1, 0.2, 0.3])]),
    ("prelu-one-weight", lambda T, F, x, w: F.prelu(x, w), [KINKS, E([0.25])]),
    ("glu", lambda T, F, x: F.glu(x), [X]), ("glu-dim0", lambda T, F, x: F.glu(x, 0), [I(4, 3)]),
    ("cummax", lambda T, F, x: T.cummax(x, 1), [X]), ("cummin", lambda T, F, x: x.cummin(0), [X]),
    ("cummax-ties-nan", lambda T, F, x: x.cummax(1), [E([[1.0, 3.0, 3.0, 2.0], [float("nan"), 1.0, 5.0, 5.0]], grad=False)]),
    ("median", lambda T, F, x: x.median(), [X]), ("median-even", lambda T, F, x: T.median(x), [I(2, 4)]),
    ("median-dim", lambda T, F, x: x.median(1), [X]), ("median-dim-keepdim", lambda T, F, x: T.median(x, 0, keepdim=True), [X]),
    ("median-ties", lambda T, F, x: (x.median(), x.median(0)), [E([[1.0, 2.0], [1.0, 2.0], [3.0, 2.0]])]),
    ("trace", lambda T, F, x: x.trace(), [X]), ("trace-fn", lambda T, F, x: T.trace(x), [I(3, 3)]),
    ("diag-vector", lambda T, F, v: T.diag(v), [I(3)]), ("diag-offset", lambda T, F, v: v.diag(-1), [I(3)]),
    ("diag-matrix", lambda T, F, x: T.diag(x, 1), [X]), ("diag_embed", lambda T, F, x: T.diag_embed(x, 1, 0, 2), [I(2, 3)]),
    ("diagflat", lambda T, F, x: T.diagflat(x), [I(2, 2)]),
    ("masked_select", lambda T, F, x: x.masked_select(x > 0), [X]),
    ("masked_select-bcast", lambda T, F, x, m: T.masked_select(x, m), [X, Mask(4)]),
    ("linalg.inv", lambda T, F, a: T.linalg.inv(a @ a.mT + T.eye(3, dtype=a.dtype)), [I(3, 3)]),
    ("inverse-batched", lambda T, F, a: T.inverse(a @ a.mT + T.eye(3, dtype=a.dtype)), [I(2, 3, 3)]),
    ("linalg.inv_ex", lambda T, F, a: T.linalg.inv_ex(a @ a.mT + T.eye(3, dtype=a.dtype)), [I(3, 3)]),
    ("det", lambda T, F, a: T.det(a), [I(3, 3)]), ("linalg.det-batched", lambda T, F, a: T.linalg.det(a), [I(2, 2, 2)]),
    ("det-method", lambda T, F, a: a.det(), [I(4, 4)]),
    ("matrix_power", lambda T, F, a: T.linalg.matrix_power(a, 5), [I(3, 3)]),
    ("matrix_power-3", lambda T, F, a: T.linalg.matrix_power(a, 3), [I(3, 3)]),
    ("matrix_norm", lambda T, F, a: T.linalg.matrix_norm(a), [I(2, 3, 4)]), ("vecdot", lambda T, F, x, y: T.linalg.vecdot(x, y), [X, Y]),
    ("embedding_bag-2d", lambda T, F, w: F.embedding_bag(T.tensor([[1, 2], [0, 3]]), w), [I(5, 3)]),
    ("embedding_bag-offsets-sum", lambda T, F, w: F.embedding_bag(T.tensor([1, 2, 4, 4, 3]), w, T.tensor([0, 2, 2]),
                                                                   mode="sum"), [I(5, 3)]),
    ("embedding_bag-max", lambda T, F, w: F.embedding_bag(T.tensor([1, 2, 4, 0, 3]), w, T.tensor([0, 3]), mode="max"),
     [I(5, 3)]),
    ("embedding_bag-weights", lambda T, F, w, p: F.embedding_bag(T.tensor([1, 2, 4, 0]), w, T.tensor([0, 2]), mode="sum",
                                                                 per_sample_weights=p), [I(5, 3), I(4)]),
    ("embedding_bag-padding-last-offset", lambda T, F, w: F.embedding_bag(
        T.tensor([1, 2, 4, 0, 2]), w, T.tensor([0, 3, 5]), include_last_offset=True, padding_idx=2), [I(5, 3)]),
    ("EmbeddingBag-module", lambda T, F, w: T.nn.EmbeddingBag.from_pretrained(w, freeze=False, mode="sum")(
        T.tensor([[0, 1], [2, 2]])), [I(4, 3)]),
    ("interpolate-nearest", lambda T, F, x: F.interpolate(x, scale_factor=2), [I(1, 2, 3, 4)]),
    ("interpolate-nearest-size", lambda T, F, x: F.interpolate(x, size=(5, 7)), [I(1, 2, 3, 4)]),
    ("interpolate-bilinear", lambda T, F, x: F.interpolate(x, scale_factor=1.5, mode="bilinear"), [I(1, 2, 3, 4)]),
    ("interpolate-bilinear-corners", lambda T, F, x: F.interpolate(x, size=(5, 6), mode="bilinear", align_corners=True),
     [I(2, 1, 3, 4)]),
    ("Upsample-module", lambda T, F, x: T.nn.Upsample(scale_factor=2, mode="bilinear")(x), [I(1, 1, 2, 3)]),
    ("UpsamplingNearest2d", lambda T, F, x: T.nn.UpsamplingNearest2d(size=(3, 5))(x), [I(1, 1, 2, 3)]),
    ("interpolate-area", lambda T, F, x: F.interpolate(x, size=(2, 2), mode="area"), [I(1, 2, 4, 4)]),
    # losses and distances
    ("soft_margin_loss", lambda T, F, x, t: F.soft_margin_loss(x, t), [X, E([[1.0, -1.0, 1.0, 1.0]] * 3, grad=False)]),
    ("SoftMarginLoss-sum", lambda T, F, x: T.nn.SoftMarginLoss(reduction="sum")(x, T.ones_like(x)), [X]),
    ("cosine_similarity", lambda T, F, x, y: F.cosine_similarity(x, y), [X, Y]),
    ("CosineSimilarity-dim0", lambda T, F, x, y: T.nn.CosineSimilarity(dim=0)(x, y), [X, Y]),
    ("pairwise_distance", lambda T, F, x, y: F.pairwise_distance(x, y), [X, Y]),
    ("PairwiseDistance-p1-keepdim", lambda T, F, x, y: T.nn.PairwiseDistance(p=1.0, keepdim=True)(x, y), [X, Y]),
    ("margin_ranking_loss", lambda T, F, a, b: F.margin_ranking_loss(a, b, T.tensor([1.0, -1.0, 1.0, -1.0]), margin=0.2),
     [I(4), I(4)]),
    ("hinge_embedding_loss", lambda T, F, x: F.hinge_embedding_loss(x, T.tensor([1.0, -1.0, 1.0, -1.0])), [X]),
    ("triplet_margin_loss", lambda T, F, a, p, n: F.triplet_margin_loss(a, p, n), [X, Y, I(3, 4)]),
    ("triplet_margin_loss-swap", lambda T, F, a, p, n: T.nn.TripletMarginLoss(margin=0.5, p=1, swap=True)(a, p, n),
     [X, Y, I(3, 4)]),
    ("poisson_nll_loss", lambda T, F, x, t: F.poisson_nll_loss(x, t), [X, I(3, 4, kind="pos", grad=False)]),
    ("poisson_nll_loss-full", lambda T, F, x, t: F.poisson_nll_loss(x, t * 3, log_input=False, full=True),
     [I(3, 4, kind="pos"), I(3, 4, kind="pos", grad=False)]),
    ("gaussian_nll_loss", lambda T, F, x, t, v: F.gaussian_nll_loss(x, t, v), [X, Y, I(3, 4, kind="pos")]),
    ("GaussianNLLLoss-full-sum", lambda T, F, x, t, v: T.nn.GaussianNLLLoss(full=True, reduction="sum")(x, t, v),
     [X, Y, I(3, kind="pos")]),
    ("cosine_embedding_loss", lambda T, F, x, y: F.cosine_embedding_loss(x, y, T.tensor([1.0, -1.0, 1.0]), margin=0.1),
     [X, Y]),
    ("multilabel_soft_margin_loss", lambda T, F, x: F.multilabel_soft_margin_loss(
        x, T.tensor([[1.0, 0.0, 1.0, 0.0]] * 3)), [X]),
    # activations, channel dropout, rms_norm
    ("softsign", lambda T, F, x: F.softsign(x), [X]), ("tanhshrink", lambda T, F, x: F.tanhshrink(x), [X]),
    ("softmin", lambda T, F, x: F.softmin(x, 1), [X]), ("Softmin-module", lambda T, F, x: T.nn.Softmin(0)(x), [X]),
    ("PReLU-module", lambda T, F, x: T.nn.PReLU(3)(x), [I(2, 3, 4)]), ("GLU-module", lambda T, F, x: T.nn.GLU(1)(x), [I(3, 4)]),
    ("LogSigmoid-Softshrink-Hardshrink", lambda T, F, x: (T.nn.LogSigmoid()(x), T.nn.Softshrink(0.7)(x),
                                                          T.nn.Hardshrink()(x), T.nn.Tanhshrink()(x),
                                                          T.nn.Softsign()(x)), [KINKS]),
    ("rms_norm", lambda T, F, x: F.rms_norm(x, (4,)), [X]), ("rms_norm-weight", lambda T, F, x, w: F.rms_norm(x, [4], w, 1e-5),
                                                             [X, I(4)]),
    ("RMSNorm-module", lambda T, F, x: T.nn.RMSNorm([3, 4])(x), [I(2, 3, 4)]),
    ("dropout2d-eval", lambda T, F, x: F.dropout2d(x, 0.5, training=False), [I(2, 3, 4)]),
    ("Dropout1d-p0", lambda T, F, x: T.nn.Dropout1d(0.0)(x), [I(2, 3, 4)]),
    ("BatchNorm3d", lambda T, F, x: T.nn.BatchNorm3d(2)(x), [I(2, 2, 2, 3, 2)]),
    # composites and aliases
    ("movedim", lambda T, F, x: (x.movedim(0, 2), T.moveaxis(x, (0, 1), (2, 0))), [I(2, 3, 4)]),
    ("tile", lambda T, F, x: (x.tile((2, 1, 1)), T.tile(x, (2,))), [X]),
    ("broadcast_to", lambda T, F, x: (x.broadcast_to((2, 3, 4)), T.broadcast_tensors(x, T.zeros(2, 1, 1))), [X]),
    ("meshgrid", lambda T, F, a, b: (T.meshgrid(a, b, indexing="ij"), T.meshgrid([a, b], indexing="xy")), [I(3), I(4)]),
    ("repeat_interleave", lambda T, F, x: (x.repeat_interleave(2), T.repeat_interleave(x, 3, dim=1),
                                           x.repeat_interleave(T.tensor([1, 0, 2]), dim=0)), [X]),
    ("take_along_dim", lambda T, F, x: (T.take_along_dim(x, T.tensor([[0, 3], [1, 1], [2, 0]]), 1),
                                        x.take_along_dim(T.tensor([5, 0]))), [X]),
    ("fliplr-flipud", lambda T, F, x: (x.fliplr(), T.flipud(x)), [X]),
    ("column_stack-row_stack", lambda T, F, a, x: (T.column_stack([a, x[0]]), T.row_stack([a, x[1]])), [I(4), X]),
    ("diff", lambda T, F, x, p: (x.diff(), T.diff(x, n=2, dim=0, prepend=p)), [X, I(1, 4)]),
    ("inner-tensordot-kron", lambda T, F, x, y: (T.inner(x, y), T.tensordot(x, y.t(), 1), T.tensordot(x, y, ([1], [1])),
                                                 T.kron(x[:2, :2], y[:2, :3])), [X, Y]),
    ("cartesian_prod", lambda T, F, a, b: T.cartesian_prod(a, b), [I(3), I(2)]),
    ("ravel-sum_to_size", lambda T, F, x: (x.t().ravel(), x.sum_to_size(1, 4), x.sum_to_size((3, 1))), [X]),
    ("nanmean", lambda T, F, x: (x.nanmean(), T.nanmean(x, 1), x.nanmean(dim=0, keepdim=True)),
     [E([[1.0, float("nan"), 3.0], [4.0, 5.0, float("nan")]])]),
    ("aliases", lambda T, F, x, y: (T.absolute(x), x.arcsinh(), T.arctan2(x, y), T.clip(x, -0.5, 0.5), x.clip(min=0),
                                    T.divide(x, y), x.multiply(y), T.subtract(x, y, alpha=2), x.true_divide(2),
                                    T.negative(x), x.fix(), T.greater(x, y), x.less_equal(y), T.concat([x, y]),
                                    T.concatenate((x, y), 1)), [X, Y]),
    ("aliases-inplace", lambda T, F, x: ((x * 0.5).arccos_(), T.arcsin_(x * 0.5), (x * 1).clip_(0, 1),
                                         T.negative_(x * 1), (x * 1).absolute_()), [UNIT]),
    ("einsum-trace", lambda T, F, x: (T.einsum("ii", x), T.einsum("ii->i", x), T.einsum("iij->j", x[None].expand(3, 3, 3))),
     [I(3, 3)]),
    ("where-condition-only", lambda T, F, x: T.where(x > 0), [X]),
    ("scatter-reduce-value", lambda T, F, x: (x * 1).scatter_(1, T.tensor([[2], [3], [0]]), 1.5, reduce="multiply"),
     [X]),
    ("scatter-reduce-add-fn", lambda T, F, x: T.scatter(x, 0, T.tensor([[0, 1, 2, 0]]), 2.0, reduce="add"), [X]),
    ("nonzero-argwhere", lambda T, F, x: (x.nonzero(), T.argwhere(x > 0), T.nonzero(x > 0, as_tuple=True),
                                          T.tensor(3.0).nonzero(), T.tensor(0.0).nonzero(as_tuple=True)), [KINKS]),
    ("bincount-signbit", lambda T, F, x: (T.bincount(T.tensor([0, 3, 3, 1])), T.bincount(T.tensor([1, 1, 2]), x[0, :3],
                                                                                          minlength=5),
                                          T.signbit(x), T.tensor([-0.0, 0.0, -1.0]).signbit()), [X]),
]


# modules whose parameters are float32 (their own dtype): torch refuses float64 inputs with them
_FLOAT32_ONLY = {"PReLU-module", "RMSNorm-module", "BatchNorm3d"}


# torch has no derivative for these (a NotImplemented node): values and graphs only; backward raises in both
_NO_DERIVATIVE = {"scatter-reduce-value", "scatter-reduce-add-fn", "bincount-signbit"}


def _cases(rows):
    return [Case(i, f, list(inp), dtypes=("float32",) if i in _FLOAT32_ONLY else ("float32", "float64"),
                 check_grad=i not in _NO_DERIVATIVE) for i, f, inp in rows]


CASES = _cases(ROWS)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_parity(case, dtype):
    if dtype not in case.dtypes:
        pytest.skip(f"{case.id} is not defined for {dtype} in torch")
    problems = compare_case(case, dtype)
    assert not problems, f"{case.id} ({dtype}):\n  " + "\n  ".join(problems)


# ---- errors: torch's exception type and text -------------------------------------------------------------

ERRORS = [
    ("gather-index-rank", lambda T: T.zeros(3, 4).gather(0, T.tensor([1]))),
    ("scatter-index-rank", lambda T: T.zeros(3, 4).scatter_(0, T.tensor([1]), 1.0)),
    ("scatter_add-index-rank", lambda T: T.zeros(3, 4).scatter_add_(0, T.tensor([1]), T.ones(1))),
    ("index_add-index-not-a-vector", lambda T: T.zeros(3, 4).index_add_(0, T.tensor([[1]]), T.ones(1, 4))),
    ("index_add-float-index", lambda T: T.zeros(3).index_add_(0, T.tensor([1.0]), T.ones(1))),
    ("any-dim-out-of-range", lambda T: T.tensor(3.0).any(1)),
    ("scatter_-leaf", lambda T: T.ones(3, requires_grad=True).scatter_(0, T.tensor([0]), 2.0)),
    ("scatter-reduce-backward", lambda T: (T.ones(3, requires_grad=True) * 1).scatter_(
        0, T.tensor([0]), 2.0, reduce="add").sum().backward()),
    ("scatter-reduce-bad-mode", lambda T: T.ones(3).scatter(0, T.tensor([0]), 2.0, reduce="mean")),
    ("bincount-backward", lambda T: T.bincount(T.tensor([0, 1]), T.ones(2, requires_grad=True)).sum().backward()),
    ("bincount-negative", lambda T: T.bincount(T.tensor([-1, 1]))),
    ("bincount-2d", lambda T: T.bincount(T.tensor([[1]]))),
    ("inv-singular", lambda T: T.linalg.inv(T.zeros(2, 2))),
    ("inv-singular-batched", lambda T: T.linalg.inv(T.stack([T.eye(2), T.zeros(2, 2)]))),
    ("inv-not-square", lambda T: T.inverse(T.zeros(2, 3))),
    ("inv-integer", lambda T: T.linalg.inv(T.eye(2, dtype=T.int64))),
    ("det-not-square", lambda T: T.det(T.zeros(3, 2))),
    ("det-1d", lambda T: T.linalg.det(T.zeros(3))),
    ("glu-odd", lambda T: T.nn.functional.glu(T.ones(3, 5))),
    ("glu-scalar", lambda T: T.nn.functional.glu(T.tensor(1.0))),
    ("prelu-channels", lambda T: T.nn.functional.prelu(T.ones(2, 3), T.ones(2))),
    ("prelu-dtype", lambda T: T.nn.functional.prelu(T.ones(2, 3), T.ones(3, dtype=T.float64))),
    ("masked_select-mask-dtype", lambda T: T.ones(3).masked_select(T.tensor([1, 0, 1]))),
    ("trace-3d", lambda T: T.ones(2, 2, 2).trace()),
    ("diag-3d", lambda T: T.diag(T.ones(2, 2, 2))),
    ("diag_embed-same-dims", lambda T: T.diag_embed(T.ones(3), 0, 1, 1)),
    ("embedding_bag-2d-offsets", lambda T: T.nn.functional.embedding_bag(T.tensor([[0, 1]]), T.ones(3, 2), T.tensor([0]))),
    ("embedding_bag-first-offset", lambda T: T.nn.functional.embedding_bag(T.tensor([0, 1]), T.ones(3, 2), T.tensor([1]))),
    ("embedding_bag-mode", lambda T: T.nn.functional.embedding_bag(T.tensor([[0, 1]]), T.ones(3, 2), mode="median")),
    ("embedding_bag-weights-mean", lambda T: T.nn.functional.embedding_bag(T.tensor([[0, 1]]), T.ones(3, 2),
                                                                          per_sample_weights=T.ones(1, 2))),
    ("embedding_bag-max-freq", lambda T: T.nn.EmbeddingBag(3, 2, mode="max", scale_grad_by_freq=True)(T.tensor([[0]]))),
    ("interpolate-size-and-scale", lambda T: T.nn.functional.interpolate(T.ones(1, 1, 2, 2), size=3, scale_factor=2)),
    ("interpolate-nothing", lambda T: T.nn.functional.interpolate(T.ones(1, 1, 2, 2))),
    ("interpolate-align-nearest", lambda T: T.nn.functional.interpolate(T.ones(1, 1, 2, 2), scale_factor=2,
                                                                         align_corners=True)),
    ("interpolate-size-rank", lambda T: T.nn.functional.interpolate(T.ones(1, 1, 2, 2), size=(2, 3, 4))),
    ("movedim-repeated", lambda T: T.ones(2, 3).movedim((0, 0), (0, 1))),
    ("movedim-lengths", lambda T: T.ones(2, 3).movedim((0, 1), (0,))),
    ("repeat_interleave-negative", lambda T: T.ones(2).repeat_interleave(-1)),
    ("repeat_interleave-negative-tensor", lambda T: T.ones(2).repeat_interleave(T.tensor([-1, 1]))),
    ("embedding_bag-last-offset", lambda T: T.nn.functional.embedding_bag(T.tensor([0, 1]), T.ones(3, 2), T.tensor([0, 5]))),
    ("softshrink-negative-double", lambda T: T.nn.functional.softshrink(T.ones(2, dtype=T.float64), -0.5)),
    ("rms_norm-shape-2", lambda T: T.nn.functional.rms_norm(T.ones(2, 3), (4, 5))),
    ("fliplr-1d", lambda T: T.ones(2).fliplr()),
    ("sum_to_size-bad", lambda T: T.ones(2, 3).sum_to_size(4)),
    ("is_nonzero-many", lambda T: T.ones(2).is_nonzero()),
    ("is_nonzero-empty", lambda T: T.ones(0).is_nonzero()),
    ("meshgrid-indexing", lambda T: T.meshgrid(T.ones(2), T.ones(2), indexing="yx")),
    ("multinomial-too-many", lambda T: T.multinomial(T.tensor([0.0, 1.0]), 3)),
    ("multinomial-zero-sum", lambda T: T.multinomial(T.tensor([0.0, 0.0]), 1)),
    ("multinomial-negative", lambda T: T.multinomial(T.tensor([-1.0, 1.0]), 1)),
    ("multinomial-3d", lambda T: T.multinomial(T.ones(2, 2, 2), 1)),
    ("normal-negative-std", lambda T: T.normal(T.zeros(2), -T.ones(2))),
    ("finfo-int", lambda T: T.finfo(T.int32)), ("iinfo-float", lambda T: T.iinfo(T.float32)),
    ("iinfo-bool", lambda T: T.iinfo(T.bool)),
    ("cosine_embedding-target-dim", lambda T: T.nn.functional.cosine_embedding_loss(T.ones(2, 3), T.ones(2, 3),
                                                                                    T.ones(2, 1))),
    ("cosine_embedding-input-dim", lambda T: T.nn.functional.cosine_embedding_loss(T.ones(3), T.ones(3), T.ones(2))),
    ("margin_ranking-dims", lambda T: T.nn.functional.margin_ranking_loss(T.ones(2), T.ones(2), T.ones(1, 2))),
    ("triplet-margin", lambda T: T.nn.functional.triplet_margin_loss(T.ones(2), T.ones(2), T.ones(2), margin=0)),
    ("TripletMarginLoss-margin", lambda T: T.nn.TripletMarginLoss(margin=-1.0)),
    ("triplet-dims", lambda T: T.nn.functional.triplet_margin_loss(T.ones(2, 2), T.ones(2), T.ones(2))),
    ("gaussian_nll-negative-var", lambda T: T.nn.functional.gaussian_nll_loss(T.ones(2), T.ones(2), -T.ones(2))),
    ("gaussian_nll-var-size", lambda T: T.nn.functional.gaussian_nll_loss(T.ones(2, 3), T.ones(2, 3), T.ones(3, 2))),
    ("poisson_nll-reduction", lambda T: T.nn.functional.poisson_nll_loss(T.ones(2), T.ones(2), reduction="avg")),
    ("softshrink-negative", lambda T: T.nn.functional.softshrink(T.ones(2), -1.0)),
    ("dropout1d-rank", lambda T: T.nn.functional.dropout1d(T.ones(2, 3, 4, 5))),
    ("dropout-p", lambda T: T.nn.Dropout2d(p=1.5)),
    ("rms_norm-shape", lambda T: T.nn.functional.rms_norm(T.ones(2, 3), (4,))),
    ("dirac-rank", lambda T: T.nn.init.dirac_(T.ones(2, 2))),
    ("sparse-rank", lambda T: T.nn.init.sparse_(T.ones(2, 2, 2), 0.5)),
    ("einsum-repeated-size", lambda T: T.einsum("ii", T.ones(2, 3))),
    ("matmul-out-requires-grad", lambda T: T.matmul(T.ones(2, 2, requires_grad=True), T.ones(2, 2), out=T.zeros(2, 2))),
    ("index_put_-leaf", lambda T: T.ones(3, requires_grad=True).index_put_((T.tensor([0]),), T.tensor(2.0))),
    ("acos_-leaf", lambda T: T.ones(3, requires_grad=True).acos_()),
]


def _outcome(lib, fn):
    try:
        fn(lib)
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return type(exc).__name__, str(exc).replace("derivgen", "torch")
    return "no error", ""


@pytest.mark.parametrize("fn", [f for _, f in ERRORS], ids=[i for i, _ in ERRORS])
def test_error_parity(fn):
    theirs = _outcome(torch, fn)
    assert theirs[0] != "no error", "torch raises nothing here: the case tests nothing"
    assert _outcome(derivgen, fn) == theirs
