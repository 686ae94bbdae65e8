"""RNN, LSTM and GRU layers and ``nn.utils.rnn`` against torch, weights copied in: outputs, final states and
float64 gradients (input, initial states, every parameter) for layers, directions, projections, batch_first,
unbatched and packed input; state_dict keys and order, repr, init bounds, and torch's errors."""
import warnings

import numpy as np
import pytest

import derivgen
from tests.support.nn_parity import copy_weights, same_text, to_numpy

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

LAYERS = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "bias": False, "num_layers": 3}),
    ("RNN", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {}),
    ("LSTM", {"bias": False, "batch_first": True}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 3}),
    ("LSTM", {"num_layers": 2, "proj_size": 2, "batch_first": True}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("GRU", {"bias": False, "bidirectional": True}),
]
INPUT, HIDDEN, STEPS, BATCH = 4, 5, 6, 3


def _pair(name, options):
    theirs = getattr(torch.nn, name)(INPUT, HIDDEN, dtype=torch.float64, **options)
    ours = getattr(derivgen.nn, name)(INPUT, HIDDEN, dtype=derivgen.float64, **options)
    copy_weights(theirs, ours)
    return ours, theirs


def _state_shapes(name, options, batch):
    layers = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    h_size = options.get("proj_size") or HIDDEN
    shapes = [(layers, batch, h_size)]
    if name == "LSTM":
        shapes.append((layers, batch, HIDDEN))
    return shapes if batch else [s[:1] + s[2:] for s in shapes]


def _leaves(lib, arrays):
    return [lib.tensor(a, requires_grad=True) for a in arrays]


def _states_arg(leaves):
    if not leaves:
        return None
    return tuple(leaves) if len(leaves) == 2 else leaves[0]


def _weighted_sum(lib, tensors):
    return sum((t * lib.tensor(np.linspace(-1, 1, t.numel()).reshape(tuple(t.shape)))).sum() for t in tensors)


def _run(lib, module, x, states, packed_lengths=None):
    x = lib.tensor(x, requires_grad=True)
    leaves = _leaves(lib, states)
    inp = x
    if packed_lengths is not None:
        inp = lib.nn.utils.rnn.pack_padded_sequence(x, packed_lengths, batch_first=module.batch_first,
                                                     enforce_sorted=False)
    out, hidden = module(inp, _states_arg(leaves))
    if packed_lengths is not None:
        out, lengths = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=module.batch_first)
        assert lengths.tolist() == list(packed_lengths)
    hidden = hidden if isinstance(hidden, tuple) else (hidden,)
    _weighted_sum(lib, (out,) + hidden).backward()
    grads = [x.grad] + [t.grad for t in leaves] + [p.grad for p in module.parameters()]
    return [to_numpy(o) for o in (out,) + hidden], [to_numpy(g) for g in grads]


def _assert_same(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("name,options", LAYERS)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("given_states", [True, False])
def test_layer_matches_torch(name, options, batched, given_states):
    ours, theirs = _pair(name, options)
    rng = np.random.default_rng(1)
    if batched:
        shape = (BATCH, STEPS, INPUT) if options.get("batch_first") else (STEPS, BATCH, INPUT)
    else:
        shape = (STEPS, INPUT)
    x = rng.standard_normal(shape)
    states = [rng.standard_normal(s) for s in _state_shapes(name, options, BATCH if batched else 0)] \
        if given_states else []
    outs_d, grads_d = _run(derivgen, ours, x, states)
    outs_t, grads_t = _run(torch, theirs, x, states)
    _assert_same(outs_d, outs_t)
    _assert_same(grads_d, grads_t)


@pytest.mark.parametrize("name,options", LAYERS)
@pytest.mark.parametrize("given_states", [True, False])
def test_packed_input_matches_torch(name, options, given_states):
    ours, theirs = _pair(name, options)
    rng = np.random.default_rng(2)
    batch = 4
    shape = (batch, STEPS, INPUT) if options.get("batch_first") else (STEPS, batch, INPUT)
    x = rng.standard_normal(shape)
    states = [rng.standard_normal(s) for s in _state_shapes(name, options, batch)] if given_states else []
    lengths = [3, STEPS, 1, 3]
    outs_d, grads_d = _run(derivgen, ours, x, states, lengths)
    outs_t, grads_t = _run(torch, theirs, x, states, lengths)
    _assert_same(outs_d, outs_t)
    _assert_same(grads_d, grads_t)


def test_state_dict_repr_and_init():
    for name, options in LAYERS + [("LSTM", {"dropout": 0.5, "num_layers": 2})]:
        ours, theirs = _pair(name, options)
        assert repr(ours) == repr(theirs)
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
        assert ours._flat_weights_names == theirs._flat_weights_names
        assert ours._all_weights == theirs._all_weights
        assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == \
            [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]
    layer = derivgen.nn.LSTM(3, 16, num_layers=2)
    layer.flatten_parameters()
    for p in layer.parameters():
        assert 0.2 < float(p.abs().max()) <= 0.25


def test_dropout_between_layers():
    layer = derivgen.nn.GRU(3, 8, num_layers=2, dropout=0.5, dtype=derivgen.float64)
    x = derivgen.randn(5, 2, 3, dtype=derivgen.float64)
    layer.eval()
    first, _ = layer(x)
    again, _ = layer(x)
    assert np.array_equal(to_numpy(first), to_numpy(again))
    layer.train()
    derivgen.manual_seed(0)
    noisy, _ = layer(x)
    assert not np.allclose(to_numpy(noisy), to_numpy(first))
    with pytest.warns(UserWarning, match="dropout option adds dropout after all but last recurrent layer"):
        single = derivgen.nn.GRU(3, 8, num_layers=1, dropout=0.5)
    single.train()
    y = derivgen.randn(5, 2, 3)
    single.eval()
    plain, _ = single(y)
    single.train()
    assert np.array_equal(to_numpy(single(y)[0]), to_numpy(plain))


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the comparison is the test
        return type(e).__name__, same_text(str(e))
    return None


ERROR_CASES = [
    lambda lib: lib.nn.RNN(3, 4, nonlinearity="sigmoid"),
    lambda lib: lib.nn.GRU(3, 4, proj_size=2),
    lambda lib: lib.nn.RNN(3, 4, proj_size=2),
    lambda lib: lib.nn.LSTM(3, 4, proj_size=4),
    lambda lib: lib.nn.LSTM(3, 4, proj_size=-1),
    lambda lib: lib.nn.LSTM(3, 4, dropout=1.5),
    lambda lib: lib.nn.LSTM(3, 4, dropout=True),
    lambda lib: lib.nn.LSTM(3, 4, bias=1),
    lambda lib: lib.nn.LSTM(3, 4, batch_first=None),
    lambda lib: lib.nn.LSTM(3.0, 4),
    lambda lib: lib.nn.LSTM(0, 4),
    lambda lib: lib.nn.LSTM(3, "4"),
    lambda lib: lib.nn.LSTM(3, 0),
    lambda lib: lib.nn.LSTM(3, 4, num_layers=0),
    lambda lib: lib.nn.RNN(3, 4)(lib.zeros(3)),
    lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(1, 2, 3, 4)),
    lambda lib: lib.nn.GRU(3, 4)(lib.zeros(3)),
    lambda lib: lib.nn.RNN(3, 4)(lib.zeros(5, 2, 6)),
    lambda lib: lib.nn.RNN(3, 4)(lib.zeros(5, 2, 3, dtype=lib.float64)),
    lambda lib: lib.nn.RNN(3, 4)(lib.zeros(5, 2, 3), lib.zeros(1, 3, 4)),
    lambda lib: lib.nn.GRU(3, 4)(lib.zeros(5, 2, 3), lib.zeros(2, 4)),
    lambda lib: lib.nn.GRU(3, 4)(lib.zeros(5, 3), lib.zeros(1, 2, 4)),
    lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(5, 2, 3), (lib.zeros(1, 2, 4), lib.zeros(2, 4))),
    lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(5, 3), (lib.zeros(1, 2, 4), lib.zeros(2, 4))),
    lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(5, 2, 3), (lib.zeros(1, 2, 5), lib.zeros(1, 2, 4))),
    lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(5, 2, 3), (lib.zeros(1, 2, 4), lib.zeros(1, 3, 4))),
    lambda lib: lib.nn.LSTM(3, 4, proj_size=2)(lib.zeros(5, 2, 3), (lib.zeros(1, 2, 4), lib.zeros(1, 2, 4))),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(4, 3, 2), [2, 3, 1]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(4, 3, 2), [2, 1, 0]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(4, 3, 2), [2, 1]),
    lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_sequence([lib.zeros(3, 2), lib.zeros(2, 2)]), total_length=2),
    lambda lib: lib.nn.utils.rnn.pad_sequence([lib.zeros(3, 2)], padding_side="middle"),
]


@pytest.mark.parametrize("case", range(len(ERROR_CASES)))
def test_errors_match_torch(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _error(lambda: ERROR_CASES[case](derivgen)), _error(lambda: ERROR_CASES[case](torch))
    assert theirs is not None
    assert ours == theirs


def test_dropout_warning_matches_torch():
    texts = []
    for lib in (derivgen, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.LSTM(3, 4, dropout=0.2)
        texts.append([str(w.message) for w in caught])
    assert texts[0] == texts[1] and len(texts[0]) == 1


def test_rnn_utils_match_torch():
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((n, 2)) for n in (2, 5, 3)]
    results = []
    for lib in (derivgen, torch):
        seqs = [lib.tensor(a, requires_grad=True) for a in arrays]
        utils = lib.nn.utils.rnn
        padded = utils.pad_sequence(seqs, batch_first=True, padding_value=-1.0)
        left = utils.pad_sequence(seqs, padding_side="left")
        packed = utils.pack_sequence(seqs, enforce_sorted=False)
        again, lengths = utils.pad_packed_sequence(packed, batch_first=False, padding_value=7.0, total_length=6)
        unpacked = utils.unpack_sequence(packed)
        unpadded = utils.unpad_sequence(padded, lib.tensor([2, 5, 3]), batch_first=True)
        loss = _weighted_sum(lib, [padded, left, packed.data, again] + unpacked + unpadded)
        loss.backward()
        results.append([to_numpy(t) for t in [padded, left, packed.data, packed.batch_sizes, packed.sorted_indices,
                                              packed.unsorted_indices, again, lengths] + unpacked + unpadded]
                       + [to_numpy(s.grad) for s in seqs])
    _assert_same(*results)
    ours = derivgen.nn.utils.rnn.PackedSequence(derivgen.zeros(3, 2), derivgen.tensor([2, 1]))
    assert ours.sorted_indices is None and ours.unsorted_indices is None
    assert isinstance(ours, tuple) and ours.double().data.dtype == derivgen.float64
