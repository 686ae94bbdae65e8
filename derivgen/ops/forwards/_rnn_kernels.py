"""Numba loops of the fused LSTM layer (the ``mkldnn_rnn_layer`` row): one step's gates and cell update
forward, and their gradient backward, over the ``(batch, 4 * hidden)`` gate block.

Why: a step of the composite cell is ten small elementwise ops (four activations, the cell update, the
hidden state), each with its own allocation and dispatch; on an LSTM's small blocks that Python cost is
most of the step. The matrix products stay with BLAS in the callers. Gate order is torch's ``i, f, g, o``;
``one`` is 1 in the arrays' dtype, so float32 layers compute in float32.

Each inner loop runs over one contiguous row block and stores one or two values, with the activations
alone in their loops: LLVM vectorises such loops (with the vectorised float32 ``_exp``/``_tanh``), where one
loop doing the whole cell per element stayed scalar and was 7-8x slower on (32, 4 x 128) blocks.
"""
from derivgen.kernels.jit import _exp, _tanh, kernel


@kernel
def lstm_step_forward(xw, hw, c_prev, gates, c_out, h_out, one):
    """Gates from ``xw + hw`` (``(B, 4H)``: the input projection with both biases, the hidden projection),
    activated into ``gates``; ``c_out = f * c_prev + i * g`` and ``h_out = o * tanh(c_out)``."""
    batch, width = xw.shape
    hidden = width // 4
    for b in range(batch):
        x, hh, gt = xw[b], hw[b], gates[b]
        for j in range(2 * hidden):
            gt[j] = one / (one + _exp(-(x[j] + hh[j])))
        for j in range(2 * hidden, 3 * hidden):
            gt[j] = _tanh(x[j] + hh[j])
        for j in range(3 * hidden, width):
            gt[j] = one / (one + _exp(-(x[j] + hh[j])))
        cp, co, ho = c_prev[b], c_out[b], h_out[b]
        for j in range(hidden):
            co[j] = gt[hidden + j] * cp[j] + gt[j] * gt[2 * hidden + j]
        for j in range(hidden):
            ho[j] = _tanh(co[j])
        for j in range(hidden):
            ho[j] = gt[3 * hidden + j] * ho[j]


@kernel
def lstm_step_backward(gates, c, c_prev, dh, dy, dc, dgates, dc_prev, one):
    """One step back: from the step's saved ``gates`` and cell states, the gradient reaching its hidden
    state (``dh`` from the next step plus ``dy`` from the output) and its cell state ``dc``, writes the
    gradient of the gate pre-activations ``dgates`` and the previous cell state's ``dc_prev`` (which holds
    ``tanh(c)``, then the cell state's whole gradient, on the way)."""
    batch, width = gates.shape
    hidden = width // 4
    for b in range(batch):
        gt, dg, dcp = gates[b], dgates[b], dc_prev[b]
        cb, cpb, dhb, dyb, dcb = c[b], c_prev[b], dh[b], dy[b], dc[b]
        for j in range(hidden):
            dcp[j] = _tanh(cb[j])
        for j in range(hidden):
            tc = dcp[j]
            o = gt[3 * hidden + j]
            dht = dhb[j] + dyb[j]
            dg[3 * hidden + j] = dht * tc * o * (one - o)
            dcp[j] = dcb[j] + dht * o * (one - tc * tc)
        for j in range(hidden):
            dct = dcp[j]
            i = gt[j]
            f = gt[hidden + j]
            g = gt[2 * hidden + j]
            dg[j] = dct * g * i * (one - i)
            dg[hidden + j] = dct * cpb[j] * f * (one - f)
            dg[2 * hidden + j] = dct * i * (one - g * g)
            dcp[j] = dct * f
