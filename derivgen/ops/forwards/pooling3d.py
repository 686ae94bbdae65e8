"""Forwards of the 3-D pooling rows: ``max_pool3d_with_indices``, ``avg_pool3d``, ``_adaptive_avg_pool3d``,
``adaptive_max_pool3d``.

Inputs are (C, D, H, W) or (N, C, D, H, W). Average pooling, plain and adaptive, is separable as in 2-D
(``pooling.py``): one averaging matrix per axis, applied as three BLAS matmuls over all volumes. Max
pooling copies the padded input's windows (an ``as_strided`` view (volumes, kd, kh, kw, OD, OH, OW), padded
with -inf) and takes numpy's argmax over the kernel axis, which keeps the first maximum in (d, h, w) order
and propagates NaN, as torch's CPU kernel does; indices are flat positions in each input volume.
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from derivgen.core.dtypes import scalar_type_name
from derivgen.ops.forwards.pooling import adaptive_pool_matrix, avg_pool_matrix, avg_pool_sum_matrix, pool_out_size


def _three(values, name, what, allow_empty=False):
    values = [values] if isinstance(values, int) else list(values)
    if allow_empty and not values:
        return None
    if len(values) == 1:
        return values * 3
    if len(values) != 3:
        rule = "either be omitted, a single int," if allow_empty else "either be a single int,"
        raise RuntimeError(f"{name}: {what} must {rule} or a tuple of three ints")
    return values


def pool3d_geometry(self, name, kernel_size, stride, padding, dilation, ceil_mode):
    """Checked (kernel, stride, padding, dilation, output size) triples, with torch's errors."""
    k = _three(kernel_size, name, "kernel_size")
    s = _three(stride, name, "stride", allow_empty=True) or list(k)
    p = _three(padding, name, "padding")
    d = _three(dilation, name, "dilation")
    if self.ndim not in (4, 5) or 0 in self.shape[-4:]:
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {k[0]} kH: {k[1]} kW: {k[2]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {s[0]} dH: {s[1]} dW: {s[2]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {d[0]} dilationH: {d[1]} "
                           f"dilationW: {d[2]}")
    for i in range(3):
        if p[i] < 0 or p[i] > ((k[i] - 1) * d[i] + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                               f"kernel_size={k[i]} and dilation={d[i]}")
    spatial = self.shape[-3:]
    out = [pool_out_size(spatial[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(3)]
    if min(out) < 1:
        c = self.shape[-4]
        raise RuntimeError(f"Given input size: ({c}x{'x'.join(map(str, spatial))}). Calculated output size: "
                           f"({c}x{'x'.join(map(str, out))}). Output size is too small")
    return k, s, p, d, out


def _float_only(self, name):
    if self.dtype.kind != "f":
        raise RuntimeError(f"\"{name}\" not implemented for '{self.dtype.name}'")


def max_pool3d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    _float_only(self, "max_pool3d_with_indices_cpu")
    k, s, p, d, out = pool3d_geometry(self, "max_pool3d", kernel_size, stride, padding, dilation, ceil_mode)
    spatial = self.shape[-3:]
    vols = np.ascontiguousarray(self).reshape((-1,) + spatial)
    # room for the last window of a ceil_mode output beyond the right padding
    ends = [(o - 1) * st + (kk - 1) * dd + 1 for o, st, kk, dd in zip(out, s, k, d)]
    padded = np.full((vols.shape[0],) + tuple(max(e, sz + pp) for e, sz, pp in zip(ends, spatial, p)), -np.inf,
                     self.dtype)
    padded[(slice(None),) + tuple(slice(pp, pp + sz) for pp, sz in zip(p, spatial))] = vols
    st = padded.strides
    win = as_strided(padded, (vols.shape[0],) + tuple(k) + tuple(out),
                     (st[0],) + tuple(a * dd for a, dd in zip(st[1:], d)) + tuple(a * ss for a, ss in zip(st[1:], s)),
                     writeable=False)
    flat = win.reshape(vols.shape[0], k[0] * k[1] * k[2], -1)
    arg = np.argmax(flat, axis=1)
    values = np.take_along_axis(flat, arg[:, None, :], 1)[:, 0, :]
    # the argmax's kernel offset (u, v, t) and the output position give the input position
    u, rest = np.divmod(arg, k[1] * k[2])
    v, t = np.divmod(rest, k[2])
    od, oh, ow = np.unravel_index(np.arange(arg.shape[1]), out)
    z = od * s[0] + u * d[0] - p[0]
    y = oh * s[1] + v * d[1] - p[1]
    x = ow * s[2] + t * d[2] - p[2]
    idx = (z * spatial[1] + y) * spatial[2] + x
    shape = self.shape[:-3] + tuple(out)
    return values.reshape(shape), idx.astype(np.int64).reshape(shape)


def apply_pool_matrices3(x, ad, ah, aw):
    """``x`` averaged along its last three axes by (out, size) matrices, as three BLAS matmuls."""
    lead = x.shape[:-3]
    dd, hh, ww = x.shape[-3:]
    t = np.ascontiguousarray(x).reshape(-1, ww) @ aw.T                      # (..., D, H, ow)
    t = np.matmul(ah, t.reshape(-1, hh, aw.shape[0]))                        # (..., D, oh, ow)
    t = np.matmul(ad, t.reshape(-1, dd, ah.shape[0] * aw.shape[0]))          # (..., od, oh*ow)
    return t.reshape(lead + (ad.shape[0], ah.shape[0], aw.shape[0]))


def avg_pool3d_matrices(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k, s, p, _, out = pool3d_geometry(self, "avg_pool3d", kernel_size, stride, padding, [1], ceil_mode)
    spatial = self.shape[-3:]
    if divisor_override is not None:
        mats = [avg_pool_sum_matrix(spatial[i], out[i], k[i], s[i], p[i], self.dtype) for i in range(3)]
        mats[0] = mats[0] * self.dtype.type(1.0 / divisor_override)
        return mats
    return [avg_pool_matrix(spatial[i], out[i], k[i], s[i], p[i], ceil_mode, count_include_pad, self.dtype)
            for i in range(3)]


def avg_pool3d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    _float_only(self, "avg_pool3d_out_frame")
    return apply_pool_matrices3(self, *avg_pool3d_matrices(self, kernel_size, stride, padding, ceil_mode,
                                                           count_include_pad, divisor_override))


def adaptive3d_matrices(self, output_size):
    if self.ndim not in (4, 5) or 0 in self.shape[-3:]:
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {list(self.shape)}")
    if len(output_size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    return [adaptive_pool_matrix(size, o, self.dtype) for size, o in zip(self.shape[-3:], output_size)]


def _adaptive_avg_pool3d(self, output_size):
    _float_only(self, "adaptive_avg_pool3d_cpu")
    return apply_pool_matrices3(self, *adaptive3d_matrices(self, list(output_size)))


def adaptive_max_pool3d(self, output_size):
    """Max over each adaptive window (along each axis, floor(i*size/out) up to ceil((i+1)*size/out)), with its
    flat index in the volume: one numpy argmax over all volumes per output position (the first maximum in
    (d, h, w) order, NaN propagating, as torch's CPU kernel)."""
    if self.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: {list(self.shape)}")
    for i in range(1, self.ndim):
        if self.shape[i] == 0:
            raise RuntimeError(f"adaptive_max_pool3d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(self.shape)} with dimension {i} being empty")
    if self.dtype.kind != "f":
        raise NotImplementedError(f"\"adaptive_max_pool3d_cpu\" not implemented for '{scalar_type_name(self.dtype)}'")
    out_size = list(output_size)
    sizes = self.shape[-3:]
    vols = np.ascontiguousarray(self).reshape((-1,) + sizes)
    n = vols.shape[0]
    out = np.empty((n, *out_size), self.dtype)
    idx = np.empty((n, *out_size), np.int64)
    bounds = [[((i * s) // o, -((-(i + 1) * s) // o)) for i in range(o)] for s, o in zip(sizes, out_size)]
    rows = np.arange(n)
    for a, (d0, d1) in enumerate(bounds[0]):
        for b, (h0, h1) in enumerate(bounds[1]):
            for c, (w0, w1) in enumerate(bounds[2]):
                window = vols[:, d0:d1, h0:h1, w0:w1].reshape(n, -1)
                arg = np.argmax(window, axis=1)
                out[:, a, b, c] = window[rows, arg]
                hw = (h1 - h0) * (w1 - w0)
                dd, rest = arg // hw, arg % hw
                hh, ww = rest // (w1 - w0), rest % (w1 - w0)
                idx[:, a, b, c] = ((d0 + dd) * sizes[1] + h0 + hh) * sizes[2] + w0 + ww
    shape = self.shape[:-3] + tuple(out_size)
    return out.reshape(shape), idx.reshape(shape)
