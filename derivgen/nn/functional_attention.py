"""Attention in ``derivgen.nn.functional``: ``scaled_dot_product_attention`` (torch's math backend, the one
its CPU float64 path runs: matmuls, a mask added, a softmax that gives zeros for fully masked rows) and
``multi_head_attention_forward`` (torch's Python function, step for step: packed or separate input
projections, ``bias_k``/``bias_v``, zero attention, masks merged as additive floats, then either the
explicit ``baddbmm``/softmax/``bmm`` path that also returns the weights, or scaled dot product attention)."""
import math
import warnings

import numpy as np

from derivgen.core import dtypes
from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor
from derivgen.ops import composites as _c
from derivgen.ops.factories import ones, zeros, zeros_like

# C++ spellings of dtypes, as torch's attention checks print them
_CPP_NAMES = {"float64": "double", "float32": "float", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool"}


def _cpp(dtype):
    return _CPP_NAMES.get(dtype.name, dtype.name)


def _float_mask(mask, dtype):
    """A boolean mask (True: attend) as the additive float mask torch builds: 0 where True, -inf elsewhere."""
    return aten.masked_fill(zeros(tuple(mask.shape), dtype=dtype), aten.logical_not(mask), float("-inf"))


def _safe_softmax(scores):
    """torch's ``_safe_softmax``: softmax over the last dim, with rows that are all ``-inf`` giving zeros
    (and zero gradients) instead of NaN. Those rows are zeroed before the softmax too, so no NaN is ever
    made (its backward would spread it)."""
    fully_masked = Tensor._make(np.all(scores._array == -np.inf, axis=-1, keepdims=True))  # no gradient flows
    if not fully_masked._array.any():
        return aten._softmax(scores, -1, False)
    out = aten._softmax(aten.where(fully_masked, zeros_like(scores), scores), -1, False)
    return aten.where(fully_masked, zeros_like(out), out)


def _repeat_heads(t, repeats):
    """``t.repeat_interleave(repeats, dim=-3)``: each head ``repeats`` times in a row (grouped-query attention)."""
    shape = tuple(t.shape)
    expanded = aten.expand(t.unsqueeze(-3), shape[:-2] + (repeats,) + shape[-2:])
    return _c.reshape(expanded, shape[:-3] + (shape[-3] * repeats,) + shape[-2:])


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dims (dropout on the weights)."""
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_cpp(query.dtype)} key.dtype: {_cpp(key.dtype)} and value.dtype: {_cpp(value.dtype)} "
                           "instead.")
    if attn_mask is not None and attn_mask.dtype != dtypes.bool_ and attn_mask.dtype != query.dtype:
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {_cpp(attn_mask.dtype)} and  query.dtype: {_cpp(query.dtype)} instead.")
    if attn_mask is not None and is_causal:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    target_len, source_len = query.size(-2), key.size(-2)
    if is_causal:
        attn_mask = ones(target_len, source_len, dtype=dtypes.bool_).tril()
    if attn_mask is not None and attn_mask.dtype == dtypes.bool_:
        attn_mask = _float_mask(attn_mask, query.dtype)
    if enable_gqa and query.dim() >= 3:
        heads, key_heads, value_heads = query.size(-3), key.size(-3), value.size(-3)
        if heads % key_heads or heads % value_heads:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
        key = _repeat_heads(key, heads // key_heads)
        value = _repeat_heads(value, heads // value_heads)
    factor = math.sqrt(1.0 / math.sqrt(query.size(-1)) if scale is None else scale)
    scores = _c.matmul(aten.mul(query, factor), aten.mul(aten.transpose(key, -2, -1), factor))
    if attn_mask is not None:
        scores = aten.add(scores, attn_mask)
    # without a mask no row can be all -inf (unless the inputs hold infinities, as torch's plain path)
    weights = aten._softmax(scores, -1, False) if attn_mask is None else _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = _c.dropout(weights, dropout_p, True)
    return _c.matmul(weights, value)


# ---- multi_head_attention_forward and its helpers (torch's names) -----------------------------------------
def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            expected_shape = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected_shape:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected_shape} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True: masked out) as an additive float mask of ``target_type``; float masks pass."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != dtypes.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=2)
    if not is_float:
        mask = aten.masked_fill(zeros(tuple(mask.shape), dtype=target_type), mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _linear(input, weight, bias):
    return _c.linear(input, weight, bias)


def _in_projection_packed(q, k, v, w, b=None):
    """Queries, keys and values through one packed ``(3E, E)`` weight: one product when they are the same
    tensor, two when only key and value are."""
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = _linear(q, w, b)
            proj = _c.contiguous(aten.squeeze(aten.transpose(aten.unsqueeze(_c.unflatten(proj, -1, (3, E)), 0), 0, -2),
                                              -2))
            return proj.unbind(0)  # one UnbindBackward0 where torch records three SelectBackward0
        w_q, w_kv = _c.split(w, [E, E * 2])
        b_q, b_kv = (None, None) if b is None else _c.split(b, [E, E * 2])
        kv_proj = _linear(k, w_kv, b_kv)
        kv_proj = _c.contiguous(aten.squeeze(aten.transpose(aten.unsqueeze(_c.unflatten(kv_proj, -1, (2, E)), 0), 0, -2),
                                             -2))
        k_proj, v_proj = kv_proj.unbind(0)
        return _linear(q, w_q, b_q), k_proj, v_proj
    w_q, w_k, w_v = _c.chunk(w, 3)
    b_q, b_k, b_v = (None, None, None) if b is None else _c.chunk(b, 3)
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for what, w, shape in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)), ("value", w_v, (Eq, Ev))):
        if tuple(w.shape) != shape:
            raise AssertionError(f"expecting {what} weights shape of {shape}, but got {w.shape}")
    for what, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and tuple(b.shape) != (Eq,):
            raise AssertionError(f"expecting {what} bias shape of {(Eq,)}, but got {b.shape}")
    return _linear(q, w_q, b_q), _linear(k, w_k, b_k), _linear(v, w_v, b_v)


def _pad_last(t):
    return aten.constant_pad_nd(t, [0, 1], 0.0)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch's ``F.multi_head_attention_forward``: ``(attn_output, attn_weights or None)`` for
    sequence-first ``(L, N, E)`` (or unbatched ``(L, E)``) inputs."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = tuple(query.shape)
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention builds the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for which, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {which}_proj_weight is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else _c.chunk(in_proj_bias, 3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = aten.cat([k, bias_k.repeat(1, bsz, 1)])
        v = aten.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    q = aten.transpose(q.view(tgt_len, bsz * num_heads, head_dim), 0, 1)
    k = _heads(k, static_k, "k", bsz, num_heads, head_dim)
    v = _heads(v, static_v, "v", bsz, num_heads, head_dim)

    if add_zero_attn:
        zero_attn_shape = (bsz * num_heads, 1, head_dim)
        k = aten.cat([k, zeros(zero_attn_shape, dtype=k.dtype)], 1)
        v = aten.cat([v, zeros(zero_attn_shape, dtype=v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)

    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = _c.reshape(aten.expand(key_padding_mask.view(bsz, 1, 1, src_len),
                                                  (bsz, num_heads, 1, src_len)), (bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else aten.add(attn_mask, key_padding_mask)

    if not training:
        dropout_p = 0.0

    if need_weights:
        E = q.shape[2]
        q_scaled = aten.mul(q, math.sqrt(1.0 / float(E)))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            attn_output_weights = aten.baddbmm(attn_mask, q_scaled, aten.transpose(k, -2, -1))
        else:
            attn_output_weights = aten.bmm(q_scaled, aten.transpose(k, -2, -1))
        attn_output_weights = aten._softmax(attn_output_weights, -1, False)
        if dropout_p > 0.0:
            attn_output_weights = _c.dropout(attn_output_weights, dropout_p, True)
        attn_output = aten.bmm(attn_output_weights, v)
        attn_output = _c.reshape(aten.transpose(attn_output, 0, 1), (tgt_len * bsz, embed_dim))
        attn_output = _linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
        attn_output_weights = attn_output_weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            attn_output_weights = aten.mean(attn_output_weights, [1])
        if not is_batched:
            attn_output = attn_output.squeeze(1)
            attn_output_weights = attn_output_weights.squeeze(0)
        return attn_output, attn_output_weights

    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    attn_output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    attn_output = _c.reshape(aten.permute(attn_output, [2, 0, 1, 3]), (bsz * tgt_len, embed_dim))
    attn_output = _linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
    if not is_batched:
        attn_output = attn_output.squeeze(1)
    return attn_output, None


def _heads(t, static, name, bsz, num_heads, head_dim):
    """Keys or values split into heads, ``(bsz * num_heads, S, head_dim)``, or the given ``static_k``/``_v``."""
    if static is None:
        return aten.transpose(t.view(t.shape[0], bsz * num_heads, head_dim), 0, 1)
    if static.size(0) != bsz * num_heads:
        raise AssertionError(f"expecting static_{name}.size(0) of {bsz * num_heads}, but got {static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got {static.size(2)}")
    return static
