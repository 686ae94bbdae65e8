"""count_nonzero, argsort, msort, sort(stable=), kthvalue, searchsorted, bucketize, unique and unique_consecutive against
PyTorch 2.13: values, dtypes, which outputs require grad, node names, backward and errors."""
import numpy as np
import pytest

import derivgen
from derivgen.autograd import gradcheck

torch = pytest.importorskip("torch")

NAN = float("nan")


def _make(lib, data, dtype=None, requires_grad=False):
    dt = None if dtype is None else getattr(lib, dtype)
    t = lib.tensor(data, dtype=dt)
    return t.requires_grad_() if requires_grad else t


def _flat(out):
    if isinstance(out, (tuple, list)):
        return list(out)
    return [out]


def _same(ours, theirs):
    ours, theirs = _flat(ours), _flat(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        assert a.requires_grad == b.requires_grad
        assert (a.grad_fn is None) == (b.grad_fn is None)
        if a.grad_fn is not None:
            assert a.grad_fn.name() == b.grad_fn.name()


def _both(fn):
    return fn(derivgen), fn(torch)


X = [[3., 1., 2., 1., NAN], [0., 5., 4., 5., -1.]]
INTS = [[2, 1, 2], [1, 2, 2], [2, 1, 2], [0, 0, 0]]

CASES = {
    "argsort": lambda t: _make(t, X, requires_grad=True).argsort(),
    "argsort dim 0 descending": lambda t: t.argsort(_make(t, X), 0, True),
    "argsort stable descending": lambda t: t.argsort(_make(t, X), stable=True, descending=True),
    "argsort bool": lambda t: _make(t, [True, False, True]).argsort(descending=True),
    "argsort 0-dim": lambda t: _make(t, 2.0).argsort(),
    "msort": lambda t: t.msort(_make(t, X, requires_grad=True)),
    "sort stable": lambda t: t.sort(_make(t, X, requires_grad=True), stable=True, descending=True),
    "sort stable dim 0": lambda t: _make(t, X, requires_grad=True).sort(dim=0, stable=False),
    "sort uint8 descending": lambda t: _make(t, INTS, "uint8").sort(0, True),
    "topk nan largest": lambda t: _make(t, [1., NAN, 3., 2.]).topk(2),
    "topk nan smallest": lambda t: _make(t, [1., NAN, 3., 2.]).topk(2, largest=False),
    "sort int8 minimum descending": lambda t: _make(t, [-128, 5, 0], "int8").sort(descending=True),
    "kthvalue nan is largest": lambda t: _make(t, [1., NAN, 3., 2.]).kthvalue(4),
    "kthvalue": lambda t: _make(t, X, requires_grad=True).kthvalue(2),
    "kthvalue ties keepdim": lambda t: t.kthvalue(_make(t, [[3., 1., 2., 1.]], requires_grad=True), 2, 1, True),
    "kthvalue 0-dim": lambda t: _make(t, 4.0, requires_grad=True).kthvalue(1),
    "searchsorted": lambda t: t.searchsorted(_make(t, [1., 2., 2., 4.]), _make(t, [[0., 2., 5.], [2.5, 4., 1.]])),
    "searchsorted right": lambda t: t.searchsorted(_make(t, [1., 2., 2., 4.]), _make(t, [2., 4.]), right=True),
    "searchsorted side": lambda t: t.searchsorted(_make(t, [1., 2., 2., 4.]), _make(t, [2., 4.]), side="right"),
    "searchsorted rows": lambda t: t.searchsorted(_make(t, [[1., 2., 3.], [2., 4., 6.]]), _make(t, [[2.5], [2.5]])),
    "searchsorted number": lambda t: t.searchsorted(_make(t, [1, 2, 3]), 2),
    "searchsorted int32": lambda t: t.searchsorted(_make(t, [1., 2.]), _make(t, [1.5, 2.]), out_int32=True),
    "searchsorted sorter": lambda t: t.searchsorted(_make(t, [3., 1., 2.]), _make(t, [2.5]),
                                                    sorter=_make(t, [1, 2, 0])),
    "searchsorted requires grad": lambda t: t.searchsorted(_make(t, [1., 2., 3.], requires_grad=True),
                                                           _make(t, 2.5, requires_grad=True)),
    "bucketize": lambda t: t.bucketize(_make(t, [[0.5, 1.0], [2.0, 9.0]], requires_grad=True),
                                       t.linspace(0, 2, 5, requires_grad=True)),
    "bucketize right int32": lambda t: t.bucketize(_make(t, [1.0, 2.0]), _make(t, [1., 2., 3.]), right=True,
                                                   out_int32=True),
    "bucketize number": lambda t: t.bucketize(3, _make(t, [1., 2.])),
    "unique": lambda t: t.unique(_make(t, [3., 1., 3., 2., NAN, NAN], requires_grad=True)),
    "unique all": lambda t: _make(t, [[2., 1.], [1., 2.]], requires_grad=True).unique(return_inverse=True,
                                                                                       return_counts=True),
    "unique unsorted": lambda t: t.unique(_make(t, [3, 1, 2, 1, 5, 0]), sorted=False, return_counts=True),
    "unique bool": lambda t: t.unique(_make(t, [True, False, True]), return_inverse=True),
    "unique dim 0": lambda t: t.unique(_make(t, INTS), dim=0, return_inverse=True, return_counts=True),
    "unique dim 1": lambda t: t.unique(_make(t, INTS, requires_grad=False), dim=1, return_inverse=True,
                                       return_counts=True),
    "unique dim float": lambda t: t.unique(_make(t, [[1., 2.], [1., 2.], [0., 3.]], requires_grad=True), dim=-2,
                                           return_counts=True),
    "unique empty": lambda t: t.unique(t.zeros(0), return_inverse=True, return_counts=True),
    "unique empty dim": lambda t: t.unique(t.zeros(0, 3), dim=0, return_inverse=True, return_counts=True),
    "unique 0-dim": lambda t: t.unique(_make(t, 3.0, requires_grad=True), return_inverse=True, return_counts=True),
    "unique_consecutive": lambda t: t.unique_consecutive(_make(t, [1, 1, 2, 2, 3, 1, 1, 2]), return_inverse=True,
                                                         return_counts=True),
    "unique_consecutive grad": lambda t: _make(t, [1., 1., 2.], requires_grad=True).unique_consecutive(),
    "unique_consecutive 2d": lambda t: t.unique_consecutive(_make(t, [[1, 1], [2, 2]]), return_inverse=True),
    "unique_consecutive dim": lambda t: t.unique_consecutive(_make(t, INTS, requires_grad=False), dim=0,
                                                             return_inverse=True, return_counts=True),
    "unique_consecutive dim 1": lambda t: t.unique_consecutive(_make(t, [[1., 1., 2.], [3., 3., 3.]],
                                                                     requires_grad=True), dim=1, return_counts=True),
    "unique_consecutive 0-dim": lambda t: t.unique_consecutive(_make(t, 3), return_inverse=True, return_counts=True),
    "_unique": lambda t: t._unique(_make(t, [[2., 1.], [1., 3.]], requires_grad=True)),
    "_unique inverse": lambda t: t._unique(_make(t, [[2., 1.], [1., 3.]], requires_grad=True), return_inverse=True),
    "_unique2": lambda t: t._unique2(_make(t, [[2., 1.], [1., 3.]], requires_grad=True), return_counts=True),
    "_unique2 inverse": lambda t: t._unique2(_make(t, [2, 1, 2]), return_inverse=True),
    "count_nonzero": lambda t: _make(t, [[0., 1.], [2., 0.]], requires_grad=True).count_nonzero(),
    "count_nonzero dims": lambda t: t.count_nonzero(_make(t, INTS), (1, 0)),
    "count_nonzero dim": lambda t: t.count_nonzero(_make(t, INTS), dim=-1),
    "count_nonzero 0-dim": lambda t: t.count_nonzero(_make(t, 3.), 0),
}


@pytest.mark.parametrize("case", list(CASES))
def test_values_dtypes_and_nodes(case):
    _same(*_both(CASES[case]))


ERRORS = {
    "searchsorted bad side": lambda t: t.searchsorted(_make(t, [1., 2.]), _make(t, [1.5]), side="x"),
    "searchsorted opposite": lambda t: t.searchsorted(_make(t, [1., 2.]), _make(t, [1.5]), side="left", right=True),
    "searchsorted shapes": lambda t: t.searchsorted(_make(t, [[1., 2.], [3., 4.]]), _make(t, [1.5])),
    "searchsorted 0-dim boundaries": lambda t: t.searchsorted(_make(t, 1.), _make(t, [2.5])),
    "searchsorted sorter size": lambda t: t.searchsorted(_make(t, [1., 2, 3]), _make(t, [2.5]), sorter=_make(t, [0, 1])),
    "searchsorted sorter dtype": lambda t: t.searchsorted(_make(t, [1., 2, 3]), _make(t, [2.5]),
                                                          sorter=_make(t, [0., 1, 2])),
    "bucketize 2-d boundaries": lambda t: t.bucketize(_make(t, [1., 2.]), _make(t, [[1., 2.]])),
    "kthvalue k too large": lambda t: t.kthvalue(_make(t, [1., 2.]), 3),
    "kthvalue k zero": lambda t: t.kthvalue(_make(t, [[1., 2.]]), 0, -2),
    "unique dim out of range": lambda t: t.unique(_make(t, [[1, 2]]), dim=3),
    "unique dim of 0-dim": lambda t: t.unique(_make(t, 3.), dim=0),
    "unique zero-size not selected": lambda t: t.unique(t.zeros(0, 3), dim=1),
    "unique_consecutive dim of 0-dim": lambda t: t.unique_consecutive(_make(t, 3), dim=0),
    "argsort dim": lambda t: t.argsort(_make(t, [1., 2.]), 1),
    "count_nonzero repeated dim": lambda t: t.count_nonzero(_make(t, INTS), (0, -2)),
    "count_nonzero dim out of range": lambda t: t.count_nonzero(_make(t, INTS), 2),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors(case):
    with pytest.raises(Exception) as theirs:
        ERRORS[case](torch)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[case](derivgen)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("op, kwargs, message", [
    ("_unique", {}, "the derivative for '_unique' is not implemented."),
    ("_unique2", {}, "the derivative for '_unique2' is not implemented."),
    ("unique", {}, "the derivative for '_unique2' is not implemented."),
    ("unique", {"dim": 0}, "the derivative for 'unique_dim' is not implemented."),
    ("unique_consecutive", {}, "the derivative for 'unique_consecutive' is not implemented."),
    ("unique_consecutive", {"dim": 0}, "the derivative for 'unique_consecutive' is not implemented."),
])
def test_unique_backward_is_not_implemented(op, kwargs, message):
    for lib in (derivgen, torch):
        x = lib.tensor([2., 1., 2.], requires_grad=True)
        values = getattr(x, op)(**kwargs) if op[0] != "_" else getattr(lib, op)(x, **kwargs)[0]
        with pytest.raises(NotImplementedError) as err:
            (values * 2).sum().backward()
        assert str(err.value) == message


def test_no_grad_values_have_no_node():
    for lib in (derivgen, torch):
        x = lib.tensor([2., 1., 2.], requires_grad=True)
        with lib.no_grad():
            assert not x.unique().requires_grad
            assert not x.msort().requires_grad


@pytest.mark.parametrize("name, fn", [
    ("kthvalue", lambda x: x.kthvalue(2, 0)[0]),
    ("kthvalue keepdim", lambda x: x.kthvalue(3, 1, True)[0]),
    ("sort stable", lambda x: x.sort(stable=True, dim=1, descending=True)[0]),
    ("msort", lambda x: x.msort()),
])
def test_float64_gradcheck(name, fn):
    values = np.random.default_rng(0).permutation(12).reshape(3, 4) * 0.1
    x = derivgen.tensor(values, dtype=derivgen.float64, requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradcheck(fn, (x,), check_forward_ad=True)


@pytest.mark.parametrize("fn", [lambda x: x.kthvalue(2, 1)[0], lambda x: x.sort(stable=True, dim=0)[0]])
def test_gradients_match_torch(fn):
    data = [[0.3, 0.1, 0.2, 0.1], [0.5, 0.0, 0.4, 0.5]]
    grads = []
    for lib in (derivgen, torch):
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        out = fn(x)
        (out * lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("fn", [lambda lib, x: lib.unique(x), lambda lib, x: lib.unique(x, dim=0),
                                lambda lib, x: x.unique_consecutive(), lambda lib, x: lib._unique(x)[0]],
                         ids=["unique", "unique dim", "unique_consecutive", "_unique"])
def test_unique_refuses_forward_ad(fn):
    import importlib
    messages = []
    for lib in (derivgen, torch):
        fw = importlib.import_module(lib.__name__ + ".autograd.forward_ad")
        with fw.dual_level():
            x = fw.make_dual(lib.tensor([2., 1., 2.]), lib.tensor([1., 1., 1.]))
            with pytest.raises(NotImplementedError) as err:
                fn(lib, x)
            messages.append(str(err.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("fn", [lambda x: x.kthvalue(2)[0], lambda x: x.sort(stable=True, descending=True)[0],
                                lambda x: x.msort()])
def test_forward_ad_tangents_match_torch(fn):
    import importlib
    tangents = []
    for lib in (derivgen, torch):
        fw = importlib.import_module(lib.__name__ + ".autograd.forward_ad")
        with fw.dual_level():
            x = fw.make_dual(lib.tensor([0.2, 0.1, 0.3], dtype=lib.float64),
                             lib.tensor([1., 2., 3.], dtype=lib.float64))
            tangents.append(fw.unpack_dual(fn(x)).tangent.numpy())
    np.testing.assert_array_equal(*tangents)
