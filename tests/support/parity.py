"""Run one Python expression under PyTorch and under derivgen on the same inputs and compare everything a
user can observe: forward values (dtype included), the graph walked breadth-first from the outputs'
grad_fns (node names and ``(name, input_nr)`` edges), and every leaf gradient.

A case is ``Case(id, fn, inputs)`` where ``fn(T, F, *tensors)`` is written once for both libraries
(``T`` is ``torch`` or ``derivgen``, ``F`` its ``nn.functional``) and ``inputs`` are ``Input`` specs
(shape, value kind, whether the input requires grad, an exact array). Used by tests/parity/test_parity_ops.py.
"""
from dataclasses import dataclass, field

import numpy as np

import derivgen

try:  # the oracle; the test modules skip loudly without it
    import torch
except ImportError:  # pragma: no cover - exercised only without torch
    torch = None

# derivgen's hand-named nodes carry derivgen's namespace where torch's carry torch's.
ACC_NAMES = {"derivgen::autograd::AccumulateGrad": "torch::autograd::AccumulateGrad",
             "derivgen::autograd::CopySlices": "torch::autograd::CopySlices",
             "derivgen::autograd::CopyBackwards": "torch::autograd::CopyBackwards",
             "derivgen::autograd::NotImplemented": "torch::autograd::NotImplemented"}


@dataclass
class Input:
    shape: tuple = (3, 4)
    kind: str = "normal"        # normal | pos | unit | gt1 | prob | int:<hi> | bool | exact
    grad: bool = True
    value: object = None        # exact values (kind 'exact'); dtype follows the case dtype if float
    noncontig: bool = False     # make the array a transposed (non-contiguous) view

    def make(self, rng, dtype):
        k = self.kind
        if k == "exact":
            a = np.array(self.value)
            if a.dtype.kind == "f":
                a = a.astype(dtype)
            return a
        if k.startswith("int:"):
            return rng.integers(0, int(k[4:]), size=self.shape).astype(np.int64)
        if k == "bool":
            return rng.random(self.shape) > 0.5
        if k == "normal":
            a = rng.standard_normal(self.shape)
        elif k == "pos":
            a = rng.uniform(0.3, 2.0, self.shape)
        elif k == "unit":
            a = rng.uniform(-0.9, 0.9, self.shape)
        elif k == "gt1":
            a = rng.uniform(1.2, 3.0, self.shape)
        elif k == "prob":
            a = rng.uniform(0.05, 0.95, self.shape)
        elif k == "nonzero":
            a = rng.uniform(0.5, 2.0, self.shape) * rng.choice([-1.0, 1.0], self.shape)
        else:
            raise ValueError(k)
        return np.asarray(a, dtype=dtype)


def I(*shape, kind="normal", grad=True, noncontig=False):  # noqa: E743 - short spelling for case tables
    return Input(tuple(shape), kind, grad, None, noncontig)


def E(value, grad=True):
    return Input(np.shape(value), "exact", grad, value)


def Idx(*shape, hi, grad=False):
    return Input(tuple(shape), f"int:{hi}", grad)


def Mask(*shape):
    return Input(tuple(shape), "bool", False)


@dataclass
class Case:
    id: str
    fn: object
    inputs: list = field(default_factory=list)
    dtypes: tuple = ("float32", "float64")
    rtol: float = None
    atol: float = None
    check_grad: bool = True
    loss: object = None          # optional (T, outputs) -> list of outputs to weigh (default: all float)


def _lib(name):
    if name == "torch":
        import torch.nn.functional as F
        return torch, F
    import derivgen.nn.functional as F
    return derivgen, F


def _to_lib(lib, a, grad):
    if lib is torch:
        t = torch.from_numpy(np.array(a, copy=True))
    else:
        t = derivgen.from_numpy(np.array(a, copy=True))
    if grad:
        t.requires_grad_(True)
    return t


def _noncontig(lib, t):
    return t.t().contiguous().t() if t.dim() == 2 else t


def flatten_outputs(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(flatten_outputs(o))
        return res
    return [out]


def graph_walk(outputs):
    """Breadth-first walk from the grad_fns of ``outputs``: [(name, [(next name | None, input_nr)])]."""
    seen, order, queue = set(), [], []
    for o in outputs:
        fn = getattr(o, "grad_fn", None)
        if fn is not None:
            queue.append(fn)
    while queue:
        fn = queue.pop(0)
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        edges = []
        for nxt, nr in fn.next_functions:
            edges.append((None if nxt is None else ACC_NAMES.get(nxt.name(), nxt.name()), nr))
            if nxt is not None:
                queue.append(nxt)
        order.append((ACC_NAMES.get(fn.name(), fn.name()), edges))
    return order


def run_case(libname, case, arrays):
    T, F = _lib(libname)
    tensors = []
    for spec, a in zip(case.inputs, arrays):
        grad = spec.grad and np.asarray(a).dtype.kind == "f"
        t = _to_lib(T, a, False)
        if spec.noncontig:
            t = _noncontig(T, t)
        if grad:
            t.requires_grad_(True)
        tensors.append(t)
    out = case.fn(T, F, *tensors)
    return tensors, out


def _np(t):
    if torch is not None and isinstance(t, torch.Tensor):
        if t._is_zerotensor():
            return np.zeros(tuple(t.shape), str(t.dtype).replace("torch.", ""))
        return t.detach().numpy()
    return t.detach().numpy() if isinstance(t, derivgen.Tensor) else np.asarray(t)


def tolerances(case, dtype):
    rtol = case.rtol if case.rtol is not None else (2e-4 if dtype == "float32" else 1e-7)
    atol = case.atol if case.atol is not None else (2e-5 if dtype == "float32" else 1e-9)
    return rtol, atol


def compare_case(case, dtype, seed=0):
    """Run ``case`` under both libraries; return a list of mismatch descriptions (empty when equal)."""
    rng = np.random.default_rng(seed)
    np_dtype = np.dtype(dtype)
    arrays = [spec.make(rng, np_dtype) for spec in case.inputs]
    problems = []
    t_in, t_out = run_case("torch", case, arrays)
    d_in, d_out = run_case("derivgen", case, arrays)
    t_flat, d_flat = flatten_outputs(t_out), flatten_outputs(d_out)
    rtol, atol = tolerances(case, dtype)
    if len(t_flat) != len(d_flat):
        return [f"{len(t_flat)} outputs under torch, {len(d_flat)} under derivgen"]
    if isinstance(t_out, (tuple, list)) != isinstance(d_out, (tuple, list)):
        problems.append(f"output container: torch {type(t_out).__name__}, derivgen {type(d_out).__name__}")
    for i, (a, b) in enumerate(zip(t_flat, d_flat)):
        if not hasattr(a, "dtype"):
            if a != b:
                problems.append(f"output {i}: torch {a!r}, derivgen {b!r}")
            continue
        if str(a.dtype).replace("torch.", "") != str(b.dtype).replace("derivgen.", ""):
            problems.append(f"output {i} dtype: torch {a.dtype}, derivgen {b.dtype}")
        av, bv = _np(a), _np(b)
        if av.shape != bv.shape:
            problems.append(f"output {i} shape: torch {list(av.shape)}, derivgen {list(bv.shape)}")
            continue
        if av.dtype.kind == "f":
            if not np.allclose(av, bv.astype(av.dtype), rtol=rtol, atol=atol, equal_nan=True):
                err = np.nanmax(np.abs(av - bv)) if av.size else 0
                problems.append(f"output {i} values differ (max abs err {err:.3g})")
        elif not np.array_equal(av, bv):
            problems.append(f"output {i} values differ: torch {av.tolist()}, derivgen {bv.tolist()}")
        if bool(a.requires_grad) != bool(b.requires_grad):
            problems.append(f"output {i} requires_grad: torch {a.requires_grad}, derivgen {b.requires_grad}")
    tw, dw = graph_walk(t_flat), graph_walk(d_flat)
    if tw != dw:
        problems.append("graph differs:\n    torch:    " + "\n              ".join(map(str, tw))
                        + "\n    derivgen: " + "\n              ".join(map(str, dw)))
    if not case.check_grad:
        return problems
    # gradients: weigh every differentiable output with the same random upstream gradient
    t_w = [o for o in t_flat if hasattr(o, "requires_grad") and o.requires_grad]
    d_w = [o for o in d_flat if hasattr(o, "requires_grad") and o.requires_grad]
    if case.loss is not None:
        t_w, d_w = case.loss(torch, t_flat), case.loss(derivgen, d_flat)
    if not t_w:
        return problems
    seeds = [rng.standard_normal(tuple(o.shape)).astype(str(o.dtype).replace("torch.", "")) for o in t_w]
    torch.autograd.backward(t_w, [torch.from_numpy(s.copy()) for s in seeds])
    derivgen.autograd.backward(d_w, [derivgen.from_numpy(s.copy()) for s in seeds])
    for i, (a, b) in enumerate(zip(t_in, d_in)):
        if not getattr(a, "requires_grad", False):
            continue
        ga, gb = a.grad, b.grad
        if (ga is None) != (gb is None):
            problems.append(f"input {i} grad: torch {'None' if ga is None else 'set'}, derivgen "
                            f"{'None' if gb is None else 'set'}")
            continue
        if ga is None:
            continue
        ga, gb = _np(ga), _np(gb)
        if ga.shape != gb.shape or not np.allclose(ga, gb, rtol=rtol * 5, atol=atol * 5, equal_nan=True):
            err = np.nanmax(np.abs(ga - gb)) if ga.shape == gb.shape and ga.size else float("nan")
            problems.append(f"input {i} grad differs (max abs err {err:.3g}):\n    torch {ga.tolist()}\n"
                            f"    derivgen {gb.tolist()}")
    return problems


def compare_double_backward(case, dtype, seed=1):
    """Second-order parity: the gradient of <first-order grads (create_graph=True), v> w.r.t. the inputs."""
    rng = np.random.default_rng(seed)
    arrays = [spec.make(rng, np.dtype(dtype)) for spec in case.inputs]
    results = {}
    for libname in ("torch", "derivgen"):
        T, _ = _lib(libname)
        local = np.random.default_rng(seed + 7)
        ins, out = run_case(libname, case, arrays)
        outs = [o for o in flatten_outputs(out) if getattr(o, "requires_grad", False)]
        leaves = [t for t in ins if getattr(t, "requires_grad", False)]
        seeds = [T.from_numpy(local.standard_normal(tuple(o.shape)).astype(dtype)) for o in outs]
        g1 = T.autograd.grad(outs, leaves, seeds, create_graph=True, allow_unused=True)
        total = None
        for g in g1:
            if g is None or not g.requires_grad:
                continue
            v = T.from_numpy(local.standard_normal(tuple(g.shape)).astype(dtype))
            term = (g * v).sum()
            total = term if total is None else total + term
        if total is None:  # no first-order gradient depends on the inputs: the second derivative is zero
            results[libname] = ([None if g is None else _np(g) for g in g1], [None for _ in leaves])
            continue
        g2 = T.autograd.grad(total, leaves, allow_unused=True)
        results[libname] = ([None if g is None else _np(g) for g in g1], [None if g is None else _np(g) for g in g2])
    problems = []
    rtol, atol = tolerances(case, dtype)
    (t1, t2), (d1, d2) = results["torch"], results["derivgen"]
    for order, (ta, da) in enumerate(((t1, d1), (t2, d2)), 1):
        if ta is None or da is None:
            if (ta is None) != (da is None):
                problems.append(f"order {order}: torch {'has no' if ta is None else 'has'} graph, derivgen "
                                f"{'has no' if da is None else 'has'}")
            continue
        for i, (a, b) in enumerate(zip(ta, da)):
            if a is None and b is None:
                continue
            a = np.zeros_like(b) if a is None else a
            b = np.zeros_like(a) if b is None else b
            if not np.allclose(a, b, rtol=rtol * 10, atol=atol * 10, equal_nan=True):
                problems.append(f"order {order}, input {i}: max abs err {np.nanmax(np.abs(a - b)):.3g}\n"
                                f"    torch {a.tolist()}\n    derivgen {b.tolist()}")
    return problems
