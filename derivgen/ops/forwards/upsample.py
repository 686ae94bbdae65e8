"""Forwards of the 2-D upsampling rows ``upsample_nearest2d`` and ``upsample_bilinear2d`` over (N, C, H, W)
inputs, with torch's CPU index and weight rules (computed in float32 for float32 inputs, as torch's
kernels do), so the values are torch's."""
import numpy as np


def nearest_indices(in_size, out_size, scale):
    """torch's nearest_idx: identity, ``i >> 1`` for an exact doubling, else ``min(floor(i * s), in - 1)`` with
    ``s`` the float32 ``1 / scale`` (or ``in / out``)."""
    i = np.arange(out_size)
    if out_size == in_size:
        return i
    if out_size == 2 * in_size:
        return i >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(in_size) / np.float32(out_size)
    return np.minimum(np.floor(i.astype(np.float32) * s).astype(np.int64), in_size - 1)


def linear_indices_weights(in_size, out_size, align_corners, scale, dtype):
    """torch's linear interpolation indices (i0, i1) and weights (w0, w1) along one dim."""
    t = np.float32 if dtype == np.float32 else np.float64
    if align_corners:
        s = t(in_size - 1) / t(out_size - 1) if out_size > 1 else t(0)
    else:
        s = t(1.0 / scale) if scale is not None and scale > 0 else t(in_size) / t(out_size)
    i = np.arange(out_size).astype(t)
    if align_corners:
        src = s * i
    else:
        src = s * (i + t(0.5)) - t(0.5)
        src = np.where(src < 0, t(0), src)
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    lam1 = np.clip(src - i0.astype(t), 0, 1).astype(t)
    i1 = i0 + (i0 < in_size - 1).astype(np.int64)
    return i0, i1, (t(1) - lam1).astype(dtype), lam1.astype(dtype)


def _check(self, output_size, op):
    if self.ndim != 4:
        raise RuntimeError(f"Non-empty 4D data tensor expected but got a tensor with sizes {list(self.shape)}")
    if len(output_size) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(output_size)}")
    if any(s <= 0 for s in output_size) or any(s <= 0 for s in self.shape[2:]):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input (H: {self.shape[2]}, W: "
                           f"{self.shape[3]}) output (H: {output_size[0]}, W: {output_size[1]})")


def upsample_nearest2d(self, output_size, scales_h=None, scales_w=None):
    _check(self, output_size, "upsample_nearest2d")
    ih = nearest_indices(self.shape[2], output_size[0], scales_h)
    iw = nearest_indices(self.shape[3], output_size[1], scales_w)
    return np.ascontiguousarray(self[:, :, ih][:, :, :, iw])


def upsample_bilinear2d(self, output_size, align_corners, scales_h=None, scales_w=None):
    _check(self, output_size, "upsample_bilinear2d")
    h0, h1, wh0, wh1 = linear_indices_weights(self.shape[2], output_size[0], align_corners, scales_h, self.dtype)
    w0, w1, ww0, ww1 = linear_indices_weights(self.shape[3], output_size[1], align_corners, scales_w, self.dtype)
    top, bottom = self[:, :, h0], self[:, :, h1]
    t0 = top[:, :, :, w0] * ww0 + top[:, :, :, w1] * ww1
    t1 = bottom[:, :, :, w0] * ww0 + bottom[:, :, :, w1] * ww1
    return np.ascontiguousarray(t0 * wh0[:, None] + t1 * wh1[:, None])
