"""Views remember the mode they were made in (torch's CreationMeta): what they report, which in-place
changes autograd refuses on them, and how reading their history fails once their memory was written.
Each test runs on PyTorch 2.13 and on derivgen."""
import pytest

from tests.support.torch_assert import assert_equal

NO_GRAD_DIRECT = ("A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given "
                  "that this use case is ambiguous and error-prone, it is forbidden.")
NO_GRAD_INDIRECT = ("A view was created in no_grad mode and its base or another view of its base has been modified "
                    "inplace with grad mode enabled.")


def test_no_grad_view_requires_grad_through_its_base(torch):
    a = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        b = a[:2]
    assert b.requires_grad and b.grad_fn is None and b.is_leaf
    b.requires_grad_(False)  # the base's flag still shows through
    assert b.requires_grad
    assert repr(b) == "tensor([1., 1.], requires_grad=True)"


def test_op_on_no_grad_view_records_a_node_whose_gradient_goes_nowhere(torch):
    a = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        b = a[:2]
    s = b.sum()
    assert s.grad_fn.name() == "SumBackward0"
    assert s.grad_fn.next_functions == ((None, 0),)
    s.backward()
    assert a.grad is None


def test_inplace_on_no_grad_view_with_grad_enabled_is_refused(torch):
    a = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        b = a[:2]
    with pytest.raises(RuntimeError, match=NO_GRAD_DIRECT):
        b.mul_(2)


def test_no_grad_view_written_in_no_grad_refuses_its_grad_fn(torch):
    a = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        b = a[:2]
        b.mul_(2)  # allowed: nothing is recorded
    with pytest.raises(RuntimeError, match=NO_GRAD_INDIRECT):
        b.grad_fn
    with pytest.raises(RuntimeError, match=NO_GRAD_INDIRECT):
        b.sum()
    assert repr(b) == "tensor([2., 2.], grad_fn=<Invalid>)"


def test_no_grad_view_of_a_base_that_requires_grad_later(torch):
    x = torch.zeros(2)
    with torch.no_grad():
        y = x.view(2)
    y.mul_(2)  # nothing requires grad yet: allowed
    assert y.grad_fn is None
    x.requires_grad_(True)
    assert y.requires_grad
    with pytest.raises(RuntimeError, match=NO_GRAD_INDIRECT):
        y.grad_fn
    with pytest.raises(RuntimeError, match=NO_GRAD_DIRECT):
        y.mul_(2)


def test_view_of_no_grad_view_carries_the_mode(torch):
    a = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        c = a[:2]
    d = c[:1]
    assert d.requires_grad and d.grad_fn.name() == "SliceBackward0"
    with pytest.raises(RuntimeError, match="Output 0 of Slice is a view of a view which was created in no_grad mode "
                                           "and is being modified inplace with grad mode enabled."):
        d.mul_(2)


def test_inference_mode_view_of_normal_tensor_is_normal_and_remembers(torch):
    x = torch.zeros(2, requires_grad=True)
    with torch.inference_mode():
        y = x.view(2)
    assert not y.is_inference() and y.requires_grad and y.grad_fn is None
    with pytest.raises(RuntimeError, match="A view was created in inference mode and is being modified inplace in "
                                           "normal mode.*inside the inference_mode block"):
        y.mul_(2)
    z = y.view(2)
    assert z.grad_fn.name() == "ViewBackward0"
    with pytest.raises(RuntimeError, match="Output 0 of View is a view of a view which was created in inference mode"):
        z.mul_(2)


def test_inference_mode_view_of_plain_tensor_may_be_written(torch):
    x = torch.zeros(2)
    with torch.inference_mode():
        y = x.view(2)
    y.mul_(2)
    assert_equal(x, torch.zeros(2))


def test_no_grad_view_written_where_other_operand_requires_grad(torch):
    x = torch.ones(2)
    with torch.no_grad():
        v = x[:]
    with pytest.raises(RuntimeError, match=NO_GRAD_DIRECT):
        v.mul_(torch.full((2,), 3.0, requires_grad=True))
    assert_equal(x, torch.ones(2))  # refused before anything was written
    with pytest.raises(RuntimeError, match=NO_GRAD_DIRECT):
        v.copy_(torch.full((2,), 3.0, requires_grad=True))
    assert_equal(x, torch.ones(2))


def test_multi_view_output_refuses_grad_fn_after_any_write(torch):
    for write in ("base", "sibling"):
        a = torch.ones(4, requires_grad=True).clone()
        p, q = a.split(2)
        with torch.no_grad():
            (a if write == "base" else q).mul_(2)
        with pytest.raises(RuntimeError, match="Output 0 of Split is a view and its base or another view of its base "
                                               "has been modified inplace. This view is the output of a function "
                                               "that returns multiple views."):
            p.grad_fn
        assert repr(p).endswith("grad_fn=<Invalid>)")


def test_multi_view_made_in_no_grad_is_a_no_grad_view(torch):
    a = torch.ones(4, requires_grad=True)
    with torch.no_grad():
        p = a.split(2)[0]
    assert p.requires_grad
    with pytest.raises(RuntimeError, match=NO_GRAD_DIRECT):
        p.mul_(2)


def test_custom_function_view_refuses_grad_fn_after_base_write(torch):
    class ViewOf(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, g):
            return g

    a = torch.ones(2, requires_grad=True).clone()
    o = ViewOf.apply(a)
    with pytest.raises(RuntimeError, match="Output 0 of ViewOf is a view and is being modified inplace. This view was "
                                           "created inside a custom Function"):
        o.mul_(2)
    with torch.no_grad():
        a.mul_(2)
    with pytest.raises(RuntimeError, match="Output 0 of ViewOf is a view and its base or another view of its base has "
                                           "been modified inplace. This view was created inside a custom Function"):
        o.grad_fn
