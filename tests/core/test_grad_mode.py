"""Grad modes (no_grad, enable_grad, set_grad_enabled, inference_mode: context managers, decorators, per
thread), requires_grad_/detach/detach_, and saved_tensors_hooks, checked against real torch too."""
import threading

import numpy as np
import pytest


def _val(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def _x(torch, values=(0.5, -1.0, 2.0), requires_grad=True):
    return torch.tensor(list(values), dtype=torch.float64, requires_grad=requires_grad)


# ---- grad modes ----------------------------------------------------------------------------------------

def test_no_grad_context_and_nesting(torch):
    x = _x(torch)
    with torch.no_grad() as cm:
        assert cm is None
        y = x * 2
        assert not torch.is_grad_enabled()
        with torch.enable_grad():
            z = x * 2
            assert torch.is_grad_enabled()
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert z.requires_grad and z.grad_fn is not None


def test_grad_mode_decorators_with_and_without_parentheses(torch):
    @torch.no_grad
    def bare():
        return torch.is_grad_enabled()

    @torch.no_grad()
    def called():
        return torch.is_grad_enabled()

    @torch.enable_grad
    def enabled():
        return torch.is_grad_enabled()

    @torch.inference_mode
    def inference():
        return torch.is_grad_enabled(), torch.is_inference_mode_enabled()

    @torch.inference_mode(False)
    def not_inference():
        return torch.is_inference_mode_enabled()

    assert bare() is False and called() is False
    assert bare.__name__ == "bare"
    with torch.no_grad():
        assert enabled() is True
        assert torch.is_grad_enabled() is False
    assert inference() == (False, True)
    assert not_inference() is False
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()


def test_set_grad_enabled_as_function_context_and_decorator(torch):
    @torch.set_grad_enabled(False)
    def off():
        return torch.is_grad_enabled()
    assert torch.is_grad_enabled()  # decorating must not switch the mode
    assert off() is False and torch.is_grad_enabled()
    with torch.set_grad_enabled(False):
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    try:
        assert not torch.is_grad_enabled()
        assert not (_x(torch) * 2).requires_grad
    finally:
        torch.set_grad_enabled(True)
    assert torch.is_grad_enabled()


def test_decorated_methods_and_generators(torch):
    class Model:
        @torch.no_grad()
        def predict(self, x):
            return x * 2

    x = _x(torch)
    assert not Model().predict(x).requires_grad

    @torch.no_grad()
    def gen():
        yield torch.is_grad_enabled()
        yield torch.is_grad_enabled()
    it = gen()
    assert next(it) is False
    assert torch.is_grad_enabled()  # the mode holds inside the generator only
    assert next(it) is False


def test_grad_mode_restored_after_an_exception(torch):
    with pytest.raises(KeyError):
        with torch.no_grad():
            raise KeyError
    assert torch.is_grad_enabled()


def test_inference_mode_disables_grad(torch):
    x = _x(torch)
    with torch.inference_mode():
        y = x * 2
        assert torch.is_inference_mode_enabled() and not torch.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    with torch.inference_mode(False):
        assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()


def test_grad_mode_is_per_thread(torch):
    seen = {}
    ready = threading.Event()
    release = threading.Event()

    def worker():
        seen["start"] = torch.is_grad_enabled()  # a new thread starts with grad enabled
        with torch.no_grad():
            ready.set()
            release.wait(5)
            seen["inside"] = torch.is_grad_enabled()

    with torch.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        ready.wait(5)
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()  # the worker's no_grad does not leak into this thread
    x = _x(torch)
    assert (x * 2).requires_grad
    release.set()
    t.join()
    assert seen == {"start": True, "inside": False}


# ---- requires_grad_, detach, detach_ ------------------------------------------------------------------------

def test_requires_grad_(torch):
    x = torch.ones(2, dtype=torch.float64)
    assert x.requires_grad_() is x and x.requires_grad and x.is_leaf
    assert x.requires_grad_(False) is x and not x.requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        torch.ones(2, dtype=torch.int64).requires_grad_()
    y = _x(torch) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables. If you want "
                                           "to use a computed variable in a subgraph that doesn't require "
                                           "differentiation use var_no_grad = var.detach()."):
        y.requires_grad_(False)
    y.requires_grad_(True)  # allowed: it already requires grad


def test_detach_shares_data_and_version_counter(torch):
    a = _x(torch)
    b = a * 2
    c = b.sin()
    d = b.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d.add_(1)  # writes through to b and bumps the shared version counter
    assert b._version == 1 and d._version == 1
    np.testing.assert_allclose(_val(b), 2 * _val(a) + 1)
    with pytest.raises(RuntimeError, match="which is output 0 of Mul, is at version 1; expected version 0 instead"):
        c.sum().backward()


def test_detach_in_place(torch):
    a = _x(torch)
    b = a * 2
    assert b.detach_() is b
    assert not b.requires_grad and b.grad_fn is None and b.is_leaf
    a.detach_()  # also allowed on a leaf
    assert not a.requires_grad
    x = _x(torch)
    v = x[:2]
    with pytest.raises(RuntimeError, match="Can't detach views in-place. Use detach\\(\\) instead."):
        v.detach_()


# ---- saved_tensors_hooks -------------------------------------------------------------------------------------

def test_saved_tensors_hooks_pack_unpack_compressed_round_trip(torch):
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return t.float()  # store a float32 copy instead of the float64 tensor

    def unpack(p):
        return p.double()

    x = torch.tensor([0.3, -1.2, 2.5], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([1.7, 0.4, -0.9], dtype=torch.float64, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * w).exp()
    assert len(packed) == 3  # mul saves x and w, exp saves its result
    z = (y * x).sum()  # saved outside the context: not packed
    assert len(packed) == 3
    z.backward()
    xs, ws = _val(x), _val(w)
    e = np.exp(xs * ws)
    np.testing.assert_allclose(_val(x.grad), e * ws * xs + e, rtol=1e-6)  # float32 precision
    np.testing.assert_allclose(_val(w.grad), e * xs * xs, rtol=1e-6)


def test_saved_tensors_hooks_keep_the_graph_for_double_backward(torch):
    x = torch.tensor([0.3, -1.2, 2.5], dtype=torch.float64, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda p: p):
        y = (x * x * x).sum()
    g, = torch.autograd.grad(y, x, create_graph=True)
    g2, = torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(_val(g), 3 * _val(x) ** 2)
    np.testing.assert_allclose(_val(g2), 6 * _val(x))


def test_saved_tensors_hooks_nest_and_check_unpack_result(torch):
    calls = []
    x = _x(torch)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: calls.append("outer") or t, lambda p: p):
        with torch.autograd.graph.saved_tensors_hooks(lambda t: calls.append("inner") or t, lambda p: p):
            y = x.exp()
        z = y.sin()
    assert calls == ["inner", "outer"]
    (y.sum() + z.sum()).backward()
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: 3):
        y = _x(torch).exp()
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor but got result "
                                        "of type int"):
        y.sum().backward()
