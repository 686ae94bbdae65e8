"""Recurrent cells (``RNNCell``, ``LSTMCell``, ``GRUCell``) as torch's, built from existing ops in the
order of torch's CPU cells (``linear`` of the hidden state plus ``linear`` of the input, ``chunk`` into
gates), so the values and gradients are torch's. Parameters are uniform in
``(-1/sqrt(hidden_size), 1/sqrt(hidden_size))`` (derivgen's random stream)."""
import math

from derivgen.core.registry import aten
from derivgen.nn import functional as F
from derivgen.nn import init
from derivgen.nn.modules.module import Module
from derivgen.nn.parameter import Parameter
from derivgen.ops.factories import empty, zeros


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # ---- shared by the cells ------------------------------------------------------------------------
    def _batched(self, input, hx, name, pair=False):
        """``(input, hx, is_batched)``: the dimensions checked as torch's cell wrappers do, an unbatched
        (1-D) input and hidden state given a batch of one, a missing ``hx`` made of zeros. ``pair``: ``hx``
        is LSTM's ``(h, c)``."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx if pair else (hx,)):
                if value.dim() not in (1, 2):
                    what = f"hx[{idx}]" if pair else "hidden"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            z = self._zeros(input)
            hx = (z, z) if pair else z
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if pair else hx.unsqueeze(0)
        return input, hx, is_batched

    def _check_forward(self, input, hiddens):
        """torch's ``check_rnn_cell_forward_input`` / ``_hidden`` (the sizes the ``_VF`` cells check)."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        for idx, hx in enumerate(hiddens):
            if input.size(0) != hx.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{idx} batch size "
                                   f"{hx.size(0)}")
            if hx.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{idx} has inconsistent hidden_size: got {hx.size(1)}, expected "
                                   f"{self.hidden_size}")

    def _gates(self, input, hx):
        return aten.add(F.linear(hx, self.weight_hh, self.bias_hh), F.linear(input, self.weight_ih, self.bias_ih))

    def _zeros(self, input):
        return zeros(input.size(0), self.hidden_size, dtype=input.dtype)


class RNNCell(RNNCellBase):
    """``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or ``relu``)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched(input, hx, "RNNCell")
        if self.nonlinearity == "tanh":
            activation = aten.tanh
        elif self.nonlinearity == "relu":
            activation = aten.relu
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check_forward(input, (hx,))
        ret = activation(self._gates(input, hx))
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """Gates ``i, f, g, o`` from one ``(4*hidden, ...)`` projection; ``c' = f*c + i*g``, ``h' = o*tanh(c')``;
    returns ``(h', c')``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched(input, hx, "LSTMCell", pair=True)
        self._check_forward(input, hx)
        ingate, forgetgate, cellgate, outgate = self._gates(input, hx[0]).chunk(4, 1)
        ingate = aten.sigmoid(ingate)
        forgetgate = aten.sigmoid(forgetgate)
        cellgate = aten.tanh(cellgate)
        outgate = aten.sigmoid(outgate)
        cy = aten.add(aten.mul(forgetgate, hx[1]), aten.mul(ingate, cellgate))
        hy = aten.mul(outgate, aten.tanh(cy))
        return (hy, cy) if is_batched else (hy.squeeze(0), cy.squeeze(0))


class GRUCell(RNNCellBase):
    """Reset gate ``r``, update gate ``z``, new gate ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``;
    ``h' = (h - n) * z + n``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched(input, hx, "GRUCell")
        self._check_forward(input, (hx,))
        i_r, i_z, i_n = F.linear(input, self.weight_ih, self.bias_ih).chunk(3, 1)
        h_r, h_z, h_n = F.linear(hx, self.weight_hh, self.bias_hh).chunk(3, 1)
        reset_gate = aten.sigmoid(aten.add(h_r, i_r))
        input_gate = aten.sigmoid(aten.add(h_z, i_z))
        new_gate = aten.tanh(aten.add(i_n, aten.mul(h_n, reset_gate)))
        ret = aten.add(aten.mul(aten.sub(hx, new_gate), input_gate), new_gate)
        return ret if is_batched else ret.squeeze(0)

# torch's ``nn.modules.rnn`` also holds the layers (``from torch.nn.modules.rnn import LSTM``)
from derivgen.nn.modules.recurrent import GRU, LSTM, RNN, RNNBase  # noqa: E402,F401
