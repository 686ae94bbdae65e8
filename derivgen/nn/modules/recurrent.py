"""Multi-layer recurrent layers ``RNN``, ``LSTM`` and ``GRU`` with torch's constructor, parameter names and
order (``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``, ``weight_hr_l0``, then the
``_reverse`` direction, then the next layer), initialisation, checks, errors and ``PackedSequence`` support.

Padded input records torch's CPU graph. A float32 LSTM on padded input runs, as torch's does, one fused
``mkldnn_rnn_layer`` per layer and direction (see ``LSTM._takes_fused_path``). Other padded input runs
torch's composite cells (``_CELLS``) node by node. Packed input runs a feature-major loop of table ops
(``_run_packed``): one input projection per layer and direction, then per step one ``addmm`` plus the gate
arithmetic on contiguous gate blocks."""
import math
import numbers
import warnings

from derivgen.backends import mkldnn
from derivgen.core.dtypes import float32
from derivgen.core.registry import aten
from derivgen.nn import functional as F
from derivgen.nn import init
from derivgen.nn.modules.module import Module
from derivgen.nn.parameter import Parameter
from derivgen.nn.utils.rnn import PackedSequence
from derivgen.ops import composites as _c
from derivgen.ops.factories import empty, zeros

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: parameters, checks, ``extra_repr`` and the time loop."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        _check_arguments(input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
            for direction in range(num_directions):
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input_size)),
                          ("weight_hh_l{}{}", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for pattern, shape in shapes:
                    name = pattern.format(layer, suffix)
                    setattr(self, name, Parameter(empty(shape, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op, as torch's is off cuDNN: the weights are used where they are."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ---- checks (torch's check_input / check_hidden_size) ----------------------------------------------
    def check_input(self, input, batch_sizes):
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). "
                             f"Convert input: input.to({weight_dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        return (self.num_layers * self._num_directions, self._mini_batch(input, batch_sizes),
                self.proj_size if self.proj_size > 0 else self.hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    @property
    def _num_directions(self):
        return 2 if self.bidirectional else 1

    def _mini_batch(self, input, batch_sizes):
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.size(0) if self.batch_first else input.size(1)

    def _zero_state(self, input, batch, size):
        return zeros(self.num_layers * self._num_directions, batch, size, dtype=input.dtype)

    # ---- the forward, shared by the three layers ------------------------------------------------------------
    def _unpack(self, input, hx, name, check_hx_dims):
        """``(input, hx, batch_sizes, sorted_indices, unsorted_indices, unbatched_dim)`` as torch's forwards
        prepare them: a PackedSequence unpacked, an unbatched input given a batch dimension."""
        if isinstance(input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            return input, hx, batch_sizes, sorted_indices, unsorted_indices, None
        if input.dim() not in (2, 3):
            tensor = " tensor" if name == "RNN" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tensor} instead")
        batch_dim = 0 if self.batch_first else 1
        if input.dim() == 3:
            check_hx_dims(hx, 3, "batched 3-D")
            return input, hx, None, None, None, None
        check_hx_dims(hx, 2, "unbatched 2-D")
        input = input.unsqueeze(batch_dim)
        return input, hx, None, None, None, batch_dim

    def _run_padded(self, input, states):  # noqa: A002
        """torch's composite CPU graph for padded input, node by node: per layer and direction the input
        projection ``linear(input, w_ih, b_ih)`` unbound into steps, one cell per step (``_CELLS``), the
        step outputs stacked (``StackBackward0``), directions joined by ``cat``, final states stacked. With
        ``batch_first`` the output's last node is ``TransposeBackward0`` where torch's in-place ``transpose_``
        records ``TransposeBackward1`` (derivgen has no in-place transpose)."""
        if self.batch_first:
            input = aten.transpose(input, 0, 1)
        initial = [s.unbind(0) for s in states]
        cell = _CELLS[self.mode]
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(self._num_directions):
                index = layer * self._num_directions + direction
                weights = _CellWeights([getattr(self, n) for n in self._all_weights[index]], self.bias,
                                       self.proj_size > 0)
                steps = F.linear(input, weights.w_ih, weights.b_ih).unbind(0)
                state = tuple(s[index] for s in initial)
                hs = []
                for x_t in (reversed(steps) if direction == 1 else steps):
                    state = cell(x_t, state, weights)
                    hs.append(state[0])
                if direction == 1:
                    hs.reverse()
                outputs.append(aten.stack(hs, 0))
                finals.append(state)
            input = outputs[0] if len(outputs) == 1 else aten.cat(outputs, input.dim() - 1)
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                input = F.dropout(input, self.dropout, True)
        final_states = tuple(aten.stack([f[k] for f in finals], 0) for k in range(len(states)))
        output = aten.transpose(input, 0, 1) if self.batch_first else input
        return output, final_states

    def _run(self, input, states, batch_sizes):
        if batch_sizes is None:
            _check_steps(self, input)
            return self._run_padded(input, states)
        return self._run_packed(input, states, batch_sizes)

    def _run_packed(self, input, states, batch_sizes):  # noqa: A002
        """The stacked layers over packed data ``input`` (``(N, I)`` with ``batch_sizes``) from the initial
        ``states`` (``(h0,)`` or ``(h0, c0)``); returns ``(output data, final states)``.

        Inside, every state and step is feature-major, ``(features, batch)``: a step's gates then come out
        of one ``addmm(x_t, W_hh, h)`` as ``(gates * hidden, batch)``, and ``chunk`` along dim 0 splits them
        into contiguous blocks, on which the elementwise kernels run their fast contiguous loops."""
        sizes = [int(n) for n in batch_sizes._array]
        data = input
        step = _STEPS[self.mode]
        initial = [s.unbind(0) for s in states]
        finals = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(self._num_directions):
                index = layer * self._num_directions + direction
                weights = _Weights(self.mode, [getattr(self, n) for n in self._all_weights[index]], self.bias,
                                   self.proj_size > 0)
                # steps of different widths, (gates, rows) views of one (N, gates) product
                inputs = [aten.t(x) for x in weights.project_rows(data).split(sizes, 0)]
                state = tuple(aten.t(s[index]) for s in initial)
                hs, final = _run_direction(step, weights, inputs, sizes, state, reverse=direction == 1)
                outputs.append(aten.cat([aten.t(h) for h in hs], 0))
                finals.append(tuple(aten.t(f) for f in final))
            data = outputs[0] if len(outputs) == 1 else aten.cat(outputs, 1)
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                data = F.dropout(data, self.dropout, True)
        final_states = tuple(aten.stack([f[k] for f in finals], 0) for k in range(len(states)))
        return data, final_states

    def _finish(self, output, hidden, orig_input, batch_sizes, sorted_indices, unsorted_indices, unbatched_dim):
        if isinstance(orig_input, PackedSequence):
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        if unbatched_dim is not None:
            output = output.squeeze(unbatched_dim)
            hidden = tuple(h.squeeze(1) for h in hidden) if isinstance(hidden, tuple) else hidden.squeeze(1)
        return output, hidden


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ``relu``)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return _single_state_forward(self, "RNN", input, hx)


class GRU(RNNBase):
    """Gated recurrent unit, torch's gate order ``r, z, n``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return _single_state_forward(self, "GRU", input, hx)


class LSTM(RNNBase):
    """Long short-term memory, torch's gate order ``i, f, g, o``; with ``proj_size`` the hidden state is
    projected by ``weight_hr``."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        return (self.num_layers * self._num_directions, self._mini_batch(input, batch_sizes), self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx=None):
        orig_input = input

        def check_hx_dims(hx, dims, kind):
            if hx is not None and (hx[0].dim() != dims or hx[1].dim() != dims):
                raise RuntimeError(f"For {kind} input, hx and cx should also be {dims}-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")

        input, hx, batch_sizes, sorted_indices, unsorted_indices, unbatched_dim = self._unpack(
            input, hx, "LSTM", check_hx_dims)
        if hx is None:
            batch = self._mini_batch(input, batch_sizes)
            real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
            hx = (self._zero_state(input, batch, real_hidden_size), self._zero_state(input, batch, self.hidden_size))
            self.check_forward_args(input, hx, batch_sizes)
        else:
            if unbatched_dim is not None:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            if batch_sizes is None:
                self.check_forward_args(input, hx, batch_sizes)
            else:
                self.check_input(input, batch_sizes)
            hx = self.permute_hidden(hx, sorted_indices)
        if self._takes_fused_path(input, batch_sizes):
            _check_steps(self, input)
            output, hidden = self._run_fused(input, hx)
        else:
            output, hidden = self._run(input, hx, batch_sizes)
        return self._finish(output, hidden, orig_input, batch_sizes, sorted_indices, unsorted_indices,
                            unbatched_dim)

    def _takes_fused_path(self, input, batch_sizes):  # noqa: A002
        """Where torch's CPU LSTM takes its oneDNN path: float32, padded (not packed) input, the oneDNN flag
        on, no projections (which torch refuses there with a warning)."""
        if not (mkldnn.enabled and input.dtype == float32 and batch_sizes is None):
            return False
        if self.proj_size > 0:
            warnings.warn("LSTM with projections is not supported with oneDNN. Using default implementation.",
                          stacklevel=3)
            return False
        return True

    def _run_fused(self, input, hx):  # noqa: A002
        """torch's oneDNN graph: per layer and direction one ``mkldnn_rnn_layer`` over the sequence-major
        input (``MkldnnRnnLayerBackward0``), directions joined by ``cat``, final states stacked."""
        if self.batch_first:
            input = _c.contiguous(aten.transpose(input, 0, 1))
        hs, cs = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(self._num_directions):
                index = layer * self._num_directions + direction
                params = [getattr(self, n) for n in self._all_weights[index]]
                w_ih, w_hh = params[0], params[1]
                b_ih, b_hh = (params[2], params[3]) if self.bias else \
                    (zeros(w_ih.shape, dtype=w_ih.dtype), zeros(w_hh.shape, dtype=w_hh.dtype))  # torch's fillers
                result = aten.mkldnn_rnn_layer(input, w_ih, w_hh, b_ih, b_hh, aten.select(hx[0], 0, index),
                                               aten.select(hx[1], 0, index), direction == 1, [], 2,
                                               self.hidden_size, self.num_layers, self.bias, self.bidirectional,
                                               self.batch_first, self.training)
                outputs.append(result[0])
                hs.append(result[1])
                cs.append(result[2])
            input = outputs[0] if len(outputs) == 1 else aten.cat(outputs, 2)
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                input = F.dropout(input, self.dropout, True)
        output = aten.transpose(input, 0, 1) if self.batch_first else input
        return output, (aten.stack(hs, 0), aten.stack(cs, 0))


def _single_state_forward(module, name, input, hx):
    """RNN's and GRU's forward: one hidden state ``(num_layers * num_directions, batch, hidden_size)``."""
    orig_input = input

    def check_hx_dims(hx, dims, kind):
        if hx is not None and hx.dim() != dims:
            raise RuntimeError(f"For {kind} input, hx should also be {dims}-D but got {hx.dim()}-D tensor")

    input, hx, batch_sizes, sorted_indices, unsorted_indices, unbatched_dim = module._unpack(
        input, hx, name, check_hx_dims)
    if hx is None:
        hx = module._zero_state(input, module._mini_batch(input, batch_sizes), module.hidden_size)
    else:
        if unbatched_dim is not None:
            hx = hx.unsqueeze(1)
        hx = module.permute_hidden(hx, sorted_indices)
    module.check_forward_args(input, hx, batch_sizes)
    output, (hidden,) = module._run(input, (hx,), batch_sizes)
    return module._finish(output, hidden, orig_input, batch_sizes, sorted_indices, unsorted_indices,
                          unbatched_dim)


def _check_arguments(input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size):
    """torch's RNNBase constructor checks, in its order, with its texts."""
    if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
        raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                         "being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                      f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                      stacklevel=4)
    if not isinstance(bias, bool):
        raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
    if not isinstance(batch_first, bool):
        raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
    if not isinstance(input_size, int):
        raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
    if input_size <= 0:
        raise ValueError("input_size must be greater than zero")
    if not isinstance(hidden_size, int):
        raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


class _Weights:
    """One layer and direction's parameters, as the feature-major packed time loop uses them."""

    def __init__(self, mode, params, bias, projected):
        self.w_ih, self.w_hh = params[0], params[1]
        self.b_ih, self.b_hh = (params[2], params[3]) if bias else (None, None)
        self.w_hr = params[-1] if projected else None
        self.mode = mode
        if mode != "GRU":
            # both biases folded into the input projection, so that a step is one addmm
            self.input_bias = self.b_ih if self.b_ih is None else aten.add(self.b_ih, self.b_hh)
            return
        # GRU: the reset and update gates take ``x W_i + b_i + h W_h + b_h`` (b_hh's first two thirds go into
        # the input projection, so a step computes both with one addmm); the new gate scales ``W_hn h + b_hn``
        # by the reset gate, so that product is a second addmm with b_hn
        gates = 2 * self.w_hh.size(0) // 3
        self.w_hrz, self.w_hn = self.w_hh.split([gates, gates // 2], 0)
        self.input_bias, self.b_hn = self.b_ih, None
        if self.b_ih is not None:
            b_hrz, b_hn = self.b_hh.split([gates, gates // 2], 0)
            self.input_bias = aten.add(self.b_ih, aten.constant_pad_nd(b_hrz, [0, gates // 2], 0.0))
            self.b_hn = aten.unsqueeze(b_hn, 1)

    def project_rows(self, data):
        """Packed ``(N, features)`` -> ``(N, gates)``."""
        return F.linear(data, self.w_ih, self.input_bias)


def _check_steps(module, input):  # noqa: A002
    """torch's refusal of an empty padded sequence."""
    if input.size(1 if module.batch_first else 0) == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")


class _CellWeights:
    """One layer and direction's parameters as torch's composite cells use them."""

    def __init__(self, params, bias, projected):
        self.w_ih, self.w_hh = params[0], params[1]
        self.b_ih, self.b_hh = (params[2], params[3]) if bias else (None, None)
        self.w_hr = params[-1] if projected else None


def _rnn_cell(activation):
    def cell(x_t, state, w):
        return (activation(aten.add(F.linear(state[0], w.w_hh, w.b_hh), x_t)),)
    return cell


def _lstm_cell(x_t, state, w):
    """torch's LSTMCell: gates ``linear(h, w_hh, b_hh) + x_t`` split four ways (``unsafe_chunk``)."""
    h, c = state
    gates = aten.add(F.linear(h, w.w_hh, w.b_hh), x_t)
    ingate, forgetgate, cellgate, outgate = aten.unsafe_split(gates, gates.size(1) // 4, 1)
    c = aten.add(aten.mul(aten.sigmoid(forgetgate), c), aten.mul(aten.sigmoid(ingate), aten.tanh(cellgate)))
    h = aten.mul(aten.sigmoid(outgate), aten.tanh(c))
    if w.w_hr is not None:
        h = F.linear(h, w.w_hr)
    return h, c


def _gru_cell(x_t, state, w):
    """torch's GRUCell: ``r, z`` from the sums of the split projections, ``n = tanh(x_n + r * h_n)``,
    ``h' = (h - n) * z + n``."""
    h = state[0]
    x_r, x_z, x_n = aten.unsafe_split(x_t, x_t.size(1) // 3, 1)
    hh = F.linear(h, w.w_hh, w.b_hh)
    h_r, h_z, h_n = aten.unsafe_split(hh, hh.size(1) // 3, 1)
    reset_gate = aten.sigmoid(aten.add(h_r, x_r))
    input_gate = aten.sigmoid(aten.add(h_z, x_z))
    new_gate = aten.tanh(aten.add(x_n, aten.mul(h_n, reset_gate)))
    return (aten.add(aten.mul(aten.sub(h, new_gate), input_gate), new_gate),)


_CELLS = {"RNN_TANH": _rnn_cell(aten.tanh), "RNN_RELU": _rnn_cell(aten.relu), "LSTM": _lstm_cell,
          "GRU": _gru_cell}


def _rnn_step(activation):
    def step(x_t, state, w):
        return (activation(aten.addmm(x_t, w.w_hh, state[0])),)
    return step


def _lstm_step(x_t, state, w):
    h, c = state
    ingate, forgetgate, cellgate, outgate = aten.addmm(x_t, w.w_hh, h).chunk(4, 0)
    c = aten.addcmul(aten.mul(aten.sigmoid(forgetgate), c), aten.sigmoid(ingate), aten.tanh(cellgate))
    h = aten.mul(aten.sigmoid(outgate), aten.tanh(c))
    if w.w_hr is not None:
        h = aten.mm(w.w_hr, h)
    return h, c


def _gru_step(x_t, state, w):
    h = state[0]
    x_rz, x_n = x_t.split([w.w_hrz.size(0), w.w_hn.size(0)], 0)
    reset_gate, input_gate = aten.sigmoid(aten.addmm(x_rz, w.w_hrz, h)).chunk(2, 0)
    h_n = aten.mm(w.w_hn, h) if w.b_hn is None else aten.addmm(w.b_hn, w.w_hn, h)
    new_gate = aten.tanh(aten.add(x_n, aten.mul(reset_gate, h_n)))
    return (aten.add(aten.mul(aten.sub(h, new_gate), input_gate), new_gate),)


_STEPS = {"RNN_TANH": _rnn_step(aten.tanh), "RNN_RELU": _rnn_step(aten.relu), "LSTM": _lstm_step,
          "GRU": _gru_step}


def _run_direction(step, weights, inputs, sizes, state, reverse):
    """One direction of one layer over the steps' input projections ``inputs`` (``(gates, sizes[t])``,
    non-increasing widths) from ``state`` (feature-major ``(size, batch)`` tensors); returns every step's
    hidden state and the final state.

    Forwards, a sequence that ends leaves the batch: its columns of the state are set aside as its final
    state. Backwards, sequences join as the loop reaches their last step, starting from their initial state."""
    outputs = []
    if not reverse:
        done = []
        for x_t, cols in zip(inputs, sizes):
            if cols < state[0].size(1):
                done.append(tuple(s.narrow(1, cols, s.size(1) - cols) for s in state))
                state = tuple(s.narrow(1, 0, cols) for s in state)
            state = step(x_t, state, weights)
            outputs.append(state[0])
        if done:
            done.append(state)
            state = tuple(aten.cat([d[k] for d in reversed(done)], 1) for k in range(len(state)))
    else:
        initial = state
        cols_now = sizes[-1] if sizes else 0
        if cols_now < initial[0].size(1):
            state = tuple(s.narrow(1, 0, cols_now) for s in initial)
        for x_t, cols in zip(reversed(inputs), reversed(sizes)):
            if cols > cols_now:
                state = tuple(aten.cat([s, s0.narrow(1, cols_now, cols - cols_now)], 1)
                              for s, s0 in zip(state, initial))
                cols_now = cols
            state = step(x_t, state, weights)
            outputs.append(state[0])
        outputs.reverse()
    return outputs, state
