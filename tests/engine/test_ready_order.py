"""Leaves' accumulators all share the largest sequence number; among them the engine's heap gives back
first the one made ready first (edge order), as torch does, on every run."""
import numpy as np
import pytest

import derivgen

torch = pytest.importorskip("torch")


def _accumulation_order(lib, n_leaves=6, repeats=5):
    orders = []
    for _ in range(repeats):
        leaves = [lib.tensor(np.full(3, i + 1.0), requires_grad=True) for i in range(n_leaves)]
        seen = []
        for i, leaf in enumerate(leaves):
            leaf.register_post_accumulate_grad_hook(lambda t, i=i: seen.append(i))
        total = leaves[0]
        for leaf in leaves[1:]:
            total = total * leaf
        total.sum().backward()
        orders.append(seen)
    return orders


def test_leaves_completed_by_one_node_accumulate_in_edge_order_as_torch():
    expected = _accumulation_order(torch)
    got = _accumulation_order(derivgen)
    assert got == expected
    assert all(order == got[0] for order in got)


def test_two_leaves_of_one_mul_accumulate_self_first():
    for lib in (torch, derivgen):
        a, b = (lib.ones(2, requires_grad=True) for _ in range(2))
        seen = []
        a.register_post_accumulate_grad_hook(lambda t: seen.append("a"))
        b.register_post_accumulate_grad_hook(lambda t: seen.append("b"))
        (a * b).sum().backward()
        assert seen == ["a", "b"], lib.__name__
