"""Ported from PyTorch's test/test_autograd.py: forward-mode AD through ``gradcheck(check_forward_ad=True)``,
custom ``autograd.Function.jvp`` (views, in-place, non-differentiable outputs, ``save_for_forward``) and
``copy_`` of dual tensors (TestAutograd and TestAutogradDeviceType, CPU)."""
from itertools import product

import pytest

from tests.support.torch_assert import assert_equal


def test_gradcheck_forward_ad(torch):
    fwAD = torch.autograd.forward_ad
    gradcheck = torch.autograd.gradcheck

    def fn(x, y):
        return x + y, y

    def bad_fn(x, y):
        # Hacky way to check if we're currently inside a forward ad level
        is_running_forward_ad = fwAD._current_level >= 0

        if is_running_forward_ad:
            y_p, y_d = fwAD.unpack_dual(y)
            y = fwAD.make_dual(y_p, y_d * 1.1)

        return x + y, y

    err_msg = "Jacobian computed with forward mode mismatch for output 0 with respect to input 1"

    for fast_mode in [True, False]:
        # Test for all inputs and outputs being real (the complex cases are left out)
        x = torch.rand(2, dtype=torch.double, requires_grad=True)
        y = torch.rand(2, dtype=torch.double, requires_grad=True)

        gradcheck(fn, (x, y), check_forward_ad=True, fast_mode=fast_mode)
        with pytest.raises(RuntimeError, match=err_msg):
            gradcheck(bad_fn, (x, y), check_forward_ad=True, fast_mode=fast_mode)


def test_gradcheck_forward_ad_runs_with_no_requires_grad(torch):
    # Currently requires_grad is used as a easy way for gradcheck to know
    # which inputs of the function are meant to be differentiable
    # This test checks that when the inputs are passed to the function they should not have
    # requires_grad=True even though they may have requires_grad=True when passed
    # to gradcheck
    fwAD = torch.autograd.forward_ad
    gradcheck = torch.autograd.gradcheck

    class UserFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            if fwAD._current_level >= 0:
                assert not x.requires_grad
                assert not y.requires_grad
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_t, y_t):
            return x_t, y_t

    x = torch.rand(2, dtype=torch.double, requires_grad=True)
    y = torch.rand(2, dtype=torch.double, requires_grad=True)

    gradcheck(UserFn.apply, (x, y), check_forward_ad=True, check_undefined_grad=False, check_backward_ad=False,
              check_batched_grad=False, check_batched_forward_grad=False)

    gradcheck(UserFn.apply, (x, y), check_forward_ad=True, check_undefined_grad=True, check_backward_ad=False,
              check_batched_grad=False, check_batched_forward_grad=False)
    # (the check_batched_forward_grad=True cases run the jvp under vmap: left out)


def test_gradcheck_forward_ad_respects_requires_grad(torch):
    # Currently requires_grad is used as a easy way for gradcheck to know
    # which inputs of the function are meant to be differentiable
    gradcheck = torch.autograd.gradcheck
    jvp_count = [0]

    class UserFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_t, y_t):
            jvp_count[0] += 1
            return x_t, y_t

    # NB: In slow gradcheck we need to loop through numel times so use numel = 1 to ensure
    #     that fast and slow have the same counts
    x = torch.rand(1, dtype=torch.double, requires_grad=True)
    y = torch.rand(1, dtype=torch.double, requires_grad=True)
    gradcheck(UserFn.apply, (x, y), check_forward_ad=True, check_undefined_grad=False, check_backward_ad=False,
              check_batched_grad=False, check_batched_forward_grad=False)
    assert jvp_count[0] == 2  # (2) once per input
    jvp_count = [0]

    gradcheck(UserFn.apply, (x, y), check_forward_ad=True, check_undefined_grad=True, check_backward_ad=False,
              check_batched_grad=False, check_batched_forward_grad=False)
    # (+4): (once with normal ZT (+1), once with efficient ZT (+1)) for each input (x2)
    assert jvp_count[0] == 6
    # (the check_batched_forward_grad=True counts come from vmap: left out)


def test_gradcheck_check_forward_or_backward_only(torch):
    """Depending on settings for check_forward_ad and check_backward_ad, the
    correct codepaths should be reached (or not reached)
    """
    gradcheck = torch.autograd.gradcheck
    fwd_fail_err_msg = "FAIL FWD"
    bwd_fail_err_msg = "FAIL BWD"

    class UserFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo, fwd_bad, bwd_bad):
            ctx.fwd_bad = fwd_bad
            ctx.bwd_bad = bwd_bad
            return foo * 2

        @staticmethod
        def vjp(ctx, gO):
            if ctx.bwd_bad:
                raise RuntimeError(bwd_fail_err_msg)
            else:
                return 2 * gO, None, None

        @staticmethod
        def jvp(ctx, gI, _1, _2):
            if ctx.fwd_bad:
                raise RuntimeError(fwd_fail_err_msg)
            else:
                return 2 * gI

    for fast_mode in (True, False):
        for check_forward_ad in (True, False):
            for check_backward_ad in (True, False):
                for fwd_bad in (True, False):
                    for bwd_bad in (True, False):
                        fwd_should_fail = fwd_bad and check_forward_ad
                        bwd_should_fail = bwd_bad and check_backward_ad

                        def run():
                            gradcheck(UserFn.apply, (x, fwd_bad, bwd_bad), check_forward_ad=check_forward_ad,
                                      check_backward_ad=check_backward_ad, check_undefined_grad=check_backward_ad,
                                      check_batched_grad=False, fast_mode=fast_mode)

                        x = torch.rand(2, dtype=torch.double, requires_grad=True)

                        if not check_forward_ad and not check_backward_ad:
                            with pytest.raises(AssertionError, match="Expected at least one of"):
                                run()
                            continue

                        if not fwd_should_fail and not bwd_should_fail:
                            run()
                        else:
                            # If both fail, backward AD failure "hides" forward AD failure
                            if fwd_should_fail:
                                fail_msg = fwd_fail_err_msg
                            if bwd_should_fail:
                                fail_msg = bwd_fail_err_msg
                            with pytest.raises(RuntimeError, match=fail_msg):
                                run()


def test_custom_function_mark_dirty_not_differentiable(torch):
    fwAD = torch.autograd.forward_ad

    def get_custom_fn(jvp_err):
        class InplaceMul(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                result = x.mul_(2)
                ctx.mark_dirty(result)
                return result

            @staticmethod
            def backward(ctx, grad_output):
                pass

            @staticmethod
            def jvp(ctx, x_t):
                if jvp_err:
                    return x_t
                else:
                    return x_t.mul_(2)

        return InplaceMul

    for requires_grad, jvp_err in product([True, False], repeat=2):
        InplaceMul = get_custom_fn(jvp_err)
        # Make sure that tensor is always returned as-is if marked dirty
        z = torch.tensor(1.0, requires_grad=requires_grad)
        x = z.clone()
        y = InplaceMul.apply(x)
        assert x is y
        assert_equal(x, z * 2)

        # jvp must properly modify the input grad if mark_dirty is set
        with fwAD.dual_level():
            x_tangent = torch.ones_like(x)
            x_dual = fwAD.make_dual(x, x_tangent)

            if jvp_err:
                bad_mark_dirty_err = "jvp function must modify the corresponding gradient inplace"
                with pytest.raises(RuntimeError, match=bad_mark_dirty_err):
                    InplaceMul.apply(x_dual)
            else:
                out_dual = InplaceMul.apply(x_dual)
                _, out_tangent = fwAD.unpack_dual(out_dual)
                assert out_dual is x_dual
                assert out_tangent is x_tangent


def test_custom_function_error(torch):
    fwAD = torch.autograd.forward_ad
    Function = torch.autograd.Function

    class BadFw(Function):
        @staticmethod
        def backward(ctx, foo):
            return foo

    class BadBw(Function):
        @staticmethod
        def forward(ctx, foo):
            return foo.clone()

    class BadBw2(Function):
        @staticmethod
        def forward(ctx, foo):
            return foo.clone()

        @staticmethod
        def backward(ctx, foo):
            return foo

        @staticmethod
        def vjp(ctx, foo):
            return foo

    class BadJvp(Function):
        @staticmethod
        def forward(ctx, foo):
            return foo.clone()

    inp = torch.rand(1, requires_grad=True)
    with pytest.raises(NotImplementedError, match="must implement the forward"):
        BadFw.apply(inp)

    with pytest.raises(RuntimeError, match="must implement either the backward"):
        BadBw.apply(inp).sum().backward()

    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        BadBw2.apply(inp).sum().backward()

    with pytest.raises(RuntimeError, match="must implement the jvp function"):
        with fwAD.dual_level():
            d = fwAD.make_dual(inp, torch.rand_like(inp))
            BadJvp.apply(d)


def test_custom_function_forward_mode_view_checks(torch):
    gradcheck = torch.autograd.gradcheck
    flag_to_error = {
        "ok": None,
        "not_a_view": "jvp is not returning a view",
        "not_a_view_of_inp": "jvp is not returning a view of the given",
        "not_a_view_of_inp_base": "jvp is not returning a view of the same base",
    }

    class ViewFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo, flag):
            ctx.flag = flag
            ctx.size = foo.size()
            return foo.narrow(0, 0, 2)

        @staticmethod
        def vjp(ctx, gO):
            gI = gO.new_zeros(ctx.size)
            gI.narrow(0, 0, 2).copy_(gO)
            return gI, None

        @staticmethod
        def jvp(ctx, gI, _):
            res = gI.narrow(0, 0, 2)
            if ctx.flag != "ok":
                # Break the view in the gradients!
                res = res.clone()
            if ctx.flag in ["not_a_view_of_inp", "not_a_view_of_inp_base"]:
                # Result should be a view, just of the wrong thing
                res = res.view_as(res)
            return res

    inp = torch.rand(4, 4, dtype=torch.double, requires_grad=True)

    for flag, msg in flag_to_error.items():
        def test_fn(inp):
            if flag == "not_a_view_of_inp_base":
                inp = inp.view_as(inp)
            return ViewFn.apply(inp, flag)

        if msg is None:
            gradcheck(test_fn, inp, check_forward_ad=True)
        else:
            with pytest.raises(RuntimeError, match=msg):
                gradcheck(test_fn, inp, check_forward_ad=True)


def test_custom_function_forward_mode_inplace_checks(torch):
    gradcheck = torch.autograd.gradcheck

    class InplaceFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo, flag):
            ctx.mark_dirty(foo)
            ctx.flag = flag
            foo.mul_(2)
            return foo

        @staticmethod
        def vjp(ctx, gO):
            return 2 * gO, None

        @staticmethod
        def jvp(ctx, gI, _):
            if ctx.flag:
                # Don't do the change inplace
                return 2 * gI
            else:
                gI.mul_(2)
                return gI

    inp = torch.rand(4, 4, dtype=torch.double, requires_grad=True)

    def test_fn(inp, flag):
        inp = inp.clone()
        return InplaceFn.apply(inp, flag)

    gradcheck(test_fn, (inp, False), check_forward_ad=True)

    with pytest.raises(RuntimeError,
                       match="inplace custom Function is not modifying the forward mode gradients inplace"):
        gradcheck(test_fn, (inp, True), check_forward_ad=True)


def test_custom_function_forward_mode_wrong_formula(torch):
    gradcheck = torch.autograd.gradcheck

    class UserFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo, should_fail):
            ctx.should_fail = should_fail
            return foo * 2

        @staticmethod
        def vjp(ctx, gO):
            return 2 * gO, None

        @staticmethod
        def jvp(ctx, gI, _):
            if ctx.should_fail:
                # Wrong gradient formula
                return 3 * gI
            else:
                return 2 * gI

    inp = torch.rand(10, dtype=torch.double, requires_grad=True)
    gradcheck(UserFn.apply, (inp, False), check_forward_ad=True)

    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch for output 0"):
        gradcheck(UserFn.apply, (inp, True), check_forward_ad=True)


def test_custom_function_forward_mode_non_tensor_before_tensor_args(torch):
    fwAD = torch.autograd.forward_ad

    class MyFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, nt, x, nt2, y):
            return x * 2 + y * 3

        @staticmethod
        def jvp(ctx, nt, x_t, nt2, y_t):
            assert nt is None
            assert nt2 is None
            return x_t * 2 + y_t * 3

    x = torch.tensor(1.0, dtype=torch.double)
    t = torch.tensor(1.0, dtype=torch.double)
    y = torch.tensor(1.0, dtype=torch.double)

    with fwAD.dual_level():
        dual_x = fwAD.make_dual(x, t)
        MyFn.apply(1, dual_x, 1, y)

    torch.autograd.gradcheck(MyFn.apply, (1, x.requires_grad_(True), 1, y.requires_grad_(True)),
                             check_forward_ad=True, check_backward_ad=False, check_batched_grad=False)


def test_custom_function_forward_mode_forward_is_no_op(torch):
    fwAD = torch.autograd.forward_ad
    error_regex = "A custom Function's forward is returning a view \\(or an input as-is\\)"

    return_lambdas = {
        # If we return an input as-is in forward, that is treated
        # as if self.view_as(self) is performed. If jvp returns x.view_as(x),
        # this is OK.
        "view_as": lambda x: x.view_as(x),
        # Expect this to raise an error
        "self": lambda x: x,
        # Expect this to raise the same error
        "mul_by_2": lambda x: x * 2,
    }

    for k, fn in return_lambdas.items():
        class MyFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y, x

            @staticmethod
            def vjp(ctx, gO1, gO2):
                return gO1 + gO2, gO1

            @staticmethod
            def jvp(ctx, x_t, y_t):
                return x_t + y_t, fn(x_t)

        a = torch.tensor(1.0, dtype=torch.double, requires_grad=True)
        t = torch.tensor(1.0, dtype=torch.double)
        b = torch.tensor(1.0, dtype=torch.double, requires_grad=True)

        c = torch.tensor(1.0, dtype=torch.double)
        t2 = torch.tensor(1.0, dtype=torch.double)
        d = torch.tensor(1.0, dtype=torch.double)

        with fwAD.dual_level():
            a_dual = fwAD.make_dual(a, t)
            c_dual = fwAD.make_dual(c, t2)

            if k == "view_as":
                _, out2 = MyFn.apply(a_dual, b)
                assert fwAD.unpack_dual(out2).tangent._base is t

                _, out2 = MyFn.apply(c_dual, d)
                assert fwAD.unpack_dual(out2).tangent._base is t2
            else:
                with pytest.raises(RuntimeError, match=error_regex):
                    MyFn.apply(a_dual, b)

                with pytest.raises(RuntimeError, match=error_regex):
                    MyFn.apply(c_dual, d)

        if k == "view_as":
            torch.autograd.gradcheck(MyFn.apply, (a, c), check_forward_ad=True)
        else:
            with pytest.raises(RuntimeError, match=error_regex):
                torch.autograd.gradcheck(MyFn.apply, (a, c), check_forward_ad=True)


def test_custom_function_save_for_forward(torch):
    fwAD = torch.autograd.forward_ad

    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, z):
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)
            ctx.z = z
            ctx.prod = x * y
            return z * ctx.prod

        @staticmethod
        def jvp(ctx, x_t, y_t, _):
            x_p, y_p = ctx.saved_tensors
            z = ctx.z
            return z * (y_p * x_t + x_p * y_t)

        @staticmethod
        def vjp(ctx, grad_out):
            x, y = ctx.saved_tensors
            z = ctx.z
            return z * grad_out * y, z * grad_out * x, None

    a = torch.tensor(1.0, requires_grad=True, dtype=torch.double)
    t = torch.tensor(1.0, dtype=torch.double)
    b = torch.tensor(2.0, requires_grad=True, dtype=torch.double)
    c = 4

    with fwAD.dual_level():
        a_dual = fwAD.make_dual(a, t)
        out = Func.apply(a_dual, b, c)
        out.backward()

    torch.autograd.gradcheck(Func.apply, (a, b, c), check_forward_ad=True)

    # When saved for backward, but not saved for forward
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def jvp(ctx, x_t):
            assert len(ctx.saved_tensors) == 0
            return x_t

        @staticmethod
        def vjp(ctx, grad_out):
            (x,) = ctx.saved_tensors
            assert len(ctx.saved_tensors) == 1
            return grad_out

    with fwAD.dual_level():
        a_dual = fwAD.make_dual(a, t)
        out = Func.apply(a_dual)
        out.backward()

    torch.autograd.gradcheck(Func.apply, (a,), check_forward_ad=True)


def test_custom_function_forward_mode_non_differentiable(torch):
    fwAD = torch.autograd.forward_ad

    # returns differentiable type, marked non-differentiable
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            out = y.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out

        @staticmethod
        def jvp(ctx, x_tangent, y_tangent):
            return x_tangent, None

    x = torch.tensor(2.0)
    x_tangent = torch.tensor(1.0)
    y = torch.tensor(3.0)

    with fwAD.dual_level():
        x_dual = fwAD.make_dual(x, x_tangent)
        _, out2_dual = Func.apply(x_dual, y)
        assert fwAD.unpack_dual(out2_dual).tangent is None

    y = torch.tensor(3)

    # returns non-differentiable type, NOT marked non-differentiable
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_tangent, y_tangent):
            assert y_tangent is None
            return x_tangent, None

    with fwAD.dual_level():
        x_dual = fwAD.make_dual(x, x_tangent)
        _, out2_dual = Func.apply(x_dual, y)
        assert fwAD.unpack_dual(out2_dual).tangent is None

    class FuncWrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            out = y.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out

        @staticmethod
        def jvp(ctx, x_tangent, y_tangent):
            return x_tangent, x_tangent.clone()

    with fwAD.dual_level():
        x_dual = fwAD.make_dual(x, x_tangent)
        with pytest.raises(RuntimeError, match="You should return None at that position instead"):
            FuncWrong.apply(x_dual, y)

    # returns non-tensor
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone(), object(), x.clone()

        @staticmethod
        def jvp(ctx, x_tangent):
            return x_tangent, None, x_tangent

    with fwAD.dual_level():
        x_dual = fwAD.make_dual(x, x_tangent)
        out_dual, _, out2_dual = Func.apply(x_dual)
        assert_equal(fwAD.unpack_dual(out_dual).tangent, x_tangent)
        assert_equal(fwAD.unpack_dual(out2_dual).tangent, x_tangent)


def test_copy_forward_ad_broadcasting(torch):
    # copy_ allows the src to have a different shape from self as long as src is
    # broadcastable to self. Make sure forward AD handles this case.
    fwAD = torch.autograd.forward_ad
    primal = torch.rand(3, 3)
    tangent = torch.rand(3, 3)
    non_dual = torch.rand(1, 3, 3)

    with fwAD.dual_level():
        dual = fwAD.make_dual(primal, tangent)
        non_dual.copy_(dual)


def test_copy_forward_ad_same_layout_copies_grad(torch):
    fwAD = torch.autograd.forward_ad
    primal = torch.tensor([[3.0], [4.0]])
    tangent = torch.tensor([[5.0], [6.0]])

    with fwAD.dual_level():
        x_dual = fwAD.make_dual(primal, tangent)
        non_dual = torch.tensor([[1.0], [2.0]])
        non_dual.copy_(x_dual)
        assert fwAD.unpack_dual(non_dual).tangent is not tangent
