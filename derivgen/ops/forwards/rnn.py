"""Forward of the fused recurrent layer row ``mkldnn_rnn_layer``: one layer and direction of an LSTM over a
whole padded sequence, as torch's oneDNN path records it (one ``MkldnnRnnLayerBackward0`` node).

The input projection of every step is one BLAS product; each step then costs one product with the hidden
weights and one Numba pass for the gates and cell update (``_rnn_kernels``). The fourth output is the
workspace the backward reads, as bytes like torch's: every step's activated gates ``(T, B, 4H)`` followed by
every step's cell state ``(T, B, H)``, in the input's dtype."""
import numpy as np

from derivgen.kernels import products
from derivgen.ops.forwards import _rnn_kernels

LSTM_MODE = 2  # torch's (cuDNN's) mode numbering: RNN_RELU 0, RNN_TANH 1, LSTM 2, GRU 3


def lstm_workspace(workspace, steps, batch, hidden, dtype):
    """``(gates, cells)`` views of the workspace bytes: ``(T, B, 4H)`` and ``(T, B, H)``."""
    flat = workspace.view(dtype)
    split = steps * batch * 4 * hidden
    return flat[:split].reshape(steps, batch, 4 * hidden), flat[split:].reshape(steps, batch, hidden)


def step_order(steps, reverse):
    return range(steps - 1, -1, -1) if reverse else range(steps)


def _check(input, weight0, weight1, hx_, cx_, batch_sizes, mode, hidden_size):  # noqa: A002
    if mode != LSTM_MODE:
        raise RuntimeError(f"mkldnn_rnn_layer: mode {mode} is not supported, only LSTM ({LSTM_MODE})")
    if len(batch_sizes):
        raise RuntimeError("mkldnn_rnn_layer: packed input (batch_sizes) is not supported")
    if input.ndim != 3:
        raise RuntimeError(f"mkldnn_rnn_layer: expected a 3-D input (seq_len, batch, input_size), got "
                           f"{list(input.shape)}")
    steps, batch, features = input.shape
    gates = 4 * hidden_size
    expected = (("weight0", weight0, (gates, features)), ("weight1", weight1, (gates, hidden_size)),
                ("hx_", hx_, (batch, hidden_size)), ("cx_", cx_, (batch, hidden_size)))
    for name, t, shape in expected:
        if t.shape != shape:
            raise RuntimeError(f"mkldnn_rnn_layer: expected {name} of size {list(shape)}, got {list(t.shape)}")


def mkldnn_rnn_layer(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, batch_sizes, mode,  # noqa: A002
                     hidden_size, num_layers, has_biases, bidirectional, batch_first, train):
    """``(output (T, B, H), hy (B, H), cy (B, H), workspace)`` of one LSTM layer and direction over
    ``input (T, B, I)`` (``reverse``: from the last step back), weights ``w_ih, w_hh, b_ih, b_hh``."""
    _check(input, weight0, weight1, hx_, cx_, batch_sizes, mode, hidden_size)
    steps, batch, features = input.shape
    dtype = np.result_type(input.dtype, weight0.dtype)
    hidden = hidden_size
    x2d = np.ascontiguousarray(input, dtype).reshape(steps * batch, features)
    xw = products.matmul(x2d, weight0.T.astype(dtype, copy=False))
    if has_biases:
        xw += weight2 + weight3
    xw = xw.reshape(steps, batch, 4 * hidden)
    workspace = np.empty(steps * batch * 5 * hidden * dtype.itemsize, np.uint8)
    gates, cells = lstm_workspace(workspace, steps, batch, hidden, dtype)
    output = np.empty((steps, batch, hidden), dtype)
    h, c = np.ascontiguousarray(hx_, dtype), np.ascontiguousarray(cx_, dtype)
    w_hh_t = weight1.T.astype(dtype, copy=False)
    one = dtype.type(1)
    for t in step_order(steps, reverse):
        hw = products.matmul(h, w_hh_t)
        _rnn_kernels.lstm_step_forward(xw[t], hw, c, gates[t], cells[t], output[t], one)
        h, c = output[t], cells[t]
    return output, h.copy(), c.copy(), workspace
