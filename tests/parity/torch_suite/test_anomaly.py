"""Ported from PyTorch's test/test_autograd.py (TestAutograd): anomaly detection."""
import warnings

import pytest



def test_anomaly_detect_nan(torch):
    size = 10

    class MyFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp1, inp2, fail_0th):
            ctx.fail_0th = fail_0th
            return inp1.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, gO):
            gI = gO.clone().expand(size)
            gI[0] = 0
            gI[0] /= 0
            if ctx.fail_0th:
                return gI, None, None
            else:
                return None, gI, None

    inp = torch.rand(size, requires_grad=True)
    out = MyFunc.apply(inp, inp, True)
    out.backward()
    inp = torch.rand(size, requires_grad=True)
    out = MyFunc.apply(inp, inp, True)
    with pytest.raises(RuntimeError, match="Function 'MyFuncBackward' returned nan values in its 0th output."):
        with warnings.catch_warnings(record=True):
            with torch.autograd.detect_anomaly():
                out.backward()
    inp = torch.rand(size, requires_grad=True)
    out = MyFunc.apply(inp, inp, False)
    with pytest.raises(RuntimeError, match="Function 'MyFuncBackward' returned nan values in its 1th output."):
        with warnings.catch_warnings(record=True):
            with torch.autograd.detect_anomaly():
                out.backward()



def test_anomaly_mode_no_check_nan(torch):
    class MyFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, gO):
            return torch.tensor(float("nan")).expand(10, 10)

    def run_fn(a):
        out = MyFunc.apply(a)
        return out.sum()

    with warnings.catch_warnings(record=True):
        with torch.autograd.detect_anomaly(check_nan=False):
            inp = torch.rand(10, 10, requires_grad=True)
            out = run_fn(inp)
            out.backward(retain_graph=True)
            with torch.autograd.detect_anomaly(check_nan=True):
                with pytest.raises(RuntimeError, match="Function 'MyFuncBackward' returned nan values in its 0th output."):
                    out.backward(retain_graph=True)
            out.backward()


def test_nested_anomaly_detect_nan(torch):
    size = 10

    class MyFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp1, fail_0th):
            ctx.fail_0th = fail_0th
            ctx.save_for_backward(inp1)
            return inp1.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, gO):
            (inp,) = ctx.saved_tensors
            fail_0th = ctx.fail_0th
            g = gO.clone().expand(size)
            gI = MyFunc2.apply(g * inp, g + inp, fail_0th)
            return gI, None

    class MyFunc2(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp1, inp2, fail_0th):
            ctx.fail_0th = fail_0th
            return inp1 * 2.0 + inp2

        @staticmethod
        def backward(ctx, gO):
            fail_0th = ctx.fail_0th
            g1 = gO.clone()
            g2 = gO.clone()
            g1[0] = 0
            g2[0] = 0
            if fail_0th:
                g1[0] /= 0
            else:
                g2[0] /= 0
            return g1, g2, None

    inp = torch.rand(size, requires_grad=True)
    out = MyFunc.apply(inp, True)
    (ginp,) = torch.autograd.grad(out, (inp,), create_graph=True)
    gsum = ginp.sum()
    gsum.backward()
    inp = torch.rand(size, requires_grad=True)
    out = MyFunc.apply(inp, True)
    (ginp,) = torch.autograd.grad(out, (inp,), create_graph=True)
    gsum = ginp.sum()
    with warnings.catch_warnings(record=True):
        with pytest.raises(RuntimeError, match="Function 'MyFunc2Backward' returned nan values in its 0th output."):
            with torch.autograd.detect_anomaly():
                gsum.backward()
    inp = torch.rand(size, requires_grad=True)
    out = MyFunc.apply(inp, False)
    (ginp,) = torch.autograd.grad(out, (inp,), create_graph=True)
    gsum = ginp.sum()
    with warnings.catch_warnings(record=True):
        with pytest.raises(RuntimeError, match="Function 'MyFunc2Backward' returned nan values in its 1th output."):
            with torch.autograd.detect_anomaly():
                gsum.backward()


def test_anomaly_assign_parent_cleanup(torch):
    import gc
    import weakref

    class MyFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, gO):
            return gO

    def get_ref():
        x = torch.randn(2, 2, requires_grad=True)
        t = x.exp()
        with torch.autograd.detect_anomaly():
            grad = torch.autograd.grad(t, x, torch.ones(2, 2), create_graph=True)
        ref = weakref.ref(grad[0])
        return ref

    with warnings.catch_warnings(record=True):
        ref = get_ref()
    gc.collect()
    assert ref() is None


def test_detect_anomaly_is_enabled(torch):
    assert not torch.is_anomaly_enabled()
    with warnings.catch_warnings(record=True):
        with torch.autograd.detect_anomaly():
            assert torch.is_anomaly_enabled()
            assert torch.is_anomaly_check_nan_enabled()
    assert not torch.is_anomaly_enabled()
    with torch.autograd.set_detect_anomaly(True):
        assert torch.is_anomaly_enabled()
    assert not torch.is_anomaly_enabled()


def test_anomaly_detect_warns(torch):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            pass
    assert any("Anomaly Detection has been enabled" in str(x.message) for x in w)


def test_anomaly_grad_warnings(torch):
    import io
    import sys

    class StdErrDiverter:
        def __enter__(self):
            self.stderr_orig = sys.stderr
            self.stderr_new = io.StringIO()
            sys.stderr = self.stderr_new
            return self

        def __exit__(self, *args):
            self.captured = self.stderr_new.getvalue()
            sys.stderr = self.stderr_orig

    msg = "one of the variables needed for gradient computation has been modified by an inplace operation"
    with pytest.raises(RuntimeError, match=msg):
        with warnings.catch_warnings(record=True) as w:
            with torch.autograd.detect_anomaly():
                a = torch.randn(5, requires_grad=True)
                d1 = a + 1
                d2 = d1 ** 2
                d1 += 1
                torch.autograd.grad(d2.sum(), a)
    assert len(w) == 2
    assert "Anomaly Detection has been enabled" in str(w[0].message)
    assert "Error detected in PowBackward0" in str(w[1].message)
    with pytest.raises(RuntimeError, match=msg):
        with warnings.catch_warnings(record=True) as w:
            with torch.autograd.detect_anomaly():
                warnings.simplefilter("error")
                with StdErrDiverter() as s:
                    a = torch.randn(5, requires_grad=True)
                    d1 = a + 1
                    d2 = d1 ** 2
                    d1 += 1
                    torch.autograd.grad(d2.sum(), a)
    assert len(w) == 1
    assert "Anomaly Detection has been enabled" in str(w[0].message)
    assert "Error detected in PowBackward0" in s.captured


def test_nested_anomaly_printstack_cleanup(torch):
    import weakref

    def get_ref():
        class MyFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, gO):
                (x,) = ctx.saved_tensors
                return MyFunc2.apply(x)

        class MyFunc2(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, gO):
                return gO + float("NaN")

        inp = torch.rand(1, requires_grad=True)
        out = MyFunc.apply(inp)
        (ginp,) = torch.autograd.grad(out, (inp,), create_graph=True)
        with warnings.catch_warnings(record=True):
            with pytest.raises(RuntimeError, match="Function 'MyFunc2Backward' returned nan values in its 0th output."):
                with torch.autograd.detect_anomaly():
                    ginp.backward()

        class Foo:
            pass

        my_obj = Foo()
        meta_dict = out.grad_fn.metadata
        meta_dict[0] = my_obj
        ref = weakref.ref(my_obj)
        return out, ref

    t, ref = get_ref()
    assert ref() is not None
    del t
    assert ref() is None
