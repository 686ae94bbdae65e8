"""Ported from PyTorch's test/test_autograd.py (TestAutograd): saved variables, ``_raw_saved_*`` hooks and
``autograd.graph.saved_tensors_hooks``."""
import gc
import weakref

import pytest

from tests.support.torch_assert import assert_equal


def test_saved_variable_packing_unpacking_saved_original_with_hooks(torch):
    def test(get_input, is_leaf):
        a = get_input()
        grad_fn = a.grad_fn
        y = a * a
        y.grad_fn._raw_saved_self.register_hooks(lambda x: 2 * x, lambda x: x / 2)
        assert_equal(a, y.grad_fn._saved_self)
        if not is_leaf:
            assert grad_fn is y.grad_fn._saved_self.grad_fn
            y.sum().backward()
        else:
            y.sum().backward()
            assert_equal(2 * a, a.grad)
        a = get_input()
        grad_fn = a.grad_fn
        y = a * a
        y.grad_fn._raw_saved_self.register_hooks(lambda x: 2 * x, lambda x: x)
        assert_equal(2 * a, y.grad_fn._saved_self)
        if not is_leaf:
            assert grad_fn is y.grad_fn._saved_self.grad_fn
            y.sum().backward()
        else:
            y.sum().backward()
            assert_equal(3 * a, a.grad)
        a = get_input()
        grad_fn = a.grad_fn
        y = a ** 3
        y.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)
        s = torch.sum(y)
        (g,) = torch.autograd.grad(s, (a,), create_graph=True)
        if not is_leaf:
            assert grad_fn is y.grad_fn._saved_self.grad_fn
            g.sum().backward()
        else:
            g.sum().backward()
            assert_equal(6 * a, a.grad)
        a = get_input()
        y = a * a
        y.grad_fn._raw_saved_self.register_hooks(lambda x: 1, lambda x: 1)
        with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor"):
            print(y.grad_fn._saved_self)
        a = get_input()
        y = a * a
        with pytest.raises(TypeError, match="missing 1 required positional argument"):
            y.grad_fn._raw_saved_self.register_hooks(lambda x, b: x, lambda x: x)
        a = get_input()
        y = a * a
        with pytest.raises(TypeError, match="missing 1 required positional argument"):
            y.grad_fn._raw_saved_self.register_hooks(lambda x, b: (x, b), lambda x: x)

        def inplace_double(x):
            x *= 2
            return x

        a = get_input()
        t = a * a
        with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in place."):
            t.grad_fn._raw_saved_self.register_hooks(inplace_double, lambda x: x / 2)

    test(lambda: torch.randn(5, requires_grad=True), True)
    test(lambda: (1 + torch.randn(5, requires_grad=True)), False)


def test_saved_variable_saved_original_inplace_detach(torch):
    a = torch.tensor(1.0, requires_grad=True).clone()
    b = a.sin()
    a.detach_()
    with pytest.raises(RuntimeError, match="Trying to use a saved tensor that has been detached"):
        b.backward()
    a = torch.tensor(1.0, requires_grad=True).clone()
    b = a.exp()
    a.detach_()
    b.backward()


def test_saved_variable_packing_unpacking_did_not_save_original_with_hooks(torch):
    a = torch.randn(5, requires_grad=True)
    y = torch.exp(a)
    y.grad_fn._raw_saved_result.register_hooks(lambda x: x, lambda x: x)
    assert_equal(y, y.grad_fn._saved_result)
    assert y.grad_fn is y.grad_fn._saved_result.grad_fn
    y.sum().backward()
    assert_equal(a.grad, y)


def test_saved_variable_packing_unpacking_saved_original_with_default_hooks(torch):
    def pack(x):
        return x

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        a = torch.ones(5, requires_grad=True)
        y = a * a
        assert_equal(a, y.grad_fn._saved_self)
        assert_equal(a, y.grad_fn._saved_other)
        y.sum().backward()
        assert_equal(2 * a, a.grad)
    with torch.autograd.graph.saved_tensors_hooks(lambda x: 2 * x, lambda x: x / 2):
        a = torch.randn(5, requires_grad=True)
        y = a * a
        assert_equal(a, y.grad_fn._saved_self)
        assert_equal(a, y.grad_fn._saved_other)
        y.sum().backward()
        assert_equal(2 * a, a.grad)
    with torch.autograd.graph.saved_tensors_hooks(lambda x: 2 * x, lambda x: x):
        a = torch.randn(5, requires_grad=True)
        y = a * a
        assert_equal(2 * a, y.grad_fn._saved_self)
        assert_equal(2 * a, y.grad_fn._saved_other)
        y.sum().backward()
        assert_equal(4 * a, a.grad)
    with torch.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
        a = torch.randn(5, requires_grad=True)
        y = a * a
        y.sum().backward()
        assert_equal(2 * a, a.grad)


def test_saved_variable_packing_unpacking_did_not_save_original_with_default_hooks(torch):
    with torch.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
        a = torch.randn(5, requires_grad=True)
        y = torch.exp(a)
        assert_equal(y, y.grad_fn._saved_result)
        y.sum().backward()
        assert_equal(a.grad, y)


def test_setting_default_saved_variable_hooks_twice_should_not_fail(torch):
    with torch.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
        with torch.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            pass


def test_setting_default_saved_variable_hooks_twice_should_use_inner(torch):
    with torch.autograd.graph.saved_tensors_hooks(lambda x: 3 * x, lambda x: 3 * x):
        b = torch.randn(5, requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(lambda x: 5 * x, lambda x: 5 * x):
            a = torch.randn(5, requires_grad=True)
            y = a * a
        z = b * b
    y.sum().backward()
    z.sum().backward()
    assert_equal(2 * 5 * 5 * a, a.grad)
    assert_equal(2 * 3 * 3 * b, b.grad)


def test_disabling_saved_tensor_hooks(torch):
    with torch.autograd.graph.disable_saved_tensors_hooks("error message"):
        with pytest.raises(RuntimeError, match="error message"):
            with torch.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
                pass


def test_saved_tensor_hooks_custom_function_intermediates(torch):
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            intermediate = x.exp()
            ctx.save_for_backward(intermediate.clone().detach_().requires_grad_(True))
            return x.exp()

        @staticmethod
        def backward(ctx, grad_out):
            (intermediate,) = ctx.saved_tensors
            return grad_out * intermediate

    a = torch.tensor(1.0, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
        out = Func.apply(a)
    out.backward()


def test_unpack_hooks_exec_count(torch):
    def f(x, y):
        return x * y

    pack_count = [0]
    unpack_count = [0]

    def pack_hook(x):
        pack_count[0] += 1
        return x

    def unpack_hook(x):
        unpack_count[0] += 1
        return x

    x = torch.ones(3, requires_grad=True)
    y = torch.ones(3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        out = f(x, y)
        assert pack_count[0] == 2
        assert unpack_count[0] == 0
        out.sum().backward()
        assert pack_count[0] == 2
        assert unpack_count[0] == 2


def test_pack_hook_with_inplace_modification_should_fail(torch):
    a = torch.randn(5, requires_grad=True)

    def inc(x):
        x += 1
        return x

    with torch.autograd.graph.saved_tensors_hooks(inc, lambda x: x):
        with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in place."):
            y = torch.exp(a)
    y = torch.exp(a)
    with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in place."):
        y.grad_fn._raw_saved_result.register_hooks(inc, lambda x: x)


def test_saving_variable_to_disk(torch):
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as tmp_dir:
        counter = [0]

        def pack(x):
            name = os.path.join(tmp_dir, str(counter[0]))
            counter[0] += 1
            with open(name, "wb") as f:
                f.write(x.detach().numpy().tobytes())
            return name, tuple(x.shape), x.dtype

        def unpack(packed):
            import numpy as np
            name, shape, dtype = packed
            with open(name, "rb") as f:
                arr = np.frombuffer(f.read(), dtype=np.float64).reshape(shape).copy()
            return torch.from_numpy(arr)

        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            a = torch.ones(5, requires_grad=True)
            y = a * a
            assert_equal(a, y.grad_fn._saved_self)
            y.sum().backward()
            assert_equal(2 * a, a.grad)


def test_default_saved_tensors_hooks_double_backward(torch):
    with torch.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
        a = torch.randn(5, requires_grad=True)
        y = a ** 3
        s = torch.sum(y)
        (g,) = torch.autograd.grad(s, (a,), create_graph=True)
        g.sum().backward()
        assert_equal(6 * a, a.grad)
    with torch.autograd.graph.saved_tensors_hooks(lambda x: 2 * x, lambda x: x):
        a = torch.randn(5, requires_grad=True)
        y = a ** 3
        s = torch.sum(y)
    (g,) = torch.autograd.grad(s, (a,), create_graph=True)
    g.sum().backward()
    assert_equal(6 * 2 * a, a.grad)
    a = torch.randn(5, requires_grad=True)
    y = a ** 3
    s = torch.sum(y)
    with torch.autograd.graph.saved_tensors_hooks(lambda x: 2 * x, lambda x: x):
        (g,) = torch.autograd.grad(s, (a,), create_graph=True)
        g.sum().backward()
        assert_equal(6 * 4 * a, a.grad)
    with torch.autograd.graph.saved_tensors_hooks(lambda x: 2 * x, lambda x: x):
        a = torch.randn(5, requires_grad=True)
        y = a ** 3
        s = torch.sum(y)
        (g,) = torch.autograd.grad(s, (a,), create_graph=True)
        g.sum().backward()
        assert_equal(6 * 8 * a, a.grad)


def test_wrapped_number_saved_tensors_hooks(torch):
    def err_hook(x):
        raise RuntimeError("this hook should not be called")

    with torch.autograd.graph.saved_tensors_hooks(err_hook, err_hook):
        a = torch.randn(5, requires_grad=True)
        out = (a * 3).sum()
        torch.autograd.grad(out, (a,))


def test_graph_save_on_cpu(torch):
    def test(get_input, dtype):
        with torch.autograd.graph.save_on_cpu():
            a = get_input().to(dtype)
            y = a * a
            assert_equal(a, y.grad_fn._saved_self)
            assert_equal(a, y.grad_fn._saved_other)
            assert a.dtype == y.grad_fn._saved_self.dtype
            y.sum().backward()
            if a.is_leaf:
                assert_equal(2 * a, a.grad)

    for dtype in (torch.float32, torch.float64):
        test(lambda: torch.randn(5, requires_grad=True), dtype)
        test(lambda: (1 + torch.randn(5, requires_grad=True)), dtype)


def test_save_for_backward_inference_tensor_error(torch):
    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(y)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    with torch.inference_mode():
        inf = torch.ones(2)
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        Fn.apply(x, inf)


def test_saved_variable_version_counter(torch):
    a = torch.rand(2, requires_grad=True)
    b = torch.exp(a)
    b_unpacked = b.grad_fn._saved_result
    assert_equal(b, b_unpacked)
    assert b._version == b_unpacked._version
    with torch.no_grad():
        b += 1
    assert_equal(b, b_unpacked)
    assert b._version == b_unpacked._version


def test_saved_variables_deprecated_leak_checks(torch):
    a = torch.randn(5, requires_grad=True)
    ref = weakref.ref(a)
    y = (a * a).sum()
    y.backward()
    del a, y
    gc.collect()
    assert ref() is None


def test_saved_tensor_hooks_custom_error_propagation(torch):
    class CustomError(Exception):
        pass

    class error_on_pack_hook(torch.autograd.graph.saved_tensors_hooks):
        def __init__(self):
            def pack_hook(x):
                raise CustomError("pack")

            super().__init__(pack_hook, lambda x: x)

    class error_on_unpack_hook(torch.autograd.graph.saved_tensors_hooks):
        def __init__(self):
            def unpack_hook(x):
                raise CustomError("unpack")

            super().__init__(lambda x: x, unpack_hook)

    a = torch.tensor(1.0, requires_grad=True)

    with error_on_pack_hook():
        with pytest.raises(CustomError, match="pack"):
            torch.sin(a)

    with error_on_unpack_hook():
        out = torch.sin(a)
        with pytest.raises(CustomError, match="unpack"):
            out.backward()


def test_saved_tensors_hook_version_counter_not_shared(torch):
    class Test(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            before = a._version
            x.add_(1)
            assert a._version == before
            return grad_output

    a = torch.tensor(1.0, requires_grad=True)
    a_replacement = a.clone()

    def pack_hook(x):
        return a_replacement

    def unpack_hook(x):
        return x

    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        b = Test.apply(a)

    b.backward()


def test_no_unnecessary_unwrapping(torch):
    a = torch.randn(5, requires_grad=True)
    a_orig = a.detach().clone()
    b = a * a
    c = a * b
    d = torch.exp(a)

    # a is leaf
    assert b.grad_fn._saved_self is a
    assert b.grad_fn._saved_other is a
    assert c.grad_fn._saved_self is a

    # b is not an output
    assert c.grad_fn._saved_other is b

    # d is an output
    assert_equal(d.grad_fn._saved_result, d)
    assert d.grad_fn._saved_result is not d

    c.sum().backward()

    with pytest.raises(RuntimeError, match="after they have already been freed"):
        c.grad_fn._saved_self

    # a is left untouched
    assert_equal(a, a_orig)


def test_get_data_and_hooks_from_raw_saved_variable(torch):
    def pack_hook(t):
        return t

    def unpack_hook(t):
        return t

    a = torch.tensor(2.0, requires_grad=True)

    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        b = a ** 2

    c = b.exp()
    d = c ** 2

    pow_sv = b.grad_fn._raw_saved_self
    exp_sv = c.grad_fn._raw_saved_result
    pow2_sv = d.grad_fn._raw_saved_self

    # Returns the packed object as-is
    assert pow_sv.data is a
    assert pow_sv.unpack_hook is unpack_hook
    # Returns the detached data when the output/leaf is saved
    assert exp_sv.data is not c
    assert exp_sv.unpack_hook is None
    # Returns the un-detached data when input is saved
    assert pow2_sv.data is c
    assert pow2_sv.unpack_hook is None


def test_custom_function_saved_tensors(torch):
    def getFn(save=True):
        class MyFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if save:
                    ctx.save_for_backward(x, None)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        return MyFn

    a = torch.randn(5, requires_grad=True)
    y = getFn(True).apply(a)
    assert_equal(y.grad_fn.saved_tensors[0], a)
    assert y.grad_fn.saved_tensors[1] is None
    saved = y.grad_fn._raw_saved_tensors
    assert len(saved) == 2

    with pytest.raises(RuntimeError, match="None is forbidden"):
        saved[1].register_hooks(lambda x: x, lambda x: x)
    with pytest.raises(TypeError):
        saved[0].register_hooks(lambda x: x)
    with pytest.raises(TypeError):
        saved[0].register_hooks(1, 1)
    saved[0].register_hooks(lambda x: x, lambda x: x)
    with pytest.raises(RuntimeError, match="already been set"):
        saved[0].register_hooks(lambda x: x, lambda x: x)
    y.sum().backward()

    del saved
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn._raw_saved_tensors
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn.saved_tensors

    y = getFn(False).apply(a)
    assert y.grad_fn.saved_tensors == ()
    assert y.grad_fn._raw_saved_tensors == ()
