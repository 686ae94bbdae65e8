"""Numba loops of the fused LSTM layer (the ``mkldnn_rnn_layer`` row): one step's gates and cell update
forward, and their gradient backward, each one pass over the ``(batch, 4 * hidden)`` gate block.

Why: a step of the composite cell is ten small elementwise ops (four activations, the cell update, the
hidden state), each with its own allocation and dispatch; on an LSTM's small blocks that Python cost is
most of the step. The matrix products stay with BLAS in the callers. Gate order is torch's ``i, f, g, o``;
``one`` is 1 in the arrays' dtype, so float32 layers compute in float32.
"""
from derivgen.kernels.jit import _exp, _tanh, kernel


@kernel
def lstm_step_forward(xw, hw, c_prev, gates, c_out, h_out, one):
    """Gates from ``xw + hw`` (``(B, 4H)``: the input projection with both biases, the hidden projection),
    activated into ``gates``; ``c_out = f * c_prev + i * g`` and ``h_out = o * tanh(c_out)``."""
    batch, width = xw.shape
    hidden = width // 4
    for b in range(batch):
        for j in range(hidden):
            i = one / (one + _exp(-(xw[b, j] + hw[b, j])))
            f = one / (one + _exp(-(xw[b, hidden + j] + hw[b, hidden + j])))
            g = _tanh(xw[b, 2 * hidden + j] + hw[b, 2 * hidden + j])
            o = one / (one + _exp(-(xw[b, 3 * hidden + j] + hw[b, 3 * hidden + j])))
            c = f * c_prev[b, j] + i * g
            gates[b, j] = i
            gates[b, hidden + j] = f
            gates[b, 2 * hidden + j] = g
            gates[b, 3 * hidden + j] = o
            c_out[b, j] = c
            h_out[b, j] = o * _tanh(c)


@kernel
def lstm_step_backward(gates, c, c_prev, dh, dy, dc, dgates, dc_prev, one):
    """One step back: from the step's saved ``gates`` and cell states, the gradient reaching its hidden
    state (``dh`` from the next step plus ``dy`` from the output) and its cell state ``dc``, writes the
    gradient of the gate pre-activations ``dgates`` and the previous cell state's ``dc_prev``."""
    batch, width = gates.shape
    hidden = width // 4
    for b in range(batch):
        for j in range(hidden):
            i = gates[b, j]
            f = gates[b, hidden + j]
            g = gates[b, 2 * hidden + j]
            o = gates[b, 3 * hidden + j]
            tc = _tanh(c[b, j])
            dht = dh[b, j] + dy[b, j]
            dct = dc[b, j] + dht * o * (one - tc * tc)
            dgates[b, j] = dct * g * i * (one - i)
            dgates[b, hidden + j] = dct * c_prev[b, j] * f * (one - f)
            dgates[b, 2 * hidden + j] = dct * i * (one - g * g)
            dgates[b, 3 * hidden + j] = dht * tc * o * (one - o)
            dc_prev[b, j] = dct * f
