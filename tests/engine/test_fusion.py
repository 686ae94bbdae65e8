"""Whole-graph fusion (derivgen/engine/fusion.py): deferred elementwise forwards, fused backward
regions, and the buffer pool. Every test compares the fused run with the same code run eagerly
(fusion off), and checks the graph the user sees is the one eager mode builds.

The fusion threshold is lowered to a few elements here so small tensors exercise it."""
import os

import numpy as np
import pytest

import derivgen
import derivgen.generated.kernels
from derivgen.kernels import buffers
from derivgen.kernels.dispatch import _collapse_2d
from derivgen import config
from derivgen.engine import fusion
from derivgen.table import load_table
from tests.support.samples import row_function, samples_for

from tests.support.paths import REPO  # noqa: E402
FUSABLE_ROWS = [e for e in load_table(os.path.join(REPO, "formulas.yaml"))
                if hasattr(derivgen.generated.kernels, f"{e.schema.py_name}_fusion")]


@pytest.fixture
def fused():
    """Fusion on from 4 elements, with region runs recorded: yields the list of fused regions (each a
    list of nodes, parents first)."""
    old = config.fusion_threshold()
    config.set_fusion_threshold(4)
    regions = []
    real = fusion._run_region

    def spy(region, *args):
        out = real(region, *args)
        regions.append(list(region))
        return out
    fusion._run_region = spy
    try:
        yield regions
    finally:
        fusion._run_region = real
        config.set_fusion_threshold(old)


def eager(fn):
    """Run ``fn()`` with fusion off."""
    old = config.fusion_threshold()
    config.set_fusion_threshold(None)
    try:
        return fn()
    finally:
        config.set_fusion_threshold(old)


def leaves(n=64, dtype=derivgen.float64, seed=0, k=3):
    rng = np.random.default_rng(seed)
    return [derivgen.tensor(rng.uniform(-1.5, 1.5, n), dtype=dtype, requires_grad=True) for _ in range(k)]


def w2_chain(x, w, b):
    return (x * w + b).sigmoid() * x.tanh() + (-x * x).exp()


def graph_shape(fn, depth=6):
    """Node names breadth-first, with the next_functions structure."""
    out, level = [], [fn]
    for _ in range(depth):
        nxt = []
        for node in level:
            if node is None:
                continue
            out.append((node.name(), tuple((None if f is None else f.name(), nr) for f, nr in node.next_functions)))
            nxt += [f for f, _ in node.next_functions]
        level = nxt
    return out


@pytest.mark.parametrize("dtype", [derivgen.float32, derivgen.float64])
def test_w2_chain_is_deferred_and_fused_with_eager_values_and_graph(fused, dtype):
    x, w, b = leaves(dtype=dtype)
    y = w2_chain(x, w, b)
    assert y._lazy, "a chain of elementwise ops on large inputs is deferred"
    assert y.shape == (64,) and y.dtype == dtype and y.numel() == 64  # known without computing
    assert y._lazy
    ref_x, ref_w, ref_b = [t.detach().clone().requires_grad_() for t in (x, w, b)]
    y_ref = eager(lambda: w2_chain(ref_x, ref_w, ref_b))
    assert not y_ref._lazy
    assert graph_shape(y.grad_fn) == graph_shape(y_ref.grad_fn)
    y.sum().backward()
    eager(lambda: y_ref.sum().backward())
    # one region: every node between the sum and the leaves
    assert len(fused) == 1 and fused[0][0] is y.grad_fn
    assert sorted(n.name() for n in fused[0]) == sorted(
        ["AddBackward0", "MulBackward0", "ExpBackward0", "SigmoidBackward0", "TanhBackward0", "NegBackward0",
         "MulBackward0", "AddBackward0", "MulBackward0"])
    tol = 1e-6 if dtype == derivgen.float32 else 1e-13
    for t, r in ((x, ref_x), (w, ref_w), (b, ref_b)):
        np.testing.assert_allclose(t.grad.numpy(), r.grad.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(y.detach().numpy(), y_ref.detach().numpy(), rtol=tol, atol=tol)
    assert not y._lazy and type(y) is derivgen.Tensor  # reading the value turned it into a plain Tensor


def test_w2_gradients_against_float64_formula(fused):
    x, w, b = leaves(n=1000, seed=3)
    w2_chain(x, w, b).sum().backward()
    xs, ws, bs = (t.detach().numpy() for t in (x, w, b))
    s = 1 / (1 + np.exp(-(xs * ws + bs)))
    th = np.tanh(xs)
    np.testing.assert_allclose(x.grad.numpy(), s * (1 - s) * ws * th + s * (1 - th ** 2) - 2 * xs * np.exp(-xs * xs),
                               rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), s * (1 - s) * xs * th, rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), s * (1 - s) * th, rtol=1e-12)
    assert len(fused) == 1


def test_saved_values_of_deferred_nodes_are_the_eager_values(fused):
    x, w, b = leaves()
    s = (x * w + b).sigmoid()
    y = s * 3.0
    assert s._lazy and y._lazy
    saved = y.grad_fn.next_functions[0][0]._saved_result  # SigmoidBackward0's saved output
    xs, ws, bs = (t.detach().numpy() for t in (x, w, b))
    np.testing.assert_allclose(saved.detach().numpy(), 1 / (1 + np.exp(-(xs * ws + bs))), rtol=1e-14)
    assert saved.grad_fn is y.grad_fn.next_functions[0][0]


@pytest.mark.parametrize("expr", [w2_chain, lambda x, w, b: ((x + b) ** 2).mean() * w.sum()])
def test_deferred_saved_values_are_recomputed_in_the_backward_kernel(fused, monkeypatch, expr):
    """Saved values that are still deferred when backward starts (inputs and outputs alike) are
    recomputed inside the fused backward loop, never written out as full arrays first."""
    x, w, b = leaves()
    want = eager(lambda: _grads(expr, x, w, b))
    computed = []
    real = fusion.Pending.materialize

    def spy(p):
        computed.append(p)
        return real(p)
    monkeypatch.setattr(fusion.Pending, "materialize", spy)
    got = _grads(expr, x, w, b)
    assert computed == []
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def _grads(expr, x, w, b):
    for t in (x, w, b):
        t.grad = None
    expr(x, w, b).sum().backward()
    return [t.grad.numpy().copy() for t in (x, w, b)]


def test_broadcast_bias_and_pow(fused):
    rng = np.random.default_rng(1)
    x = derivgen.tensor(rng.normal(size=(16, 8)), requires_grad=True)
    b = derivgen.tensor(rng.normal(size=(8,)), requires_grad=True)
    y = (x + b) ** 2
    assert y._lazy
    y.mean(0).sum().backward()
    gx = 2 * (x.detach().numpy() + b.detach().numpy()) / 16
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-13)
    np.testing.assert_allclose(b.grad.numpy(), gx.sum(0), rtol=1e-13)
    assert [[n.name() for n in r] for r in fused] == [["PowBackward0", "AddBackward0"]]


def test_hook_on_intermediate_keeps_its_node_out_of_the_region(fused):
    x, w, b = leaves()
    h = x * w
    seen = []
    h.register_hook(lambda g: seen.append(g.detach().numpy().copy()))
    r = (h + b).exp()
    mid = r * 2.0
    mid.retain_grad()
    (mid * 1.5).sum().backward()
    e = np.exp(x.detach().numpy() * w.detach().numpy() + b.detach().numpy())
    np.testing.assert_allclose(seen[0], 3.0 * e, rtol=1e-13)
    np.testing.assert_allclose(mid.grad.numpy(), np.full(64, 1.5))
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * e * w.detach().numpy(), rtol=1e-13)
    assert fused  # the rest still fused
    for region in fused:  # neither the hooked node nor the retain_grad one ran inside a region
        assert h.grad_fn not in region and mid.grad_fn not in region

def test_autograd_grad_of_an_intermediate(fused):
    x, w, b = leaves()
    h = x * w
    y = ((h + b).tanh() * 2.0).sum()
    (gh, gx) = derivgen.autograd.grad(y, [h, x])
    t = np.tanh(x.detach().numpy() * w.detach().numpy() + b.detach().numpy())
    np.testing.assert_allclose(gh.numpy(), 2 * (1 - t ** 2), rtol=1e-13)
    np.testing.assert_allclose(gx.numpy(), 2 * (1 - t ** 2) * w.detach().numpy(), rtol=1e-13)


def test_create_graph_double_backward_is_not_fused_and_correct(fused):
    x, _, _ = leaves()
    y = (x.sin() * x).sum()
    (g,) = derivgen.autograd.grad(y, [x], create_graph=True)
    (gg,) = derivgen.autograd.grad(g.sum(), [x])
    xs = x.detach().numpy()
    np.testing.assert_allclose(g.detach().numpy(), np.cos(xs) * xs + np.sin(xs), rtol=1e-13)
    np.testing.assert_allclose(gg.numpy(), -np.sin(xs) * xs + 2 * np.cos(xs), rtol=1e-13)


def test_retain_graph_runs_twice_and_released_graph_raises(fused):
    x, w, b = leaves()
    y = w2_chain(x, w, b).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-13)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_inplace_change_of_a_saved_input_still_raises(fused):
    x, w, _ = leaves()
    a = x * 1.0
    y = (a * w).exp()
    with derivgen.no_grad():
        a.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_write_after_deferral_does_not_change_a_deferred_value(fused):
    x = derivgen.tensor(np.linspace(-1, 1, 64))
    y = x.exp()
    assert y._lazy
    x.add_(5.0)  # computes every pending value first
    np.testing.assert_allclose(y.numpy(), np.exp(np.linspace(-1, 1, 64)), rtol=1e-14)
    z = x.exp()
    x.numpy()[:] = 0.0  # numpy() hands out the memory: pending values are computed before
    np.testing.assert_allclose(z.numpy(), np.exp(np.linspace(-1, 1, 64) + 5.0), rtol=1e-14)


def test_threshold_off_and_small_tensors_are_eager(fused):
    x = derivgen.ones(3)
    assert not (x * 2.0)._lazy
    config.set_fusion_threshold(None)
    y = derivgen.ones(100) * 2.0
    assert not y._lazy and config.fusion_threshold() is None


def test_fused_kernel_source_reads_like_code(fused):
    x, w, b = leaves()
    w2_chain(x, w, b).sum().backward()
    sources = [open(m.__file__).read() for m in fusion._MODULES.values()]
    assert any("from derivgen.generated.kernels.sigmoid import sigmoid_vjp_self" in s for s in sources)
    assert all("row sha256" in s and "eval" not in s and "exec" not in s for s in sources)


def _fits_a_2d_loop(args, shape):
    """Whether the tensor arguments, broadcast to ``shape``, collapse to one 2-D loop: a fused kernel runs
    only then (a weight per channel of (N, C, L) input, shape (1, C, 1), does not; that node runs alone)."""
    views = [np.broadcast_to(a._array, shape) for a in args if isinstance(a, derivgen.Tensor) and a.dim()]
    return not views or _collapse_2d(views) is not None


@pytest.mark.parametrize("entry", FUSABLE_ROWS, ids=lambda e: e.name)
def test_every_fusable_row_matches_eager(entry, fused):
    """For every row whose node can fuse: forward value and gradients of ``(row(...) * c).sum()`` fused
    (a two-node region) equal the eager ones, on the row's gradcheck samples."""
    node_cls = None
    fn = row_function(entry)
    checked = 0
    for s in samples_for(entry, derivgen.float64)[:3]:
        if not s.diff_index:
            continue

        def run():
            args, kwargs, lv = s.leaves(requires_grad=True)
            out = fn(*args, **kwargs)
            c = derivgen.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))
            loss = (out * c).sum()
            grads = derivgen.autograd.grad(loss, lv, allow_unused=True)
            return out, loss, grads
        out, loss, grads = run()
        node_cls = type(out.grad_fn)
        if node_cls._fusion is not None and out.numel() >= 4 and _fits_a_2d_loop(s.args, tuple(out.shape)):
            assert any(out.grad_fn in region for region in fused), "the row's node ran inside a fused region"
        r_out, r_loss, r_grads = eager(run)
        np.testing.assert_allclose(out.detach().numpy(), r_out.detach().numpy(), rtol=1e-13, atol=1e-14)
        for g, r in zip(grads, r_grads):
            assert (g is None) == (r is None)
            if g is not None:
                np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-12, atol=1e-14)
        checked += 1
    assert checked
    if node_cls is not None and node_cls._fusion is None:
        pytest.skip(f"{node_cls.__name__} is not fusable (its formulas are not all elementwise)")


def test_buffer_pool_reuses_only_dropped_buffers():
    a = buffers.empty((1 << 18,), np.float32)
    view = a[10:20]
    addr = a.__array_interface__["data"][0]
    del a
    b = buffers.empty((1 << 18,), np.float32)  # the first buffer is still referenced by `view`
    assert b.__array_interface__["data"][0] != addr
    assert not buffers.sole_owner(view) and buffers.sole_owner(b)
    del view
    c = buffers.empty((1 << 18,), np.float32)
    assert c.__array_interface__["data"][0] == addr  # dropped, then reused
    extra = c.reshape(-1)
    assert not buffers.sole_owner(c)  # another array on the same memory: never summed into in place
    del extra, b, c
    buffers.empty_cache()
    assert buffers.stats()[1] == 0


@pytest.mark.parametrize("reduce", ["mean0", "sum1", "sum0_keepdim", "mean_all", "sum_all", "sum_neg"])
def test_reductions_of_deferred_values(fused, reduce):
    """sum/mean of a deferred value reduce in the fused loop (over leading or trailing dims) or after
    computing it (everything): values and gradients equal eager mode's."""
    rng = np.random.default_rng(5)
    xs, bs = rng.normal(size=(24, 10)), rng.normal(size=(10,))

    def run():
        x = derivgen.tensor(xs, requires_grad=True)
        b = derivgen.tensor(bs, requires_grad=True)
        y = (x + b).tanh() * x
        r = {"mean0": lambda: y.mean(0), "sum1": lambda: y.sum(1), "sum0_keepdim": lambda: y.sum(0, keepdim=True),
             "mean_all": lambda: y.mean(), "sum_all": lambda: y.sum(), "sum_neg": lambda: y.sum(-1)}[reduce]()
        (r * derivgen.tensor(np.linspace(1, 2, r.numel()).reshape(tuple(r.shape)))).sum().backward()
        return r, x.grad, b.grad
    r, gx, gb = run()
    r_ref, gx_ref, gb_ref = eager(run)
    assert tuple(r.shape) == tuple(r_ref.shape)
    np.testing.assert_allclose(r.detach().numpy(), r_ref.detach().numpy(), rtol=1e-13)
    np.testing.assert_allclose(gx.numpy(), gx_ref.numpy(), rtol=1e-13)
    np.testing.assert_allclose(gb.numpy(), gb_ref.numpy(), rtol=1e-12)


@pytest.mark.parametrize("shape", [(3 * 5 * 4096,), (64, 1024), (240,), (7, 9)])
@pytest.mark.parametrize("values", ["normal", "tenths"])
def test_sum_of_everything_in_the_loop_is_as_accurate_as_torchs(fused, shape, values):
    """A float32 sum/mean of every element of a deferred value runs in the fused loop (the value is never
    written) with partial sums short enough that the result is within 2 ulps of torch's; shapes that no
    column count divides are computed and summed as before."""
    import torch
    rng = np.random.default_rng(7)
    xs = (rng.standard_normal(shape) if values == "normal" else np.full(shape, 0.1)).astype(np.float32)
    ws = rng.standard_normal(shape).astype(np.float32)
    ref = (torch.tensor(xs) * torch.tensor(ws) + torch.tensor(xs).exp())
    x, w = derivgen.tensor(xs), derivgen.tensor(ws)
    for reduce in ("sum", "mean"):
        y = x * w + x.exp()
        r = getattr(y, reduce)()
        t = getattr(ref, reduce)().item()
        assert abs(r.item() - t) <= 2 * np.spacing(np.float32(abs(t))), (reduce, r.item(), t)
        assert r.dtype == derivgen.float32 and tuple(r.shape) == ()
        assert (y._pending.value is None) == (shape != (7, 9))  # (7, 9): no column count of 16+ divides 63
    r = (x * w + x.exp()).sum(dim=(0,) if len(shape) == 1 else (0, 1), keepdim=True)
    assert tuple(r.shape) == (1,) * len(shape)


@pytest.mark.parametrize("shape", [(1 << 18,), (512, 512), (512, 530)])
def test_large_outputs_written_with_non_temporal_stores_equal_eager(fused, monkeypatch, shape):
    """Past STREAM_MIN elements a fused kernel writes its full-size outputs (values and gradients, pooled
    hence aligned) with non-temporal stores: same values and gradients as eager mode, also with a
    row-bias input (2-D loop); rows of 2120 bytes are not all aligned, so 2-D loops there take the plain
    kernel (1-D ones still stream)."""
    monkeypatch.setattr(fusion, "STREAM_MIN", 64)
    # the serial kernel is the one with a streaming variant: keep the machine's load from choosing prange
    monkeypatch.setattr(config.settings, "parallel_threshold", 1 << 40)
    used = []
    real = fusion._streaming
    monkeypatch.setattr(fusion, "_streaming", lambda k, mod, *a: used.append(real(k, mod, *a) is mod.fused_stream)
                        or real(k, mod, *a))
    rng = np.random.default_rng(3)
    xs, ws = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    bs = rng.standard_normal(shape[-1])

    def run():
        x, w = (derivgen.tensor(a, requires_grad=True) for a in (xs, ws))
        b = derivgen.tensor(bs.astype(np.float32), requires_grad=True)
        y = ((x * w + b).sigmoid() * x.tanh() + (-(x * x)).exp())
        out = y * 1.0
        (out * 2.0).sum(0).sum().backward()
        return out.detach().numpy().copy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()
    got = run()
    assert any(used) and (not all(used) if shape == (512, 530) else True)
    for a, r in zip(got, eager(run)):
        np.testing.assert_allclose(a, r, rtol=1e-6, atol=1e-7)


def test_row_and_column_bias_gradients_sum_in_the_loop(fused):
    """Gradients of a (R, 1) and a (C,) input broadcast over (R, C) are summed inside the fused loop."""
    rng = np.random.default_rng(6)
    x = derivgen.tensor(rng.normal(size=(20, 12)), requires_grad=True)
    r = derivgen.tensor(rng.normal(size=(20, 1)), requires_grad=True)
    c = derivgen.tensor(rng.normal(size=(12,)), requires_grad=True)
    ((x * r + c).sigmoid() * 2.0).sum(0).sum().backward()
    s = 1 / (1 + np.exp(-(x.detach().numpy() * r.detach().numpy() + c.detach().numpy())))
    d = 2 * s * (1 - s)
    np.testing.assert_allclose(x.grad.numpy(), d * r.detach().numpy(), rtol=1e-13)
    np.testing.assert_allclose(r.grad.numpy(), (d * x.detach().numpy()).sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(c.grad.numpy(), d.sum(0), rtol=1e-12)
    assert any(len(region) >= 3 for region in fused)


def test_large_float32_chain_uses_parallel_kernels():
    """Past the parallel threshold the fused loops split over threads: same result as eager mode."""
    n = 300_000
    rng = np.random.default_rng(7)
    arrays = [rng.uniform(-2, 2, n).astype(np.float32) for _ in range(3)]

    def run():
        x, w, b = (derivgen.tensor(a, requires_grad=True) for a in arrays)
        y = w2_chain(x, w, b)
        lazy = y._lazy
        y.sum().backward()
        return lazy, [t.grad.numpy() for t in (x, w, b)]
    old = config.fusion_threshold()
    config.set_fusion_threshold(1 << 16)
    try:
        lazy, grads = run()
    finally:
        config.set_fusion_threshold(old)
    _, ref = eager(run)
    assert lazy
    for g, r in zip(grads, ref):
        np.testing.assert_allclose(g, r, rtol=2e-6, atol=2e-6)


def test_long_chains_split_into_bounded_regions(fused):
    """A chain longer than MAX_REGION nodes runs as several fused regions, none larger than the cap."""
    x = derivgen.tensor(np.linspace(-1, 1, 32), requires_grad=True)
    h = x
    for k in range(fusion.MAX_REGION + 20):
        h = h * 0.99 if k % 2 else h + 0.01
        if k % 20 == 19:
            h = derivgen.tensor(h.detach().numpy()) * 0 + h  # break the forward chain (a plain value)
    h.sum().backward()
    assert len(fused) >= 2 and max(len(r) for r in fused) <= fusion.MAX_REGION
    n_mul = (fusion.MAX_REGION + 20) // 2
    np.testing.assert_allclose(x.grad.numpy(), np.full(32, 0.99 ** n_mul), rtol=1e-12)


def test_a_failing_fused_kernel_falls_back_to_unfused_with_a_warning(fused, monkeypatch):
    """If a fused kernel cannot be built, values and gradients come from the nodes' own kernels."""
    def broken(prog, layout):
        raise RuntimeError("simulated compile failure")
    monkeypatch.setattr(fusion, "_module", broken)
    monkeypatch.setattr(fusion, "_WARNED", False)
    x, w, b = leaves()
    with pytest.warns(RuntimeWarning, match="a fused kernel failed .*simulated compile failure"):
        y = w2_chain(x, w, b)
        y.sum().backward()
    ref_x, ref_w, ref_b = [t.detach().clone().requires_grad_() for t in (x, w, b)]
    eager(lambda: w2_chain(ref_x, ref_w, ref_b).sum().backward())
    np.testing.assert_allclose(y.detach().numpy(), eager(lambda: w2_chain(ref_x, ref_w, ref_b)).detach().numpy(),
                               rtol=1e-14)
    for t, r in ((x, ref_x), (w, ref_w), (b, ref_b)):
        np.testing.assert_allclose(t.grad.numpy(), r.grad.numpy(), rtol=1e-13)


def test_deferring_and_flushing_from_several_threads(fused):
    import threading
    errors = []

    def work(seed):
        try:
            for _ in range(20):
                x = derivgen.tensor(np.random.default_rng(seed).normal(size=64))
                y = (x * 2.0).exp()
                x.add_(1.0)  # flushes every pending value, other threads' included
                np.testing.assert_allclose(y.numpy(), np.exp(2 * (x.numpy() - 1.0)), rtol=1e-12)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_fused_region_hands_its_leaf_gradients_over_without_a_copy(fused, monkeypatch):
    from derivgen.engine import execute as engine
    seen = []
    real = engine.accumulate_into_leaf
    monkeypatch.setattr(engine, "accumulate_into_leaf",
                        lambda var, g, fresh: seen.append(fresh) or real(var, g, fresh))
    rng = np.random.default_rng(0)
    x, w, b = (derivgen.tensor(rng.standard_normal(64), requires_grad=True) for _ in range(3))
    ((x * w + b).sigmoid() * x.tanh() + (-x * x).exp()).sum().backward()
    assert fused, "the chain ran as a fused region"
    assert seen == [True, True, True]
