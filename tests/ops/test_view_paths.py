"""The direct paths of views and indexing (``x.view(-1)``, ``x[0]``, ``x[1:3]``, ``x.unsqueeze(0)``, ``reshape``)
against PyTorch: shapes, strides, graphs, errors; and the live-view table of a root (refreshed grad_fns after
an in-place op, dead views swept)."""
import gc

import numpy as np
import pytest
import torch as real_torch

import derivgen as torch
from derivgen.ops import binding
from derivgen.ops.view_meta import live_views, view_entry


def _pair(shape, transpose=False):
    a = np.arange(float(np.prod(shape))).reshape(shape)
    x, rx = torch.tensor(a, requires_grad=True), real_torch.tensor(a, requires_grad=True)
    if transpose:
        return x.transpose(0, 1), rx.transpose(0, 1)
    return x, rx


def _same(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


VIEW_CALLS = [lambda t: t.view(-1), lambda t: t.view(4, 6), lambda t: t.view((2, 12)), lambda t: t.view(2, -1, 3),
              lambda t: t.view(t.shape), lambda t: t.view([24]), lambda t: t.view(np.int64(24)),
              lambda t: t.reshape(-1), lambda t: t.reshape(6, 4), lambda t: t.reshape((3, 8)),
              lambda t: t[0], lambda t: t[-1], lambda t: t[1:], lambda t: t[::2], lambda t: t[:, 1],
              lambda t: t[1, 2], lambda t: t[None], lambda t: t[..., 0], lambda t: t[0, None, 1:3],
              lambda t: t.unsqueeze(0), lambda t: t.unsqueeze(-1), lambda t: t.unsqueeze(1)]


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("call", VIEW_CALLS)
def test_views_match_torch(call, transpose):
    x, rx = _pair((4, 6), transpose)
    try:
        expected = call(rx)
    except RuntimeError as exc:  # a view of the transposed tensor that torch refuses: the same error
        with pytest.raises(RuntimeError) as ours:
            call(x)
        assert str(ours.value) == str(exc)
        return
    out = call(x)
    _same(out, expected)
    root = x._base if x._base is not None else x
    assert out._base is (None if expected._base is None else root)  # the root owning the memory, or a copy
    (out * out).sum().backward()
    (expected * expected).sum().backward()
    rroot = rx._base if rx._base is not None else rx
    np.testing.assert_array_equal(root.grad.numpy(), rroot.grad.numpy())


@pytest.mark.parametrize("call", [lambda t: t.view(-1, -1), lambda t: t.view(5), lambda t: t.view(-1, 5),
                                  lambda t: t[4], lambda t: t[-5], lambda t: t[0, 0, 0], lambda t: t.view(2.0),
                                  lambda t: t.view(True), lambda t: t.unsqueeze(3)])
def test_view_errors_match_torch(call):
    x, rx = _pair((4, 6))
    with pytest.raises(Exception) as theirs:
        call(rx)
    with pytest.raises(type(theirs.value)) as ours:
        call(x)
    if not isinstance(theirs.value, TypeError):  # torch's parser texts name its C++ signatures
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("index", [0, np.int64(0), slice(0, 1), (0,), (Ellipsis, 0), True])
def test_indexing_a_0_dim_tensor_matches_torch(index):
    x, rx = torch.tensor(1.5), real_torch.tensor(1.5)
    try:
        expected = rx[index]
    except IndexError as exc:
        with pytest.raises(IndexError) as ours:
            x[index]
        assert str(ours.value) == str(exc)
        return
    assert tuple(x[index].shape) == tuple(expected.shape)


def test_plain_int_views_skip_the_argument_parser(monkeypatch):
    x = torch.arange(24.0).reshape(4, 6)
    monkeypatch.setattr(binding, "_pick", lambda *a: pytest.fail("the parser ran"))
    monkeypatch.setattr(binding, "_route_key", lambda *a: pytest.fail("the route cache was asked"))
    assert x.view(-1).shape == (24,) and x.view(2, 12).shape == (2, 12) and x.view((3, 8)).shape == (3, 8)
    assert x.reshape(6, 4).shape == (6, 4) and x[1].shape == (6,) and x[1:3].shape == (2, 6)
    assert x.unsqueeze(0).shape == (1, 4, 6) and x[:, 2].shape == (4,)


def test_in_place_on_the_root_refreshes_live_views_after_many_dead_ones():
    base = torch.zeros(4, 6)
    for _ in range(100):
        base.view(-1)  # dropped at once: dead entries in the root's table
    keep = [base[i] for i in range(4)]
    w = torch.ones(4, 6, requires_grad=True)
    base.mul_(w)  # the root's history changes: every live view regenerates its grad_fn from it
    for v in keep:
        assert v.grad_fn is not None and v.grad_fn.name() == "AsStridedBackward0"
    keep[2].sum().backward()
    expected = np.zeros((4, 6))
    expected[2] = 0.0  # d(base*w)/dw = base = 0 there
    np.testing.assert_array_equal(w.grad.numpy(), expected)
    assert live_views(base) == keep


def test_dead_views_are_swept_from_the_root():
    base = torch.zeros(8)
    for _ in range(1000):
        base.view(-1)
    gc.collect()
    table = base._live_views
    assert len(table.refs) <= max(16, 2 * len(live_views(base))) + 1
    alive = [base[1:] for _ in range(40)]
    for _ in range(200):
        base.view(-1)
    assert len(table.refs) <= 2 * len(alive) + 1
    assert live_views(base) == alive


def test_a_view_keeps_its_entry_and_its_root():
    x = torch.arange(12.0).reshape(3, 4)
    v = x[1:].view(-1)
    assert v._base is x._base  # the root, not the intermediate view
    entry = view_entry(v)
    assert entry is not None and view_entry(torch.zeros(2)) is None
