"""Which gradient arrays the engine may write into (engine/execute.py, "Gradient ownership").

The engine sums a later gradient into an earlier one in place, and makes a gradient a leaf's ``.grad``
without a copy, only for arrays it owns by construction: its own sums and reductions, fused-region
outputs and outputs a generated node declares new (``_fresh_outputs``), none of them handed to anyone
since. Every test here holds a gradient somewhere the engine does not own (the caller, a hook, a custom
Function, a captured ``grad()`` result, ``retain_grad``) and checks, against PyTorch, that the values
the caller sees are the ones torch gives and that what was held is never written.
"""
import numpy as np
import pytest
import torch as real_torch

import derivgen
from derivgen.engine import execute as engine


@pytest.fixture(params=["derivgen", "torch"])
def T(request):
    return derivgen if request.param == "derivgen" else real_torch


def _leaf(T, values):
    return T.tensor(np.array(values, dtype=np.float64), requires_grad=True)


def _both(fn):
    """``fn(T)`` for derivgen and torch, as lists of float64 arrays, compared."""
    ours = [np.array(a.detach().numpy() if hasattr(a, "detach") else a, dtype=np.float64) for a in fn(derivgen)]
    theirs = [np.array(a.detach().numpy() if hasattr(a, "detach") else a, dtype=np.float64) for a in fn(real_torch)]
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    return ours


def test_grad_outputs_of_several_roots_are_never_written():
    def run(T):
        x = _leaf(T, [1.0, 2.0, 3.0])
        y, z = x + 0.0, x * 1.0        # y's node passes the caller's gradient through unchanged
        gy, gz = T.tensor([1.0, 10.0, 100.0], dtype=T.float64), T.tensor([5.0, 6.0, 7.0], dtype=T.float64)
        T.autograd.backward([y, z], [gy, gz])
        return [gy, gz, x.grad]
    gy, gz, xg = _both(run)
    np.testing.assert_array_equal(gy, [1.0, 10.0, 100.0])
    np.testing.assert_array_equal(gz, [5.0, 6.0, 7.0])


def test_grad_outputs_of_autograd_grad_are_never_written():
    def run(T):
        x = _leaf(T, [1.0, 2.0])
        y = x + x                       # the same array reaches x's slot twice
        go = T.tensor([3.0, 4.0], dtype=T.float64)
        (gx,) = T.autograd.grad(y, x, go)
        return [go, gx]
    go, gx = _both(run)
    np.testing.assert_array_equal(go, [3.0, 4.0])
    np.testing.assert_array_equal(gx, [6.0, 8.0])


def test_a_node_passing_its_gradient_into_two_edges_of_one_leaf():
    def run(T):
        x = _leaf(T, [1.0, 2.0])
        a = x.exp()
        g = T.tensor([1.0, 1.0], dtype=T.float64)
        (a + a).backward(g, retain_graph=True)
        first = x.grad.clone()
        (a * 1.0 + a).backward(g)       # once more: x.grad adds in place, g and the first must stay
        return [g, first, x.grad]
    g, first, second = _both(run)
    np.testing.assert_array_equal(g, [1.0, 1.0])
    np.testing.assert_allclose(second, 2 * first)


def test_a_hook_that_keeps_a_gradient_and_returns_a_new_one():
    kept = []

    def run(T):
        kept.clear()
        x = _leaf(T, [1.0, 2.0])
        a = x.sin()
        b = a * 2.0

        def hook(g):
            kept.append(g)
            return g * 1.0              # a new tensor, which the hook can see too
        b.register_hook(hook)
        ((b * 3.0).sum() + (b * 4.0).sum() + (a * 5.0).sum()).backward()
        return [kept[0], x.grad]
    kept_grad, _ = _both(run)
    np.testing.assert_array_equal(kept_grad, [7.0, 7.0])


def test_a_leaf_hook_that_keeps_the_gradient_is_not_aliased_by_grad():
    def run(T):
        kept = []
        x = _leaf(T, [1.0, 2.0])
        x.register_hook(lambda g: kept.append(g))
        (x * 3.0).sum().backward()      # a kernel made this gradient: the hook saw it, so .grad copies
        (x * 4.0).sum().backward()      # adds into .grad in place
        return [kept[0], kept[1], x.grad]
    k0, k1, g = _both(run)
    np.testing.assert_array_equal(k0, [3.0, 3.0])
    np.testing.assert_array_equal(k1, [4.0, 4.0])
    np.testing.assert_array_equal(g, [7.0, 7.0])


def test_a_prehook_that_keeps_the_gradients_of_a_node():
    def run(T):
        kept = []
        x = _leaf(T, [1.0, 2.0])
        a = x * 2.0
        b = a.exp()
        a.grad_fn.register_prehook(lambda grads: kept.append(grads[0]))
        (b.sum() + (a * 3.0).sum()).backward()
        (a * 1.0).sum().backward()      # no: graph freed; only checks the kept value below
        return [kept[0], x.grad]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        run(derivgen)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        run(real_torch)

    def run2(T):
        kept = []
        x = _leaf(T, [1.0, 2.0])
        a = x * 2.0
        # x's AccumulateGrad sees the summed gradient in its pre hook and keeps it
        x_acc = a.grad_fn.next_functions[0][0]
        x_acc.register_prehook(lambda grads: kept.append(grads[0]))
        (a.exp().sum() + (x * 3.0).sum()).backward()
        (x * 5.0).sum().backward()      # adds into .grad in place: must not reach the kept gradient
        return [kept[0], x.grad]
    _both(run2)


def test_a_custom_function_returning_a_tensor_it_keeps():
    def run(T):
        class Keep(T.autograd.Function):
            store = T.tensor([1.0, 1.0], dtype=T.float64)

            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return Keep.store       # the same tensor every time, held by the class

        x = _leaf(T, [1.0, 2.0])
        y = Keep.apply(x)
        (y.sum() + (x * 2.0).sum() + (x * 3.0).sum()).backward()
        return [Keep.store, x.grad]
    store, g = _both(run)
    np.testing.assert_array_equal(store, [1.0, 1.0])


def test_retain_grad_and_captured_gradients_are_not_written_by_later_sums():
    def run(T):
        x = _leaf(T, [1.0, 2.0])
        a = x * 2.0
        b = a + 0.0                     # passes b's gradient on to a unchanged
        b.retain_grad()
        loss = (b * 3.0).sum() + (a * 4.0).sum()
        ga, gx = T.autograd.grad(loss, [a, x], retain_graph=True)
        loss.backward()
        return [ga, gx, b.grad, x.grad]
    ga, gx, gb, _ = _both(run)
    np.testing.assert_array_equal(ga, [7.0, 7.0])
    np.testing.assert_array_equal(gb, [6.0, 6.0])  # retain_grad collects in grad() too, as torch


def test_a_captured_input_that_also_runs_and_passes_its_gradient_on():
    def run(T):
        x = _leaf(T, [1.0, 2.0])
        a = x + 0.0                     # a's node: captured for `a`, and runs for `x`
        y = a * 1.0
        loss = y.sum() + (x * 2.0).sum()
        ga, gx = T.autograd.grad(loss, [y, x])
        return [ga, gx]
    gy, gx = _both(run)
    np.testing.assert_array_equal(gy, [1.0, 1.0])
    np.testing.assert_array_equal(gx, [3.0, 3.0])


def test_create_graph_never_sums_into_a_gradient_in_place():
    def run(T):
        x = _leaf(T, [1.0, 2.0])
        y = x * x
        (g,) = T.autograd.grad((y * 3.0).sum() + (y * 4.0).sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        return [g, gg]
    _both(run)


# ---- which gradients the engine owns ------------------------------------------------------------------

def _spy_fresh(monkeypatch):
    seen = []
    real = engine.accumulate_into_leaf
    monkeypatch.setattr(engine, "accumulate_into_leaf",
                        lambda var, g, fresh: seen.append(fresh) or real(var, g, fresh))
    return seen


def test_kernel_outputs_and_engine_sums_are_owned(monkeypatch):
    seen = _spy_fresh(monkeypatch)
    x = _leaf(derivgen, [1.0, 2.0])
    w = _leaf(derivgen, [3.0, 4.0])
    ((x * w).sum() + (x * 2.0).sum()).backward()   # x: a sum of two kernel outputs, w: one kernel output
    assert seen == [True, True]
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 6.0])
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 2.0])


def test_gradients_passed_through_or_from_the_caller_are_not_owned(monkeypatch):
    seen = _spy_fresh(monkeypatch)
    x = _leaf(derivgen, [1.0, 2.0])
    g = derivgen.tensor([1.0, 2.0], dtype=derivgen.float64)
    (x + 0.0).backward(g)                            # AddBackward0 hands the caller's array on
    assert seen == [False]
    assert not np.shares_memory(x.grad.numpy(), g.numpy())


def test_generated_nodes_declare_kernel_outputs_only():
    x = _leaf(derivgen, [1.0, 2.0])
    y = _leaf(derivgen, [3.0, 4.0])
    assert (x * y).grad_fn._fresh_outputs == 0b11   # grad * other, grad * self: kernel calls
    assert (x + y).grad_fn._fresh_outputs == 0       # grad, passed on unchanged
    assert x.sin().grad_fn._fresh_outputs == 0b1


def test_matrix_product_gradients_are_owned(monkeypatch):
    seen = _spy_fresh(monkeypatch)
    x = _leaf(derivgen, [[1.0, 2.0], [3.0, 4.0]])
    w = _leaf(derivgen, [[0.5], [0.25]])
    x.mm(w).sum().backward()     # grad.mm(w.t()), x.t().mm(grad): forwards the manifest lists as new_arrays
    assert seen == [True, True]
    assert x.mm(w).grad_fn._fresh_outputs == 0b11


def test_the_generator_declares_only_whole_calls_that_make_new_arrays():
    from derivgen.codegen.model import _returns_new_array
    assert _returns_new_array("_k.mul_Tensor_backward_self.call2(grad, other)")
    assert _returns_new_array("_k.where_backward(((cond, grad)), ())")
    assert _returns_new_array("_fw.mm(grad, _t1)")
    assert not _returns_new_array("_fw.t(grad)")                     # a view
    assert not _returns_new_array("_fw.mm(grad, _t1).reshape(3)")    # a call, then a view of its result
    assert not _returns_new_array("_fns.sum_to(_k.exp_backward.call1(grad), shape)")
    assert not _returns_new_array("grad")
