"""The compiled backward tape (derivgen/engine/tape.py): chains of generated elementwise nodes on small
arrays run by one Numba call, with the plain loop's results bit for bit, and the plain loop wherever a
node needs more (hooks, retain_grad, a saved tensor modified in place, broadcasting, mixed dtypes, ...).

Every test builds the same graph twice, runs one backward with the tape and one without, and compares
the gradients bitwise (``Stats`` shows how many nodes the tape ran). The tape's kernel here covers a fixed
set of rows (``KINDS``), compiled once per dtype for the whole module; nodes of other rows fall back.
``DERIVGEN_TEST_TAPE_ALL_ROWS=1`` adds a test of every row on the tape (a kernel over all of them, about a
minute to compile per dtype on a cold cache).
"""
import os

import numpy as np
import pytest

import derivgen as torch
from derivgen.config import settings
from derivgen.core import tape_kinds
from derivgen.engine import tape, tape_kernels
from derivgen.generated import nodes as N
from derivgen.generated import ops as O
from tests.support.node_classes import all_node_classes

KINDS = frozenset(cls._tape_kind for cls in (
    N.MulBackward0, N.AddBackward0, N.SubBackward0, N.SinBackward0, N.ExpBackward0, N.TanhBackward0,
    N.SigmoidBackward0, N.DivBackward0, N.PowBackward0, N.ClampMinBackward0, N.AddcmulBackward0,
    N.HypotBackward0, N.RsubBackward1, N.MulBackward1, N.AddBackward1, N.NegBackward0, N.LeakyReluBackward0,
    N.PowBackward2))
FLOATS = (np.float32, np.float64)


def _use_kernel(kinds):
    """Make the tape use the kernel of ``kinds`` for both dtypes, and never compile another."""
    kernel = tape_kernels.kernel_for(kinds)
    for progress in tape._PROGRESS.values():
        progress.kernel, progress.kinds = kernel, kinds


@pytest.fixture(autouse=True)
def _tape_settings():
    saved = settings.tape, settings.tape_compile_after, settings.tape_min_run
    settings.tape, settings.tape_compile_after, settings.tape_min_run = True, 1 << 60, 2
    tape.reset()
    _use_kernel(KINDS)
    tape.Stats.reset()
    yield
    settings.tape, settings.tape_compile_after, settings.tape_min_run = saved
    tape.reset()


def _tensor(values, dtype, requires_grad=True):
    return torch.from_numpy(np.array(values, dtype=dtype)).requires_grad_(requires_grad)


def _run(build, dtype, use_tape):
    """``build(dtype)`` -> (leaves, loss); backward; the leaves' gradients and the nodes the tape ran."""
    settings.tape = use_tape
    tape.Stats.reset()
    leaves, loss = build(dtype)
    loss.backward()
    settings.tape = True
    return [None if t.grad is None else t.grad.numpy().copy() for t in leaves], tape.Stats.nodes


def _same_bits(a, b):
    """Equal bit for bit, except that any two NaNs are equal (compilers may pick either operand's NaN:
    IEEE leaves which one unspecified, and LLVM commutes operands)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    a, b = a.reshape(-1), b.reshape(-1)
    nan = np.isnan(a)
    return np.array_equal(nan, np.isnan(b)) and np.array_equal(a[~nan].view(np.uint8), b[~nan].view(np.uint8))


def _compare(build, dtype):
    """Gradients with and without the tape, bitwise equal; returns how many nodes the tape ran."""
    plain, none = _run(build, dtype, False)
    taped, nodes = _run(build, dtype, True)
    assert none == 0
    assert len(plain) == len(taped)
    for p, t in zip(plain, taped):
        assert (p is None) == (t is None)
        if p is not None:
            assert _same_bits(p, t), (p, t)
    return nodes


def _leaves(dtype, n=3, size=8, seed=0):
    rng = np.random.default_rng(seed)
    return [_tensor(rng.standard_normal(size), dtype) for _ in range(n)]


def _w1(n_ops=200):
    """W1's chain (benchmarks/run.py): h*b, h+c, sin, exp, tanh, h-c, sigmoid, h*a."""
    def build(dtype):
        a, b, c = _leaves(dtype)
        cycle = (lambda h: h * b, lambda h: h + c, lambda h: h.sin(), lambda h: h.exp(), lambda h: h.tanh(),
                 lambda h: h - c, lambda h: h.sigmoid(), lambda h: h * a)
        h = a
        for i in range(n_ops):
            h = cycle[i % 8](h)
        return [a, b, c], h.sum()
    return build


@pytest.mark.parametrize("dtype", FLOATS)
def test_w1_chain_runs_on_the_tape_with_the_plain_loops_bits(dtype):
    assert _compare(_w1(), dtype) == 200


@pytest.mark.parametrize("dtype", FLOATS)
def test_rows_with_numbers_branches_and_three_inputs(dtype):
    def build(dtype):
        x, y, z = _leaves(dtype, seed=1)
        h = x.sigmoid() + 1.0
        for _ in range(4):
            h = h / (y.sigmoid() + 0.5)                  # div: both inputs saved, both need a gradient
            h = O.pow_Tensor_Scalar(h, 1.5)               # a number in the kernel
            h = O.clamp_min(h, 0.25)
            h = torch.addcmul(h, y, z, value=0.5)        # three inputs, a number
            h = torch.hypot(h, z)                        # inputs and the result saved
            h = O.rsub_Scalar(h, 3.0, 2.0)               # 3 - 2 * h
            h = O.leaky_relu(h, 0.1)
            h = O.add_Tensor(h, z, alpha=0.5)            # the alpha != 1 branch
            h = O.sub_Tensor(h, y, alpha=2)
            h = O.mul_Scalar(O.add_Scalar(h, 1.0, 2), 0.25)
            h = -h
            h = O.pow_Scalar(1.5, h.tanh())              # the Scalar base: a branch on it
        return [x, y, z], h.sum()
    assert _compare(build, dtype) > 40


def test_inputs_without_gradient_and_numbers_as_tensors():
    def build(dtype):
        (x,) = _leaves(dtype, n=1)
        const = _tensor(np.linspace(0.5, 1.5, 8), dtype, requires_grad=False)
        h = x
        for _ in range(8):
            h = (h * const).sin() * 2.0 + const          # an input without an edge; a wrapped number
        return [x], h.sum()
    # ``h * 2.0`` saves the 0-dim number for the other input's gradient: that node runs on the plain loop
    assert _compare(build, np.float32) > 0


def test_hooks_retain_grad_and_node_hooks_run_on_the_plain_loop():
    seen = []

    def build(dtype):
        a, b, c = _leaves(dtype)
        h = a
        for i in range(60):
            h = (h * b).sin() if i % 2 else (h + c).tanh()
            if i == 10:
                h.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 2)
            if i == 20:
                h.retain_grad()
                kept.append(h)
            if i == 30:
                h.grad_fn.register_prehook(lambda grads: (grads[0] * 3,))
            if i == 40:
                h.grad_fn.register_hook(lambda grad_inputs, grad_outputs: None)
        return [a, b, c], h.sum()
    kept = []
    nodes = _compare(build, np.float64)
    assert 0 < nodes < 120
    assert len(seen) == 2 and _same_bits(seen[0], seen[1])
    assert _same_bits(kept[0].grad.numpy(), kept[1].grad.numpy())


def test_leaf_hooks_see_the_plain_loops_order():
    events = []

    def build(dtype):
        a, b, c = _leaves(dtype)
        b.register_post_accumulate_grad_hook(lambda t: events.append(("b", a.grad is None, c.grad is None)))
        c.register_hook(lambda g: events.append(("c", a.grad is None, b.grad is None)))
        h = a
        for i in range(40):
            h = (h * b).exp().tanh() if i < 20 else (h - c).sigmoid()
        return [a, b, c], h.sum()
    _compare(build, np.float32)
    assert len(events) == 4 and events[:2] == events[2:]


def test_a_saved_tensor_modified_in_place_raises_the_plain_loops_error():
    def build(dtype):
        a, b, c = _leaves(dtype)
        h = a
        for _ in range(20):
            h = (h * b).sin()
        mid = h
        h = mid.exp()                                    # saves its result: modified below
        out = h
        for _ in range(20):
            h = (h + c).tanh()
        out.add_(1.0)
        return [a, b, c], h.sum()
    messages = []
    for use_tape in (False, True):
        with pytest.raises(RuntimeError) as info:
            _run(build, np.float32, use_tape)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "modified by an inplace operation" in messages[0]


def test_broadcasting_and_mixed_dtypes_run_on_the_plain_loop():
    def build(dtype):
        a, b, _ = _leaves(dtype)
        s = _tensor([0.7], dtype)                        # broadcast: its gradient is summed
        d = _tensor(np.ones(8), np.float64 if dtype == np.float32 else np.float32)  # another dtype
        h = a
        for i in range(30):
            h = (h * b).sin()
            if i % 10 == 5:
                h = h * s
            if i % 10 == 7:
                h = h * d
                h = h.to(torch.float32 if dtype == np.float32 else torch.float64)
        return [a, b, s, d], h.sum()
    assert _compare(build, np.float32) == 60             # all but the products by s and d (and the casts)


def test_diamonds_and_gradients_from_outside_the_chain():
    def build(dtype):
        x, y = _leaves(dtype, n=2)
        h = x
        for _ in range(6):
            u = (h * y).sin()
            v = (h + y).exp()
            h = (u * v).tanh() + h                       # h feeds three nodes
        return [x, y], h.sum()
    assert _compare(build, np.float64) > 0


def test_gradients_accumulate_into_existing_grads_in_order():
    def build(dtype):
        a, b, c = _leaves(dtype)
        for _ in range(3):
            h = a
            for _ in range(30):
                h = (h * b - c).sigmoid()
            h.sum().backward()
        return [a, b, c], (a * b).sum()
    assert _compare(build, np.float32) > 0


def test_shapes_zero_dim_and_non_contiguous():
    def build(dtype):
        rng = np.random.default_rng(3)
        s = _tensor(rng.standard_normal(()), dtype)
        m = _tensor(rng.standard_normal((4, 3)), dtype)
        w = _tensor(rng.standard_normal((3, 4)), dtype)
        h, k = s, m.t()                                  # a transposed (non-contiguous) input
        for _ in range(12):
            h = (h * s).sin()
            k = (k * w).tanh() - w
        return [s, m, w], h + k.sum()
    assert _compare(build, np.float64) >= 40


def test_empty_gradients_run_on_the_plain_loop():
    def build(dtype):
        a = _tensor(np.ones((4, 0)), dtype)
        b = _tensor(np.ones((4, 1)), dtype)
        h = a + b
        for _ in range(4):
            h = h.sin().exp()
        return [a, b], h.sum()
    assert _compare(build, np.float32) == 0


def test_retain_graph_then_released_values_raise():
    def build(dtype):
        leaves, loss = _w1(80)(dtype)
        loss.backward(retain_graph=True)
        return leaves, loss
    assert _compare(build, np.float32) == 160
    leaves, loss = _w1(80)(np.float32)
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_multi_output_gradients_and_saved_tensor_hooks_run_on_the_plain_loop():
    def build(dtype):
        (x,) = _leaves(dtype, n=1, size=16)
        p, q = x.chunk(2)                                # q is output 1 of the split
        h = p
        for _ in range(10):
            h = (h * q).sin()
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            for _ in range(10):
                h = (h * q).cos()
        return [x], h.sum()
    nodes = _compare(build, np.float32)
    assert nodes < 40


@pytest.mark.parametrize("call", ["create_graph", "inputs", "anomaly", "grad"])
def test_the_general_loop_never_uses_the_tape(call):
    a, b, c = _leaves(np.float64)
    h = a
    for _ in range(40):
        h = (h * b).sin()
    loss = h.sum()
    if call == "create_graph":
        loss.backward(create_graph=True)
    elif call == "inputs":
        loss.backward(inputs=[b])
    elif call == "anomaly":
        with torch.autograd.detect_anomaly():
            loss.backward()
    else:
        torch.autograd.grad(loss, [a, b])
    assert tape.Stats.nodes == 0


def test_switched_off():
    settings.tape = False
    leaves, loss = _w1(40)(np.float32)
    loss.backward()
    assert tape.Stats.nodes == 0


def _sin_chain_backward():
    x = _tensor(np.linspace(0.1, 0.9, 8), np.float64)
    const = _tensor(np.full(8, 0.5), np.float64, requires_grad=False)
    h = x
    for _ in range(20):
        h = (h * const).sin()                            # 40 nodes of two kinds
    h.sum().backward()
    return x.grad.numpy()


def test_the_first_kernel_waits_for_enough_nodes(monkeypatch):
    """Chains are counted until ``tape_compile_after`` of their nodes ran on the plain loop; then the
    kernel of their kinds is made and used."""
    monkeypatch.setattr(tape_kernels, "written", lambda kinds: False)  # as on a machine that never made it
    tape.reset()
    settings.tape_compile_after, settings.tape_min_run = 100, 16
    first = _sin_chain_backward()
    assert tape.Stats.nodes == 0 and tape._PROGRESS[np.dtype(np.float64)].counted == 40
    _sin_chain_backward()
    assert tape.Stats.nodes == 0                         # 80 counted
    third = _sin_chain_backward()
    assert tape.Stats.nodes == 40                        # 120 >= 100: the kernel is made and runs
    assert _same_bits(first, third)
    assert tape._PROGRESS[np.dtype(np.float64)].counted == 0
    settings.tape_min_run = 100
    tape.Stats.reset()
    _sin_chain_backward()
    assert tape.Stats.nodes == 40                        # a kernel in use runs chains of any length
    tape.Stats.reset()
    settings.tape_min_run = 16
    assert tape._PROGRESS[np.dtype(np.float32)].kernel is None   # each dtype counts for itself


def test_a_kernel_written_before_is_used_at_once(monkeypatch):
    tape.reset()
    settings.tape_compile_after, settings.tape_min_run = 1 << 60, 16
    monkeypatch.setattr(tape_kernels, "written", lambda kinds: True)
    _sin_chain_backward()
    assert tape.Stats.nodes == 40
    monkeypatch.setattr(tape_kernels, "written", lambda kinds: False)
    tape.reset()
    tape.Stats.reset()
    _sin_chain_backward()
    assert tape.Stats.nodes == 0


@pytest.mark.skipif(os.environ.get("DERIVGEN_TEST_TAPE_ALL_ROWS") != "1",
                    reason="set DERIVGEN_TEST_TAPE_ALL_ROWS=1 to compile the tape for every row (slow)")
@pytest.mark.parametrize("dtype", FLOATS)
def test_every_row_on_the_tape(dtype):
    classes = [cls for cls in all_node_classes() if cls._tape_kind is not None]
    _use_kernel(frozenset(range(len(tape_kinds._steps))))
    rows = [_row_of(cls) for cls in classes]

    def build(dtype):
        rng = np.random.default_rng(7)
        x, y, z = (_tensor(rng.uniform(0.2, 0.8, 8), dtype) for _ in range(3))
        h = x
        for call in rows:
            h = call(h, y, z)
            h = O.add_Scalar(O.mul_Scalar(O.sigmoid(h), 0.5), 0.25, 1)   # back into (0.25, 0.75)
        return [x, y, z], h.sum()
    assert _compare(build, dtype) >= 3 * len(rows)
    grads, _ = _run(build, dtype, True)
    assert all(np.isfinite(g).all() for g in grads)


def _row_of(cls):
    """A call of the row of node class ``cls`` on (h, y, z): tensors for its Tensor arguments, a sample
    value for each other argument without a default."""
    from derivgen.table import load_table
    from tests.support.paths import TABLE
    entries = {e.class_name: e for e in load_table(TABLE) if e.class_name}
    schema = entries[cls.__name__].schema
    fn = getattr(O, schema.py_name)

    def call(h, y, z):
        if cls is N.AcoshBackward0:
            h = O.add_Scalar(h, 1.0, 1)                  # its domain: from 1 on
        tensors = iter((h, y, z))
        args = []
        for a in schema.args:
            if a.is_tensor:
                args.append(next(tensors))
            elif a.has_default:
                break
            else:
                kind = a.type.rstrip("?")
                args.append(False if kind == "bool" else 2 if kind in ("int", "SymInt") else 0.75)
        return fn(*args)
    return call
