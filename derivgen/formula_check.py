"""The numerical check of the generated backward of the rows without a ``forward:`` expression: the
float64 VJP of the row's node against central finite differences of its forward, on the sample inputs
``derivgen.codegen.vjp_samples`` describes as data.

``derivgen generate`` runs it in the fresh interpreter that imports the new package before it is
swapped in (``derivgen/codegen/swap.py``): the generator itself never imports the runtime. Each check
returns a problem (a sentence, and the line of the formula at fault) or None.
"""
import numpy as np

from derivgen.core.generator import default_generator
from derivgen.core.grad_mode import no_grad
from derivgen.core.tensor import Tensor
from derivgen.engine.api import grad as _autograd_grad
from derivgen.ops.factories import from_numpy
from derivgen.generated import ops

EPS = 1e-6                 # the finite-difference step, as gradcheck's
ATOL, RTOL = 1e-5, 1e-3    # gradcheck's tolerances
_DRAW_SEED = 0


def _array(spec, rng):
    shape = tuple(spec["shape"])
    if "index" in spec:
        high = spec["index"]
        if shape and shape[-1] <= high:
            # distinct along the last axis: a scatter or index_put with repeated indices has no single
            # gradient (which write wins is unspecified)
            rows = int(np.prod(shape[:-1], dtype=np.int64))
            picks = [rng.permutation(high)[: shape[-1]] for _ in range(rows)]
            return np.array(picks, dtype=np.int64).reshape(shape)
        return rng.integers(0, high, size=shape, dtype=np.int64)
    if "low" in spec:
        return rng.uniform(spec["low"], spec["high"], size=shape)
    return rng.standard_normal(shape)


class _Sample:
    """The row's argument values as numpy arrays and plain values; ``call`` builds fresh Tensors each time."""

    def __init__(self, spec, rng):
        self.spec = spec
        self.arrays = {}          # (argument, list position or None) -> float64 or int64 array
        for name, value in spec["args"].items():
            if value is None:
                continue
            if "tensor" in value:
                self.arrays[(name, None)] = _array(value["tensor"], rng)
            elif "tensors" in value:
                for i, t in enumerate(value["tensors"]):
                    if t is not None:
                        self.arrays[(name, i)] = _array(t, rng)

    def differentiable(self):
        return [k for k in self.arrays if k[0] in self.spec["diff"] and self.arrays[k].dtype.kind == "f"]

    def call(self, arrays, requires_grad=()):
        leaves = {}
        kwargs = {}
        for name, value in self.spec["args"].items():
            if value is None:
                kwargs[name] = None
            elif "value" in value:
                kwargs[name] = value["value"]
            elif "tensor" in value:
                kwargs[name] = leaves[(name, None)] = self._tensor(arrays[(name, None)], (name, None) in requires_grad)
            else:
                kwargs[name] = [None if t is None else self._tensor(arrays[(name, i)], (name, i) in requires_grad)
                                for i, t in enumerate(value["tensors"])]
                for i, t in enumerate(kwargs[name]):
                    if t is not None:
                        leaves[(name, i)] = t
        # random rows (uniform_, bernoulli, ...) draw the same numbers on every call, so that finite
        # differences see how the output depends on the inputs, not on the draw
        state = default_generator.get_state()
        default_generator.manual_seed(_DRAW_SEED)
        try:
            out = getattr(ops, self.spec["row"])(**kwargs)
        finally:
            default_generator.set_state(state)
        return self._outputs(out), leaves

    @staticmethod
    def _tensor(array, requires_grad):
        t = from_numpy(array.copy())
        return t.requires_grad_() if requires_grad else t

    def _outputs(self, out):
        if isinstance(out, Tensor):
            out = [out]
        elif self.spec["outputs"] != "all":
            out = [out[i] for i in self.spec["outputs"]]
        return [o for o in out if o.dtype.is_floating_point]

    def describe(self):
        parts = []
        for (name, i), a in self.arrays.items():
            label = name if i is None else f"{name}[{i}]"
            parts.append(f"{label} {list(a.shape)} {a.dtype}")
        return ", ".join(parts)


def _label(key, index):
    name, i = key
    where = ", ".join(str(int(n)) for n in index)
    return f"{name}[{where}]" if i is None else f"{name}[{i}][{where}]"


def _fd_loss(sample, arrays, cotangents):
    with no_grad():
        outs, _ = sample.call(arrays)
    return sum(float(np.sum(o.numpy() * v)) for o, v in zip(outs, cotangents))


def check_row(spec, seed=0):
    """A problem of the row's backward on its sample: (line, sentence), or None when it matches."""
    rng = np.random.default_rng(seed)
    sample = _Sample(spec, rng)
    wanted = sample.differentiable()
    if not wanted:
        return None
    arrays = dict(sample.arrays)
    try:
        outs, leaves = sample.call(arrays, requires_grad=wanted)
    except Exception as exc:  # noqa: BLE001 - a sample the forward refuses
        if not spec["given"]:
            return None       # samples derived from the schema need not fit every forward
        return (min(spec["lines"].values()), f"the samples do not fit the forward: {type(exc).__name__}: {exc} "
                f"(sample: {sample.describe()})")
    tracked = [o for o in outs if o.requires_grad]
    cotangents = [rng.standard_normal(o.shape) for o in outs]
    inputs = [leaves[k] for k in wanted]
    if tracked:
        try:
            grads = _autograd_grad(tracked, inputs, [from_numpy(v) for o, v in zip(outs, cotangents)
                                                     if o.requires_grad], allow_unused=True)
        except Exception as exc:  # noqa: BLE001 - a backward formula that raises is wrong too
            name = wanted[0][0]
            return (spec["lines"][name], f"backward formula for '{name}' raises {type(exc).__name__}: {exc} "
                    f"(sample: {sample.describe()})")
    else:
        grads = [None] * len(inputs)
    for key, g in zip(wanted, grads):
        analytic = np.zeros_like(arrays[key]) if g is None else g.numpy()
        base = arrays[key]
        for index in np.ndindex(base.shape):
            plus, minus = dict(arrays), dict(arrays)
            plus[key], minus[key] = base.copy(), base.copy()
            plus[key][index] += EPS
            minus[key][index] -= EPS
            numeric = (_fd_loss(sample, plus, cotangents) - _fd_loss(sample, minus, cotangents)) / (2 * EPS)
            got = float(analytic[index])
            if not np.isfinite(numeric):
                if not spec["given"]:
                    continue  # samples derived from the schema may leave the forward's domain (logit)
                return (spec["lines"][key[0]],
                        f"the forward is not finite near the sample of '{key[0]}' at {_label(key, index)}, so "
                        f"finite differences cannot check its formula (sample: {sample.describe()})")
            if not abs(got - numeric) <= ATOL + RTOL * abs(numeric):
                return (spec["lines"][key[0]],
                        f"backward formula for '{key[0]}' does not match finite differences at {_label(key, index)}: "
                        f"formula gives {got:.7g} but finite differences give {numeric:.7g} "
                        f"(sample: {sample.describe()})")
    return None


def check_rows(specs):
    """[(row name, line, sentence)] for the rows whose backward does not match."""
    problems = []
    for spec in specs:
        problem = check_row(spec)
        if problem is not None:
            problems.append((spec["name"], problem[0], problem[1]))
    return problems
