"""``TransformerEncoderLayer``, ``TransformerEncoder``, ``TransformerDecoderLayer``, ``TransformerDecoder``
and ``Transformer`` as torch's: submodule names and order (so ``state_dict`` keys match), post- or pre-norm
(``norm_first``), relu/gelu or any callable activation, masks and causal hints passed through to
``MultiheadAttention``. torch's inference fast paths (``_transformer_encoder_layer_fwd``, nested tensors)
are not run, but their one visible difference is: where the encoder would go through a nested tensor,
its output is zero at the padded positions."""
import copy
import warnings

from derivgen.core.grad_mode import is_grad_enabled
from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor
from derivgen.nn import functional as F
from derivgen.nn.init import xavier_uniform_
from derivgen.nn.modules.activation import GELU, ReLU
from derivgen.nn.modules.attention import MultiheadAttention
from derivgen.nn.modules.container import ModuleList
from derivgen.nn.modules.dropout import Dropout
from derivgen.nn.modules.linear import Linear
from derivgen.nn.modules.module import Module
from derivgen.nn.modules.normalization import LayerNorm
from derivgen.ops.factories import full

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """``(sz, sz)`` float mask: ``-inf`` above the diagonal (a position may not attend to later ones), 0 else."""
    return aten.triu(full((sz, sz), float("-inf"), dtype=dtype), 1)


def _get_seq_len(src, batch_first):
    if src.dim() == 2:
        return src.size(0)
    return src.size(1 if batch_first else 0)


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """``is_causal`` when given; otherwise whether ``mask`` equals the causal mask of ``size``."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal_comparison = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
        if tuple(mask.size()) == tuple(causal_comparison.size()):
            make_causal = bool((mask == causal_comparison).all())
        else:
            make_causal = False
    return make_causal


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with dropout, a residual and a LayerNorm."""
    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = F._canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                 F._none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = F._canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's ``memory``, then a feed-forward block."""
    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _why_no_nested_tensor(encoder_layer):
    """torch's reason for turning ``use_nested_tensor`` off (its fast-path conditions), or ``""``."""
    enc_layer = "encoder_layer"
    if not isinstance(encoder_layer, TransformerEncoderLayer):
        return f"{enc_layer} was not TransformerEncoderLayer"
    if encoder_layer.norm_first:
        return f"{enc_layer}.norm_first was True"
    if not encoder_layer.self_attn.batch_first:
        return f"{enc_layer}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not encoder_layer.self_attn._qkv_same_embed_dim:
        return f"{enc_layer}.self_attn._qkv_same_embed_dim was not True"
    if encoder_layer.self_attn.in_proj_bias is None:
        return f"{enc_layer}.self_attn was passed bias=False"
    if not encoder_layer.activation_relu_or_gelu:
        return f"{enc_layer}.activation_relu_or_gelu was not True"
    if encoder_layer.norm1.eps != encoder_layer.norm2.eps:
        return f"{enc_layer}.norm1.eps was not equal to {enc_layer}.norm2.eps"
    if encoder_layer.self_attn.num_heads % 2 == 1:
        return f"{enc_layer}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer``, then the optional ``norm``."""
    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = F._canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                                 F._none_or_dtype(mask), "mask", src.dtype)
        mask = F._canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        output = src
        seq_len = _get_seq_len(src, self.layers[0].self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        padded = self._nested_padding(src, mask, src_key_padding_mask)
        if padded is not None:
            output = aten.masked_fill(output, padded, 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


    def _nested_padding(self, src, mask, src_key_padding_mask):
        """Where torch's encoder would run on a nested tensor (inference without gradients, a left-aligned
        key padding mask, no attention mask), its output is zero at the padded positions; this returns
        those positions as an ``(N, S, 1)`` bool mask (or ``(S, N, 1)``), else None."""
        first = self.layers[0]
        if (not getattr(self, "use_nested_tensor", False) or first.training or src.dim() != 3
                or src_key_padding_mask is None or mask is not None):
            return None
        if is_grad_enabled() and (src.requires_grad or any(p.requires_grad for p in first.parameters())):
            return None
        padded = src_key_padding_mask._array != 0
        if getattr(self, "mask_check", True) and (padded[:, 1:] < padded[:, :-1]).any():
            return None  # not left-aligned: torch keeps the padded tensor
        if not first.self_attn.batch_first:
            padded = padded.T
        return Tensor._make(padded[:, :, None])


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer``, then the optional ``norm``."""
    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """An encoder stack and a decoder stack, each ending in a LayerNorm; matrices xavier-uniform."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, dtype=dtype)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, dtype=dtype)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if is_batched and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)
