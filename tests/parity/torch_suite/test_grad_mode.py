"""Ported from PyTorch's test/test_autograd.py (TestAutograd and the inference-mode tests): no_grad,
enable_grad, set_grad_enabled, inference_mode."""
import pytest

from tests.support.torch_assert import assert_equal


def test_no_grad(torch):
    x = torch.ones(5, 5, requires_grad=True)
    y = torch.ones(5, 5) * 4
    with torch.no_grad():
        w = x + y

    def adder(x, y):
        return x + y

    adders = [torch.no_grad()(adder), torch.no_grad(adder)]
    for adder in adders:
        z = adder(x, y)
        assert not w.requires_grad
        with pytest.raises(RuntimeError):
            w.backward(torch.ones(5, 5))
        assert w.grad_fn is None
        assert not z.requires_grad
        with pytest.raises(RuntimeError):
            z.backward(torch.ones(5, 5))
        assert z.grad_fn is None
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        w = adder(x, y)
        assert not torch.is_grad_enabled()


def test_enable_grad_decorator_no_paren(torch):
    x = torch.ones(1, requires_grad=True)

    @torch.enable_grad
    def doubler(x):
        return x * 2

    with torch.no_grad():
        z = doubler(x)
    assert z.requires_grad


def test_set_grad_generator_functions(torch):
    @torch.no_grad()
    def gen_no_grad():
        for i in range(10):
            assert torch.is_grad_enabled() is False
            yield i

    with torch.enable_grad():
        for _ in gen_no_grad():
            assert torch.is_grad_enabled() is True

    @torch.enable_grad()
    def gen_enable_grad():
        for i in range(10):
            assert torch.is_grad_enabled() is True
            yield i

    with torch.no_grad():
        for _ in gen_enable_grad():
            assert torch.is_grad_enabled() is False


def test_set_grad_generator_functions_recursive(torch):
    @torch.enable_grad()
    def enable_grad_decorator_recursive(depth):
        assert torch.is_grad_enabled()
        if depth > 0:
            no_grad_decorator_recursive(depth - 1)
            assert torch.is_grad_enabled()

    @torch.no_grad()
    def no_grad_decorator_recursive(depth):
        assert not torch.is_grad_enabled()
        if depth > 0:
            enable_grad_decorator_recursive(depth - 1)
            assert not torch.is_grad_enabled()

    def enable_grad_context_manager_recursive(depth):
        with torch.enable_grad():
            assert torch.is_grad_enabled()
            if depth > 0:
                no_grad_context_manager_recursive(depth - 1)
                assert torch.is_grad_enabled()

    def no_grad_context_manager_recursive(depth):
        with torch.no_grad():
            assert not torch.is_grad_enabled()
            if depth > 0:
                enable_grad_context_manager_recursive(depth - 1)
                assert not torch.is_grad_enabled()

    with torch.enable_grad():
        assert torch.is_grad_enabled()
        enable_grad_decorator_recursive(10)
        assert torch.is_grad_enabled()
        enable_grad_context_manager_recursive(10)
        assert torch.is_grad_enabled()
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        enable_grad_decorator_recursive(10)
        assert not torch.is_grad_enabled()
        enable_grad_context_manager_recursive(10)
        assert not torch.is_grad_enabled()


def test_set_grad_coroutines(torch):
    @torch.no_grad()
    def coro_no_grad(n=10):
        assert not torch.is_grad_enabled()
        for i in range(n):
            assert not torch.is_grad_enabled()
            r = yield i
            assert not torch.is_grad_enabled()
            assert i == r
        assert not torch.is_grad_enabled()

    @torch.enable_grad()
    def coro_enable_grad(n=10):
        assert torch.is_grad_enabled()
        for i in range(n):
            assert torch.is_grad_enabled()
            r = yield i
            assert torch.is_grad_enabled()
            assert i == r
        assert torch.is_grad_enabled()

    with torch.enable_grad():
        assert torch.is_grad_enabled()
        coro, r = coro_no_grad(), None
        try:
            while True:
                assert torch.is_grad_enabled()
                r = coro.send(r)
                assert torch.is_grad_enabled()
        except StopIteration:
            pass
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        coro, r = coro_enable_grad(), None
        try:
            while True:
                assert not torch.is_grad_enabled()
                r = coro.send(r)
                assert not torch.is_grad_enabled()
        except StopIteration:
            pass


def test_set_grad_coroutines_exit(torch):
    @torch.no_grad()
    def coro_no_grad(state):
        for i in range(10):
            try:
                yield i
            except GeneratorExit:
                assert not torch.is_grad_enabled()
                state.add("GeneratorExit")
                raise

    @torch.enable_grad()
    def coro_enable_grad(state):
        for i in range(10):
            try:
                yield i
            except GeneratorExit:
                assert torch.is_grad_enabled()
                state.add("GeneratorExit")
                raise

    state = set()
    with torch.enable_grad():
        coro = coro_no_grad(state)
        for i in range(5):
            next(coro)
        coro.close()
    assert "GeneratorExit" in state
    state = set()
    with torch.no_grad():
        coro = coro_enable_grad(state)
        for i in range(5):
            next(coro)
        coro.close()
    assert "GeneratorExit" in state


def test_no_grad_python_function(torch):
    x = torch.ones(5, 5, requires_grad=True)

    class MyOp(torch.autograd.Function):
        @staticmethod
        def forward(self, x):
            return x + 1

        @staticmethod
        def backward(self, dy):
            return dy

    with torch.no_grad():
        y = MyOp.apply(x)
    assert not y.requires_grad


def test_set_grad_enabled(torch):
    x = torch.ones(1, requires_grad=True)
    with torch.set_grad_enabled(False):
        y = x * 2
    assert not y.requires_grad
    with torch.set_grad_enabled(True):
        y = x * 2
    assert y.requires_grad
    with torch.set_grad_enabled(False):
        torch.set_grad_enabled(True)
        y = x * 2
    assert y.requires_grad


def test_set_grad_enabled_function_form(torch):
    prev = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    assert not torch.is_grad_enabled()
    torch.set_grad_enabled(True)
    assert torch.is_grad_enabled()
    torch.set_grad_enabled(prev)


def test_grad_mode_restored_reentrant(torch):
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, go):
            original = torch.is_grad_enabled()
            with torch.enable_grad():
                assert torch.is_grad_enabled()
                foo = torch.rand(go.size(), requires_grad=True)
                (grad,) = torch.autograd.grad(foo ** 3, foo, grad_outputs=go)
                assert torch.is_grad_enabled()
            assert torch.is_grad_enabled() == original
            return grad

    inp = torch.rand(3, requires_grad=True)
    MyFunction.apply(inp).sum().backward()
    MyFunction.apply(inp).sum().backward(create_graph=True)


def test_inference_mode_context_manager(torch):
    assert not torch.is_inference_mode_enabled()
    with torch.inference_mode():
        assert torch.is_inference_mode_enabled()
        with torch.inference_mode(False):
            assert not torch.is_inference_mode_enabled()
        assert torch.is_inference_mode_enabled()
    assert not torch.is_inference_mode_enabled()


def test_inference_mode_decorator(torch):
    def func(x):
        assert torch.is_inference_mode_enabled()
        return x * x

    for decorator in (torch.inference_mode, torch.inference_mode(), torch.inference_mode(mode=True)):
        for requires_grad in (True, False):
            decorated = decorator(func)
            c = torch.ones(1, 2, 3, requires_grad=requires_grad)
            d = decorated(c)
            assert torch.is_inference(d) if hasattr(torch, "is_inference") else d.is_inference()
            assert not d.requires_grad


def test_inference_mode_tensor_creation(torch):
    with torch.inference_mode():
        c = torch.ones(1, 2, 3)
        assert not c.requires_grad
        assert c.is_inference()
        tmp = torch.ones(1, 2, 3, requires_grad=True)
        assert tmp.requires_grad
        assert tmp.is_inference()
        tmp = torch.ones(1, 2, 3).requires_grad_(False)
        assert not tmp.requires_grad
        assert tmp.is_inference()


def test_inference_mode_existing_autograd_session(torch):
    s = torch.ones(1, 2, 3, requires_grad=True)
    a = s.clone()
    out = a * a
    with torch.inference_mode():
        a.add_(2)
    assert not a.is_inference()
    err_msg = "one of the variables needed for gradient computation has been modified by an inplace operation"
    with pytest.raises(RuntimeError, match=err_msg):
        out.backward(torch.ones_like(out))


def test_inference_mode_inf_tensor_in_inf_mode_functional_op(torch):
    for requires_grad in (True, False):
        with torch.inference_mode():
            c = torch.ones(1, 2, 3, requires_grad=requires_grad)
            func_out = c * c
            assert not func_out.requires_grad
            assert func_out.is_inference()


def test_inference_mode_inf_tensor_in_inf_mode_inplace_op(torch):
    for requires_grad in (True, False):
        with torch.inference_mode():
            c = torch.ones(1, 2, 3, requires_grad=requires_grad)
            c.add_(2)
            assert c.is_inference()
            assert c.requires_grad == requires_grad


def test_inference_mode_inf_tensor_in_inf_mode_view_op(torch):
    for requires_grad in (True, False):
        with torch.inference_mode():
            c = torch.ones(1, 2, 3, requires_grad=requires_grad)
            view_out = c.view(-1)
            assert view_out.is_inference()
            assert not view_out.requires_grad


def test_inference_mode_inf_tensor_in_normal_mode_functional_op(torch):
    for requires_grad in (True, False):
        with torch.inference_mode():
            c = torch.ones(1, 2, 3, requires_grad=requires_grad)
        func_out = c * c
        assert not func_out.requires_grad
        assert not func_out.is_inference()


def test_inference_mode_inf_tensor_in_normal_mode_inplace_op(torch):
    for requires_grad in (False, True):
        with torch.inference_mode():
            c = torch.ones(1, 2, 3, requires_grad=requires_grad)
        if requires_grad:
            # a leaf that requires grad: the leaf check comes first
            with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
                c.add_(2)
        else:
            with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
                c.add_(2)


def test_inference_mode_inf_tensor_in_normal_mode_view_op(torch):
    for requires_grad in (True, False):
        with torch.inference_mode():
            c = torch.ones(1, 2, 3, requires_grad=requires_grad)
        out = c.view(-1)
        assert out.is_inference()
        assert not out.requires_grad


def test_inference_mode_normal_tensor_inplace_output_in_inference_mode(torch):
    for requires_grad in (True, False):
        s = torch.ones(1, 2, 3, requires_grad=requires_grad)
        a = s.clone()
        with torch.inference_mode():
            a.add_(2)
            assert not a.is_inference()
            assert a.requires_grad == requires_grad
            a.add_(2)
            assert not a.is_inference()
            assert a.requires_grad == requires_grad


def test_inference_mode_normal_tensor_functional_output_in_inference_mode(torch):
    for requires_grad in (True, False):
        s = torch.ones(1, 2, 3, requires_grad=requires_grad)
        with torch.inference_mode():
            out = s * s
            assert out.is_inference()
            assert not out.requires_grad


def test_inference_mode_handle_direct_view_on_rebase(torch):
    for requires_grad in (True, False):
        with torch.inference_mode():
            inf = torch.ones(1, 2, 3, requires_grad=requires_grad)
        s = torch.ones(1, 2, 3, requires_grad=requires_grad)
        view_inf = inf.view(-1)
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
            view_inf.add_(2)


def test_inference_mode_mix_inference_normal_tensor_functional_op(torch):
    for requires_grad in (True, False):
        s = torch.ones(1, 2, 3, requires_grad=requires_grad)
        with torch.inference_mode():
            c = torch.ones(1, 2, 3, requires_grad=requires_grad)
        out = c.add(s)
        assert not out.is_inference()
        assert out.requires_grad == requires_grad
        if requires_grad:
            out.backward(torch.ones_like(out))
            assert_equal(c.grad, torch.ones_like(c)) if c.grad is not None else None
        if requires_grad:
            with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
                c * s


def test_inference_mode_mix_inference_normal_tensor_inplace_op(torch):
    for requires_grad in (True, False):
        s = torch.ones(1, 2, 3, requires_grad=requires_grad)
        a = s.clone()
        with torch.inference_mode():
            c = torch.ones(1, 2, 3)
        if requires_grad:
            with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
                a.mul_(c)
        a = s.clone()
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
            c.mul_(s)


def test_inference_mode_unpack_inference_tensor(torch):
    with torch.inference_mode():
        t = torch.ones(3)
    assert t.is_inference()
    assert not t.requires_grad
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_inference_mode_disabled_inside(torch):
    with torch.inference_mode():
        with torch.inference_mode(False):
            x = torch.ones(2, requires_grad=True)
            y = x * 2
            assert y.requires_grad
            assert not y.is_inference()


def test_is_inference_normal_tensor(torch):
    assert not torch.ones(2).is_inference()
    with torch.no_grad():
        assert not torch.ones(2).is_inference()


def test_grad_mode_thread_local(torch):
    import threading
    seen = []

    def worker():
        seen.append(torch.is_grad_enabled())

    with torch.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen == [True]


def test_grad_mode_class_decoration(torch):
    import warnings
    # Decorating class is deprecated and should not be used
    with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):

        @torch.no_grad()
        class Foo:
            def __init__(self):
                assert not torch.is_grad_enabled()

            def foo(self):
                # Not applied to methods
                assert torch.is_grad_enabled()

        # Show that we can actually construct the class
        foo = Foo()
        foo.foo()

    # Decorating functions or methods is fine though
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")

        @torch.no_grad()
        def foo():
            assert not torch.is_grad_enabled()

        foo()

        class Foo2:
            @torch.no_grad()
            def __init__(self):
                assert not torch.is_grad_enabled()

            @torch.no_grad()
            def foo(self):
                assert not torch.is_grad_enabled()

        foo2 = Foo2()
        foo2.foo()

    assert len(w) == 0


def test_set_grad_coroutines_benign_exceptions(torch):
    class RecoverableException(Exception):
        pass

    @torch.no_grad()
    def coro_no_grad(n=10):
        has_raised = False
        for i in range(n):
            try:
                assert not torch.is_grad_enabled()
                yield (-i if has_raised else i)
            except RecoverableException:
                assert not torch.is_grad_enabled()
                has_raised = True

    @torch.enable_grad()
    def coro_enable_grad(n=10):
        has_raised = False
        for i in range(n):
            try:
                assert torch.is_grad_enabled()
                yield (-i if has_raised else i)
            except RecoverableException:
                assert torch.is_grad_enabled()
                has_raised = True

    with torch.enable_grad():
        coro = coro_no_grad()
        assert next(coro) == 0
        try:
            while True:
                r = coro.throw(RecoverableException)
                assert r < 0
        except StopIteration:
            pass

    with torch.no_grad():
        coro = coro_enable_grad()
        assert next(coro) == 0
        try:
            while True:
                r = coro.throw(RecoverableException)
                assert r < 0
        except StopIteration:
            pass


def test_set_grad_coroutines_critical_exceptions(torch):
    class UnrecoverableException(Exception):
        pass

    class SecondaryException(Exception):
        pass

    @torch.no_grad()
    def coro_no_grad(n=10):
        for i in range(n):
            try:
                assert not torch.is_grad_enabled()
                yield i
            except UnrecoverableException:
                assert not torch.is_grad_enabled()
                raise SecondaryException from None

    @torch.enable_grad()
    def coro_enable_grad(n=10):
        for i in range(n):
            try:
                assert torch.is_grad_enabled()
                yield i
            except UnrecoverableException:
                assert torch.is_grad_enabled()
                raise SecondaryException from None

    with torch.enable_grad():
        coro = coro_no_grad()
        assert next(coro) == 0
        with pytest.raises(SecondaryException):
            coro.throw(UnrecoverableException)

    with torch.no_grad():
        coro = coro_enable_grad()
        assert next(coro) == 0
        with pytest.raises(SecondaryException):
            coro.throw(UnrecoverableException)


def test_set_grad_enabled_wraps(torch):
    for decorator in [True, False]:
        with torch.enable_grad():
            assert torch.is_grad_enabled()
            if decorator:
                @torch.set_grad_enabled(False)
                def inner_func(x):
                    return x.sin()
            else:
                def inner_func(x):
                    return x.sin()

                obj = torch.set_grad_enabled(False)
                assert not torch.is_grad_enabled()
                inner_func = obj(inner_func)
                assert torch.is_grad_enabled()
            assert torch.is_grad_enabled()
            x = torch.zeros(1, requires_grad=True)
            assert not inner_func(x).requires_grad


def test_no_grad_assignment(torch):
    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5)
    with torch.no_grad():
        x[0] = y
    assert x.requires_grad
    assert x.grad_fn is None


def test_no_grad_input(torch):
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(self, x):
            return x

        @staticmethod
        def backward(self, grad_output):
            return grad_output

    x = torch.randn(5, requires_grad=True)
    with torch.no_grad():
        y = MyFunction.apply(x)
    assert x.requires_grad
    assert y.grad_fn is None
