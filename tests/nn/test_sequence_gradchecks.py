"""derivgen's own gradcheck and gradgradcheck (float64) through the sequence layers: a 2-layer
bidirectional LSTM with projections, a packed GRU, MultiheadAttention on both of its paths, scaled dot
product attention (with forward-mode AD) and a Transformer encoder layer. These check the composed graphs
against finite differences, to second order, with no torch involved."""
import derivgen as dg
from derivgen.autograd import gradcheck, gradgradcheck


def _inputs(*shape):
    dg.manual_seed(0)
    return dg.randn(*shape, dtype=dg.float64, requires_grad=True)


def test_lstm_bidirectional_projected():
    lstm = dg.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2, dtype=dg.float64)
    x = _inputs(4, 2, 3)
    h0 = _inputs(4, 2, 2)
    assert gradcheck(lambda x, h: lstm(x, (h, dg.zeros(4, 2, 4, dtype=dg.float64)))[0], (x, h0))
    assert gradgradcheck(lambda x: lstm(x)[1][1], (x,))


def test_packed_gru():
    gru = dg.nn.GRU(3, 4, dtype=dg.float64)
    x = _inputs(4, 3, 3)

    def run(x):
        return gru(dg.nn.utils.rnn.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False))[0].data
    assert gradcheck(run, (x,))
    assert gradgradcheck(run, (x,))


def test_attention():
    mha = dg.nn.MultiheadAttention(4, 2, add_bias_kv=True, dtype=dg.float64)
    q = _inputs(3, 2, 4)
    assert gradcheck(lambda q: mha(q, q, q)[1], (q,))
    assert gradgradcheck(lambda q: mha(q, q, q, need_weights=False)[0], (q,))
    sdpa = dg.nn.functional.scaled_dot_product_attention
    assert gradcheck(lambda q: sdpa(q, q, q, is_causal=True), (q,), check_forward_ad=True)


def test_transformer_encoder_layer():
    layer = dg.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, dtype=dg.float64)
    x = _inputs(3, 2, 4)
    assert gradcheck(lambda x: layer(x, src_key_padding_mask=dg.tensor([[False] * 3, [False, False, True]])), (x,))
