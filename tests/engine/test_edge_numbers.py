"""The input numbers of a node's edges (``next_functions``' second entries): an output of a multi-output
node other than the first keeps its number; the common all-zero case shares one tuple between nodes, so
a recorded op leaves no tuple of its own for the cyclic GC. The graph bodies run against derivgen and
PyTorch (the ``torch`` fixture)."""
import gc

import pytest

import derivgen


def _edges(t):
    return [(type(fn).__name__, nr) for fn, nr in t.grad_fn.next_functions]


@pytest.mark.parametrize("op", ["mul", "add", "sub"])
def test_binary_op_on_outputs_of_a_multi_output_node(torch, op):
    x = torch.ones(4, requires_grad=True)
    a, b = x.split(2)
    f = getattr(torch, op)
    assert _edges(f(b, a)) == [("SplitBackward0", 1), ("SplitBackward0", 0)]
    assert _edges(f(a, b)) == [("SplitBackward0", 0), ("SplitBackward0", 1)]
    assert _edges(f(a, a)) == [("SplitBackward0", 0), ("SplitBackward0", 0)]
    assert _edges(f(b, torch.ones(2, requires_grad=True))) == [("SplitBackward0", 1), ("AccumulateGrad", 0)]


def test_unary_op_on_a_second_output(torch):
    a, b = torch.ones(4, requires_grad=True).split(2)
    assert _edges(b.sin()) == [("SplitBackward0", 1)]
    assert _edges(a.exp()) == [("SplitBackward0", 0)]
    b.sin().sum().backward()  # the gradient reaches output 1 of the split


def test_all_zero_input_numbers_are_one_shared_tuple():
    x = derivgen.ones(3, requires_grad=True)
    y = x * 2
    nodes = [(y * x).grad_fn, (y.sin() * y).grad_fn, (x + y).grad_fn]
    assert len({id(n._next_nrs) for n in nodes}) == 1
    assert len({id(n._next_nrs) for n in (y.sin().grad_fn, x.exp().grad_fn)}) == 1


def test_a_recorded_binary_op_leaves_three_tracked_objects():
    # the result Tensor, its node and the node's tuple of next nodes
    x = derivgen.ones(8, requires_grad=True)
    h = x * 1
    keep = []
    gc.collect()
    gc.disable()
    try:
        before = gc.get_count()[0]
        for _ in range(1000):
            h = h * x
            keep.append(h)
        tracked = (gc.get_count()[0] - before) / 1000
    finally:
        gc.enable()
    assert tracked < 3.5  # a tuple of input numbers per node would make it 4
