"""Ported from PyTorch's test/test_autograd.py (TestAutograd): in-place ops, version counters, views,
``__setitem__`` and indexing gradients."""
import math

import pytest

from tests.support.torch_assert import assert_equal


def test_inplace(torch):
    x = torch.ones(5, 5, requires_grad=True)
    y = (torch.ones(5, 5) * 4).requires_grad_()
    z = x * y
    q = z + y
    w = z * y
    z.add_(2)
    q.backward(torch.ones(5, 5), retain_graph=True)
    with pytest.raises(RuntimeError):
        w.backward(torch.ones(5, 5))
    z = x * y
    q = z * y
    r = z + y
    w = z.add_(y)
    w.backward(torch.ones(5, 5), retain_graph=True)
    r.backward(torch.ones(5, 5), retain_graph=True)
    with pytest.raises(RuntimeError):
        q.backward(torch.ones(5, 5))
    with torch.no_grad():
        x.grad.zero_()
    m = x / 2
    z = m + y / 8
    q = z * y
    r = z + y
    prev_version = z._version
    w = z.exp_()
    assert z._version != prev_version
    r.backward(torch.ones(5, 5), retain_graph=True)
    assert_equal(x.grad, torch.ones(5, 5) / 2)
    w.backward(torch.ones(5, 5), retain_graph=True)
    assert_equal(x.grad, torch.full((5, 5), (1 + math.e) / 2))
    with pytest.raises(RuntimeError):
        q.backward(torch.ones(5, 5))
    leaf = torch.ones(5, 5, requires_grad=True)
    x = leaf.clone()
    x.add_(10)
    assert_equal(x, torch.ones(5, 5) * 11)
    y = x + 2
    y.backward(torch.ones(5, 5))
    assert_equal(leaf.grad, torch.ones(5, 5))
    z = x * y
    x.add_(2)
    with pytest.raises(RuntimeError):
        z.backward(torch.ones(5, 5))


def test_inplace_on_view_saved_output(torch):
    dealloc = [0]

    def test():
        root = torch.randn(3, 3, requires_grad=True)
        copy = root.clone()
        copy.grad_fn.register_hook(lambda gI, gO: None)
        view = copy.view(9)
        view.relu_()
        del copy, view
        return root

    root = test()
    assert root.grad is None


def test_version_counter(torch):
    x = torch.randn(1, 2)
    x_saved_version = x._version
    x.add_(1).add_(1)
    assert x._version > x_saved_version
    xz = x[:]
    assert x._version == xz._version
    xz.add_(1)
    assert x._version == xz._version
    x_saved_version = x._version
    x.data = torch.randn(1, 2)
    assert x_saved_version == x._version


def test_no_requires_grad_inplace(torch):
    a = torch.randn(2, 3)
    a.add_(5)
    a.requires_grad = True
    a.sum().backward()
    assert_equal(a.grad, torch.ones(2, 3))
    a = torch.randn(2, 3)
    b = a[:]
    b.add_(5)
    a.requires_grad = True
    a.sum().backward()
    assert_equal(a.grad, torch.ones(2, 3))
    a = torch.randn(2, 3)
    b = a[:]
    a.requires_grad = True
    with pytest.raises(RuntimeError):
        a.add_(5)
    with pytest.raises(RuntimeError):
        b.add_(5)


def test_requires_grad_inplace(torch):
    a = torch.randn(5, 5)
    b = torch.randn(5, 5, requires_grad=True)
    a += b
    assert a.requires_grad
    a = torch.randn(5, 5) + 0
    b = torch.randn(5, 5, requires_grad=True)
    a += b
    assert a.requires_grad


def _test_setitem(torch, size, index):
    x = torch.ones(*size, requires_grad=True)
    y = x + 2
    y_version = y._version
    y[index] = 2
    assert y._version != y_version
    y.backward(torch.ones(*size))
    expected_grad = torch.ones(*size)
    expected_grad[index] = 0
    assert_equal(x.grad, expected_grad)


def _test_setitem_tensor(torch, size, index):
    x = torch.ones(*size, requires_grad=True)
    y = x + 2
    y_version = y._version
    value = x.new(x[index].size()).fill_(7) if hasattr(x, "new") else torch.full(x[index].size(), 7.0)
    value.requires_grad = True
    y[index] = value
    assert y._version != y_version
    y.backward(torch.ones(*size))
    expected_grad_input = torch.ones(*size)
    expected_grad_input[index] = 0
    assert_equal(x.grad, expected_grad_input)
    assert_equal(value.grad, torch.ones_like(value))
    x = torch.randn(4, requires_grad=True)
    y = torch.zeros(2, 3, 4)
    y[1] = x
    y.backward(torch.randn(2, 3, 4))
    assert x.size() == x.grad.size()


def test_setitem(torch):
    _test_setitem(torch, (5, 5), 1)
    _test_setitem(torch, (5,), 1)
    _test_setitem(torch, (1,), 0)
    _test_setitem(torch, (10,), [[0, 4, 2]])
    _test_setitem(torch, (5, 5), [[0, 4], [2, 2]])
    _test_setitem(torch, (5, 5, 5), (slice(None), slice(None), [1, 3]))
    _test_setitem(torch, (5, 5, 5), (slice(None), [1, 3], slice(None)))
    _test_setitem(torch, (5, 5, 5), ([1, 3], slice(None), slice(None)))
    _test_setitem(torch, (5, 5, 5), (slice(None), [2, 4], [1, 3]))
    _test_setitem(torch, (5, 5, 5), ([1, 3], [2, 4], slice(None)))
    _test_setitem_tensor(torch, (5, 5), 3)
    _test_setitem_tensor(torch, (5, 5), [[0, 1], [1, 0]])
    _test_setitem_tensor(torch, (5,), 3)
    _test_setitem_tensor(torch, (5,), torch.tensor([3]).sum())
    _test_setitem_tensor(torch, (5,), [[0, 1, 2, 3]])
    _test_setitem_tensor(torch, (5, 5, 5), (slice(None), slice(None), [1, 3]))
    _test_setitem_tensor(torch, (5, 5, 5), (slice(None), [1, 3], slice(None)))
    _test_setitem_tensor(torch, (5, 5, 5), ([1, 3], slice(None), slice(None)))
    _test_setitem_tensor(torch, (5, 5, 5), (slice(None), [2, 4], [1, 3]))
    _test_setitem_tensor(torch, (5, 5, 5), ([1, 3], [2, 4], slice(None)))
    _test_setitem_tensor(torch, (5, 5, 5), (torch.tensor([1, 3]), [2, 4], slice(None)))


def test_setitem_mask(torch):
    mask = torch.tensor([[True, False, True, True, False]] * 5)
    _test_setitem(torch, (5, 5), mask)
    _test_setitem(torch, (5,), mask[0])
    _test_setitem(torch, (1,), mask[0, 0:1])
    _test_setitem_tensor(torch, (5, 5), mask)
    _test_setitem_tensor(torch, (5,), mask[0])


def test_setitem_scalar_int_index_1d(torch):
    t = torch.zeros(3)
    t[0] = 0
    t[1] = 2
    t[-1] = 3.5
    assert_equal(t, torch.tensor([0.0, 2.0, 3.5]))
    u = torch.zeros(3, dtype=torch.int64)
    u[2] = 7
    assert u.tolist() == [0, 0, 7]


def test_index_backward_does_not_save_tensor(torch):
    a = torch.tensor([1.0, 0, 0])
    b = torch.zeros(3, requires_grad=True)
    tensor = b + 0
    tensor[a != 0] = tensor[a != 0]
    tensor.backward(torch.zeros_like(tensor))


def test_indexing(torch):
    x = torch.arange(1.0, 17).view(4, 4)
    y = x.detach().clone().requires_grad_(True)

    def compare(x, y, idx, indexed_tensor, indexed_var):
        indexed_var_t = indexed_var.data
        if not isinstance(indexed_tensor, torch.Tensor):
            indexed_var_t = indexed_var_t[0]
        assert_equal(indexed_tensor, indexed_var_t)
        indexed_var.sum().backward()
        expected_grad = torch.zeros(x.size())
        expected_grad[idx] = 1
        assert_equal(y.grad, expected_grad)

    def check_index(x, y, idx):
        if y.grad is not None:
            with torch.no_grad():
                y.grad.zero_()
        indexed_tensor = x[idx]
        indexed_var = y[idx]
        compare(x, y, idx, indexed_tensor, indexed_var)

    check_index(x, y, 1)
    check_index(x, y, (1, 1))
    check_index(x, y, slice(1, None))
    check_index(x, y, slice(None, 2))
    check_index(x, y, (slice(None, 2), 2))
    check_index(x, y, (slice(1, 2), 2))
    check_index(x, y, (1, slice(2, None)))
    check_index(x, y, (slice(None, None), slice(2, None)))
    check_index(x, y, torch.tensor([0, 2]))
    check_index(x, y, torch.tensor([[True, False, True, False]] * 4))
    check_index(x, y, (Ellipsis, slice(2, None)))
    check_index(x, y, ([0], [0]))
    check_index(x, y, ([1, 2, 3], [0]))
    check_index(x, y, ([1, 2], [2, 1]))
    check_index(x, y, ([[1, 2], [3, 0]], [[0, 1], [2, 3]]))
    check_index(x, y, (slice(None), [2, 3]))
    check_index(x, y, ([2, 3], slice(None)))
    check_index(x, y, [0])
    check_index(x, y, ([0],))
    x = torch.arange(1.0, 49).view(4, 3, 4)
    y = x.detach().clone().requires_grad_(True)
    check_index(x, y, (slice(None), [0], [0]))
    check_index(x, y, ([0], [0], slice(None)))
    check_index(x, y, (slice(None), [0, 1, 2], [0]))
    check_index(x, y, ([0, 1, 2], [0], slice(None)))
    check_index(x, y, (slice(None), [1, 2], [2, 1]))
    check_index(x, y, ([1, 2], [2, 1], slice(None)))
    check_index(x, y, (slice(None), [[1, 2], [2, 0]], [[0, 1], [2, 3]]))
    check_index(x, y, ([[1, 2], [3, 0]], [[0, 1], [2, 2]], slice(None)))
    check_index(x, y, (slice(None), slice(None), [2, 1]))
    check_index(x, y, (slice(None), [2, 1], slice(None)))
    check_index(x, y, ([2, 1], slice(None), slice(None)))
    check_index(x, y, ([0],))
    check_index(x, y, ([0], slice(None)))
    check_index(x, y, ([0], Ellipsis))
    check_index(x, y, ([1, 2], [0, 1]))
    check_index(x, y, ([1, 2], [0, 1], Ellipsis))
    check_index(x, y, (Ellipsis, [1, 2], [0, 1]))


def test_indexing_duplicates(torch):
    x = torch.arange(1.0, 17).view(4, 4)
    y = x.detach().clone().requires_grad_(True)
    idx = torch.tensor([1, 1, 3, 2, 1, 2])
    y[idx].sum().backward()
    expected_grad = torch.zeros(4, 4)
    for i in idx:
        expected_grad[i] += 1
    assert_equal(y.grad, expected_grad)
    x = torch.arange(1.0, 17).view(4, 4)
    y = x.detach().clone().requires_grad_(True)
    idx = ([1, 1, 3, 2, 1, 2], [0])
    y[idx].sum().backward()
    expected_grad = torch.zeros(4, 4)
    for i in idx[0]:
        for j in idx[1]:
            expected_grad[i][j] += 1
    assert_equal(y.grad, expected_grad)
    x = torch.arange(1.0, 17).view(4, 4)
    y = x.detach().clone().requires_grad_(True)
    idx = ([[1, 2], [0, 0]], [[0, 1], [1, 1]])
    y[idx].sum().backward()
    expected_grad = torch.tensor([[0.0, 2, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0]])
    assert_equal(y.grad, expected_grad)
    x = torch.arange(1.0, 65).view(4, 4, 4)
    y = x.detach().clone().requires_grad_(True)
    idx = ([1, 1, 1], slice(None), slice(None))
    y[idx].sum().backward()
    expected_grad = torch.zeros(4, 4, 4)
    expected_grad[1].fill_(3)
    assert_equal(y.grad, expected_grad)


def test_inplace_not_requires_grad(torch):
    class MyFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.view_as(inp)

        @staticmethod
        def backward(ctx, grad):
            return grad

    a = torch.rand(1, 2)
    b = torch.rand(1, requires_grad=True)
    view = MyFn.apply(a)
    with pytest.raises(RuntimeError, match="This view was created inside a custom Function"):
        view += b
    a = torch.rand(1, 2)
    b = torch.rand(1, requires_grad=True)
    view = MyFn.apply(a)
    with pytest.raises(RuntimeError, match="This view was created inside a custom Function"):
        view.copy_(b)
    a = torch.rand(1, 2)
    b = torch.rand(1, requires_grad=True)
    view = a.unbind()[0]
    with pytest.raises(RuntimeError, match="This view is the output of a function that returns multiple views."):
        view.copy_(b)
    a = torch.rand(1, 2)
    b = torch.rand(1, requires_grad=True)
    a.select(1, 0).copy_(b)


def test_inplace_on_view_of_leaf(torch):
    a = torch.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        a[0].add_(1)


def test_inplace_leaf_error(torch):
    a = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        a.add_(1)
    with torch.no_grad():
        a.add_(1)
    assert_equal(a, torch.full((2,), 2.0))


def test_inplace_view_backward(torch):
    a = torch.zeros(2, 2, requires_grad=True)
    b = a.clone()
    v = b[0]
    v.mul_(3)
    v.add_(torch.ones(2, requires_grad=True))
    b.sum().backward()
    assert_equal(a.grad, torch.tensor([[3.0, 3.0], [1.0, 1.0]]))
    assert b.grad_fn.name() == "CopySlices" or b.grad_fn.name().endswith("CopySlices")


def test_inplace_view_gradcheck(torch):
    a = torch.randn(4, 4, dtype=torch.double, requires_grad=True)
    b = torch.randn(2, 2, dtype=torch.double, requires_grad=True)

    def func(root, b):
        x = root.clone()
        x.narrow(1, 2, 2).narrow(0, 1, 2).mul_(b)
        x.narrow(1, 0, 2).narrow(0, 1, 2).mul_(b)
        return x

    torch.autograd.gradcheck(func, [a, b], raise_exception=True)
    go = torch.randn(a.size(), dtype=torch.double, requires_grad=True)
    torch.autograd.gradgradcheck(func, (a, b), (go,))


def test_inplace_view_makes_base_require_grad(torch):
    a = torch.randn(4, 4, dtype=torch.double, requires_grad=False)
    b = torch.randn(4, 2, dtype=torch.double, requires_grad=True)

    def func(root, b):
        x = root.clone()
        assert not x.requires_grad
        x.narrow(1, 2, 2).mul_(b)
        assert x.requires_grad
        return x

    torch.autograd.gradcheck(func, [a, b], raise_exception=True)
    go = torch.randn(a.size(), dtype=torch.double, requires_grad=True)
    torch.autograd.gradgradcheck(func, (a, b), (go,))


def test_inplace_view_backprop_view(torch):
    a = torch.tensor([2.0, 5.0], requires_grad=False)
    b = torch.tensor([3.0], requires_grad=True)
    res = a.narrow(0, 1, 1).mul_(b)
    res.sum().backward()
    assert_equal(b.grad.tolist(), [5])
    assert a.grad is None


def test_inplace_view_modify_base(torch):
    r = torch.ones(1, dtype=torch.double, requires_grad=True)

    def fn(r):
        x = torch.ones(5, dtype=torch.double)
        v = x.select(0, 1)
        assert not v.requires_grad
        assert v.grad_fn is None
        x.add_(r)
        assert v.requires_grad
        return v

    torch.autograd.gradcheck(fn, [r])
    torch.autograd.gradgradcheck(fn, [r])


def test_inplace_view_python(torch):
    a = torch.randn(4, 4, dtype=torch.double, requires_grad=True)
    b = torch.randn(2, 2, dtype=torch.double, requires_grad=True)

    class PyAdd(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.mark_dirty(x)
            x.add_(y)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    def func(root, b):
        x = root.clone()
        PyAdd.apply(x.narrow(1, 2, 2).narrow(0, 1, 2), b)
        PyAdd.apply(x.narrow(1, 0, 2).narrow(0, 1, 2), b)
        return x

    torch.autograd.gradcheck(func, [a, b], raise_exception=True)
    go = torch.randn(a.size(), dtype=torch.double, requires_grad=True)
    torch.autograd.gradgradcheck(func, (a, b), (go,))


def test_inplace_view_non_contig(torch):
    root = torch.ones(2, 3, 2).select(2, 1).t().requires_grad_(True)
    x = root.clone()
    v1 = x.narrow(0, 0, 1)
    v2 = v1.narrow(1, 1, 1)
    v2.mul_(2)
    x.sum().backward()
    assert_equal(root.grad.tolist(), [[1, 2], [1, 1], [1, 1]])


def test_inplace_view_multi_output_unsafe(torch):
    for f in [lambda t: t.unsafe_split(1), lambda t: t.unsafe_split_with_sizes((1, 1, 1)),
              lambda t: t.unsafe_chunk(3)]:
        a = torch.randn(3, 3, requires_grad=True)
        b = a + a
        s1, s2, s3 = f(b)
        s1.mul_(s2)
        s1.sum().backward()


def test_inplace_view_multi_output_safe(torch):
    for f in [lambda t: t.split(1), lambda t: t.chunk(3), lambda t: t.unbind()]:
        a = torch.randn(3, 3, requires_grad=True)
        b = a + a
        s1, s2, s3 = f(b)
        error_msg = "This view is the output of a function that returns multiple views."
        with pytest.raises(RuntimeError, match=error_msg):
            s1.mul_(s2)


def test_inplace_on_view_weak_grad_fn(torch):
    a = torch.arange(10.0, requires_grad=True)
    b = a.narrow(0, 0, 2).clone().view(-1)
    b.relu_()
    c = b.clone()
    del b
    import gc
    gc.collect()
    s = c.sum()
    s.backward()
    assert_equal(s, torch.tensor(1.0))


def test_view_and_inplace_chain(torch):
    x = torch.zeros(4, requires_grad=True)
    y = x.clone()
    y[1:3].add_(torch.tensor([1.0, 2.0], requires_grad=True))
    y.sum().backward()
    assert_equal(x.grad, torch.ones(4))


def test_view_inplace_base_version(torch):
    x = torch.ones(3)
    v = x[1:]
    before = x._version
    v.add_(1)
    assert x._version == before + 1
    assert v._version == x._version


def test_copy_slices_graph(torch):
    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    b[0] = 5
    assert b.grad_fn.name().endswith("CopySlices")
    b.sum().backward()
    assert_equal(a.grad, torch.tensor([0.0, 1.0, 1.0]))


def test_resize_version_bump(torch):
    x = torch.rand((1,))
    y = torch.randn((3,))
    x.resize_((1, 2))
    assert x._version == 1
    x.resize_as_(y)
    assert x._version == 2
    x.resize_((3,))
    assert x._version == 2
    x.resize_as_(y)
    assert x._version == 2


def test_detach_inplace_version(torch):
    x = torch.randn(3, requires_grad=True)
    y = x.detach()
    v = x._version
    y.zero_()
    assert x._version == v + 1


def test_inplace_version_counter_shared_with_detach(torch):
    a = torch.ones(2, requires_grad=True)
    b = a.exp()
    c = b.detach()
    c.zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()


def test_numpy_requires_grad(torch):
    x = torch.randn(2, 2, requires_grad=True)
    err_msg_outputs = r"Can't call numpy\(\) on Tensor that requires grad. Use tensor.detach\(\).numpy\(\) instead."
    with pytest.raises(RuntimeError, match=err_msg_outputs):
        x.numpy()
    with torch.no_grad():
        x.numpy()
    x = torch.randn(2, 2)
    x.numpy()
    with torch.no_grad():
        x.numpy()


def test_set_data_different_dtype_requires_grad(torch):
    x = torch.randn(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="data set to a tensor that requires gradients must be floating point"):
        x.data = torch.ones(2, dtype=torch.int64)


def test_inplace_on_view_saved_index(torch):
    b = torch.randn(3, requires_grad=True, dtype=torch.double)
    c = torch.zeros(3, dtype=torch.double)
    c[[1, 2]] = b[[1, 1]]
    c.backward(torch.tensor([1.0, 1.0, 1.0], dtype=torch.double))
    assert_equal(b.grad, torch.tensor([0.0, 2.0, 0.0], dtype=torch.double))


def test_put(torch):
    root = torch.randn(4, 5, requires_grad=True)
    values = torch.randn(6, requires_grad=True)
    idx = torch.tensor([1, 2, 3, -1, -2, -3])

    def func(root, values):
        x = root.clone()
        x.put_(idx, values)
        return x

    torch.autograd.gradcheck(func, [root, values])
    torch.autograd.gradgradcheck(func, [root, values])


def test_fill(torch):
    root = torch.randn(4, 5, requires_grad=True)

    def func(root):
        x = root.clone()
        x.fill_(2)
        return x

    torch.autograd.gradcheck(func, [root])
    torch.autograd.gradgradcheck(func, [root])


def test_select_sum(torch):
    x = torch.randn(10, dtype=torch.double, requires_grad=True)

    def func(x):
        return x.select(0, 1).sum()

    torch.autograd.gradcheck(func, [x])
    torch.autograd.gradgradcheck(func, [x])


def test_hstack(torch):
    x = torch.randn(10, 10, requires_grad=True)
    y = torch.randn(10, 10, requires_grad=True)
    z = torch.randn(10, 10, requires_grad=True)
    stacked = torch.hstack([x, y, z])
    grad = torch.randn(10, 30)
    stacked.backward(grad)
    assert_equal(x.grad, grad[:, 0:10])
    assert_equal(y.grad, grad[:, 10:20])
    assert_equal(z.grad, grad[:, 20:30])


def test_vstack(torch):
    x = torch.randn(10, 10, requires_grad=True)
    y = torch.randn(10, 10, requires_grad=True)
    z = torch.randn(10, 10, requires_grad=True)
    stacked = torch.vstack([x, y, z])
    grad = torch.randn(30, 10)
    stacked.backward(grad)
    assert_equal(x.grad, grad[0:10])
    assert_equal(y.grad, grad[10:20])
    assert_equal(z.grad, grad[20:30])


def test_dstack(torch):
    x = torch.randn(10, 10, requires_grad=True)
    y = torch.randn(10, 10, requires_grad=True)
    z = torch.randn(10, 10, requires_grad=True)
    stacked = torch.dstack([x, y, z])
    grad = torch.randn(10, 10, 3)
    stacked.backward(grad)
    assert_equal(x.grad, grad[:, :, 0])
    assert_equal(y.grad, grad[:, :, 1])
    assert_equal(z.grad, grad[:, :, 2])


def test_no_grad_modifies_version(torch):
    x = torch.randn(5, requires_grad=True)
    y = torch.randn(5, requires_grad=True)
    z = (x * y).sum()
    with torch.no_grad():
        x *= 2
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_increment_version(torch):
    a = torch.rand(5, requires_grad=True)
    v = a._version
    torch.autograd.graph.increment_version(a)
    assert a._version == v + 1


def test_inplace_on_view_of_view(torch):
    a = torch.zeros(4, 4, requires_grad=True)
    b = a.clone()
    c = b[1:3]
    d = c[:, 1:3]
    d.add_(1)
    b.sum().backward()
    assert_equal(a.grad, torch.ones(4, 4))
    assert_equal(b[1:3, 1:3], torch.ones(2, 2))


def test_inplace_mul_saved_check(torch):
    a = torch.ones(3, requires_grad=True)
    b = a * 2
    c = b * b
    b.mul_(3)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been "
                                           "modified by an inplace operation"):
        c.sum().backward()


def test_put_accumulate_and_take(torch):
    root = torch.randn(4, 5, requires_grad=True)
    values = torch.randn(2, 3, requires_grad=True)
    idx = torch.tensor([[1, 2, 1], [-1, 0, 1]])

    def put_accumulate(root, values):
        return root.clone().put_(idx, values, accumulate=True)

    torch.autograd.gradcheck(put_accumulate, [root, values])
    torch.autograd.gradgradcheck(put_accumulate, [root, values])
    torch.autograd.gradcheck(lambda r, v: torch.put(r, torch.tensor([3, -2, 0]), v[0]), [root, values])
    taken = torch.take(root, idx)
    assert taken.shape == idx.shape
    assert taken.grad_fn.name() == "TakeBackward0"
    assert root.clone().put_(idx, values).grad_fn.name() == "PutBackward0"
    torch.autograd.gradcheck(lambda r: torch.take(r, idx), [root])
    torch.autograd.gradgradcheck(lambda r: torch.take(r, idx), [root])


def test_put_take_errors(torch):
    x = torch.randn(4, 5)
    with pytest.raises(IndexError, match="out of range: tried to access index 20 on a tensor of 20 elements."):
        x.put_(torch.tensor([20]), torch.tensor([1.0]))
    with pytest.raises(IndexError, match="out of range: tried to access index -21 on a tensor of 20 elements."):
        x.take(torch.tensor([-21]))
    with pytest.raises(IndexError, match=r"put_\(\): Expected source and index to have the same number of elements, "
                                         r"but got source.numel\(\) = 1, index.numel\(\) = 2"):
        x.put(torch.tensor([1, 2]), torch.tensor([1.0]))
    with pytest.raises(RuntimeError, match=r"put_\(\): Expected a long tensor for index, but got Int"):
        x.put_(torch.tensor([1], dtype=torch.int32), torch.tensor([1.0]))
    with pytest.raises(RuntimeError, match=r"take\(\): Expected a long tensor for index, but got Double"):
        x.take(torch.tensor([1.0]))
    with pytest.raises(RuntimeError, match=r"put_\(\): self and source expected to have the same dtype, but got "
                                           r"self.dtype = Double and source.dtype = Long"):
        x.put_(torch.tensor([1]), torch.tensor([1]))
    leaf = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        leaf.put_(torch.tensor([0]), torch.tensor([1.0]))


def test_unsafe_split_outputs_are_not_views(torch):
    a = torch.randn(4, 3, requires_grad=True)
    b = a * 2
    pieces = [b.unsafe_split(2), b.unsafe_split_with_sizes([1, 3]), b.unsafe_chunk(2, dim=1),
              torch.unsafe_split(b, 3, 1), torch.unsafe_chunk(b, 3)]
    names = ["UnsafeSplitBackward0", "UnsafeSplitWithSizesBackward0", "UnsafeSplitBackward0",
             "UnsafeSplitBackward0", "UnsafeSplitBackward0"]
    for outs, name in zip(pieces, names):
        assert all(o.grad_fn.name() == name and o._base is None for o in outs)
    assert [list(o.shape) for o in pieces[2]] == [[4, 2], [4, 1]]
    assert [list(o.shape) for o in pieces[4]] == [[2, 3], [2, 3]]
    torch.autograd.gradcheck(lambda t: t.unsafe_split_with_sizes([1, 3])[1] * 3, [a])
    torch.autograd.gradgradcheck(lambda t: torch.unsafe_chunk(t * t, 2, 1), [a])


def test_view_grad_fn_regenerated_after_inplace_on_base(torch):
    leaf = torch.ones(3, requires_grad=True)
    a = leaf.clone()
    v = a[0]
    a.mul_(2)
    assert v.grad_fn.name() == "AsStridedBackward0"
    v.backward()
    assert_equal(leaf.grad, torch.tensor([2.0, 0.0, 0.0]))


def test_sibling_view_grad_fn_regenerated_after_inplace_on_view(torch):
    leaf = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    base = leaf.clone()
    v1, v2 = base[:2], base[1:3]
    v1.mul_(3)  # v2's first element is written through v1
    assert v2.grad_fn.name() == "AsStridedBackward0"
    (v2 * torch.tensor([10.0, 100.0])).sum().backward()
    assert_equal(leaf.grad, torch.tensor([0.0, 30.0, 100.0, 0.0]))


def test_set_overloads(torch):
    source = torch.arange(6.0)
    x = torch.zeros(2)
    assert x.set_(source) is x
    assert x.shape == (6,) and x._version == 1
    x[0] = 10.0  # shares memory with source
    assert source[0].item() == 10.0
    tail = source[1:]
    y = torch.zeros(1).set_(tail, 1, (2, 2))
    assert_equal(y, torch.tensor([[2.0, 3.0], [4.0, 5.0]]))
    z = torch.zeros(1).set_(source=tail, storage_offset=0, size=(2, 2), stride=(1, 2))
    assert z.stride() == (1, 2)
    assert_equal(z, torch.tensor([[1.0, 3.0], [2.0, 4.0]]))
    empty = torch.ones(2, 3).set_()
    assert empty.shape == (0,) and empty.dtype == torch.float64
    with pytest.raises(RuntimeError, match="Could not set tensor of type long int to a tensor of type double"):
        torch.zeros(2).set_(torch.zeros(2, dtype=torch.int64))
    with pytest.raises(RuntimeError, match=r"unequal size length \(2\) and stride length \(1\)"):
        torch.zeros(2).set_(source, 0, (2, 3), (1,))
    with pytest.raises(RuntimeError, match="Tensor: invalid storage offset -1"):
        torch.zeros(2).set_(tail, -2, (2, 2))
    with pytest.raises(RuntimeError, match="passed in tensor to be used as storage must be contiguous"):
        torch.zeros(2).set_(source.reshape(2, 3).t(), 0, (2,))


def test_set_autograd(torch):
    leaf = torch.rand(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        leaf.set_(torch.rand(3))
    plain = torch.rand(2)
    source = torch.rand(3, requires_grad=True)
    plain.set_(source)
    assert plain.requires_grad and plain.grad_fn.name().endswith("autograd::NotImplemented")
    assert plain.grad_fn.next_functions[0] == (None, 0)
    assert plain.grad_fn.next_functions[1][0] is torch.autograd.graph.get_gradient_edge(source).node
    with pytest.raises(RuntimeError, match="derivative for set_ is not implemented"):
        plain.sum().backward()
    nonleaf = torch.rand(2, requires_grad=True).clone()
    with torch.no_grad():
        before = nonleaf.grad_fn
        nonleaf.set_(torch.rand(3))
    assert nonleaf.grad_fn is before and nonleaf._version == 1
    with torch.no_grad():
        detached = torch.rand(2)
        detached.set_(source)
    assert not detached.requires_grad


def test_detach_then_inplace_raises_in_autograd(torch):
    x = torch.randn([], requires_grad=True)
    orig_x = x.detach().clone()
    y = x**2
    z = x.detach()
    z.zero_()
    with pytest.raises(RuntimeError, match="has been modified by an inplace"):
        y.backward()


def test_leaf_assignment(torch):
    x = torch.randn(5, 5)
    y = torch.randn(5, requires_grad=True)
    z = torch.randn(5, requires_grad=True)
    x[0] = y
    x[1] = 2 * z
    assert x.requires_grad
    assert x.grad_fn is not None
    x.sum().backward()
    assert_equal(y.grad, torch.ones(5))
    assert_equal(z.grad, torch.ones(5) * 2)


def test_inplace_on_view_leaf_errors(torch):
    x = torch.zeros(1, requires_grad=True)
    y = x.view_as(x)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an "
                                           "in-place operation."):
        y.add_(1)


def test_inplace_on_view_backward(torch):
    nn = torch.nn
    net = nn.Sequential(nn.InstanceNorm2d(2), nn.ReLU(True))
    x = torch.tensor([[[[1.0, 1.0]]]], requires_grad=True)
    (g,) = torch.autograd.grad(net(x).pow(2), [x], grad_outputs=x.new_ones(x.shape), create_graph=True)
    torch.autograd.grad(g.sum(), [x])
    assert_equal(x, torch.tensor([[[[1.0, 1.0]]]]))

    inputs = torch.ones((1, 3, 256, 256), requires_grad=True)
    tmp1 = (inputs + 1).view_as(inputs)
    tmp2 = torch.nn.functional.threshold(tmp1, 0.0, 0.0, True)
    prob_interpolated = torch.sigmoid(tmp2)
    gradients = torch.autograd.grad(outputs=prob_interpolated, inputs=inputs,
                                    grad_outputs=torch.ones(prob_interpolated.size()),
                                    create_graph=True, retain_graph=True)[0]
    gradient_penalty = gradients.sum()
    gradient_penalty.backward()
    fn = gradient_penalty.grad_fn.next_functions[0][0].next_functions[1][0]
    assert fn.name() == "ThresholdBackwardBackward0"


def test_autograd_print_tensor(torch):
    a = torch.ones(1, requires_grad=True)
    a_clone = a.clone()
    assert repr(a) == "tensor([1.], requires_grad=True)"
    assert repr(a_clone) == "tensor([1.], grad_fn=<CloneBackward0>)"

    with torch.no_grad():
        b = a[:]
        b *= 2
    assert repr(b) == "tensor([2.], grad_fn=<Invalid>)"

    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, x):
            return x

    c = Func.apply(a)
    assert repr(c) == "tensor([2.], grad_fn=<FuncBackward>)"


def test_autograd_inplace_view_of_view(torch):
    x = torch.zeros(2)
    with torch.no_grad():
        y = x.view(2)
    y.requires_grad_(True)
    z = y.view(2)
    with pytest.raises(RuntimeError, match="a view of a view .* is being .* inside the no_grad block"):
        z /= 2

    x = torch.zeros(2)
    with torch.inference_mode():
        y = x.view(2)
    y.requires_grad_(True)
    z = y.view(2)
    with pytest.raises(RuntimeError, match="a view of a view .* is being .* inside the inference_mode"):
        z /= 2


def test_autograd_inplace_views_creation_meta(torch):
    # in-place view ops (t_, squeeze_, ...) on a view keep its creation meta: what the view then refuses
    # depends on the grad mode it was made in and the one the in-place view op runs in
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, x):
            return x

    def run_test(fn, fn_type, grad_mode_view, grad_mode_iview, requires_grad, error1, error2):
        base = torch.rand(2, 3, requires_grad=requires_grad).clone()
        with torch.set_grad_enabled(grad_mode_view):
            if fn_type == "multi_view":
                inp = base.unbind()[0]
            elif fn_type == "custom":
                inp = Func.apply(base)
            else:
                inp = base.view_as(base)
        with torch.set_grad_enabled(grad_mode_iview):
            if error1 is not None:
                with pytest.raises(RuntimeError, match=error1):
                    fn(inp)
                return
            fn(inp)
        if error2 is not None:
            with pytest.raises(RuntimeError, match=error2):
                inp.add_(1)
        else:
            inp.add_(1)

    no_grad_err = "A view was created in no_grad mode"
    multi_view_err = "function that returns multiple views"
    custom_err = "view was created inside a custom Function"

    def run_tests(fn):
        for fn_type in ("normal", "multi_view", "custom"):
            for grad_mode_view in (True, False):
                for grad_mode_iview in (True, False):
                    for requires_grad in (True, False):
                        error1 = error2 = None
                        if requires_grad:
                            if not grad_mode_view and grad_mode_iview:
                                error1 = no_grad_err
                            if not grad_mode_view and not grad_mode_iview:
                                error2 = no_grad_err
                            if fn_type == "multi_view":
                                if grad_mode_view and grad_mode_iview:
                                    error1 = multi_view_err
                                if grad_mode_view and not grad_mode_iview:
                                    error2 = multi_view_err
                            if fn_type == "custom":
                                if grad_mode_view and grad_mode_iview:
                                    error1 = custom_err
                                if grad_mode_view and not grad_mode_iview:
                                    error2 = custom_err
                        run_test(fn, fn_type, grad_mode_view, grad_mode_iview, requires_grad, error1, error2)

    # every in-place view op, as upstream
    run_tests(lambda v: v.as_strided_((1, 0), (2, 2)))
    run_tests(lambda v: v.transpose_(0, 0))
    run_tests(lambda v: v.t_())
    run_tests(lambda v: v.squeeze_(0))
    run_tests(lambda v: v.unsqueeze_(0))
    run_tests(lambda v: v.swapdims_(0, 0))
    run_tests(lambda v: v.swapaxes_(0, 0))
