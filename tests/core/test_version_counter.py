"""Version counters of new tensors (op outputs start with no counter of their own until bumped or shared):
every way a counter is shared or bumped first keeps torch's versions and its in-place errors, run on
derivgen and on torch."""
import gc

import pytest


def _out(torch):
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    return x, x * 2  # a fresh op output


def test_first_bump_of_a_fresh_output_counts(torch):
    _, y = _out(torch)
    assert y._version == 0
    with torch.no_grad():
        y.add_(1)
        y.mul_(2)
    assert y._version == 2


@pytest.mark.parametrize("share", ["view", "detach", "reshape_view", "unbind"])
def test_a_counter_shared_before_the_first_bump_is_one_counter(torch, share):
    _, y = _out(torch)
    other = {"view": lambda t: t.view(3), "detach": lambda t: t.detach(), "reshape_view": lambda t: t.reshape(3, 1),
             "unbind": lambda t: t.unbind()[0]}[share](y)
    with torch.no_grad():
        other.add_(1)
    assert y._version == other._version == 1
    with torch.no_grad():
        y.add_(1)
    assert y._version == other._version == 2


def test_a_fresh_output_saved_by_its_node_then_modified_refuses_backward(torch):
    x = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    e = x.exp()  # ExpBackward0 saves its output
    e.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        e.sum().backward()


def test_a_fresh_input_saved_by_the_next_node_then_modified_refuses_backward(torch):
    x = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    h = x + 1
    s = h.sin()  # SinBackward0 saves h
    h.mul_(2)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        s.sum().backward()


def test_a_detached_alias_of_a_fresh_output_bumps_what_the_graph_saved(torch):
    x = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    h = x + 1
    s = h.sin()
    h.detach().zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.sum().backward()


def test_parameter_made_from_a_fresh_tensor_shares_its_counter(torch):
    t = torch.zeros(3) + 1
    p = torch.nn.Parameter(t)
    with torch.no_grad():
        p.add_(1)
    assert t._version == p._version == 1


def test_unmodified_op_outputs_keep_no_counter_list_alive():
    import derivgen
    a = derivgen.rand(8, dtype=derivgen.float64, requires_grad=True)
    h = a
    for _ in range(4):
        h = h + a
    h.sum().backward()
    gc.collect()
    before = sum(1 for o in gc.get_objects() if type(o) is list)
    h = a
    for _ in range(400):
        h = (h + a).sin()  # each sum is saved by sin, never written in place
    gc.collect()
    lists = sum(1 for o in gc.get_objects() if type(o) is list) - before
    assert lists < 40, lists
    h.sum().backward()
