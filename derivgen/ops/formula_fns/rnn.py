"""Backward of the fused LSTM layer row ``mkldnn_rnn_layer`` (torch's ``MkldnnRnnLayerBackward0``):
backpropagation through time, returning the gradients of ``input, w_ih, w_hh, b_ih, b_hh, hx_, cx_``.

The fast path reads the forward's workspace (activated gates and cell states): per step one Numba pass
for the gate gradients and one BLAS product for the hidden state's gradient, then one product each for
the input and the two weight gradients over all steps. The graph path (``create_graph=True``), like
torch's differentiable backward, recomputes the forward from the inputs with differentiable ops and runs
the same recurrence on Tensors, so second derivatives reach the weights through the gates."""
import numpy as np

from derivgen.core.registry import aten
from derivgen.ops import composites as _c
from derivgen.kernels import products
from derivgen.ops.forwards import _rnn_kernels
from derivgen.ops.forwards.rnn import lstm_workspace, step_order


def _previous_hidden(output, hx, reverse):
    """Every step's incoming hidden state, ``(T, B, H)``: the output one step earlier in the direction of
    travel, or ``hx`` for the first step."""
    prev = np.empty_like(output)
    if reverse:
        prev[:-1], prev[-1] = output[1:], hx
    else:
        prev[1:], prev[0] = output[:-1], hx
    return prev


def mkldnn_rnn_layer_backward(input, weight0, weight1, weight2, weight3, hx_, cx_, result0, result1, result2,  # noqa: A002
                              grad_output, grad_hy, grad_cy, reverse, mode, hidden_size, num_layers, has_biases,
                              train, bidirectional, batch_sizes, batch_first, workspace, grad_input_mask):
    """torch's argument list (``mkldnn_rnn_layer_backward``), so the node saves torch's fields; the final
    states ``result1``, ``result2`` and the layer's flags other than ``reverse`` and ``has_biases`` do not
    enter the gradient."""
    steps, batch, features = input.shape
    hidden = hidden_size
    dtype = result0.dtype
    gates, cells = lstm_workspace(workspace, steps, batch, hidden, dtype)
    dgates = np.empty((steps, batch, 4 * hidden), dtype)
    grad_output = np.ascontiguousarray(grad_output, dtype)
    dh = np.ascontiguousarray(grad_hy, dtype)
    dc = np.array(grad_cy, dtype)
    dc_prev = np.empty_like(dc)
    cx = np.ascontiguousarray(cx_, dtype)
    w_hh = np.ascontiguousarray(weight1, dtype)
    one = dtype.type(1)
    order = list(step_order(steps, reverse))
    for k, t in enumerate(reversed(order)):
        first = k == steps - 1
        c_prev = cx if first else cells[order[steps - 2 - k]]
        _rnn_kernels.lstm_step_backward(gates[t], cells[t], c_prev, dh, grad_output[t], dc, dgates[t], dc_prev, one)
        dc, dc_prev = dc_prev, dc
        dh = products.matmul(dgates[t], w_hh)
    flat = dgates.reshape(steps * batch, 4 * hidden)
    g_input = g_w_ih = g_w_hh = g_bias = None
    if grad_input_mask[0]:
        g_input = products.matmul(flat, weight0).reshape(steps, batch, features).astype(input.dtype, copy=False)
    if grad_input_mask[1]:
        g_w_ih = products.matmul(flat.T, np.ascontiguousarray(input, dtype).reshape(steps * batch, features))
    if grad_input_mask[2]:
        prev = _previous_hidden(result0, hx_, reverse)
        g_w_hh = products.matmul(flat.T, prev.reshape(steps * batch, hidden))
    if grad_input_mask[3] or grad_input_mask[4]:  # torch returns them even without biases
        g_bias = flat.sum(0)
    g_hx = dh if grad_input_mask[5] else None
    g_cx = dc.copy() if grad_input_mask[6] else None
    return (g_input, g_w_ih, g_w_hh, g_bias if grad_input_mask[3] else None,
            g_bias.copy() if grad_input_mask[4] and g_bias is not None else None, g_hx, g_cx)


def mkldnn_rnn_layer_backward_graph(input, weight0, weight1, weight2, weight3, hx_, cx_, result0, result1,  # noqa: A002
                                    result2, grad_output, grad_hy, grad_cy, reverse, mode, hidden_size, num_layers,
                                    has_biases, train, bidirectional, batch_sizes, batch_first, workspace,
                                    grad_input_mask):
    steps = input.shape[0]
    xw = _c.matmul(input, aten.t(weight0))
    if has_biases:
        xw = aten.add(xw, aten.add(weight2, weight3))
    h, c = hx_, cx_
    saved = {}
    for t in step_order(steps, reverse):
        i, f, g, o = _c.chunk(aten.add(aten.select(xw, 0, t), aten.mm(h, aten.t(weight1))), 4, 1)
        i, f, g, o = aten.sigmoid(i), aten.sigmoid(f), aten.tanh(g), aten.sigmoid(o)
        c_next = aten.add(aten.mul(f, c), aten.mul(i, g))
        saved[t] = (i, f, g, o, c, c_next, h)
        h, c = aten.mul(o, aten.tanh(c_next)), c_next
    dh, dc = grad_hy, grad_cy
    dgates = [None] * steps
    g_w_hh = None
    for t in reversed(list(step_order(steps, reverse))):
        i, f, g, o, c_prev, c_t, h_prev = saved[t]
        tc = aten.tanh(c_t)
        dht = aten.add(dh, aten.select(grad_output, 0, t))
        dct = aten.add(dc, aten.mul(aten.mul(dht, o), aten.rsub(aten.mul(tc, tc), 1)))
        step = aten.cat([aten.mul(aten.mul(dct, g), aten.mul(i, aten.rsub(i, 1))),
                         aten.mul(aten.mul(dct, c_prev), aten.mul(f, aten.rsub(f, 1))),
                         aten.mul(aten.mul(dct, i), aten.rsub(aten.mul(g, g), 1)),
                         aten.mul(aten.mul(dht, tc), aten.mul(o, aten.rsub(o, 1)))], 1)
        dgates[t] = step
        term = aten.mm(aten.t(step), h_prev)
        g_w_hh = term if g_w_hh is None else aten.add(g_w_hh, term)
        dc = aten.mul(dct, f)
        dh = aten.mm(step, weight1)
    dg = aten.stack(dgates, 0)
    flat = _c.reshape(dg, [-1, dg.shape[2]])
    g_input = _c.matmul(dg, weight0) if grad_input_mask[0] else None
    g_w_ih = aten.mm(aten.t(flat), _c.reshape(input, [-1, input.shape[2]])) if grad_input_mask[1] else None
    g_bias = aten.sum(flat, [0])
    return (g_input, g_w_ih, g_w_hh if grad_input_mask[2] else None, g_bias if grad_input_mask[3] else None,
            g_bias if grad_input_mask[4] else None, dh if grad_input_mask[5] else None,
            dc if grad_input_mask[6] else None)


TENSOR_FUNCTIONS = {
    "mkldnn_rnn_layer_backward": (mkldnn_rnn_layer_backward, mkldnn_rnn_layer_backward_graph),
}
