"""``F.pad`` reflect / replicate / circular and the padding modules (ReflectionPad, ReplicationPad, CircularPad,
ConstantPad, ZeroPad in 1-D/2-D/3-D), plus conv ``padding_mode``, against torch: values and gradients from the
same inputs, node names, repr, float64 gradcheck (forward mode and double backward) and torch's errors."""
import numpy as np
import pytest

import derivgen
from tests.nn.test_conv_pool_norm_modules import _error
from tests.nn.test_layers_parity import TOLERANCE, _inputs, _pair, _run

torch = pytest.importorskip("torch", reason="SKIPPED LOUDLY: torch is not installed (the oracle)")

CASES = [((2, 5), (2, 3)), ((2, 3, 5), (1, -1)), ((2, 4, 5), (1, 3, 2, 0)), ((1, 2, 4, 5), (1, 2, -1, 3)),
         ((2, 3, 4, 5), (1, 2, 0, 2, 2, 1)), ((1, 2, 3, 4, 5), (-1, 2, 0, 2, 2, 1))]
MODES = ["reflect", "replicate", "circular"]


def _apply(lib, x, pad, mode, grad):
    t = lib.tensor(x, requires_grad=True)
    out = lib.nn.functional.pad(t, pad, mode=mode)
    out.backward(lib.tensor(grad))
    return out, t.grad.numpy()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape,pad", CASES, ids=[str(c[1]) for c in CASES])
def test_pad_values_gradients_and_node_match_torch(mode, shape, pad):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    t_out = torch.nn.functional.pad(torch.tensor(x), pad, mode=mode)
    grad = rng.standard_normal(tuple(t_out.shape))
    t_out, t_grad = _apply(torch, x, pad, mode, grad)
    d_out, d_grad = _apply(derivgen, x, pad, mode, grad)
    np.testing.assert_array_equal(d_out.detach().numpy(), t_out.detach().numpy())
    np.testing.assert_allclose(d_grad, t_grad, rtol=1e-12, atol=1e-12)
    assert _graph(d_out.grad_fn) == _graph(t_out.grad_fn)


def _graph(node):
    """The graph below ``node`` as nested (name, children) tuples, None for an edge to no node."""
    if node is None:
        return None
    name = node.name().replace("torch::", "").replace("derivgen::", "")
    return name, tuple(_graph(n) for n, _ in node.next_functions)


CIRCULAR_GRAPH_CASES = [((1, 2, 5), (2, 1)), ((2, 5), (0, 3)), ((1, 2, 4, 5), (1, 2, 2, 1)),
                        ((2, 4, 5), (-1, 2, 1, 0)), ((1, 1, 3, 4, 5), (1, 1, 2, 1, 0, 2)),
                        ((1, 3, 4, 5), (0, 0, 1, 1, -1, 1))]


@pytest.mark.parametrize("shape,pad", CIRCULAR_GRAPH_CASES, ids=[str(c[1]) for c in CIRCULAR_GRAPH_CASES])
def test_circular_pad_builds_torchs_graph_node_by_node(shape, pad):
    """torch copies the input and then each pad into slices of a fresh tensor: a tree of CopySlices and
    SliceBackward0 nodes, with an edge to no node for the fresh tensor's base."""
    x = np.random.default_rng(2).standard_normal(shape)
    graphs = []
    for lib in (torch, derivgen):
        out = lib.nn.functional.pad(lib.tensor(x, requires_grad=True), pad, mode="circular")
        graphs.append(_graph(out.grad_fn))
    assert graphs[1] == graphs[0] and graphs[0][0] == "autograd::CopySlices"


def test_circular_pad_without_grad_records_nothing():
    x = derivgen.tensor(np.random.default_rng(3).standard_normal((1, 2, 5)))
    out = derivgen.nn.functional.pad(x, (2, 1), mode="circular")
    assert out.grad_fn is None and not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), torch.nn.functional.pad(torch.tensor(x.numpy()), (2, 1),
                                                                        mode="circular").numpy())


@pytest.mark.parametrize("mode", MODES)
def test_pad_gradcheck_float64(mode):
    F = derivgen.nn.functional
    for shape, pad in CASES:
        x = derivgen.tensor(np.random.default_rng(1).standard_normal(shape), requires_grad=True)
        f = (lambda p: lambda x: F.pad(x, p, mode=mode))(pad)
        assert derivgen.autograd.gradcheck(f, (x,), check_forward_ad=True)
        assert derivgen.autograd.gradgradcheck(f, (x,))


def test_pad_float32_keeps_dtype():
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    for mode in MODES:
        ours = derivgen.nn.functional.pad(derivgen.tensor(x), (1, 2), mode=mode)
        theirs = torch.nn.functional.pad(torch.tensor(x), (1, 2), mode=mode)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


MODULES = [
    ("ReflectionPad1d", lambda nn: nn.ReflectionPad1d(2), [(2, 3, 5)]),
    ("ReflectionPad2d", lambda nn: nn.ReflectionPad2d((1, 2, 2, 0)), [(2, 3, 4, 5)]),
    ("ReflectionPad3d", lambda nn: nn.ReflectionPad3d(1), [(1, 2, 3, 4, 3)]),
    ("ReplicationPad1d", lambda nn: nn.ReplicationPad1d((3, 1)), [(3, 4)]),
    ("ReplicationPad2d", lambda nn: nn.ReplicationPad2d(2), [(2, 3, 4, 5)]),
    ("ReplicationPad3d", lambda nn: nn.ReplicationPad3d((1, 0, 2, 1, 0, 1)), [(2, 3, 2, 4)]),
    ("CircularPad1d", lambda nn: nn.CircularPad1d(2), [(2, 3, 5)]),
    ("CircularPad2d", lambda nn: nn.CircularPad2d((1, 2, 2, 0)), [(3, 4, 5)]),
    ("CircularPad3d", lambda nn: nn.CircularPad3d(1), [(1, 2, 3, 4, 3)]),
    ("ConstantPad1d", lambda nn: nn.ConstantPad1d(2, 1.5), [(2, 3, 5)]),
    ("ConstantPad2d", lambda nn: nn.ConstantPad2d((1, 0, 2, 1), -2.0), [(2, 3, 4, 5)]),
    ("ConstantPad3d", lambda nn: nn.ConstantPad3d(1, 0.5), [(1, 2, 3, 4, 3)]),
    ("ZeroPad1d", lambda nn: nn.ZeroPad1d((2, 1)), [(2, 3, 5)]),
    ("ZeroPad2d", lambda nn: nn.ZeroPad2d(1), [(2, 3, 4, 5)]),
    ("ZeroPad3d", lambda nn: nn.ZeroPad3d((1, 0, 0, 1, 2, 0)), [(2, 3, 2, 4)]),
    ("Conv1d-reflect", lambda nn: nn.Conv1d(2, 3, 3, padding=2, padding_mode="reflect"), [(2, 2, 6)]),
    ("Conv2d-replicate", lambda nn: nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="replicate"), [(2, 2, 5, 6)]),
    ("Conv2d-circular-same", lambda nn: nn.Conv2d(2, 3, (3, 2), padding="same", padding_mode="circular"),
     [(2, 2, 5, 6)]),
    ("Conv3d-reflect", lambda nn: nn.Conv3d(2, 2, 3, padding=1, padding_mode="reflect"), [(1, 2, 4, 4, 3)]),
    ("Conv3d-circular", lambda nn: nn.Conv3d(2, 2, 2, padding=(1, 0, 1), padding_mode="circular"), [(1, 2, 3, 4, 3)]),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name,build,specs", MODULES, ids=[c[0] for c in MODULES])
def test_modules_forward_and_gradients_match_torch(name, build, specs, dtype):
    theirs, ours = _pair(build, dtype)
    assert repr(ours) == repr(theirs)
    arrays = _inputs(specs, dtype)
    t_out, t_grads, _ = _run(torch, theirs, arrays)
    d_out, d_grads, _ = _run(derivgen, ours, arrays)
    tol = TOLERANCE[dtype]
    assert d_out.dtype == t_out.dtype and d_out.shape == t_out.shape
    np.testing.assert_allclose(d_out, t_out, rtol=tol, atol=tol)
    for d, t in zip(d_grads, t_grads):
        np.testing.assert_allclose(d, t, rtol=tol, atol=tol)


def test_module_attributes_match_torch():
    for name in ("ReflectionPad2d", "ZeroPad3d", "CircularPad1d"):
        assert getattr(derivgen.nn, name)(2).padding == getattr(torch.nn, name)(2).padding
    assert derivgen.nn.ConstantPad2d(1, 3.0).value == torch.nn.ConstantPad2d(1, 3.0).value
    assert derivgen.nn.ZeroPad2d(1).value == torch.nn.ZeroPad2d(1).value


BAD = [
    ("reflect-too-wide", lambda T: T.nn.functional.pad(T.ones(2, 4), (4, 2), mode="reflect")),
    ("reflect-too-wide-2d", lambda T: T.nn.functional.pad(T.ones(2, 3, 4), (1, 1, 3, 1), mode="reflect")),
    ("reflect-too-wide-3d", lambda T: T.nn.functional.pad(T.ones(2, 2, 3, 4), (1, 1, 1, 1, 2, 1), mode="reflect")),
    ("reflect-crop-too-much", lambda T: T.nn.functional.pad(T.ones(2, 4), (-3, -2), mode="reflect")),
    ("replicate-empty", lambda T: T.nn.functional.pad(T.ones(2, 0), (1, 2), mode="replicate")),
    ("replicate-bool", lambda T: T.nn.functional.pad(T.ones(2, 3, 4, dtype=T.bool), (1, 1), mode="replicate")),
    ("reflect-rank", lambda T: T.nn.functional.pad(T.ones(4), (1, 2), mode="reflect")),
    ("reflect-size-rank", lambda T: T.nn.functional.pad(T.ones(1, 2, 4, 5), (1, 2), mode="reflect")),
    ("circular-wraps-twice", lambda T: T.nn.functional.pad(T.ones(2, 4), (9, 2), mode="circular")),
    ("unknown-mode", lambda T: T.nn.functional.pad(T.ones(2, 4), (1, 2), mode="foo")),
    ("reflect-value", lambda T: T.nn.functional.pad(T.ones(2, 4), (1, 2), mode="reflect", value=1.0)),
    ("odd-length", lambda T: T.nn.functional.pad(T.ones(2, 4), (1, 2, 3), mode="reflect")),
    ("CircularPad2d-rank", lambda T: T.nn.CircularPad2d(1)(T.ones(4, 5))),
    ("ReflectionPad3d-rank", lambda T: T.nn.ReflectionPad3d(1)(T.ones(4, 5))),
]


@pytest.mark.parametrize("name,fn", BAD, ids=[c[0] for c in BAD])
def test_errors_match_torch(name, fn):
    expected = _error(torch, fn)
    assert expected is not None
    assert _error(derivgen, fn) == expected
