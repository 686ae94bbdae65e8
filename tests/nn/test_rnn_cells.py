"""RNNCell, LSTMCell and GRUCell against torch, weights copied in: outputs and gradients (input, hidden
and every parameter) in float64 to torch's tolerance, batched and unbatched, with and without bias and a
given hidden state; printed forms, parameter shapes and names, init bounds, and torch's errors."""
import numpy as np
import pytest

import derivgen
from tests.support.nn_parity import copy_weights, to_numpy

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu", "bias": False}), ("LSTMCell", {}),
         ("LSTMCell", {"bias": False}), ("GRUCell", {}), ("GRUCell", {"bias": False})]


def _pair(name, options, input_size=3, hidden_size=4):
    theirs = getattr(torch.nn, name)(input_size, hidden_size, dtype=torch.float64, **options)
    ours = getattr(derivgen.nn, name)(input_size, hidden_size, dtype=derivgen.float64, **options)
    copy_weights(theirs, ours)
    return ours, theirs


def _run(lib, cell, x, h):
    x = lib.tensor(x, requires_grad=True)
    hidden = None
    if h is not None:
        hidden = tuple(lib.tensor(a, requires_grad=True) for a in h)
        if len(hidden) == 1:
            hidden = hidden[0]
    out = cell(x, hidden)
    outs = out if isinstance(out, tuple) else (out,)
    loss = sum((o * lib.tensor(np.linspace(-1, 1, o.numel()).reshape(o.shape))).sum() for o in outs)
    loss.backward()
    grads = [x.grad] + ([] if hidden is None else [t.grad for t in (hidden if isinstance(hidden, tuple)
                                                                      else (hidden,))])
    grads += [p.grad for p in cell.parameters()]
    return [to_numpy(o) for o in outs], [to_numpy(g) for g in grads]


@pytest.mark.parametrize("name,options", CELLS)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("given_hidden", [True, False])
def test_cell_matches_torch(name, options, batched, given_hidden):
    ours, theirs = _pair(name, options)
    rng = np.random.default_rng(0)
    shape = (5, 3) if batched else (3,)
    x = rng.standard_normal(shape)
    h = None
    if given_hidden:
        hshape = (5, 4) if batched else (4,)
        h = [rng.standard_normal(hshape) for _ in range(2 if name == "LSTMCell" else 1)]
    outs_d, grads_d = _run(derivgen, ours, x, h)
    outs_t, grads_t = _run(torch, theirs, x, h)
    assert len(outs_d) == len(outs_t) and len(grads_d) == len(grads_t)
    for a, b in zip(outs_d + grads_d, outs_t + grads_t):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_cell_parameters_repr_and_init():
    for name, options in CELLS:
        ours, theirs = _pair(name, options, input_size=2, hidden_size=9)
        assert repr(ours) == repr(theirs)
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    cell = derivgen.nn.GRUCell(2, 9)
    for p in cell.parameters():
        assert float(p.abs().max()) <= 1 / 3 and float(p.abs().max()) > 0.2


@pytest.mark.parametrize("lib_name", ["derivgen", "torch"])
def test_cell_errors(lib_name):
    lib = derivgen if lib_name == "derivgen" else torch
    rnn = lib.nn.RNNCell(3, 4)
    with pytest.raises(ValueError, match="RNNCell: Expected input to be 1D or 2D, got 3D instead"):
        rnn(lib.zeros(1, 1, 3))
    with pytest.raises(ValueError, match="RNNCell: Expected hidden to be 1D or 2D, got 3D instead"):
        rnn(lib.zeros(2, 3), lib.zeros(1, 2, 4))
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 expected 3"):
        rnn(lib.zeros(2, 5))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 3"):
        rnn(lib.zeros(2, 3), lib.zeros(3, 4))
    with pytest.raises(RuntimeError, match="hidden0 has inconsistent hidden_size: got 5, expected 4"):
        rnn(lib.zeros(2, 3), lib.zeros(2, 5))
    lstm = lib.nn.LSTMCell(3, 4)
    with pytest.raises(ValueError, match=r"LSTMCell: Expected hx\[1\] to be 1D or 2D, got 3D instead"):
        lstm(lib.zeros(2, 3), (lib.zeros(2, 4), lib.zeros(1, 2, 4)))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden1 batch size 3"):
        lstm(lib.zeros(2, 3), (lib.zeros(2, 4), lib.zeros(3, 4)))
    with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 0D instead"):
        lib.nn.GRUCell(3, 4)(lib.zeros(()))
    bad = lib.nn.RNNCell(3, 4, nonlinearity="sigmoid")
    with pytest.raises(RuntimeError, match="Unknown nonlinearity: sigmoid"):
        bad(lib.zeros(2, 3))
