"""Forward of the ``rrelu_with_noise`` row (``F.rrelu``, ``nn.RReLU``).

In training each non-positive element is scaled by a slope drawn uniformly from [lower, upper] with
derivgen's generator, and the slopes (1 for positive elements) are written into ``noise``, which the
backward multiplies ``grad`` by, as torch's CPU kernel does. In evaluation the slope is the fixed
``(lower + upper) / 2`` (a leaky ReLU) and ``noise`` is left alone.
"""
import numpy as np

from derivgen.core.dtypes import scalar_type_name
from derivgen.core.generator import numpy_generator


def rrelu_with_noise(self, noise, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    if self.dtype.kind != "f":
        raise NotImplementedError(f"\"rrelu_with_noise_out_cpu\" not implemented for '{scalar_type_name(self.dtype)}'")
    lower, upper = float(lower), float(upper)
    if not training:
        return np.where(self > 0, self, self * self.dtype.type((lower + upper) / 2))
    if noise.shape != self.shape:
        raise RuntimeError(f"noise must have the same shape as input, but got {list(noise.shape)} and "
                           f"{list(self.shape)}")
    slopes = numpy_generator(generator).uniform(lower, upper, self.shape).astype(self.dtype)
    slopes = np.where(self <= 0, slopes, self.dtype.type(1))
    noise[...] = slopes
    return self * slopes


def rrelu_with_noise_(self, noise, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    """The in-place row's result (written into ``self`` by the Python-facing op): the same draw and
    slopes as ``rrelu_with_noise``."""
    return rrelu_with_noise(self, noise, lower, upper, training, generator)
