"""In-place view ops (``transpose_``, ``t_``, ``unsqueeze_``, ``squeeze_``, ``as_strided_``, ``swapdims_``,
``swapaxes_``), a view's ``_base`` (the root) and ``copy_``'s node, against PyTorch.

Each case runs the same body on both libraries and compares what a user can observe: values, shapes,
strides, storage offsets, version counters, the graph (node names and edges, breadth-first) and the float64
gradients of the leaves; error cases compare the exception type and message.
"""
import numpy as np
import pytest

import derivgen

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(11)
A = _rng.standard_normal((2, 1, 3))
W = _rng.standard_normal(12)


def _name(fn):
    return None if fn is None else fn.name().replace("derivgen::", "torch::")


def graph(fn):
    """(name, [(next name, input_nr)]) of every node reachable from ``fn``, breadth-first."""
    out, seen, queue = [], set(), [fn]
    while queue:
        f = queue.pop(0)
        if f is None or id(f) in seen:
            continue
        seen.add(id(f))
        out.append((_name(f), [(_name(n), nr) for n, nr in f.next_functions]))
        queue.extend(n for n, _ in f.next_functions)
    return out


def observe(lib, t, leaves=(), extra=()):
    """Everything compared of ``t`` after a case ran (its gradient taken against fixed weights)."""
    seen = {"value": t.detach().numpy().copy(), "shape": tuple(t.shape), "stride": t.stride(),
            "offset": t.storage_offset(), "version": t._version, "requires_grad": t.requires_grad,
            "graph": graph(t.grad_fn) if t.grad_fn is not None else None}
    for i, e in enumerate(extra):
        seen[f"extra{i}"] = (tuple(e.shape), e.stride(), e._version, e.detach().numpy().copy(),
                             graph(e.grad_fn) if e.grad_fn is not None else None)
    if t.requires_grad and leaves:
        w = lib.tensor(W[:t.numel()].reshape(tuple(t.shape)), dtype=lib.float64)
        (t * w).sum().backward()
        seen["grads"] = [leaf.grad.numpy().copy() for leaf in leaves]
    return seen


def assert_same(a, b):
    assert a.keys() == b.keys()
    if a.get("skip_offset"):
        # derivgen keeps no storage apart from the root tensor: a root moved by as_strided_(..., offset)
        # reports storage offset 0 where torch counts from the storage's start (README "Differences")
        a, b = dict(a, offset=None), dict(b, offset=None)
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, np.ndarray):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=0, err_msg=k)
        elif k == "grads":
            for gx, gy in zip(x, y):
                np.testing.assert_allclose(gx, gy, rtol=1e-12, atol=0, err_msg=k)
        elif k.startswith("extra"):
            assert x[:3] == y[:3] and x[4] == y[4], k
            np.testing.assert_allclose(x[3], y[3], rtol=1e-12, atol=0, err_msg=k)
        else:
            assert x == y, k


def _run(case, lib):
    try:
        return case(lib)
    except Exception as exc:  # the two libraries must then raise alike
        return {"error": (type(exc).__name__, str(exc).replace("derivgen", "torch"))}


def both(case):
    assert_same(_run(case, derivgen), _run(case, torch))


# ---- each op on a non-leaf, then a gradient through it ------------------------------------------------------

OPS = {
    "transpose_": lambda b: b.transpose_(0, 2),
    "transpose_neg": lambda b: b.transpose_(-1, 1),
    "transpose_same": lambda b: b.transpose_(0, 0),
    "swapdims_": lambda b: b.swapdims_(0, 2),
    "swapaxes_": lambda b: b.swapaxes_(2, 1),
    "t_": lambda b: b.squeeze_(1).t_(),
    "t_1d": lambda b: b.reshape(6).t_(),
    "unsqueeze_0": lambda b: b.unsqueeze_(0),
    "unsqueeze_last": lambda b: b.unsqueeze_(-1),
    "unsqueeze_mid": lambda b: b.unsqueeze_(2),
    "squeeze_": lambda b: b.squeeze_(),
    "squeeze_dim": lambda b: b.squeeze_(1),
    "squeeze_dim_not_one": lambda b: b.squeeze_(0),
    "squeeze_dims": lambda b: b.squeeze_((0, 1)),
    "as_strided_": lambda b: b.as_strided_((3, 2), (1, 3)),
    "as_strided_offset": lambda b: b.as_strided_((2, 2), (1, 3), 1),
    "as_strided_overlap": lambda b: b.as_strided_((3, 3), (1, 1)),
    "chain": lambda b: b.unsqueeze_(0).transpose_(0, 3).squeeze_(),
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_op_on_non_leaf(op):
    def case(lib):
        a = lib.tensor(A, dtype=lib.float64, requires_grad=True)
        b = a.clone()
        r = OPS[op](b)
        return observe(lib, r, [a]) | {"returns_self": r is b, "skip_offset": op == "as_strided_offset"}
    both(case)


@pytest.mark.parametrize("op", sorted(OPS))
def test_op_without_grad(op):
    # no history, but the version still moves (torch bumps it for in-place view ops)
    def case(lib):
        b = lib.tensor(A, dtype=lib.float64)
        return observe(lib, OPS[op](b)) | {"skip_offset": op == "as_strided_offset"}
    both(case)


@pytest.mark.parametrize("op", sorted(OPS))
def test_op_on_leaf_in_no_grad(op):
    def case(lib):
        a = lib.tensor(A, dtype=lib.float64, requires_grad=True)
        with lib.no_grad():
            r = OPS[op](a)
        return observe(lib, r) | {"is_leaf": r.is_leaf, "skip_offset": op == "as_strided_offset"}
    both(case)


# ---- on views: the history is the view's own; later in-place writes go through CopySlices ------------------

VIEW_CASES = {
    "view_transpose_": lambda lib, b: b.view(2, 3).transpose_(0, 1),
    "select_unsqueeze_": lambda lib, b: b[0].unsqueeze_(0),
    "select_t_": lambda lib, b: b[1].t_(),
    "transposed_squeeze_": lambda lib, b: b.t().unsqueeze(0).squeeze_(0),
    "slice_as_strided_": lambda lib, b: b.view(6).as_strided_((2, 2), (1, 2)),
}


def _view_case(name, then):
    def case(lib):
        a = lib.tensor(A.reshape(2, 3), dtype=lib.float64, requires_grad=True)
        b = a.clone()
        v = VIEW_CASES[name](lib, b)
        extra = [b]
        if then == "write_view":
            v.mul_(3)
        elif then == "write_base":
            b.mul_(2)
        elif then == "view_of_view":
            w = v[0]
            assert w._base is b
            w.mul_(5)
            extra.append(w)
        assert v._base is b
        return observe(lib, v, [a], extra)
    return case


@pytest.mark.parametrize("then", ["nothing", "write_view", "write_base", "view_of_view"])
@pytest.mark.parametrize("name", sorted(VIEW_CASES))
def test_op_on_view(name, then):
    both(_view_case(name, then))


@pytest.mark.parametrize("view_in_no_grad", [False, True])
@pytest.mark.parametrize("name", sorted(VIEW_CASES))
def test_op_on_view_in_no_grad(name, view_in_no_grad):
    # the op records nothing: the view's grad_fn is rebuilt from its base (AsStridedBackward0), as torch's
    # once its version moved on; a view made in no_grad mode then refuses its grad_fn, as torch's
    def case(lib):
        a = lib.tensor(A.reshape(2, 3), dtype=lib.float64, requires_grad=True)
        b = a.clone()
        make = {"view_transpose_": lambda: b.view(2, 3), "select_unsqueeze_": lambda: b[0],
                "select_t_": lambda: b[1], "transposed_squeeze_": lambda: b.t().unsqueeze(0),
                "slice_as_strided_": lambda: b.view(6)}[name]
        with lib.set_grad_enabled(not view_in_no_grad):
            v = make()
        with lib.no_grad():
            op = VIEW_CASES[name](lib, v)
        return observe(lib, op, [a], [b])
    both(case)


def test_write_through_a_non_contiguous_root():
    # t_ leaves a root that is not contiguous: derivgen regenerates the written view's grad_fn by replaying
    # its view ops on the root (torch: AsStridedBackward0), so the root's graph, values and gradients compare
    def case(lib):
        a = lib.tensor(A.reshape(2, 3), dtype=lib.float64, requires_grad=True)
        b = a.clone().t_()
        v = b[1]
        v.mul_(4)
        return observe(lib, b, [a]) | {"view": (v.detach().numpy().copy(), v.stride(), v._version)}
    d, t = case(derivgen), case(torch)
    dv, tv = d.pop("view"), t.pop("view")
    np.testing.assert_array_equal(dv[0], tv[0])
    assert dv[1:] == tv[1:]
    assert_same(d, t)


def test_forward_mode_tangent_follows_the_view():
    def case(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            primal = lib.tensor(A.reshape(2, 3), dtype=lib.float64)
            tangent = lib.tensor(W[:6].reshape(2, 3), dtype=lib.float64)
            x = fwAD.make_dual(primal.clone(), tangent)
            v = x[1]
            v.unsqueeze_(0)
            v.mul_(lib.tensor(W[6:9], dtype=lib.float64))
            out = fwAD.unpack_dual(x).tangent.numpy().copy(), fwAD.unpack_dual(v).tangent.numpy().copy()
            return {"x_tangent": out[0], "v_tangent": out[1], "v_shape": tuple(v.shape)}
    d, t = case(derivgen), case(torch)
    assert d["v_shape"] == t["v_shape"]
    np.testing.assert_allclose(d["x_tangent"], t["x_tangent"], rtol=1e-12)
    np.testing.assert_allclose(d["v_tangent"], t["v_tangent"], rtol=1e-12)


def test_forward_mode_tangent_takes_the_new_layout():
    # a square transpose_ keeps the shape: the tangent must take the new strides, not the values transposed
    # into its old layout; the tangent given to make_dual is the tensor that changes, as torch's
    def case(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            tangent = lib.tensor(W[:9].reshape(3, 3), dtype=lib.float64)
            x = fwAD.make_dual(lib.tensor(np.resize(A, (3, 3)), dtype=lib.float64), tangent)
            x.t_()
            x.mul_(2)
            y = fwAD.make_dual(lib.tensor(W[3:12].reshape(3, 3), dtype=lib.float64), tangent.clone())
            v = y[0:2, 0:2]
            v.transpose_(0, 1)
            v.mul_(lib.tensor(W[:4].reshape(2, 2), dtype=lib.float64))
            return [fwAD.unpack_dual(x).tangent.numpy().copy(), tangent.numpy().copy(), tangent.stride(),
                    fwAD.unpack_dual(y).tangent.numpy().copy(), fwAD.unpack_dual(v).tangent.numpy().copy()]
    d, t = case(derivgen), case(torch)
    assert d[2] == t[2]
    for a, b in zip(d[:2] + d[3:], t[:2] + t[3:]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


# ---- creation meta: what the view remembers about how it was made stays with it ---------------------------

def test_multi_output_view_refuses_in_place_view_op():
    def case(lib):
        b = lib.tensor(A.reshape(2, 3), dtype=lib.float64, requires_grad=True).clone()
        u = b.unbind()[0]
        with pytest.raises(RuntimeError) as info:
            u.unsqueeze_(0)
        return str(info.value)
    assert case(derivgen) == case(torch)


def test_in_place_view_op_in_no_grad_keeps_the_view_refused():
    def case(lib):
        b = lib.tensor(A.reshape(2, 3), dtype=lib.float64, requires_grad=True).clone()
        with lib.no_grad():
            v = b.view(3, 2)
            v.t_()
        with pytest.raises(RuntimeError) as info:
            v.add_(1)
        return str(info.value), tuple(v.shape), v.stride()
    assert case(derivgen) == case(torch)


# ---- errors ------------------------------------------------------------------------------------------------

def _inference_tensor(lib, *shape):
    with lib.inference_mode():
        return lib.ones(*shape)


ERRORS = {
    "inference_t_": lambda lib: _inference_tensor(lib, 2, 3).t_(),
    "inference_unsqueeze_": lambda lib: _inference_tensor(lib, 2, 3).unsqueeze_(0),
    "inference_squeeze_": lambda lib: _inference_tensor(lib, 2, 1, 3).squeeze_(),
    "leaf_transpose_": lambda lib: lib.ones(2, 3, requires_grad=True).transpose_(0, 1),
    "leaf_t_": lambda lib: lib.ones(2, 3, requires_grad=True).t_(),
    "leaf_unsqueeze_": lambda lib: lib.ones(3, requires_grad=True).unsqueeze_(0),
    "leaf_squeeze_": lambda lib: lib.ones(3, 1, requires_grad=True).squeeze_(),
    "leaf_as_strided_": lambda lib: lib.ones(3, requires_grad=True).as_strided_((2,), (1,)),
    "view_of_leaf_t_": lambda lib: lib.ones(3, 1, requires_grad=True).view(3, 1).t_(),
    "view_of_leaf_unsqueeze_": lambda lib: lib.ones(3, 1, requires_grad=True)[0].unsqueeze_(0),
    "view_of_leaf_swapdims_": lambda lib: lib.ones(3, 1, requires_grad=True)[0:2].swapdims_(0, 1),
    "t_3d": lambda lib: lib.ones(2, 3, 4).t_(),
    "transpose_range": lambda lib: lib.ones(2, 3).transpose_(0, 5),
    "unsqueeze_range": lambda lib: lib.ones(2, 3).unsqueeze_(5),
    "squeeze_range": lambda lib: lib.ones(2, 3).squeeze_(-4),
    "as_strided_bounds": lambda lib: lib.ones(2, 3).as_strided_((4, 4), (1, 1)),
    "as_strided_bounds_offset": lambda lib: lib.ones(6, dtype=lib.float64).as_strided_((2,), (1,), 5),
    "resize_requires_grad": lambda lib: lib.ones(2, 3, requires_grad=True).clone().resize_(3, 2),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    raised = []
    for lib in (derivgen, torch):
        with pytest.raises(Exception) as info:
            ERRORS[name](lib)
        raised.append((type(info.value).__name__, str(info.value)))
    assert raised[0] == raised[1]


# ---- _base is the root ---------------------------------------------------------------------------------------

BASES = {
    "select_select": lambda x: x[0][1],
    "transpose_select": lambda x: x.t()[0],
    "unbind_slice": lambda x: x.unbind()[1][1:],
    "view_expand_select": lambda x: x.view(12).view(3, 4).unsqueeze(0).expand(2, 3, 4)[1],
    "split_narrow": lambda x: x.split(2, 1)[1].narrow(0, 1, 2),
}


@pytest.mark.parametrize("name", sorted(BASES))
def test_base_is_the_root(name):
    def case(lib):
        x = lib.tensor(W.reshape(3, 4), dtype=lib.float64)
        v = BASES[name](x)
        return v._base is x, v.storage_offset(), v.stride(), tuple(v.shape)
    assert case(derivgen) == case(torch)


@pytest.mark.parametrize("name", sorted(BASES))
def test_write_into_a_view_of_a_view(name):
    def case(lib):
        a = lib.tensor(W.reshape(3, 4), dtype=lib.float64, requires_grad=True)
        x = a.clone()
        v = BASES[name](x)
        if v.stride() and 0 in v.stride():
            v = v[0]
        v.mul_(3)
        return observe(lib, x, [a], [v])
    both(case)


# ---- copy_'s node --------------------------------------------------------------------------------------------

def test_copy_node():
    def case(lib):
        a = lib.tensor(A.reshape(6), dtype=lib.float64, requires_grad=True)
        s = lib.tensor(W[:6], dtype=lib.float64, requires_grad=True)
        b = a.clone()
        b.copy_(s)
        seen = observe(lib, b, [a, s])
        return seen | {"type": type(b.grad_fn).__name__, "repr_grad_fn": repr(b).split("grad_fn=")[1]}
    both(case)


def test_copy_node_into_a_view():
    def case(lib):
        a = lib.tensor(A.reshape(2, 3), dtype=lib.float64, requires_grad=True)
        s = lib.tensor(W[:3], dtype=lib.float64, requires_grad=True)
        b = a.clone()
        b[1].copy_(s)
        return observe(lib, b, [a, s])
    both(case)
