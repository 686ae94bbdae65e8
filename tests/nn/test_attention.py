"""``F.scaled_dot_product_attention``, ``nn.MultiheadAttention`` and ``F.multi_head_attention_forward``
against torch: outputs, attention weights and float64 gradients (inputs and every parameter) with weights
copied in, for every mask kind (none, key padding, bool, float per head, both, causal), batched and
unbatched, batch_first, kdim/vdim, bias_k/bias_v, zero attention, need_weights and averaging; fully masked
rows (NaN in the weights path as torch, zeros in scaled dot product attention as torch); state_dict, repr
and torch's errors."""
import warnings

import numpy as np
import pytest

import derivgen
from tests.support.nn_parity import copy_weights, same_text

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")


def _weighted(lib, outs):
    return sum((t * lib.tensor(np.linspace(-1, 1, t.numel()).reshape(tuple(t.shape)))).sum() for t in outs)


def _assert_same(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)  # NaNs must sit in the same places


def _sdpa(lib, arrays, masks, kwargs):
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    ms = [lib.tensor(m) for m in masks]
    out = lib.nn.functional.scaled_dot_product_attention(*ts, *ms, **kwargs)
    _weighted(lib, [out]).backward()
    return [out.detach().numpy()] + [t.grad.numpy() for t in ts]


RNG = np.random.default_rng(0)
Q, K, V = RNG.standard_normal((2, 3, 4, 5)), RNG.standard_normal((2, 3, 6, 5)), RNG.standard_normal((2, 3, 6, 7))
BOOL_MASK = RNG.random((4, 6)) > 0.3
BOOL_MASK[1] = False  # one fully masked row
FLOAT_MASK = RNG.standard_normal((2, 1, 4, 6))
SDPA_CASES = [
    ((Q, K, V), (), {}),
    ((Q, K, V), (BOOL_MASK,), {}),
    ((Q, K, V), (FLOAT_MASK,), {"scale": 0.3}),
    ((Q, K, V), (), {"is_causal": True}),
    ((Q[0], K[0, :, :3], V[0, :, :3]), (), {"is_causal": True}),
    ((Q, K[:, :1], V[:, :1]), (), {"enable_gqa": True}),
    ((Q[0, 0], K[0, 0], V[0, 0]), (), {}),
]


@pytest.mark.parametrize("case", range(len(SDPA_CASES)))
def test_sdpa_matches_torch(case):
    arrays, masks, kwargs = SDPA_CASES[case]
    _assert_same(_sdpa(derivgen, arrays, masks, kwargs), _sdpa(torch, arrays, masks, kwargs))


def test_sdpa_dropout_scales_kept_weights():
    derivgen.manual_seed(0)
    q = derivgen.tensor(Q)
    ones = derivgen.ones(2, 3, 6, 1, dtype=derivgen.float64)
    kept = derivgen.nn.functional.scaled_dot_product_attention(q, derivgen.tensor(K), ones, dropout_p=0.5)
    values = kept.detach().numpy()
    assert not np.allclose(values, 1.0)
    # each row is (sum of the kept softmax weights) / 0.5: the mean over many rows stays near 1
    assert abs(values.mean() - 1.0) < 0.25


def _error(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 - the comparison is the test
        return type(e).__name__, same_text(str(e))
    return None


def _t(lib, *shape, dtype=None):
    return lib.zeros(*shape, dtype=dtype or lib.float64)


ERROR_CASES = [
    lambda lib: lib.nn.functional.scaled_dot_product_attention(_t(lib, 2, 4, 5), _t(lib, 2, 6, 5), _t(lib, 2, 6, 5),
                                                               attn_mask=_t(lib, 4, 6), is_causal=True),
    lambda lib: lib.nn.functional.scaled_dot_product_attention(_t(lib, 2, 4, 5), _t(lib, 2, 6, 5, dtype=lib.float32),
                                                               _t(lib, 2, 6, 5)),
    lambda lib: lib.nn.functional.scaled_dot_product_attention(_t(lib, 2, 4, 5), _t(lib, 2, 6, 5), _t(lib, 2, 6, 5),
                                                               attn_mask=lib.ones(4, 6, dtype=lib.int64)),
    lambda lib: lib.nn.functional.scaled_dot_product_attention(_t(lib, 5), _t(lib, 5), _t(lib, 5)),
    lambda lib: lib.nn.MultiheadAttention(0, 2),
    lambda lib: lib.nn.MultiheadAttention(5, 2),
    lambda lib: lib.nn.MultiheadAttention(4, 2)(_t(lib, 3, 2, 4, dtype=lib.float32), _t(lib, 3, 4, dtype=lib.float32),
                                                _t(lib, 3, 4, dtype=lib.float32)),
    lambda lib: lib.nn.MultiheadAttention(4, 2)(_t(lib, 3, 2, 5, dtype=lib.float32), _t(lib, 3, 2, 5, dtype=lib.float32),
                                                _t(lib, 3, 2, 5, dtype=lib.float32)),
    lambda lib: lib.nn.MultiheadAttention(4, 2)(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4),
                                                attn_mask=lib.zeros(3, 4)),
    lambda lib: lib.nn.MultiheadAttention(4, 2)(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4),
                                                attn_mask=lib.zeros(2, 3, 3)),
    lambda lib: lib.nn.MultiheadAttention(4, 2)(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4),
                                                key_padding_mask=lib.zeros(2, 4, dtype=lib.bool)),
    lambda lib: lib.nn.MultiheadAttention(4, 2)(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4),
                                                key_padding_mask=lib.zeros(2, 3, dtype=lib.int64)),
    lambda lib: lib.nn.MultiheadAttention(4, 2)(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4),
                                                is_causal=True),
    lambda lib: lib.nn.MultiheadAttention(4, 2)(lib.zeros(3, 2, 4), lib.zeros(5, 2, 4), lib.zeros(4, 2, 4)),
    lambda lib: lib.nn.MultiheadAttention(4, 2)(lib.zeros(2, 3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4)),
]


@pytest.mark.parametrize("case", range(len(ERROR_CASES)))
def test_errors_match_torch(case):
    ours, theirs = _error(lambda: ERROR_CASES[case](derivgen)), _error(lambda: ERROR_CASES[case](torch))
    assert theirs is not None
    assert ours == theirs


E, HEADS, L, S, N = 8, 2, 3, 5, 4
CONSTRUCTORS = [{}, {"batch_first": True}, {"kdim": 3, "vdim": 6}, {"add_bias_kv": True}, {"add_zero_attn": True},
                {"bias": False}, {"add_bias_kv": True, "add_zero_attn": True, "kdim": 3, "vdim": 3}]
MASKS = ["none", "kpm", "bool", "float", "both", "causal"]
CALLS = [{}, {"need_weights": False}, {"average_attn_weights": False}]


def _mha_pair(options):
    theirs = torch.nn.MultiheadAttention(E, HEADS, dtype=torch.float64, **options)
    ours = derivgen.nn.MultiheadAttention(E, HEADS, dtype=derivgen.float64, **options)
    copy_weights(theirs, ours)
    return ours, theirs


def _mha_inputs(options, mask_kind, batched, rng):
    first = options.get("batch_first", False)
    kdim, vdim = options.get("kdim", E), options.get("vdim", E)

    def shape(steps, dim):
        if not batched:
            return (steps, dim)
        return (N, steps, dim) if first else (steps, N, dim)
    shared = kdim == E == vdim and mask_kind != "causal"
    src = L if shared else S
    arrays = [rng.standard_normal(shape(L, E))] if shared else \
        [rng.standard_normal(shape(L, E)), rng.standard_normal(shape(S, kdim)), rng.standard_normal(shape(S, vdim))]
    masks, extra = {}, {}
    if mask_kind in ("kpm", "both"):
        masks["key_padding_mask"] = rng.random((N, src) if batched else (src,)) > 0.7
    if mask_kind in ("bool", "both"):
        masks["attn_mask"] = rng.random((L, src)) > 0.7
    if mask_kind == "float":
        masks["attn_mask"] = rng.standard_normal((HEADS * N if batched else HEADS, L, src))
    if mask_kind == "causal":
        masks["attn_mask"] = np.triu(np.ones((L, src), bool), 1)
        extra["is_causal"] = True
    return arrays, masks, extra


def _mha_run(lib, module, arrays, masks, kwargs):
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    q, k, v = (ts[0], ts[0], ts[0]) if len(ts) == 1 else ts  # one tensor: torch's shared-projection path
    out, weights = module(q, k, v, **{n: lib.tensor(m) for n, m in masks.items()}, **kwargs)
    outs = [out] + ([] if weights is None else [weights])
    finite = [lib.nan_to_num(o, nan=0.0) if o.requires_grad else o for o in outs]
    _weighted(lib, finite).backward()
    return [o.detach().numpy() for o in outs] + [t.grad.numpy() for t in ts] + \
        [p.grad.numpy() for p in module.parameters()]


@pytest.mark.parametrize("options", CONSTRUCTORS)
@pytest.mark.parametrize("mask_kind", MASKS)
def test_multihead_attention_matches_torch(options, mask_kind):
    ours, theirs = _mha_pair(options)
    rng = np.random.default_rng(4)
    for call in CALLS:
        for batched in (True, False):
            arrays, masks, extra = _mha_inputs(options, mask_kind, batched, rng)
            kwargs = dict(call, **extra)
            for module in (ours, theirs):
                module.zero_grad()
            _assert_same(_mha_run(derivgen, ours, arrays, masks, kwargs),
                         _mha_run(torch, theirs, arrays, masks, kwargs))


def test_multihead_attention_state_dict_repr_and_init():
    for options in CONSTRUCTORS:
        ours, theirs = _mha_pair(options)
        assert repr(ours) == repr(theirs)
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    fresh = derivgen.nn.MultiheadAttention(16, 4, add_bias_kv=True)
    bound = (6 / (16 + 48)) ** 0.5  # xavier_uniform over the packed (3E, E) weight
    assert 0.8 * bound < float(fresh.in_proj_weight.abs().max()) <= bound
    assert float(fresh.in_proj_bias.abs().max()) == 0.0 and float(fresh.out_proj.bias.abs().max()) == 0.0
    assert type(fresh.out_proj).__name__ == "NonDynamicallyQuantizableLinear"


def test_functional_multi_head_attention_forward_matches_torch():
    rng = np.random.default_rng(5)
    query, key = rng.standard_normal((L, N, E)), rng.standard_normal((S, N, E))
    w_in, b_in = rng.standard_normal((3 * E, E)), rng.standard_normal(3 * E)
    w_out, b_out = rng.standard_normal((E, E)), rng.standard_normal(E)
    static_k = rng.standard_normal((N * HEADS, S, E // HEADS))
    results = []
    for lib in (derivgen, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in (query, key, w_in, b_in, w_out, b_out, static_k)]
        q, k, wi, bi, wo, bo, sk = ts
        out, weights = lib.nn.functional.multi_head_attention_forward(
            q, k, k, E, HEADS, wi, bi, None, None, False, 0.0, wo, bo, training=False, static_k=sk)
        _weighted(lib, [out, weights]).backward()
        results.append([out.detach().numpy(), weights.detach().numpy()] + [t.grad.numpy() for t in ts])
    _assert_same(*results)
