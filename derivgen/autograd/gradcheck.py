"""``gradcheck`` / ``gradgradcheck``: analytical gradients against float64 central differences.

Same signatures, defaults and failure message as ``torch.autograd.gradcheck``: the Jacobian of every
differentiable output with respect to every input that requires grad is built twice, column by column
from central differences ``(f(x + eps e_k) - f(x - eps e_k)) / 2 eps`` and row by row from
``autograd.grad`` with one-hot ``grad_outputs``, and the two must satisfy
``|analytical - numerical| <= atol + rtol * |numerical|``. On failure a ``GradcheckError`` (a
RuntimeError) gives torch's ``Jacobian mismatch for output i with respect to input j`` with both
matrices, followed by the worst element: which output element, which input element, both values.

``fast_mode=True`` compares ``v^T J u`` for random ``u``, ``v`` instead of whole Jacobians (two function
evaluations per input instead of two per element) and recomputes the full Jacobians for the report
when that fails.
"""
import warnings

import numpy as np

from derivgen.engine.api import grad as _grad
from derivgen.core.tensor import Tensor, replace_array
from derivgen.core.tensor_str import tensor_repr
from derivgen.autograd.transforms import jvp as _func_jvp
from derivgen.batching.autograd import grad as _vmap_aware_grad
from derivgen.batching.vmap import vmap as _vmap

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian", "get_analytical_jacobian"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _iter_tensors(x, only_requiring_grad=False):
    if isinstance(x, Tensor):
        if x.requires_grad or not only_requiring_grad:
            yield x
    elif isinstance(x, (list, tuple)):
        for e in x:
            yield from _iter_tensors(e, only_requiring_grad)


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if isinstance(o, Tensor) and o.requires_grad)


def _output_arrays(func, inputs, positions):
    """The values of the outputs at ``positions`` of ``func(*inputs)`` (copied: an output may alias an
    input that is about to be perturbed again), in float64 unless the output is of another floating dtype
    (kept so that a change of dtype under perturbation is seen; differences are taken in float64)."""
    outs = _as_tuple(func(*inputs))
    return [np.array(outs[p]._array, dtype=None if outs[p]._array.dtype.kind == "f" else np.float64, copy=True)
            for p in positions]


def _check_same_dtype_and_shape(a, b, eps):
    if a.shape != b.shape:
        raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs are perturbed by "
                             f"{eps}, but got: shapes derivgen.Size({list(a.shape)}) and "
                             f"derivgen.Size({list(b.shape)}).")
    if a.dtype != b.dtype:
        from derivgen.core.dtypes import from_numpy_dtype
        raise AssertionError(f"Expected `func` to return outputs with the same dtype when inputs are perturbed by "
                             f"{eps}, but got: dtypes {from_numpy_dtype(a.dtype)} and {from_numpy_dtype(b.dtype)}.")


class _Perturbed:
    """Gives a leaf a private contiguous copy of its data to perturb in place, restoring the original
    array afterwards (a leaf's data may be read-only or shared)."""

    def __init__(self, t):
        self.t = t

    def __enter__(self):
        self.orig = self.t._array
        replace_array(self.t, np.array(self.orig, copy=True, order="C"))
        return self.t._array.reshape(-1)

    def __exit__(self, *exc):
        replace_array(self.t, self.orig)
        return False


def get_numerical_jacobian(func, inputs, positions, diff_inputs, eps):
    """``jac[j][i]``: the (numel(input j), numel(output i)) central-difference Jacobian."""
    jac = []
    for t in diff_inputs:
        cols = None
        with _Perturbed(t) as flat:
            n = flat.size
            for k in range(n):
                v = flat[k]
                flat[k] = v + eps
                plus = _output_arrays(func, inputs, positions)
                flat[k] = v - eps
                minus = _output_arrays(func, inputs, positions)
                flat[k] = v
                if cols is None:
                    cols = [np.zeros((n, p.size)) for p in plus]
                for i, (p, m) in enumerate(zip(plus, minus)):
                    _check_same_dtype_and_shape(m, p, eps)
                    cols[i][k] = ((p - m) / (2 * eps)).reshape(-1)
        if cols is None:  # an empty input
            cols = [np.zeros((0, np.size(o))) for o in _output_arrays(func, inputs, positions)]
        jac.append(cols)
    return jac


def get_analytical_jacobian(outputs, diff_inputs):
    """``jac[j][i]`` from one ``autograd.grad`` call per output element (one-hot grad_outputs)."""
    jac = [[np.zeros((t._array.size, o._array.size)) for o in outputs] for t in diff_inputs]
    for i, o in enumerate(outputs):
        for m in range(o._array.size):
            onehot = np.zeros(o._array.size, dtype=o._array.dtype)
            onehot[m] = 1
            grads = _grad(o, diff_inputs, Tensor._make(onehot.reshape(o._array.shape)), retain_graph=True,
                                  allow_unused=True)
            for j, g in enumerate(grads):
                if g is not None:
                    _check_grad_attributes(g, diff_inputs[j], j)
                    jac[j][i][:, m] = np.asarray(g._array, dtype=np.float64).reshape(-1)
    return jac


def _check_grad_attributes(g, inp, j):
    if tuple(g._array.shape) != tuple(inp._array.shape):
        raise GradcheckError(f"Gradient has shape mismatch for input {j}: got {list(g._array.shape)}, expected "
                             f"{list(inp._array.shape)}")


def _mismatch_message(a, n, i, j, atol, rtol, outputs, diff_inputs):
    err = np.abs(a - n) - (atol + rtol * np.abs(n))
    k, m = np.unravel_index(int(np.argmax(err)), err.shape)
    in_idx = tuple(int(v) for v in np.unravel_index(k, diff_inputs[j]._array.shape))
    out_idx = tuple(int(v) for v in np.unravel_index(m, outputs[i]._array.shape))
    return (f"Jacobian mismatch for output {i} with respect to input {j},\n"
            f"numerical:{tensor_repr(Tensor._make(n))}\nanalytical:{tensor_repr(Tensor._make(a))}\n\n"
            f"The worst element is d(output {i}){list(out_idx)} / d(input {j}){list(in_idx)} "
            f"(input shape {list(diff_inputs[j]._array.shape)}, output shape {list(outputs[i]._array.shape)}): "
            f"numerical {n[k, m]:.10g}, analytical {a[k, m]:.10g}, |difference| {abs(a[k, m] - n[k, m]):.3g} > "
            f"atol + rtol * |numerical| = {atol + rtol * abs(n[k, m]):.3g}\n")


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """Check the gradients of ``func(*inputs)`` with respect to the inputs that require grad against
    central differences. Returns True, or raises ``GradcheckError`` (False with
    ``raise_exception=False``). Use float64 inputs: the default tolerances assume double precision."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    tupled = _as_tuple(inputs)
    diff_inputs = list(_iter_tensors(tupled, True))
    if not diff_inputs:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    for idx, t in enumerate(tupled):
        if isinstance(t, Tensor) and t.requires_grad and t._array.dtype != np.float64:
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", stacklevel=2)
    all_outs = _as_tuple(func(*tupled))
    positions = [p for p, o in enumerate(all_outs) if isinstance(o, Tensor) and o.requires_grad]
    outputs = [all_outs[p] for p in positions]
    # torch's order: the backward Jacobians, then the forward ones (a backward failure is the one reported),
    # then the checks that need backward only
    if check_backward_ad:
        res = _backward_jacobian_check(func, tupled, all_outs, positions, outputs, diff_inputs, eps, atol, rtol,
                                       nondet_tol, fast_mode, raise_exception)
        if res is not True:
            return res
    if check_forward_ad:
        res = _forward_check(func, tupled, all_outs, positions, diff_inputs, eps, atol, rtol, raise_exception)
        if res is not True:
            return res
        if check_undefined_grad:
            res = _check_undefined_tangent(func, tupled, raise_exception)
            if res is not True:
                return res
        if check_batched_forward_grad:
            res = _batched_forward_grad(func, tupled, raise_exception)
            if res is not True:
                return res
    if not check_backward_ad or not outputs:
        return True
    # the gradients must scale with grad_output (torch's _test_backward_mul_by_grad_output)
    zeros = [Tensor._make(np.zeros(o._array.shape, o._array.dtype)) for o in outputs]
    grads = _grad(outputs, diff_inputs, zeros, retain_graph=True, allow_unused=True)
    for j, g in enumerate(grads):
        if g is None:
            continue
        if check_grad_dtypes and g._array.dtype != diff_inputs[j]._array.dtype:
            return _fail("Gradient has dtype mismatch", raise_exception)
        if np.any(g._array != 0):
            return _fail("backward not multiplied by grad_output", raise_exception)
    if check_undefined_grad:
        res = _check_undefined_grad(outputs, raise_exception)
        if res is not True:
            return res
    if check_batched_grad:
        for i, o in enumerate(outputs):
            res = _batched_grad(tupled, o, i, raise_exception)
            if res is not True:
                return res
    return True


def _backward_jacobian_check(func, tupled, all_outs, positions, outputs, diff_inputs, eps, atol, rtol, nondet_tol,
                             fast_mode, raise_exception):
    """The Jacobians from backward against central differences, and the backward's reentrancy."""
    if not outputs:
        return _check_no_differentiable_outputs(func, tupled, all_outs, diff_inputs, eps, raise_exception)
    if fast_mode:
        ok = _fast_check(func, tupled, positions, outputs, diff_inputs, eps, atol, rtol)
        if not ok:
            res = _slow_check(func, tupled, positions, outputs, diff_inputs, eps, atol, rtol, raise_exception,
                              prefix="Gradcheck failed in fast mode (v^T J u differs for random u, v); the full "
                                     "Jacobians, recomputed in slow mode:\n\n")
            if res is not True:
                return res
    else:
        res = _slow_check(func, tupled, positions, outputs, diff_inputs, eps, atol, rtol, raise_exception)
        if res is not True:
            return res
    if nondet_tol >= 0:
        # reentrant: the same backward twice gives the same gradients
        rng = np.random.default_rng(0)
        gouts = [Tensor._make(rng.uniform(-1, 1, o._array.shape).astype(o._array.dtype)) for o in outputs]
        first = _grad(outputs, diff_inputs, gouts, retain_graph=True, allow_unused=True)
        second = _grad(outputs, diff_inputs, gouts, retain_graph=True, allow_unused=True)
        for a, b in zip(first, second):
            if (a is None) != (b is None) or (a is not None and np.max(np.abs(a._array - b._array), initial=0) > nondet_tol):
                return _fail("Backward is not reentrant, i.e., running backward with same input and grad_output "
                             "multiple times gives different values, although analytical gradient matches "
                             f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.",
                             raise_exception)
    return True


def _check_no_differentiable_outputs(func, tupled, all_outs, diff_inputs, eps, raise_exception):
    """No output requires grad: then no output may change when a differentiable input does."""
    tensor_pos = [p for p, o in enumerate(all_outs) if isinstance(o, Tensor)]
    for cols in get_numerical_jacobian(func, tupled, tensor_pos, diff_inputs, eps):
        for n in cols:
            if np.any(n != 0):
                return _fail("Numerical gradient for function expected to be zero", raise_exception)
    return True


def _check_undefined_tangent(func, tupled, raise_exception):
    from derivgen.autograd._forward_check import undefined_tangent_mismatch
    msg = undefined_tangent_mismatch(func, tupled)
    return True if msg is None else _fail(msg, raise_exception)


FAILED_BATCHED_GRAD_MSG = """
gradcheck or gradgradcheck failed while testing batched gradient computation.
This could have been invoked in a number of ways (via a test that calls
gradcheck/gradgradcheck directly or via an autogenerated test).

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `check_batched_grad=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `check_batched_grad=False` and/or `check_batched_gradgrad=False`.

If you're modifying an existing operator that supports batched grad computation,
or wish to make a new operator work with batched grad computation, please read
the following.

To compute batched grads (e.g., jacobians, hessians), we vmap over the backward
computation. The most common failure case is if there is a 'vmap-incompatible
operation' in the backward pass. Please see
NOTE: [How to write vmap-compatible backward formulas]
in the codebase for an explanation of how to fix this.
""".strip()

FAILED_BATCHED_GRAD_MSG_FWD_AD = """
gradcheck failed while testing batched gradient computation with forward-mode AD.
This test is enabled automatically when both `check_batched_grad=True`
and `check_forward_ad=True`, but can be disabled in the following ways
dependong on how the test was invoked (via a test that calls gradcheck
directly or via an autogenerated test).

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `check_batched_forward_grad=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `check_batched_forward_grad=False`
"""


def _failed_batched_msg(output_idx, input_idx, res, exp, is_forward_ad=False):
    return f"""
For output {output_idx} and input {input_idx}:

{FAILED_BATCHED_GRAD_MSG_FWD_AD if is_forward_ad else FAILED_BATCHED_GRAD_MSG}

Got:
{tensor_repr(res)}

Expected:
{tensor_repr(exp)}
""".strip()


def _stack(tensors):
    return Tensor._make(np.stack([t._array for t in tensors]))


def _batched_grad(tupled, output, output_idx, raise_exception):
    """torch's _test_batched_grad: vmap of the vector-Jacobian product over two random grad_outputs
    against the two products one by one."""
    diff = list(_iter_tensors(tupled, True))

    def vjp(v):
        grads = _vmap_aware_grad([output], diff, [v], retain_graph=True, allow_unused=True)
        return tuple(g if g is not None else Tensor._make(np.zeros(inp._array.shape, inp._array.dtype))
                     for g, inp in zip(grads, diff))
    rng = np.random.default_rng(0)
    grad_outputs = [Tensor._make(rng.standard_normal(output._array.shape).astype(output._array.dtype))
                    for _ in range(2)]
    expected = [_stack(shards) for shards in zip(*[vjp(g) for g in grad_outputs])]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="There is a performance drop")
        try:
            result = _vmap(vjp)(_stack(grad_outputs))
        except RuntimeError as ex:
            return _fail(f"While computing batched gradients, got: {ex}\n\n{FAILED_BATCHED_GRAD_MSG}", raise_exception)
    for input_idx, (res, exp) in enumerate(zip(result, expected)):
        if not np.allclose(res._array, exp._array):
            return _fail(_failed_batched_msg(output_idx, input_idx, res, exp), raise_exception)
    return True


def _batched_forward_grad(func, tupled, raise_exception):
    """torch's _test_batched_grad_forward_ad: vmap of the Jacobian-vector product over two random tangents
    of each input against the two products one by one."""
    for input_idx, current in enumerate(tupled):
        if not (isinstance(current, Tensor) and current.requires_grad and current.dtype.is_floating_point):
            continue
        primals = tuple(Tensor._make(t._array) if isinstance(t, Tensor) else t for t in tupled)

        def jvp(tangent, input_idx=input_idx, primals=primals):
            def f(x):
                call = list(primals)
                call[input_idx] = x
                return func(*call)
            _, out = _func_jvp(f, (primals[input_idx],), (tangent,))
            return _as_tuple(out)
        rng = np.random.default_rng(input_idx)
        tangents = [Tensor._make(rng.standard_normal(current._array.shape)) for _ in range(2)]
        expected = [_stack(shards) for shards in zip(*[jvp(t) for t in tangents])]
        try:
            result = _vmap(jvp)(_stack(tangents))
        except RuntimeError as ex:
            return _fail(f"While computing batched gradients, got: {ex}\n\n{FAILED_BATCHED_GRAD_MSG_FWD_AD}",
                         raise_exception)
        for res, exp in zip(result, expected):
            if not np.allclose(res._array, exp._array):
                return _fail(_failed_batched_msg(input_idx, input_idx, res, exp, is_forward_ad=True), raise_exception)
    return True


def _forward_check(func, tupled, all_outs, positions, diff_inputs, eps, atol, rtol, raise_exception):
    """The Jacobians from forward mode against central differences, for the outputs that require grad when
    the inputs do (as torch's: an output the op marks non-differentiable is not checked)."""
    from derivgen.autograd._forward_check import forward_jacobian, mismatch
    if not positions:
        return _check_no_differentiable_outputs(func, tupled, all_outs, diff_inputs, eps, raise_exception)
    forward = forward_jacobian(func, tupled, positions, diff_inputs)
    numerical = get_numerical_jacobian(func, tupled, positions, diff_inputs, eps)
    for j in range(len(diff_inputs)):
        for i in range(len(positions)):
            a, n = forward[j][i], numerical[j][i]
            if a.size and not np.allclose(a, n, rtol=rtol, atol=atol):
                return _fail(mismatch(a, n, i, j), raise_exception)
    return True


def _slow_check(func, tupled, positions, outputs, diff_inputs, eps, atol, rtol, raise_exception, prefix=""):
    analytical = get_analytical_jacobian(outputs, diff_inputs)
    numerical = get_numerical_jacobian(func, tupled, positions, diff_inputs, eps)
    for i in range(len(outputs)):
        for j in range(len(diff_inputs)):
            a, n = analytical[j][i], numerical[j][i]
            if a.size == 0 and n.size == 0:
                continue
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                return _fail(prefix + _mismatch_message(a, n, i, j, atol, rtol, outputs, diff_inputs), raise_exception)
    return True


def _fast_check(func, tupled, positions, outputs, diff_inputs, eps, atol, rtol):
    rng = np.random.default_rng(1234)
    us = []
    for t in diff_inputs:
        u = rng.standard_normal(t._array.shape)
        us.append(u / max(np.linalg.norm(u), 1e-12))
    vs = [rng.standard_normal(o._array.shape) for o in outputs]
    gouts = [Tensor._make(v.astype(o._array.dtype)) for v, o in zip(vs, outputs)]
    for i, o in enumerate(outputs):
        grads = _grad(o, diff_inputs, gouts[i], retain_graph=True, allow_unused=True)
        for j, t in enumerate(diff_inputs):
            a = 0.0 if grads[j] is None else float(np.sum(np.asarray(grads[j]._array, np.float64) * us[j]))
            with _Perturbed(t) as flat:
                base = flat.copy()
                flat[:] = base + eps * us[j].reshape(-1)
                plus = _output_arrays(func, tupled, [positions[i]])[0]
                flat[:] = base - eps * us[j].reshape(-1)
                minus = _output_arrays(func, tupled, [positions[i]])[0]
                flat[:] = base
            _check_same_dtype_and_shape(minus, plus, eps)
            n = float(np.sum((plus - minus) / (2 * eps) * vs[i]))
            if not abs(a - n) <= atol + rtol * abs(n):
                return False
    return True


def _check_undefined_grad(outputs, raise_exception):
    """Each output's node must accept undefined (None) gradients and return None or zeros."""
    for o in outputs:
        fn = o.grad_fn
        if fn is None:
            continue
        try:
            res = fn._apply_fast([None] * fn._n_inputs, fn._needs())
        except Exception as exc:  # noqa: BLE001
            return _fail(f"Expected backward function to handle undefined output grads. Please look at \"Notes about "
                         f"undefined output gradients\" in \"tools/autograd/derivatives.yaml\" ({fn.name()} raised "
                         f"{type(exc).__name__}: {exc})", raise_exception)
        for g in res:
            if g is not None and np.any(np.asarray(g) != 0):
                return _fail("Expected all input grads to be undefined or zero when all output grads are undefined "
                             f"or zero ({fn.name()} returned a non-zero gradient)", raise_exception)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check second derivatives: gradcheck of ``(inputs, grad_outputs) -> autograd.grad(func(*inputs),
    inputs, grad_outputs, create_graph=True)``, i.e. of the backward graph built by ``create_graph=True``.
    Random ``grad_outputs`` (uniform in [-1, 1], requiring grad) are drawn when none are given.
    ``check_rev_over_rev`` differentiates that backward graph in reverse mode, ``check_fwd_over_rev`` in
    forward mode (dual inputs and grad_outputs pushed through the backward pass), as torch's."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        outs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grads = []
        for o in outs:
            dtype = o._array.dtype if o._array.dtype.kind == "f" else np.float64
            g = Tensor._make(rng.uniform(-1, 1, o._array.shape).astype(dtype))
            g.requires_grad_(True)
            tupled_grads.append(g)
        tupled_grads = tuple(tupled_grads)
    else:
        tupled_grads = _as_tuple(grad_outputs)
    n_out = len(tupled_grads)
    n_in = len(tupled_inputs)
    # gradcheck's forward-mode check hands new_func detached dual tensors: which arguments require grad is
    # remembered here and restored on them, so that the backward graph can be built over the duals
    diff_input_idx = {i for i, x in enumerate(tupled_inputs) if isinstance(x, Tensor) and x.requires_grad}
    diff_grad_idx = {i for i, x in enumerate(tupled_grads) if isinstance(x, Tensor) and x.requires_grad}
    list_input_idx = {i for i, x in enumerate(tupled_inputs)
                      if isinstance(x, (list, tuple)) and any(True for _ in _iter_tensors(x, True))}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_input_idx and not x.requires_grad else x
                           for i, x in enumerate(args[:n_in]))
        outputs = _differentiable_outputs(func(*input_args))
        grads = tuple(x.requires_grad_() if i in diff_grad_idx and not x.requires_grad else x
                      for i, x in enumerate(args[n_in:]))
        diff_input_args = []
        for i, x in enumerate(input_args):
            if i in diff_input_idx:
                diff_input_args.append(x)
            elif i in list_input_idx:
                diff_input_args.extend(_iter_tensors(x, True))
        grad_inputs = _grad(outputs, diff_input_args, grads, create_graph=True, allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(new_func, tupled_inputs + tupled_grads, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev)
