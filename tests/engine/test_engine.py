"""The backward engine: execution order, fan-in, multi-output nodes, shape/dtype validation of
gradients, release of saved values, and sequence numbers."""
import numpy as np
import pytest

import derivgen as torch
from derivgen.core.node import ERR_BACKWARD_TWICE, UINT64_MAX


def _walk(root):
    """Every node reachable from ``root`` (breadth first, each once)."""
    seen, order, queue = set(), [], [root]
    while queue:
        n = queue.pop(0)
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        order.append(n)
        queue.extend(m for m, _ in n.next_functions)
    return order


def _record(root):
    """Register a pre-hook on every node of the graph; return the list the hooks append (name, grads) to."""
    log = []
    for node in _walk(root):
        node.register_prehook(lambda grads, node=node: log.append((node.name(), node, grads)) and None)
    return log


def _short(name):
    return name.rsplit("::", 1)[-1]


# ---- order -------------------------------------------------------------------------------------------

def test_anchor_example_runs_in_sequence_order():
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    c = a * b
    d = c.exp()
    e = c.sin()
    loss = (d + e).sum()
    log = _record(loss.grad_fn)
    loss.backward()
    names = [_short(n) for n, _, _ in log]
    assert names == ["SumBackward0", "AddBackward0", "SinBackward0", "ExpBackward0", "MulBackward0",
                     "AccumulateGrad", "AccumulateGrad"]
    accs = {id(node) for n, node, _ in log if n.endswith("AccumulateGrad")}
    assert len(accs) == 2
    cd = c.detach()._array
    np.testing.assert_allclose(a.grad._array, (np.exp(cd) + np.cos(cd)) * b._array, rtol=1e-5)


def test_anchor_example_order_matches_torch():
    real = pytest.importorskip("torch")

    def run(lib):
        a = lib.ones(3, requires_grad=True)
        b = lib.ones(3, requires_grad=True)
        c = a * b
        loss = (c.exp() + c.sin()).sum()
        log = []
        seen, queue = set(), [loss.grad_fn]
        while queue:
            n = queue.pop(0)
            if n is None or id(n) in seen:
                continue
            seen.add(id(n))
            n.register_prehook(lambda g, n=n: log.append(_short(n.name())))
            queue.extend(m for m, _ in n.next_functions)
        loss.backward()
        return log
    assert run(torch) == run(real)


def test_node_waits_for_all_its_gradients_even_with_a_lower_priority_consumer():
    """Dependencies, not sequence numbers alone, decide when a node runs: give the producer the highest
    priority and it still runs after both consumers, once, with the summed gradient."""
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    a = x * 2
    b = a * 3
    c = a * 4
    loss = (b + c).sum()
    a.grad_fn._set_sequence_nr(10 ** 6)
    log = _record(loss.grad_fn)
    loss.backward()
    names = [_short(n) for n, _, _ in log]
    a_runs = [i for i, (_, node, _) in enumerate(log) if node is a.grad_fn]
    assert len(a_runs) == 1
    consumers = [i for i, (_, node, _) in enumerate(log) if node in (b.grad_fn, c.grad_fn)]
    assert len(consumers) == 2 and max(consumers) < a_runs[0], names
    (grads,) = [g for _, node, g in log if node is a.grad_fn]
    np.testing.assert_array_equal(grads[0]._array, [7.0, 7.0])
    np.testing.assert_array_equal(x.grad._array, [14.0, 14.0])


def test_multiple_roots_use_a_graph_root_and_sum():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y1 = (x * 2).sum()
    y2 = (x * x).sum()
    torch.autograd.backward([y1, y2])
    np.testing.assert_array_equal(x.grad._array, 2 + 2 * x._array)


# ---- fan-in on a shared leaf ---------------------------------------------------------------------

def test_shared_leaf_accumulate_grad_runs_once_with_the_sum():
    x = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y = x * x
    mul = y.grad_fn
    (e0, n0), (e1, n1) = mul.next_functions
    assert e0 is e1 and (n0, n1) == (0, 0)
    acc = e0
    calls = []
    acc.register_prehook(lambda grads: calls.append(grads[0]._array.copy()) and None)
    g = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
    y.backward(g)
    assert len(calls) == 1
    np.testing.assert_array_equal(calls[0], 2 * x._array * g._array)
    np.testing.assert_array_equal(x.grad._array, 2 * x._array * g._array)


def test_gradients_accumulate_across_backward_calls():
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (x * 3).sum().backward()
    (x * 4).sum().backward()
    np.testing.assert_array_equal(x.grad._array, [7.0, 7.0])


# ---- multi-output nodes ---------------------------------------------------------------------------

def test_split_outputs_all_feed_the_loss():
    x = torch.arange(6.0, dtype=torch.float64, requires_grad=True)
    lo, hi = x.split(3)
    assert lo.grad_fn is hi.grad_fn and (lo.output_nr, hi.output_nr) == (0, 1)
    (lo * 2 + hi * 3).sum().backward()
    np.testing.assert_array_equal(x.grad._array, [2, 2, 2, 3, 3, 3])


def test_unused_split_output_contributes_zeros():
    x = torch.arange(6.0, dtype=torch.float64, requires_grad=True)
    lo, hi = x.split(3)
    loss = (hi * 2).sum()
    log = _record(loss.grad_fn)
    loss.backward()
    (grads,) = [g for n, _, g in log if n == "SplitBackward0"]
    assert grads[0] is None and grads[1] is not None, "the unused output's gradient arrives undefined"
    np.testing.assert_array_equal(x.grad._array, [0, 0, 0, 2, 2, 2])


def test_unbind_with_some_outputs_unused():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    a, b, c = x.unbind()
    assert a.grad_fn is b.grad_fn is c.grad_fn and [t.output_nr for t in (a, b, c)] == [0, 1, 2]
    (a * b).backward()
    np.testing.assert_array_equal(x.grad._array, [2.0, 1.0, 0.0])


def test_unbind_edges_name_the_output():
    a, b = torch.randn(2, requires_grad=True).unbind()
    c = a + b
    (n0, i0), (n1, i1) = c.grad_fn.next_functions
    assert n0 is n1 and n0.name() == "UnbindBackward0" and (i0, i1) == (0, 1)


# ---- validate_outputs: shapes and dtypes ---------------------------------------------------------

def test_broadcast_gradient_is_reduced_to_the_input_shape():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64, requires_grad=True)
    (x * y).sum().backward()
    assert tuple(x.grad.shape) == (3,) and tuple(y.grad.shape) == (2, 3)
    np.testing.assert_array_equal(x.grad._array, [5.0, 7.0, 9.0])
    np.testing.assert_array_equal(y.grad._array, [[1, 2, 3], [1, 2, 3]])


def test_broadcast_to_keepdim_and_zero_dim_shapes():
    col = torch.tensor([[1.0], [2.0]], dtype=torch.float64, requires_grad=True)   # (2, 1)
    s = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)                # ()
    m = torch.ones(2, 4, dtype=torch.float64, requires_grad=True)
    (col * m * s).sum().backward()
    assert tuple(col.grad.shape) == (2, 1) and tuple(s.grad.shape) == ()
    np.testing.assert_array_equal(col.grad._array, [[12.0], [12.0]])
    assert s.grad.item() == 12.0


def test_float32_leaf_with_float64_partner_gets_a_float32_grad():
    a = torch.tensor([1.5, 2.5], requires_grad=True)                          # float32
    b = torch.tensor([0.1, 0.2], dtype=torch.float64, requires_grad=True)
    c = a * b
    assert c.dtype == torch.float64
    c.sum().backward()
    assert a.grad.dtype == torch.float32 and b.grad.dtype == torch.float64
    np.testing.assert_array_equal(a.grad._array, np.array([0.1, 0.2]).astype(np.float32))
    np.testing.assert_array_equal(b.grad._array, np.array([1.5, 2.5]))


def test_node_records_its_forward_inputs_metadata():
    a = torch.ones(2, 3, requires_grad=True)
    b = torch.ones(3, dtype=torch.float64, requires_grad=True)
    meta = (a * b).grad_fn._in_meta
    assert [tuple(m[0]) for m in meta] == [(2, 3), (3,)]
    assert [m[1] for m in meta] == [np.dtype(np.float32), np.dtype(np.float64)]


def test_node_metadata_is_shared_between_nodes_and_the_shared_tables_are_bounded():
    from derivgen.core import meta
    x = torch.ones(4, requires_grad=True)
    y = x.sum(0, keepdim=True).expand(4)     # rows whose nodes record their output's metadata
    z = y.sum(0, keepdim=True).expand(4)
    assert y.grad_fn._in_meta[0] is z.grad_fn._in_meta[0]     # one tuple, not one per node
    assert y.grad_fn._out_meta is z.grad_fn._out_meta           # the one-output tuple too
    assert y.grad_fn._out_meta[0] is z.grad_fn.next_functions[0][0]._in_meta[0]  # an output's is its consumer's
    for n in range(1, 5000):                                    # ever-new shapes
        torch.ones(n, requires_grad=True).sum(0, keepdim=True)
    assert 0 < len(meta._SHARED_META) <= 4096
    assert 0 < len(meta._SHARED_OUT_META) <= 4096
    assert 0 < len(meta._CONTIGUOUS) <= 4096
    assert z.grad_fn._in_meta[0] == ((1,), np.dtype(np.float32))
    assert z.grad_fn._out_meta == (((4,), np.dtype(np.float32)),)


def test_elementwise_node_records_no_output_metadata_when_its_inputs_agree():
    from derivgen.core.node import LIKE_FIRST_INPUT
    x = torch.ones(4, requires_grad=True)
    assert x.sin().grad_fn._out_meta is LIKE_FIRST_INPUT
    assert (x * x).grad_fn._out_meta is LIKE_FIRST_INPUT
    assert (x * torch.ones(2, 1)).grad_fn._out_meta == (((2, 4), np.dtype(np.float32)),)


# ---- release of saved values --------------------------------------------------------------------

def test_saved_values_are_freed_after_backward():
    x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
    y = x.exp()
    node = y.grad_fn
    np.testing.assert_array_equal(node._saved_result._array, y._array)
    y.sum().backward()
    with pytest.raises(RuntimeError) as info:
        node._saved_result
    assert str(info.value) == ERR_BACKWARD_TWICE
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert str(info.value).startswith(ERR_BACKWARD_TWICE)


def test_saved_input_is_freed_after_backward():
    x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([2.0, 3.0], dtype=torch.float64, requires_grad=True)
    node = (x * w).grad_fn
    assert node._saved_self is x and node._saved_other is w
    (x * w).sum()  # a second graph sharing the leaves is unaffected
    y = x * w
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn._saved_self


def test_retain_graph_allows_a_second_backward():
    x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
    y = x.exp().sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad._array, 2 * np.exp(x._array))
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_node_without_saved_tensors_can_run_twice():
    x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    np.testing.assert_array_equal(x.grad._array, [2.0, 2.0])


# ---- sequence numbers ---------------------------------------------------------------------------

def test_sequence_numbers_increase_per_op_and_accumulate_grad_takes_none():
    x = torch.ones(3, requires_grad=True)
    start = torch.autograd._get_sequence_nr()
    a = x * 2
    b = a * 3
    c = a + b
    assert a.grad_fn._sequence_nr() == start
    assert b.grad_fn._sequence_nr() == start + 1
    assert c.grad_fn._sequence_nr() == start + 2
    assert torch.autograd._get_sequence_nr() == start + 3
    acc = a.grad_fn.next_functions[0][0]
    assert acc.name() == "derivgen::autograd::AccumulateGrad"
    assert acc._sequence_nr() == UINT64_MAX == 18446744073709551615
    assert acc.next_functions == () and acc.variable is x
    y = torch.ones(2, requires_grad=True)
    before = torch.autograd._get_sequence_nr()
    (y * 2).grad_fn.next_functions[0][0]  # first use of a new leaf creates its AccumulateGrad
    assert torch.autograd._get_sequence_nr() == before + 1


def test_no_grad_ops_take_no_sequence_number():
    x = torch.ones(3, requires_grad=True)
    before = torch.autograd._get_sequence_nr()
    with torch.no_grad():
        y = x * 2
    assert y.grad_fn is None and not y.requires_grad
    assert torch.autograd._get_sequence_nr() == before


def test_single_root_is_run_directly():
    """With one root no GraphRoot is built: no sequence number is consumed by backward."""
    x = torch.ones(3, requires_grad=True)
    y = (x * 2).sum()
    before = torch.autograd._get_sequence_nr()
    log = _record(y.grad_fn)
    y.backward()
    assert torch.autograd._get_sequence_nr() == before
    assert _short(log[0][0]) == "SumBackward0"


# ---- gradient buffers the engine writes into ---------------------------------------------------------
# The engine sums a second gradient into the first in place, and hands a leaf the gradient array
# itself, only for arrays it owns by construction (engine/execute.py; more in test_ownership.py). These
# cases each hold a reference somewhere else and check that it is never written.

def test_callers_root_gradient_is_never_written():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 2.0
    b = a + a                       # AddBackward0 hands the root gradient to the same slot twice
    g = torch.tensor([1.0, 10.0, 100.0])
    b.backward(g)
    np.testing.assert_array_equal(g.numpy(), [1.0, 10.0, 100.0])
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 40.0, 400.0])


def test_gradient_kept_by_a_tensor_hook_is_not_summed_into():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    kept = []
    a = x.exp()
    e = a * 5.0
    c = a + 0.0                     # AddBackward0 passes c's (hooked) gradient on to a's node unchanged
    c.register_hook(lambda t: kept.append(t))
    ((c * 3.0).sum() + e.sum()).backward()   # c's node runs first (higher sequence number), then e's
    np.testing.assert_array_equal(kept[0].numpy(), [3.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), 8.0 * np.exp([1.0, 2.0]))


def test_leaf_grad_never_aliases_a_gradient_a_hook_kept():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    kept = []
    y = x + 0.0                     # passes y's gradient (made by MulBackward1) on to x unchanged
    y.register_hook(lambda t: kept.append(t))
    (y * 2.0).sum().backward()
    (x * 1.0).sum().backward()      # the second backward adds into x.grad in place
    np.testing.assert_array_equal(kept[0].numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_node_post_hook_that_keeps_outputs_sees_them_unchanged():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    kept = []
    w = x * 7.0
    y = x * 2.0                     # y's node runs first: its output reaches x's buffer first
    y.grad_fn.register_hook(lambda gi, go: kept.append(gi[0]))
    (y.sum() + w.sum()).backward()
    np.testing.assert_array_equal(kept[0].numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(x.grad.numpy(), [9.0, 9.0])


def test_leaf_takes_an_engine_made_gradient_without_a_copy(monkeypatch):
    from derivgen.engine import execute as engine
    fresh = []
    real = engine.accumulate_into_leaf

    def spy(var, g, fresh_flag, graph=False):
        fresh.append(fresh_flag)
        return real(var, g, fresh_flag, graph)
    monkeypatch.setattr(engine, "accumulate_into_leaf", lambda var, g, fresh: spy(var, g, fresh))
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([0.5, 0.5], requires_grad=True)
    ((w * 3.0).exp() * b).sum().backward()     # both leaf gradients are made by kernels, held by no one
    assert fresh == [True, True]
    np.testing.assert_allclose(b.grad.numpy(), np.exp([3.0, 6.0]))
