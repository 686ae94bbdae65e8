"""Forwards of the random in-place rows (``uniform_``, ``normal_``, ``bernoulli_``, ``exponential_``,
``geometric_``, ``log_normal_``, ``cauchy_``, ``random_``) and of ``bernoulli``: each returns a fresh draw of
``self``'s shape and dtype, which the Python-facing ``op_`` writes into ``self``. Parameters are checked
with torch's texts before anything is drawn.

The draws come from derivgen's generator (numpy's PCG64, ``generator=`` or the default one): the same seed
gives the same numbers in derivgen, not torch's numbers."""
import numpy as np

from derivgen.core.dtypes import scalar_type_name
from derivgen.core.generator import numpy_generator


def _num(v):
    """A float parameter as torch prints it in messages (``1`` for 1.0, ``-0.5``)."""
    v = float(v)
    return str(int(v)) if v.is_integer() else repr(v)


def _float_only(self, kernel):
    if self.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(self.dtype)}'")


def _continuous(self, name, type_name=None):
    if self.dtype.kind != "f":
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {type_name or scalar_type_name(self.dtype)}")


def _draw(self, values):
    return np.asarray(values).astype(self.dtype, copy=False).reshape(self.shape)


def uniform_(self, from_=0, to=1, generator=None):
    _float_only(self, "check_uniform_bounds")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_num(from_)} > to={_num(to)}")
    return _draw(self, numpy_generator(generator).uniform(from_, to, self.shape))


def normal_(self, mean=0, std=1, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    _float_only(self, "normal_kernel_cpu")
    return _draw(self, numpy_generator(generator).normal(mean, std, self.shape))


def _bernoulli_p(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")


_P_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  "
            "If so, please report an enhancement request to PyTorch.)")


def bernoulli(self, generator=None):
    """0/1 draws with the probabilities ``self``, in ``self``'s dtype."""
    if self.size and not ((self >= 0) & (self <= 1)).all():
        raise RuntimeError(_P_RANGE)
    return _draw(self, numpy_generator(generator).random(self.shape) < self)


def bernoulli_p(self, p, generator=None):
    """0/1 draws with the one probability ``p``, in ``self``'s shape and dtype."""
    _bernoulli_p(p)
    return _draw(self, numpy_generator(generator).random(self.shape) < p)


def bernoulli__Tensor(self, p, generator=None):
    try:
        probs = np.broadcast_to(p, self.shape)
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({self.shape[-1] if self.ndim else 1}) must match the "
                           f"existing size ({p.shape[-1]}) at non-singleton dimension {self.ndim - 1}.  Target sizes: "
                           f"{list(self.shape)}.  Tensor sizes: {list(p.shape)}") from None
    if probs.size and not ((probs >= 0) & (probs <= 1)).all():
        raise RuntimeError(_P_RANGE)
    return _draw(self, numpy_generator(generator).random(self.shape) < probs)


def bernoulli__float(self, p=0.5, generator=None):
    _bernoulli_p(p)
    return _draw(self, numpy_generator(generator).random(self.shape) < p)


def exponential_(self, lambd=1, generator=None):
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    _continuous(self, "Exponential")
    return _draw(self, numpy_generator(generator).exponential(1.0 / lambd, self.shape))


def geometric_(self, p, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    return _draw(self, numpy_generator(generator).geometric(p, self.shape))


def log_normal_(self, mean=1, std=2, generator=None):
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    _float_only(self, "log_normal_cpu")
    return _draw(self, numpy_generator(generator).lognormal(mean, std, self.shape))


def cauchy_(self, median=0, sigma=1, generator=None):
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    _continuous(self, "Cauchy", _c_type(self.dtype))
    return _draw(self, median + sigma * numpy_generator(generator).standard_cauchy(self.shape))


def _c_type(dtype):
    """The C type torch names in some messages (Cauchy's, random_'s bounds)."""
    return {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}.get(dtype.name, dtype.name)


def _dtype_range(dtype):
    """[lo, hi] of the integers ``random_`` may draw into ``dtype``: a float's contiguous integers
    (2**mantissa digits), an integer type's own range."""
    if dtype.kind == "f":
        digits = np.finfo(dtype).nmant + 1
        return -(2 ** digits), 2 ** digits
    if dtype.kind == "b":
        return 0, 1
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _random_ints(self, lo, hi, generator):
    """Integers drawn uniformly from [lo, hi] inclusive."""
    values = numpy_generator(generator).integers(lo, hi, self.shape, dtype=np.int64, endpoint=True) \
        if hi < 2 ** 63 else numpy_generator(generator).integers(lo, hi, self.shape, dtype=np.uint64, endpoint=True)
    return _draw(self, values)


def random__from(self, from_, to=None, generator=None):
    lo_max, hi_max = _dtype_range(self.dtype)
    if to is None:
        return _random_ints(self, from_, hi_max, generator)
    if from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    if self.dtype.kind != "f":  # torch only warns about a float's range
        if from_ < lo_max or from_ > hi_max:
            raise RuntimeError(f"from is out of bounds for {_c_type(self.dtype)}")
        if to - 1 < lo_max or to - 1 > hi_max:
            raise RuntimeError(f"to - 1 is out of bounds for {_c_type(self.dtype)}")
    return _random_ints(self, from_, to - 1, generator)


def random__to(self, to, generator=None):
    return random__from(self, 0, to, generator)


def random_(self, generator=None):
    _, hi = _dtype_range(self.dtype)
    return _random_ints(self, 0, hi, generator)
