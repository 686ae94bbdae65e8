"""``expand_view``: the broadcast view behind ``expand`` and ``sum``'s backward must be exactly what
``np.broadcast_to`` gives (shape, strides, values, shared memory), read-only unless asked otherwise,
and refuse a shape it does not broadcast to."""
import numpy as np
import pytest

import derivgen as torch
from derivgen.core.sizes import expand_view

rng = np.random.default_rng(0)
CASES = [
    (np.array(1.5, np.float32), (64, 10)),                   # sum's backward: one value everywhere
    (rng.standard_normal((3, 1)), (2, 3, 4)),                # a new leading dim and a size-1 dim
    (rng.standard_normal(4).astype(np.float32), (3, 4)),
    (rng.standard_normal((5, 4)).T, (2, 4, 5)),              # not contiguous
    (rng.standard_normal((2, 3))[:, 1:2], (2, 5)),           # a column of a larger array
    (rng.standard_normal((2, 3)), (2, 3)),                   # nothing to broadcast
    (np.zeros((1, 0)), (3, 0)),                              # no elements
    (np.zeros(0), (2, 0)),
]


@pytest.mark.parametrize("a, shape", CASES)
def test_matches_numpy_broadcast_to(a, shape):
    view = expand_view(a, shape)
    ref = np.broadcast_to(a, shape)
    assert view.shape == ref.shape and view.strides == ref.strides and view.dtype == a.dtype
    np.testing.assert_array_equal(view, ref)
    assert not view.flags.writeable
    if a.size:
        assert np.shares_memory(view, a)
        assert view.__array_interface__["data"][0] == ref.__array_interface__["data"][0]


@pytest.mark.parametrize("a, shape", CASES)
def test_writeable_follows_the_source(a, shape):
    assert expand_view(a, shape, writeable=True).flags.writeable == a.flags.writeable
    frozen = a.copy()
    frozen.flags.writeable = False
    assert not expand_view(frozen, shape, writeable=True).flags.writeable


def test_a_write_through_a_writeable_view_reaches_the_source():
    a = np.zeros((2, 1))
    view = expand_view(a, (3, 2, 4), writeable=True)
    view[0, 1, 0] = 7.0
    assert a[1, 0] == 7.0


@pytest.mark.parametrize("a_shape, shape", [((3,), (4,)), ((2, 3), (3,)), ((2, 3), (2, 4)), ((2,), (2, 0))])
def test_refuses_a_shape_it_does_not_broadcast_to(a_shape, shape):
    with pytest.raises(ValueError, match="cannot broadcast"):
        expand_view(np.ones(a_shape), shape)
    with pytest.raises(ValueError):
        np.broadcast_to(np.ones(a_shape), shape)  # numpy refuses the same shapes


def test_sum_backward_hands_on_a_stride_0_gradient_like_torch():
    pytest.importorskip("torch")
    import torch as real

    seen = {}
    for lib in (torch, real):
        x = lib.ones(3, 4, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g, lib=lib: seen.__setitem__(lib.__name__, (tuple(g.shape), g.stride(), g.sum().item())))
        y.sum().backward()
        assert x.grad.tolist() == [[2.0] * 4] * 3
    assert seen["derivgen"] == seen["torch"]
