"""torch.nn.functional.interpolate (and its deprecated ``upsample`` spellings) for 4-D input: modes
'nearest' (the ``upsample_nearest2d`` row: UpsampleNearest2DBackward0) and 'bilinear'
(``upsample_bilinear2d``: UpsampleBilinear2DBackward0), 'area' as adaptive average pooling; torch's
argument checks, output sizes and scale handling. Other modes and ranks raise NotImplementedError."""
import numbers
import warnings

from derivgen.core.registry import aten
from derivgen.nn.functional_conv import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d


def _output_and_scales(input, size, scale_factor, recompute_scale_factor, mode):  # noqa: A002
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            if not all(isinstance(x, numbers.Integral) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                                f"int], but got size with types {[type(x) for x in size]}")
            output_size = list(size)
        else:
            output_size = [size for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = list(scale_factor)
        else:
            scale_factors = [scale_factor for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(input.shape[i + 2] * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if output_size is None:  # torch's .vec overloads: floor(in * scale), the scales passed on
        output_size = [int(input.shape[i + 2] * scale_factors[i]) for i in range(dim)]
    return output_size, scale_factors


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
                recompute_scale_factor=None, antialias=False):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    output_size, scales = _output_and_scales(input, size, scale_factor, recompute_scale_factor, mode)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    scale_h = scales[0] if scales else None
    scale_w = scales[1] if scales and len(scales) > 1 else None
    if mode == "area":
        pool = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d, 5: adaptive_avg_pool3d}.get(input.dim())
        if pool is not None:
            return pool(input, output_size)
    if input.dim() == 4 and mode == "nearest":
        return aten.upsample_nearest2d(input, output_size, scale_h, scale_w)
    if input.dim() == 4 and mode == "bilinear" and not antialias:
        return aten.upsample_bilinear2d(input, output_size, align_corners, scale_h, scale_w)
    if mode in ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "lanczos", "area"):
        raise NotImplementedError(f"derivgen: interpolate(mode={mode!r}) on {input.dim()}-D input is not supported "
                                  "(4-D input with 'nearest', 'bilinear' or 'area' is)")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
                              f"modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got "
                              f"{mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):  # noqa: A002
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):  # noqa: A002
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):  # noqa: A002
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


