"""The fused LSTM layer (row ``mkldnn_rnn_layer``, node ``MkldnnRnnLayerBackward0``) against torch's oneDNN
path on CPU: which configurations take it (float32, padded input, no projections, the oneDNN flag on), the
recorded graph node by node with the nodes' saved fields, outputs, final states and gradients of ``nn.LSTM``,
the row itself (float32 values and gradients against ``torch.mkldnn_rnn_layer``, float64 gradcheck and
gradgradcheck), and second derivatives through the layer."""
import warnings

import numpy as np
import pytest

import derivgen
from derivgen.core.registry import aten
from tests.support.nn_parity import copy_weights, to_numpy

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

INPUT, HIDDEN, STEPS, BATCH = 3, 4, 5, 2

CONFIGS = [
    {},
    {"bidirectional": True},
    {"num_layers": 2},
    {"num_layers": 2, "bidirectional": True},
    {"batch_first": True},
    {"bias": False},
    {"num_layers": 3, "bidirectional": True, "batch_first": True, "bias": False},
]


def _pair(options, dtype="float32"):
    torch.manual_seed(0)
    theirs = torch.nn.LSTM(INPUT, HIDDEN, dtype=getattr(torch, dtype), **options)
    ours = derivgen.nn.LSTM(INPUT, HIDDEN, dtype=getattr(derivgen, dtype), **options)
    copy_weights(theirs, ours)
    return ours, theirs


def _input(options, batch=BATCH, dtype=np.float32):
    rng = np.random.default_rng(1)
    shape = (batch, STEPS, INPUT) if options.get("batch_first") else (STEPS, batch, INPUT)
    return rng.standard_normal(shape).astype(dtype)


def _states(options, batch=BATCH):
    rng = np.random.default_rng(2)
    layers = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    return [rng.standard_normal((layers, batch, HIDDEN)).astype(np.float32) for _ in range(2)]


def _graph(fn, depth=6):
    """The graph below ``fn`` as nested ``(name, children)``, both libraries' namespaces spelled alike."""
    if fn is None:
        return None
    name = fn.name().replace("derivgen::", "torch::")
    if depth == 0:
        return name
    return name, tuple(_graph(child, depth - 1) for child, _ in fn.next_functions)


def _names(fn, seen=None):
    """Every node name reachable from ``fn``."""
    seen = set() if seen is None else seen
    if fn is not None and fn not in seen:
        seen.add(fn)
        for child, _ in fn.next_functions:
            _names(child, seen)
    return {f.name().replace("derivgen::", "torch::") for f in seen}


def _run_both(options, with_states=False, input_grad=True, unbatched=False):
    ours, theirs = _pair(options)
    x = _input(options, batch=1 if unbatched else BATCH)
    if unbatched:
        x = x[0] if options.get("batch_first") else x[:, 0]
    results = []
    for lib, module in ((derivgen, ours), (torch, theirs)):
        xt = lib.tensor(x, requires_grad=input_grad)
        args = [xt]
        if with_states:
            states = [lib.tensor(s[:, 0] if unbatched else s, requires_grad=True) for s in _states(options, 1 if unbatched else BATCH)]
            args.append(tuple(states))
        out, (h, c) = module(*args)
        results.append((module, xt, args[1] if with_states else (), out, h, c))
    return results


@pytest.mark.parametrize("options", CONFIGS, ids=str)
@pytest.mark.parametrize("with_states", [False, True], ids=["no_hx", "hx"])
def test_graph_matches_torch_node_by_node(options, with_states):
    (_, _, _, out, h, c), (_, _, _, t_out, t_h, t_c) = _run_both(options, with_states)
    for ours, theirs in ((out, t_out), (h, t_h), (c, t_c)):
        assert _graph(ours.grad_fn) == _graph(theirs.grad_fn)
    assert "MkldnnRnnLayerBackward0" in _names(out.grad_fn)


@pytest.mark.parametrize("options", [{}, {"batch_first": True}], ids=str)
def test_unbatched_and_no_grad_input_graphs(options):
    (_, _, _, out, h, _), (_, _, _, t_out, t_h, _) = _run_both(options, unbatched=True)
    assert _graph(out.grad_fn) == _graph(t_out.grad_fn)
    assert _graph(h.grad_fn) == _graph(t_h.grad_fn)
    (_, _, _, out, _, _), (_, _, _, t_out, _, _) = _run_both(options, input_grad=False)
    assert _graph(out.grad_fn) == _graph(t_out.grad_fn)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("options", [{}, {"bidirectional": True, "batch_first": True}, {"bias": False}], ids=str)
def test_saved_fields_match_torch(options, training):
    (module, _, _, out, _, _), (t_module, _, _, t_out, _, _) = _run_both(options)
    module.train(training)
    t_module.train(training)
    x = _input(options)
    ours = module(derivgen.tensor(x, requires_grad=True))[0]
    theirs = t_module(torch.tensor(x, requires_grad=True))[0]
    node, t_node = ours.grad_fn, theirs.grad_fn
    while node.name() != "MkldnnRnnLayerBackward0":
        node, t_node = node.next_functions[-1][0], t_node.next_functions[-1][0]
    assert t_node.name() == "MkldnnRnnLayerBackward0"
    for field in ("reverse", "mode", "hidden_size", "num_layers", "has_biases", "bidirectional", "batch_first",
                  "train"):
        assert getattr(node, "_saved_" + field) == getattr(t_node, "_saved_" + field), field
    assert tuple(node._saved_batch_sizes) == tuple(t_node._saved_batch_sizes)
    for field in ("input", "hx_", "cx_", "result0", "result1", "result2", "weight0", "weight1", "weight2",
                  "weight3"):
        mine, theirs_saved = getattr(node, "_saved_" + field), getattr(t_node, "_saved_" + field)
        assert tuple(mine.shape) == tuple(theirs_saved.shape), field
        np.testing.assert_allclose(to_numpy(mine), theirs_saved.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert node._saved_result3.dtype == derivgen.uint8 and t_node._saved_result3.dtype == torch.uint8


@pytest.mark.parametrize("options", CONFIGS, ids=str)
@pytest.mark.parametrize("with_states", [False, True], ids=["no_hx", "hx"])
def test_values_and_gradients_match_torch(options, with_states):
    (module, x, states, out, h, c), (t_module, t_x, t_states, t_out, t_h, t_c) = _run_both(options, with_states)
    for ours, theirs in ((out, t_out), (h, t_h), (c, t_c)):
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(to_numpy(ours), theirs.detach().numpy(), rtol=1e-5, atol=1e-6)
    weights = [np.linspace(-1, 1, t.numel(), dtype=np.float32).reshape(tuple(t.shape)) for t in (t_out, t_h, t_c)]
    (out * derivgen.tensor(weights[0]) + 0).sum().add((h * derivgen.tensor(weights[1])).sum()).add(
        (c * derivgen.tensor(weights[2])).sum()).backward()
    ((t_out * torch.tensor(weights[0])).sum() + (t_h * torch.tensor(weights[1])).sum()
     + (t_c * torch.tensor(weights[2])).sum()).backward()
    pairs = [(x, t_x)] + list(zip(states, t_states)) + list(zip(module.parameters(), t_module.parameters()))
    for ours, theirs in pairs:
        np.testing.assert_allclose(to_numpy(ours.grad), theirs.grad.numpy(), rtol=1e-4, atol=1e-5)


def _paths(lib, module_options, x, lengths=None, dtype="float32", mkldnn=True):
    torch.manual_seed(0)
    module = lib.nn.LSTM(INPUT, HIDDEN, dtype=getattr(lib, dtype), **module_options)
    xt = lib.tensor(x.astype(dtype), requires_grad=True)
    if lengths is not None:
        xt = lib.nn.utils.rnn.pack_padded_sequence(xt, lengths)
    with lib.backends.mkldnn.flags(enabled=mkldnn), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = module(xt)[0]
    out = out.data if lengths is not None else out
    # torch's C++ warnings end with where they were raised
    return "MkldnnRnnLayerBackward0" in _names(out.grad_fn), [str(w.message).split(" (Triggered")[0]
                                                              for w in caught if "oneDNN" in str(w.message)]


@pytest.mark.parametrize("case", [
    {"dtype": "float64"},
    {"options": {"proj_size": 2}},
    {"lengths": [5, 3]},
    {"mkldnn": False},
    {},
], ids=str)
def test_fused_path_taken_exactly_where_torch_takes_it(case):
    x = _input({})
    kwargs = {k: case[k] for k in ("lengths", "dtype", "mkldnn") if k in case}
    ours = _paths(derivgen, case.get("options", {}), x, **kwargs)
    theirs = _paths(torch, case.get("options", {}), x, **kwargs)
    assert ours == theirs


def test_composite_path_values_match_fused():
    ours, _ = _pair({"num_layers": 2, "bidirectional": True})
    x = derivgen.tensor(_input({}))
    fused = ours(x)
    with derivgen.backends.mkldnn.flags(enabled=False):
        composite = ours(x)
    assert "MkldnnRnnLayerBackward0" not in _names(composite[0].grad_fn)
    for a, b in zip((fused[0],) + fused[1], (composite[0],) + composite[1]):
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-5, atol=1e-6)


def test_mkldnn_flags_like_torch():
    for lib in (derivgen, torch):
        assert lib.backends.mkldnn.is_available() is True
        assert lib.backends.mkldnn.enabled is True
        with lib.backends.mkldnn.flags(enabled=False):
            assert lib.backends.mkldnn.enabled is False
        assert lib.backends.mkldnn.enabled is True
        lib.backends.mkldnn.enabled = False
        try:
            assert lib.backends.mkldnn.enabled is False
        finally:
            lib.backends.mkldnn.enabled = True


# ---- the row itself ---------------------------------------------------------------------------------

def _row_arrays(dtype, steps=STEPS, batch=BATCH, features=INPUT, hidden=HIDDEN, seed=3):
    rng = np.random.default_rng(seed)
    shapes = [(steps, batch, features), (4 * hidden, features), (4 * hidden, hidden), (4 * hidden,),
              (4 * hidden,), (batch, hidden), (batch, hidden)]
    return [(rng.standard_normal(s) * 0.5).astype(dtype) for s in shapes]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("has_biases", [True, False])
def test_row_matches_torch_float32(reverse, has_biases):
    arrays = _row_arrays(np.float32)
    flags = (reverse, [], 2, HIDDEN, 1, has_biases, False, False, True)
    t_args = [torch.tensor(a, requires_grad=True) for a in arrays]
    d_args = [derivgen.tensor(a, requires_grad=True) for a in arrays]
    t_res = torch.mkldnn_rnn_layer(*t_args, *flags)
    d_res = aten.mkldnn_rnn_layer(*d_args, *flags)
    for ours, theirs in zip(d_res[:3], t_res[:3]):
        np.testing.assert_allclose(to_numpy(ours), theirs.detach().numpy(), rtol=1e-5, atol=1e-6)
    grads = [np.random.default_rng(4 + k).standard_normal(tuple(r.shape)).astype(np.float32) for k, r in
             enumerate(t_res[:3])]
    t_grads = torch.autograd.grad(t_res[:3], t_args, [torch.tensor(g) for g in grads], allow_unused=True)
    d_grads = derivgen.autograd.grad(d_res[:3], d_args, [derivgen.tensor(g) for g in grads], allow_unused=True)
    for ours, theirs in zip(d_grads, t_grads):
        assert (ours is None) == (theirs is None)
        if theirs is not None:
            np.testing.assert_allclose(to_numpy(ours), theirs.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("has_biases", [True, False])
def test_row_gradcheck_float64(reverse, has_biases):
    # without biases the forward ignores weight2 and weight3 (torch still returns their gate-sum gradients)
    leaves = [derivgen.tensor(a, requires_grad=has_biases or k not in (3, 4))
              for k, a in enumerate(_row_arrays(np.float64, steps=3, batch=2, hidden=2))]
    flags = (reverse, [], 2, 2, 1, has_biases, False, False, True)

    def f(*args):
        return aten.mkldnn_rnn_layer(*args, *flags)[:3]

    assert derivgen.autograd.gradcheck(f, leaves)
    assert derivgen.autograd.gradgradcheck(f, leaves)


def test_row_undefined_output_gradients():
    """Only the output used: the final states' gradients are zeros, as torch fills them."""
    arrays = _row_arrays(np.float32)
    flags = (False, [], 2, HIDDEN, 1, True, False, False, True)
    t_args = [torch.tensor(a, requires_grad=True) for a in arrays]
    d_args = [derivgen.tensor(a, requires_grad=True) for a in arrays]
    torch.mkldnn_rnn_layer(*t_args, *flags)[2].sum().backward()
    aten.mkldnn_rnn_layer(*d_args, *flags)[2].sum().backward()
    for ours, theirs in zip(d_args, t_args):
        np.testing.assert_allclose(to_numpy(ours.grad), theirs.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_second_derivative_through_the_layer_matches_torch():
    (module, x, _, out, h, _), (t_module, t_x, _, t_out, t_h, _) = _run_both({"bidirectional": True})
    g = derivgen.autograd.grad((out * out).sum() + h.sum(), x, create_graph=True)[0]
    t_g = torch.autograd.grad((t_out * t_out).sum() + t_h.sum(), t_x, create_graph=True)[0]
    np.testing.assert_allclose(to_numpy(g), t_g.detach().numpy(), rtol=1e-4, atol=1e-5)
    second = derivgen.autograd.grad((g * g).sum(), list(module.parameters()))
    t_second = torch.autograd.grad((t_g * t_g).sum(), list(t_module.parameters()))
    for ours, theirs in zip(second, t_second):
        np.testing.assert_allclose(to_numpy(ours), theirs.numpy(), rtol=1e-3, atol=1e-4)


# ---- the composite path (RNN, GRU, float64 LSTM, projections): torch's per-step graph ----------------

COMPOSITE = [
    ("RNN", {}, "float32"),
    ("RNN", {"nonlinearity": "relu", "bias": False, "num_layers": 2}, "float32"),
    ("RNN", {"bidirectional": True}, "float64"),
    ("GRU", {}, "float32"),
    ("GRU", {"num_layers": 2, "bidirectional": True}, "float32"),
    ("GRU", {"bias": False}, "float64"),
    ("LSTM", {}, "float64"),
    ("LSTM", {"num_layers": 2, "bidirectional": True}, "float64"),
    ("LSTM", {"proj_size": 2}, "float32"),
    ("LSTM", {"proj_size": 3, "bias": False, "bidirectional": True}, "float64"),
]


@pytest.mark.parametrize("with_states", [False, True], ids=["no_hx", "hx"])
@pytest.mark.parametrize("name,options,dtype", COMPOSITE, ids=str)
def test_composite_graph_matches_torch_node_by_node(name, options, dtype, with_states):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(INPUT, HIDDEN, dtype=getattr(torch, dtype), **options)
    ours = getattr(derivgen.nn, name)(INPUT, HIDDEN, dtype=getattr(derivgen, dtype), **options)
    copy_weights(theirs, ours)
    steps = 3
    x = np.random.default_rng(5).standard_normal((steps, BATCH, INPUT)).astype(dtype)
    layers = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    sizes = [options.get("proj_size") or HIDDEN] + ([HIDDEN] if name == "LSTM" else [])
    states = [np.random.default_rng(6 + k).standard_normal((layers, BATCH, size)).astype(dtype)
              for k, size in enumerate(sizes)]
    results = []
    for lib, module in ((derivgen, ours), (torch, theirs)):
        args = [lib.tensor(x, requires_grad=True)]
        if with_states:
            leaves = [lib.tensor(s, requires_grad=True) for s in states]
            args.append(tuple(leaves) if name == "LSTM" else leaves[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out, hidden = module(*args)
        results.append([out] + (list(hidden) if name == "LSTM" else [hidden]))
    for mine, torchs in zip(*results):
        assert _graph(mine.grad_fn, depth=12) == _graph(torchs.grad_fn, depth=12)
        np.testing.assert_allclose(to_numpy(mine), torchs.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_forward_mode_refused_as_torch_refuses():
    x = np.random.default_rng(7).standard_normal((STEPS, BATCH, INPUT)).astype(np.float32)
    texts = []
    for lib in (derivgen, torch):
        torch.manual_seed(0)
        module = lib.nn.LSTM(INPUT, HIDDEN)
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(lib.tensor(x), lib.ones_like(lib.tensor(x)))
            with pytest.raises(NotImplementedError) as caught:
                module(dual)
        texts.append(str(caught.value))
    assert texts[0] == texts[1]


@pytest.mark.parametrize("name,options", [("LSTM", {}), ("LSTM", {"batch_first": True}), ("GRU", {}),
                                          ("RNN", {"batch_first": True})], ids=str)
def test_empty_sequence_refused_like_torch(name, options):
    texts = []
    shape = (BATCH, 0, INPUT) if options.get("batch_first") else (0, BATCH, INPUT)
    for lib in (derivgen, torch):
        module = getattr(lib.nn, name)(INPUT, HIDDEN, **options)
        with pytest.raises(RuntimeError) as caught:
            module(lib.zeros(*shape))
        texts.append(str(caught.value))
    assert texts[0] == texts[1]


@pytest.mark.parametrize("name,dtype", [("LSTM", "float32"), ("LSTM", "float64"), ("GRU", "float32")])
def test_dropout_between_layers_graph_matches_torch(name, dtype):
    x = np.random.default_rng(8).standard_normal((3, BATCH, INPUT)).astype(dtype)
    graphs = []
    for lib in (derivgen, torch):
        module = getattr(lib.nn, name)(INPUT, HIDDEN, num_layers=2, dropout=0.5, dtype=getattr(lib, dtype))
        graphs.append(_graph(module(lib.tensor(x, requires_grad=True))[0].grad_fn, depth=10))
    assert graphs[0] == graphs[1]
