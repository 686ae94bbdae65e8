"""Forward of the ``convolution`` row (conv1d/2d/3d, strided, padded, dilated, grouped, transposed) and
the array primitives its backward shares.

Convolution is im2col plus batched BLAS matmuls, in one N-d form: 1-D and 2-D operands are viewed as
3-D ones with a height / depth of 1, and every array here is NC(D)(H)W and C-contiguous. A Numba loop
(``_conv_kernels.im2col_3d``) writes the columns ``(N, groups, C/g*kd*kh*kw, OD*OH*OW)`` straight from
the input, zeros where a window reaches into the padding (no padded copy); they are multiplied by the
weight ``(groups, O/g, C/g*kd*kh*kw)``, the product already in NCDHW order. Columns and products are
made a few samples at a time (``_column_chunks``, ``_product_chunks``) so that they stay in L2 between
the copy and the product. The input gradient is the weight's transpose times ``grad``, then col2im
(``_conv_kernels.col2im_3d``, padding dropped in the loop); a 2-D unit-stride convolution with short
output rows takes the "wide" layout instead (``_input_grad_wide``). The transposed convolution's forward
is the input gradient of the plain one, as in torch. Outputs come from the buffer pool
(``derivgen/kernels/buffers.py``): fresh ones page-faulted on every step. While derivgen computes on
more than one thread, a large enough convolution runs split into blocks of samples instead, each block
on a thread of derivgen's pool doing per sample the same columns and GEMM calls (``_conv_kernels``,
``conv_*_blocks``); LeNet-5's second layer on two threads: 0.78 -> 0.49-0.54 ms forward.

Measured on the LeNet-5 layers (float32, one thread): a Numba direct loop without im2col took 0.9 ms
on 64x1x28x28 -> 6 5x5 and 5.9 ms on 64x6x14x14 -> 16 5x5 (no cache blocking; BLAS has), so im2col
is kept. "Wide" columns for the forward (each column one contiguous run of the flattened padded plane,
the product computed on Wp instead of OW columns and cropped after) gave 0.76 against 0.91 ms on the
second layer, too little for a second forward path.
"""
import numpy as np

from derivgen.core.dtypes import from_numpy_dtype, scalar_type_name
from derivgen.kernels import buffers, products
from derivgen.ops.forwards import _conv_kernels


def _legacy(a):
    return f"derivgen.{from_numpy_dtype(a.dtype)._legacy}"


def conv_out_size(size, k, stride, padding, dilation):
    return (size + 2 * padding - dilation * (k - 1) - 1) // stride + 1


def transposed_out_size(size, k, stride, padding, dilation, output_padding):
    return (size - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1


def _as_2d(x, n_spatial):
    """View a 1-D (N, C, L) operand as 2-D (N, C, 1, L)."""
    return x if n_spatial == 2 else x.reshape(x.shape[:2] + (1,) + x.shape[2:])


def _pair(values, n_spatial, fill):
    values = list(values)
    return tuple(values) if n_spatial == 2 else (fill, values[0])


# Columns are made a few samples at a time, about this many bytes, and multiplied at once: they stay in
# the core's L2 cache between the copy that writes them and the product that reads them. Made for the
# whole batch (4-5 MiB on LeNet-5's layers) they went out to memory and back, and the copy took twice as
# long inside a training step as alone.
_CHUNK_BYTES = 1 << 19


def _column_chunks(x, ks, outs, stride, padding, dilation, groups):
    """(first sample, end, columns (end - first, groups, C/g*prod(ks), prod(outs))) of the C-contiguous
    (N, C, D, H, W) input ``x``, chunk by chunk; each chunk's columns overwrite the previous one's."""
    n, c = x.shape[:2]
    rows, run = c * _prod(ks), _prod(outs)
    per = max(1, _CHUNK_BYTES // (rows * run * x.itemsize))
    cols = np.empty((min(per, n), rows, run), x.dtype)
    for b0 in range(0, n, per):
        b1 = min(b0 + per, n)
        part = cols[:b1 - b0]
        _conv_kernels.im2col_3d(x[b0:b1], *ks, *stride, *padding, *dilation, *outs, part)
        yield b0, b1, part.reshape(b1 - b0, groups, rows // groups, run)


# ---- the same, split over derivgen's threads sample by sample (_conv_kernels.conv_*_blocks) -------------
# products.plan decides when (large enough, more than one thread free, Numba loaded, numpy's OpenBLAS
# GEMM found); each block of samples gets its own columns.

def _forward_split(gemm, blocks, x, wk, bias, ks, stride, padding, dilation, outs, out):
    dt = x.dtype
    groups = wk.shape[0]
    bias2 = np.empty((0, 0), dt) if bias is None else np.ascontiguousarray(bias, dt).reshape(groups, -1)
    cols = np.empty((blocks, x.shape[1] * _prod(ks), _prod(outs)), dt)
    _conv_kernels.conv_forward_blocks(gemm, np.ascontiguousarray(x), np.ascontiguousarray(wk), bias2, *ks, *stride,
                                      *padding, *dilation, *outs, cols, out, *products.one_zero(dt))


def _weight_grad_split(gemm, blocks, x, grad, weight_shape, stride, padding, dilation, groups):
    """(groups, C/g*kd*kh*kw, O/g): the blocks' partial sums over their samples, added in block order."""
    dt = grad.dtype
    o = weight_shape[0]
    shape = (blocks, groups, _prod(weight_shape[1:]), o // groups)
    cols = np.empty((blocks, x.shape[1] * _prod(weight_shape[2:]), _prod(grad.shape[2:])), dt)
    prods, partial = np.empty(shape, dt), np.empty(shape, dt)
    _conv_kernels.conv_weight_grad_blocks(gemm, np.ascontiguousarray(x), np.ascontiguousarray(grad),
                                          *weight_shape[2:], *stride, *padding, *dilation, cols, prods, partial,
                                          *products.one_zero(dt))
    return np.add.reduce(partial, axis=0)


def _input_grad_split(gemm, blocks, grad, w, input_shape, stride, padding, dilation, groups):
    n, o = grad.shape[:2]
    outs = grad.shape[2:]
    cg = w.shape[1]
    ks = w.shape[2:]
    out = buffers.empty(tuple(input_shape), grad.dtype)
    cols = np.empty((blocks, groups * cg * _prod(ks), _prod(outs)), grad.dtype)
    _conv_kernels.conv_input_grad_blocks(
        gemm, np.ascontiguousarray(grad).reshape(n, groups, o // groups, _prod(outs)),
        np.ascontiguousarray(w).reshape(groups, o // groups, cg * _prod(ks)), *ks, *stride, *padding, *dilation,
        *outs, cols, out, *products.one_zero(grad.dtype))
    return out


def conv_arrays_nd(x, w, stride, padding, dilation, groups, bias=None):
    """Plain (not transposed) convolution of C-contiguous (N, C, D, H, W) arrays: each chunk's columns
    times the weight (groups, O/g, C/g*kd*kh*kw), the product already in NCDHW order, plus ``bias``
    added while the chunk's output is still in cache."""
    n = x.shape[0]
    o, cg = w.shape[:2]
    ks = w.shape[2:]
    outs = tuple(conv_out_size(size, k, s, p, d) for size, k, s, p, d in zip(x.shape[2:], ks, stride, padding, dilation))
    out = buffers.empty((n, groups, o // groups, _prod(outs)), x.dtype)
    wk = w.reshape(groups, o // groups, cg * _prod(ks))
    gemm, blocks = products.plan(x.dtype, n, n * o * cg * _prod(ks) * _prod(outs))
    if gemm is not None:
        _forward_split(gemm, blocks, x, wk, bias, ks, stride, padding, dilation, outs, out)
        return out.reshape((n, o) + outs)
    bk = None if bias is None else bias.reshape(1, groups, o // groups, 1)
    for b0, b1, cols in _column_chunks(x, ks, outs, stride, padding, dilation, groups):
        np.matmul(wk, cols, out=out[b0:b1])
        if bk is not None:
            out[b0:b1] += bk
    return out.reshape((n, o) + outs)


def weight_grad_nd(x, grad, weight_shape, stride, padding, dilation, groups):
    """Gradient of a plain convolution for its weight, (N, C, D, H, W) arrays: ``grad`` times the
    input's columns, summed over the batch."""
    o = weight_shape[0]
    n = grad.shape[0]
    g = grad.reshape(n, groups, o // groups, -1)
    ckk = _prod(weight_shape[1:])
    gemm, blocks = products.plan(grad.dtype, n, n * o * ckk * g.shape[-1])
    if gemm is not None and grad.dtype == x.dtype:
        wt = _weight_grad_split(gemm, blocks, x, grad, weight_shape, stride, padding, dilation, groups)
        return np.ascontiguousarray(wt.swapaxes(-1, -2)).reshape(weight_shape)
    prods = np.empty((n, groups, ckk, o // groups), grad.dtype)
    # one BLAS matmul per sample, the columns (C/g*kd*kh*kw, OD*OH*OW) times the gradient's transpose (a
    # flag to BLAS, not a copy), then the sum over the batch and a transpose of the small result.
    # OpenBLAS runs this order about twice as fast as ``g @ cols.T`` when the columns are taller than
    # wide (64x6x14x14 -> 16 5x5, float32, one thread: 0.48 ms against 0.87 ms) and as fast otherwise;
    # tensordot's transposing copy of the columns made it 6-20x slower.
    for b0, b1, cols in _column_chunks(x, weight_shape[2:], grad.shape[2:], stride, padding, dilation, groups):
        np.matmul(cols, g[b0:b1].swapaxes(-1, -2), out=prods[b0:b1])
    wt = np.add.reduce(prods, axis=0)
    return np.ascontiguousarray(wt.swapaxes(-1, -2)).reshape(weight_shape)


def _as_3d(x):
    """View a 2-D (N, C, H, W) operand as 3-D (N, C, 1, H, W)."""
    return x.reshape(x.shape[:2] + (1,) + x.shape[2:])


def conv2d_arrays(x, w, stride, padding, dilation, groups, bias=None):
    """Plain (not transposed) 2-D convolution of C-contiguous arrays."""
    out = conv_arrays_nd(_as_3d(x), _as_3d(w), (1,) + tuple(stride), (0,) + tuple(padding),
                         (1,) + tuple(dilation), groups, bias)
    return out.reshape(out.shape[:2] + out.shape[3:])


def _product_chunks(wt, g):
    """(first sample, end, ``wt @ g[first:end]``) chunk by chunk, for the same reason as
    ``_column_chunks``; each chunk's product overwrites the previous one's."""
    n = g.shape[0]
    shape = (wt.shape[0], wt.shape[1], g.shape[-1])
    per = max(1, _CHUNK_BYTES // (_prod(shape) * g.itemsize))
    cols = np.empty((min(per, n),) + shape, g.dtype)
    for b0 in range(0, n, per):
        b1 = min(b0 + per, n)
        part = cols[:b1 - b0]
        np.matmul(wt, g[b0:b1], out=part)
        yield b0, b1, part


def _input_grad_plan(grad, w):
    """products.plan for the input gradient of ``grad`` (N, O, ...) through the weight ``w``."""
    n, o = grad.shape[:2]
    return products.plan(grad.dtype, n, n * o * _prod(w.shape[1:]) * _prod(grad.shape[2:]))


def input_grad_nd(grad, w, input_shape, stride, padding, dilation, groups, split=None):
    """Gradient of a plain convolution for its input, (N, C, D, H, W) arrays (the forward of a
    transposed one): ``w``'s transpose applied to ``grad``, then col2im (``_conv_kernels.col2im_3d``).
    ``split``: the caller's ``_input_grad_plan``, if it made one."""
    n, o = grad.shape[:2]
    outs = grad.shape[2:]
    cg = w.shape[1]
    ks = w.shape[2:]
    gemm, blocks = split or _input_grad_plan(grad, w)
    if gemm is not None and w.dtype == grad.dtype:
        return _input_grad_split(gemm, blocks, grad, w, input_shape, stride, padding, dilation, groups)
    wt = w.reshape(groups, o // groups, cg * _prod(ks)).transpose(0, 2, 1)
    out = buffers.empty(tuple(input_shape), grad.dtype)
    out.fill(0)
    for b0, b1, cols in _product_chunks(wt, grad.reshape(n, groups, o // groups, _prod(outs))):
        _conv_kernels.col2im_3d(cols.reshape(b1 - b0, groups * cg * _prod(ks), _prod(outs)), *ks, *stride,
                                *padding, *dilation, *outs, out[b0:b1])
    return out


def conv_input_grad(grad, w, input_shape, stride, padding, dilation, groups):
    """Gradient of a plain 2-D convolution for its input. (The forward of a transposed convolution.)"""
    n, o, oh, ow = grad.shape
    _, cg, kh, kw = w.shape
    hp, wp = input_shape[2] + 2 * padding[0], input_shape[3] + 2 * padding[1]
    split = _input_grad_plan(grad, w)
    if (split[0] is None and ow < _WIDE_BELOW and tuple(stride) == (1, 1) and tuple(dilation) == (1, 1)
            and (hp, wp) == (oh + kh - 1, ow + kw - 1) and np.isfinite(w).all()):
        wt = w.reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1)
        return _input_grad_wide(grad, wt, input_shape, kh, kw, padding, groups)
    shape = tuple(input_shape)
    gi = input_grad_nd(_as_3d(grad), _as_3d(w), shape[:2] + (1,) + shape[2:], (1,) + tuple(stride),
                       (0,) + tuple(padding), (1,) + tuple(dilation), groups, split)
    return gi.reshape(shape)


# output rows shorter than this take the wide layout for the input gradient: measured (float32, one
# thread, minima of 60 alternating runs against col2im_3d) 0.80 against 0.91 ms on 64x6x14x14 -> 16 5x5
# (OW 10), but 0.81 against 0.71 ms on 64x1x28x28 -> 6 5x5 with padding 2 (OW 28), where the plain
# rows are long enough to vectorise
_WIDE_BELOW = 16


def _input_grad_wide(grad, wt, input_shape, kh, kw, padding, groups):
    """``conv_input_grad`` of a unit-stride, undilated convolution in the wide layout: ``grad``'s rows
    are widened with zeros to the padded input's width Wp, so the product's column (c, u, v) is the run
    of plane c's flattened gradient from u*Wp + v, added with one contiguous loop (LeNet-5's 64x6x14x14
    -> 16 5x5: OW = 10-element rows made the plain col2im the larger half of the input gradient).
    The extra columns hold ``wt @ 0 = 0`` (the caller checks that the weight is finite), and every
    position receives its terms in the same order as in ``col2im_3d``, so the sums are the same."""
    n, o, oh, ow = grad.shape
    n_, c, h, wd = input_shape
    hp, wp = h + 2 * padding[0], wd + 2 * padding[1]
    run = (oh - 1) * wp + ow
    wide = buffers.empty((n, o, oh, wp), grad.dtype)
    wide[:, :, :, ow:] = 0
    wide[:, :, :, :ow] = grad
    out = buffers.empty((n, c, hp, wp), grad.dtype)
    out.fill(0)
    for b0, b1, cols in _product_chunks(wt, wide.reshape(n, groups, o // groups, oh * wp)[..., :run]):
        _conv_kernels.col2im_add_wide(cols.reshape(b1 - b0, c * kh * kw, run), kh, kw, out[b0:b1])
    if any(padding):
        out = np.ascontiguousarray(out[:, :, padding[0]:padding[0] + h, padding[1]:padding[1] + wd])
    return out


def conv_weight_grad(x, grad, weight_shape, stride, padding, dilation, groups):
    """Gradient of a plain 2-D convolution for its weight."""
    gw = weight_grad_nd(_as_3d(x), _as_3d(grad), (weight_shape[0], weight_shape[1], 1) + tuple(weight_shape[2:]),
                        (1,) + tuple(stride), (0,) + tuple(padding), (1,) + tuple(dilation), groups)
    return gw.reshape(weight_shape)


# ---- 3-D (and general N-d) forms ----------------------------------------------------------------------

def _prod(values):
    out = 1
    for v in values:
        out *= v
    return out


def conv3d_arrays(x, w, stride, padding, dilation, groups, bias=None):
    """Plain (not transposed) 3-D convolution of C-contiguous arrays."""
    return conv_arrays_nd(x, w, tuple(stride), tuple(padding), tuple(dilation), groups, bias)


def conv3d_input_grad(grad, w, input_shape, stride, padding, dilation, groups):
    """Gradient of a plain 3-D convolution for its input."""
    return input_grad_nd(grad, w, input_shape, tuple(stride), tuple(padding), tuple(dilation), groups)


def conv3d_weight_grad(x, grad, weight_shape, stride, padding, dilation, groups):
    """Gradient of a plain 3-D convolution for its weight."""
    return weight_grad_nd(x, grad, tuple(weight_shape), tuple(stride), tuple(padding), tuple(dilation), groups)


# ---- argument checks with torch's texts ----------------------------------------------------------------

def check_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):  # noqa: A002
    k = weight.ndim
    if k not in (3, 4, 5):
        raise RuntimeError(f"derivgen: convolution supports 1-D, 2-D and 3-D kernels, got weight of size "
                           f"{list(weight.shape)}")
    if input.ndim != k:
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight {list(weight.shape)}, but got "
                           f"{input.ndim}-dimensional input of size {list(input.shape)} instead")
    if input.dtype != weight.dtype or (bias is not None and bias.dtype != input.dtype):
        other = weight if input.dtype != weight.dtype else bias
        what = "weight" if other is weight else "bias"
        raise RuntimeError(f"Input type ({_legacy(input)}) and {what} type ({_legacy(other)}) should be the same")
    if input.dtype.kind != "f":
        raise RuntimeError(f"\"slow_conv2d_cpu\" not implemented for '{scalar_type_name(input.dtype)}'")
    n_spatial = k - 2
    for name, values in (("stride", stride), ("padding", padding), ("dilation", dilation),
                         ("output_padding", output_padding)):
        if len(values) != n_spatial:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {n_spatial} values "
                               f"to match the convolution dimensions, but got {name}={list(values)}")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{list(weight.shape)}] instead")
    c = input.shape[1]
    if not transposed:
        if c != weight.shape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                               f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got {c} "
                               "channels instead")
        out_channels = weight.shape[0]
        padded = [s + 2 * p for s, p in zip(input.shape[2:], padding)]
        eff = [d * (kk - 1) + 1 for d, kk in zip(dilation, weight.shape[2:])]
        if any(e > p for e, p in zip(eff, padded)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                               f"size: ({' x '.join(map(str, eff))}). Kernel size can't be greater than actual input size")
    else:
        if c != weight.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                               f"{list(input.shape)} to have {weight.shape[0]} channels, but got {c} channels instead")
        if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
            names = ("depth", "height", "width")[3 - n_spatial:]
            parts = " ".join(f"output_padding_{nm}: {v}" for nm, v in zip(names, output_padding))
            parts += " " + " ".join(f"stride_{nm}: {v}" for nm, v in zip(names, stride))
            parts += " " + " ".join(f"dilation_{nm}: {v}" for nm, v in zip(names, dilation))
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got {parts}")
        out_channels = weight.shape[1] * groups
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {list(bias.shape)} instead")


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):  # noqa: A002
    stride, padding, dilation, output_padding = (list(v) for v in (stride, padding, dilation, output_padding))
    check_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    n_spatial = weight.ndim - 2
    if n_spatial == 3:
        return _convolution_3d(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    x = np.ascontiguousarray(_as_2d(input, n_spatial))
    w = np.ascontiguousarray(_as_2d(weight, n_spatial))
    s, p, d = _pair(stride, n_spatial, 1), _pair(padding, n_spatial, 0), _pair(dilation, n_spatial, 1)
    if not transposed:
        out = conv2d_arrays(x, w, s, p, d, groups, bias)
    else:
        op = _pair(output_padding, n_spatial, 0)
        n, _, h, wd = x.shape
        _, og, kh, kw = w.shape
        shape = (n, og * groups, transposed_out_size(h, kh, s[0], p[0], d[0], op[0]),
                 transposed_out_size(wd, kw, s[1], p[1], d[1], op[1]))
        if shape[2] <= 0 or shape[3] <= 0:
            raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, input.shape[2:]))}). "
                               f"Calculated output size per channel: ({' x '.join(map(str, shape[4 - n_spatial:]))}). "
                               "Output size is too small")
        out = conv_input_grad(x, w, shape, s, p, d, groups)
        if bias is not None:
            out += bias.reshape(1, -1, 1, 1)
    return out.reshape(out.shape[:2] + out.shape[4 - n_spatial:])


def _too_small(input, shape):  # noqa: A002
    raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, input.shape[2:]))}). "
                       f"Calculated output size per channel: ({' x '.join(map(str, shape))}). Output size is too small")


def _convolution_3d(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):  # noqa: A002
    x = np.ascontiguousarray(input)
    w = np.ascontiguousarray(weight)
    if not transposed:
        return conv3d_arrays(x, w, stride, padding, dilation, groups, bias)
    spatial = tuple(transposed_out_size(size, k, s, p, d, op) for size, k, s, p, d, op in
                    zip(x.shape[2:], w.shape[2:], stride, padding, dilation, output_padding))
    if any(v <= 0 for v in spatial):
        _too_small(input, spatial)
    out = conv3d_input_grad(x, w, (x.shape[0], w.shape[1] * groups) + spatial, stride, padding, dilation, groups)
    if bias is not None:
        out += bias.reshape(1, -1, 1, 1, 1)
    return out
