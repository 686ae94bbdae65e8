"""``F.pad``: constant padding is the ``constant_pad_nd`` row; reflection and replication are torch's
``reflection_pad{1,2,3}d`` / ``replication_pad{1,2,3}d`` rows; circular padding copies slices into a fresh
tensor, as torch's ``_pad_circular`` does (so its graph is torch's: CopySlices nodes)."""
from derivgen.core.registry import aten

_ROWS = {"reflect": ("reflection_pad1d", "reflection_pad2d", "reflection_pad3d"),
         "replicate": ("replication_pad1d", "replication_pad2d", "replication_pad3d")}


def _check_combination(input, pad):
    dims = len(pad) // 2
    if dims not in (1, 2, 3) or input.dim() not in (dims + 1, dims + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _circular(input, pad):
    """torch's ``_pad_circular``: a fresh tensor of the padded shape, ``input`` (or its cropped part, for
    negative pads) copied into its middle, then per padded dim, last first, the left pad copied from the
    right end of the padded tensor and the right pad from its left end (corners are written more than once,
    as torch's are). The copies into slices give torch's graph, CopySlices over SliceBackward0 nodes."""
    ndim = input.dim()
    dims = [ndim - 1 - k for k in range(len(pad) // 2)]
    out_shape = list(input.shape)
    for k, dim in enumerate(dims):
        left, right = pad[2 * k], pad[2 * k + 1]
        size = input.shape[dim]
        if left > size or right > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + left + right < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension.")
        out_shape[dim] = size + left + right
    out = input.new_empty(out_shape)
    out_slice, in_slice = out, input
    for k, dim in enumerate(dims):
        left, right = pad[2 * k], pad[2 * k + 1]
        out_slice = aten.slice(out_slice, dim, max(left, 0), out_shape[dim] - max(right, 0))
        in_slice = aten.slice(in_slice, dim, max(-left, 0), input.shape[dim] - max(-right, 0))
    out_slice.copy_(in_slice)
    for k, dim in enumerate(dims):
        left, right = pad[2 * k], pad[2 * k + 1]
        size = out_shape[dim]
        if left > 0:
            aten.slice(out, dim, 0, left).copy_(aten.slice(out, dim, size - left - max(right, 0), size - max(right, 0)))
        if right > 0:
            aten.slice(out, dim, size - right, size).copy_(aten.slice(out, dim, max(left, 0), max(left, 0) + right))
    return out


def pad(input, pad, mode="constant", value=None):
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    pad = [int(p) for p in pad]
    if mode == "constant":
        return aten.constant_pad_nd(input, pad, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    _check_combination(input, pad)
    if mode == "circular":
        return _circular(input, pad)
    return getattr(aten, _ROWS[mode][len(pad) // 2 - 1])(input, pad)
