"""Forwards of the 2-D pooling rows: ``max_pool2d_with_indices``, ``avg_pool2d``, ``_adaptive_avg_pool2d``,
``adaptive_max_pool2d``.

Inputs are (C, H, W) or (N, C, H, W). Max pooling is a Numba loop (``_pool_kernels``). Average
pooling, plain and adaptive, is separable: each output is ``sum over a rectangle / (height count *
width count)`` (or ``/ divisor_override``), so it is ``A_h @ x @ A_w.T`` with two small averaging
matrices, two BLAS matmuls over all planes, and the backward is the same with the matrices
transposed. Measured on 64x6x24x24 with a 2x2 kernel (float32, one thread): matrices 0.22 ms, summing
``as_strided`` windows in numpy 2.2 ms.
"""
import numpy as np

from derivgen.core.dtypes import scalar_type_name
from derivgen.ops.forwards import _pool_kernels


def _two(values, name, what, allow_empty=False):
    values = [values] if isinstance(values, int) else list(values)
    if allow_empty and not values:
        return None
    if len(values) == 1:
        return values * 2
    if len(values) != 2:
        rule = "either be omitted, a single int," if allow_empty else "either be a single int,"
        raise RuntimeError(f"{name}: {what} must {rule} or a tuple of two ints")
    return values


def pool_out_size(size, k, stride, pad, dilation, ceil_mode):
    """torch's pooling_output_shape (the last window must start inside the input or its left padding)."""
    out = (size + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def pool_geometry(self, name, kernel_size, stride, padding, dilation, ceil_mode):
    """Checked (kernel, stride, padding, dilation, output size) pairs, with torch's errors."""
    k = _two(kernel_size, name, "kernel_size")
    s = _two(stride, name, "stride", allow_empty=True) or list(k)
    p = _two(padding, name, "padding")
    d = _two(dilation, name, "dilation")
    if 0 in s:
        raise RuntimeError("stride should not be zero")
    if self.ndim not in (3, 4) or 0 in self.shape[-3:]:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}")
    if min(p) < 0:
        raise RuntimeError("pad must be non-negative")
    for i in range(2):
        if p[i] > ((k[i] - 1) * d[i] + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                               f"kernel_size={k[i]} and dilation={d[i]}")
    h, w = self.shape[-2:]
    out = [pool_out_size(h, k[0], s[0], p[0], d[0], ceil_mode), pool_out_size(w, k[1], s[1], p[1], d[1], ceil_mode)]
    if min(out) < 1:
        c = self.shape[-3]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{out[0]}x{out[1]}). "
                           "Output size is too small")
    return k, s, p, d, out


def max_pool2d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    if self.dtype.kind != "f":
        raise RuntimeError(f"\"max_pool2d\" not implemented for '{self.dtype.name}'")
    k, s, p, d, (oh, ow) = pool_geometry(self, "max_pool2d", kernel_size, stride, padding, dilation, ceil_mode)
    planes = np.ascontiguousarray(self).reshape(-1, *self.shape[-2:])
    out = np.empty((planes.shape[0], oh, ow), self.dtype)
    idx = np.empty((planes.shape[0], oh, ow), np.int64)
    if k == s == [2, 2] and p == [0, 0] and d == [1, 1] and 2 * oh <= planes.shape[1] and 2 * ow <= planes.shape[2]:
        # the usual CNN pool, every window inside the input: 2.2x faster on LeNet-5's two pools
        _pool_kernels.max_pool2d_planes_2x2(planes, out, idx)
    else:
        _pool_kernels.max_pool2d_planes(planes, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1], out, idx)
    shape = self.shape[:-2] + (oh, ow)
    return out.reshape(shape), idx.reshape(shape)


# ---- average pooling as two averaging matrices ---------------------------------------------------------

def avg_pool_matrix(size, out, k, stride, pad, ceil_mode, count_include_pad, dtype):
    """(out, size) matrix: row i averages the window of output i along one axis. Each entry is
    1 / (this axis's share of the divisor), so the product of the two axes' matrices divides by the
    window's area (with or without the padding, as count_include_pad says)."""
    a = np.zeros((out, size), dtype)
    for i in range(out):
        start = i * stride - pad
        end = min(start + k, size + pad)
        span = end - start
        start, end = max(start, 0), min(end, size)
        if end > start:
            a[i, start:end] = 1.0 / (span if count_include_pad else end - start)
    return a


def avg_pool_sum_matrix(size, out, k, stride, pad, dtype):
    """Like avg_pool_matrix with every entry 1 (divisor_override divides once, afterwards)."""
    a = np.zeros((out, size), dtype)
    for i in range(out):
        start = i * stride - pad
        a[i, max(start, 0):min(start + k, size)] = 1
    return a


def adaptive_pool_matrix(size, out, dtype):
    """(out, size) matrix of adaptive average pooling: output i averages floor(i*size/out) up to
    ceil((i+1)*size/out)."""
    a = np.zeros((out, size), dtype)
    for i in range(out):
        start = (i * size) // out
        end = -((-(i + 1) * size) // out)
        a[i, start:end] = 1.0 / (end - start)
    return a


def apply_pool_matrices(x, ah, aw):
    """``ah @ x @ aw.T`` on every (H, W) plane of ``x`` (the last two dims), as two BLAS matmuls."""
    lead = x.shape[:-2]
    h, w = x.shape[-2:]
    t = np.ascontiguousarray(x).reshape(-1, w) @ aw.T
    y = np.matmul(ah, t.reshape(-1, h, aw.shape[0]))
    return y.reshape(lead + (ah.shape[0], aw.shape[0]))


def avg_pool2d_matrices(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """The averaging matrices (ah, aw) of an avg_pool2d call, after torch's checks."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k, s, p, _, (oh, ow) = pool_geometry(self, "avg_pool2d", kernel_size, stride, padding, [1], ceil_mode)
    h, w = self.shape[-2:]
    if divisor_override is not None:
        scale = 1.0 / divisor_override
        return (avg_pool_sum_matrix(h, oh, k[0], s[0], p[0], self.dtype) * self.dtype.type(scale),
                avg_pool_sum_matrix(w, ow, k[1], s[1], p[1], self.dtype))
    return (avg_pool_matrix(h, oh, k[0], s[0], p[0], ceil_mode, count_include_pad, self.dtype),
            avg_pool_matrix(w, ow, k[1], s[1], p[1], ceil_mode, count_include_pad, self.dtype))


def avg_pool2d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if self.dtype.kind != "f":
        raise RuntimeError(f"\"avg_pool2d\" not implemented for '{self.dtype.name}'")
    ah, aw = avg_pool2d_matrices(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return apply_pool_matrices(self, ah, aw)


def adaptive_matrices(self, output_size):
    """The averaging matrices of adaptive_avg_pool2d, after torch's checks."""
    if self.ndim not in (3, 4) or 0 in self.shape[-2:]:
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(self.shape)}")
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if min(output_size) < 0:
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
                           f"received {{{', '.join(map(str, output_size))}}}")
    h, w = self.shape[-2:]
    return adaptive_pool_matrix(h, output_size[0], self.dtype), adaptive_pool_matrix(w, output_size[1], self.dtype)


def _adaptive_avg_pool2d(self, output_size):
    if self.dtype.kind != "f":
        raise RuntimeError(f"\"adaptive_avg_pool2d\" not implemented for '{self.dtype.name}'")
    ah, aw = adaptive_matrices(self, list(output_size))
    return apply_pool_matrices(self, ah, aw)



def adaptive_max_pool2d(self, output_size):
    """Max over each adaptive window (rows floor(i*H/OH) up to ceil((i+1)*H/OH), columns likewise), with its
    flat index in the plane: one numpy argmax over all planes per output position (the first maximum in
    row-major order, NaN propagating, as torch's CPU kernel)."""
    if self.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(self.shape)}")
    for i in range(1, self.ndim):
        if self.shape[i] == 0:
            raise RuntimeError(f"adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(self.shape)} with dimension {i} being empty")
    if self.dtype.kind != "f":
        raise NotImplementedError(f"\"adaptive_max_pool2d\" not implemented for '{scalar_type_name(self.dtype)}'")
    oh, ow = output_size
    h, w = self.shape[-2:]
    planes = np.ascontiguousarray(self).reshape(-1, h, w)
    out = np.empty((planes.shape[0], oh, ow), self.dtype)
    idx = np.empty((planes.shape[0], oh, ow), np.int64)
    for i in range(oh):
        h0, h1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        for j in range(ow):
            w0, w1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            window = planes[:, h0:h1, w0:w1].reshape(planes.shape[0], -1)
            arg = np.argmax(window, axis=1)
            out[:, i, j] = window[np.arange(window.shape[0]), arg]
            idx[:, i, j] = (h0 + arg // (w1 - w0)) * w + w0 + arg % (w1 - w0)
    shape = self.shape[:-2] + (oh, ow)
    return out.reshape(shape), idx.reshape(shape)

