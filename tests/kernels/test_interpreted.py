"""The array forms of the generated kernels (derivgen/kernels/interpreted.py): every kernel's form gives
its compiled loop's results on the same operands, NaN, infinities and signed zeros included, in every
loop variant's calling convention; and the budget decides which calls a fresh process runs through them.
The runtime's hand-written loops with array forms (clamp, column sums, the classifier head, SGD and
Adam) give their loops' results too, and first training steps run on them without Numba.

The test process itself runs every kernel compiled (tests/conftest.py stops the interpreted calls), so
the compiled loops here are Numba's.
"""
import json

import numpy as np
import pytest

from derivgen.kernels import interpreted
from derivgen.kernels.jit import LazyKernel
from derivgen.warmup import _kernels

KERNELS = dict(_kernels())
WITH_FORM = sorted(name for name, k in KERNELS.items() if isinstance(k.k1d, LazyKernel) and k.k1d.interpreted)

# values that reach each branch of the formulas: signed zeros, the usual clamp and threshold bounds,
# both sides of 1 and -1, infinities, NaN, and a spread of ordinary values
_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 6.0, -3.0, 20.0, -20.0, 1e-3, -1e-3,
            np.inf, -np.inf, np.nan]
# scalar arguments (alpha, beta, min, max, exponent, ...): ordinary values of either sign, and 1
_SCALARS = [(0.5, 2.0, -1.5, 1.0), (2.0, -0.5, 3.0, 0.25), (1.0, 1.0, 1.0, 1.0)]


def _operands(k, dtype, n=64, seed=0):
    rng = np.random.default_rng(seed)
    base = np.concatenate([np.array(_SPECIAL), np.linspace(-4, 4, n - len(_SPECIAL))])
    return [rng.permutation(base).astype(dtype) for _ in range(k.n_arrays)]


def _tolerance(dtype):
    # numpy's and Numba's exp/log/tanh may round the last bit apart; a formula's cancellation
    # (``exp(x) - 1`` near 0) turns that into a small absolute difference
    return dict(rtol=2e-5, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12)


def _assert_same(got, want, dtype, what):
    assert got.dtype == want.dtype, what
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    np.testing.assert_allclose(got, want, equal_nan=True, err_msg=what, **_tolerance(dtype))
    # the same infinities, and zeros of the same sign where the loop made an exact zero
    exact = np.isinf(want) | (want == 0)
    np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(want[exact]), err_msg=what)
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)], err_msg=what)


def _out_dtype(k, dtype):
    return np.bool_ if k.returns_bool else dtype


def test_all_but_the_functions_numpy_lacks_have_an_array_form():
    without = sorted(set(KERNELS) - set(WITH_FORM))
    assert without == ["erf_forward", "erfc_forward"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", WITH_FORM)
def test_array_form_matches_the_compiled_loop(name, dtype):
    k = KERNELS[name]
    arrays = _operands(k, dtype)
    zero = np.dtype(dtype).type(0)
    for scalars in _SCALARS:
        numbers = [np.dtype(dtype).type(v) for v in scalars[:k.n_scalars]]
        want = np.empty(64, _out_dtype(k, dtype))
        k.k1d.dispatcher(want, *arrays, *numbers, zero)
        got = np.empty_like(want)
        k.k1d.interpreted(got, *arrays, *numbers, zero)
        _assert_same(got, want, dtype, f"{name} {np.dtype(dtype)} scalars {numbers}")


@pytest.mark.parametrize("name", WITH_FORM)
def test_every_variant_calls_the_form_as_it_calls_its_loop(name):
    """The strided, bias-row, in-place and number-operand calling conventions of each variant, against
    the compiled 1-D loop on the same values made contiguous."""
    k = KERNELS[name]
    dtype = np.float64
    zero = np.float64(0)
    numbers = [np.float64(v) for v in _SCALARS[0][:k.n_scalars]]
    rows, cols = 4, 16
    mats = [a.reshape(cols, rows).T for a in _operands(k, dtype)]   # (4, 16), strided
    want = np.empty(rows * cols, _out_dtype(k, dtype))
    k.k1d.dispatcher(want, *[np.ascontiguousarray(m).reshape(-1) for m in mats], *numbers, zero)
    want = want.reshape(rows, cols)

    got = np.empty((rows, cols), want.dtype)
    k.k2d.interpreted(got, *mats, *numbers, zero)
    _assert_same(got, want, dtype, f"{name} _2d")
    got = np.empty((rows, cols), want.dtype)
    k.k2d_parallel.interpreted(got, *mats, *numbers, zero)
    _assert_same(got, want, dtype, f"{name} _2d_parallel")

    if k.n_arrays:
        # one operand as a number (a wrapped Python number, read through _elem)
        flat = [np.ascontiguousarray(m).reshape(-1) for m in mats]
        first = flat[0][5]
        ops = [first] + flat[1:]
        want_n = np.empty(rows * cols, want.dtype)
        k.k1d.dispatcher(want_n, *ops, *numbers, zero)
        got_n = np.empty_like(want_n)
        k.k1d_parallel.interpreted(got_n, *ops, *numbers, zero)
        _assert_same(got_n, want_n, dtype, f"{name} _1d with a number")

    if k.inplace is not None and not k.returns_bool:
        target = np.ascontiguousarray(mats[0]).reshape(-1).copy()
        others = [np.ascontiguousarray(m).reshape(-1) for m in mats[1:]]
        k.inplace.interpreted(target, *others, *numbers, zero)
        _assert_same(target, want.reshape(-1), dtype, f"{name} _inplace")

    if k.rows is not None:
        # the first operand a full matrix, the others one row each, read again for every row
        full = np.ascontiguousarray(mats[0])
        row_ops = [np.ascontiguousarray(m[1:2]) for m in mats[1:]]
        want_r = np.empty(rows * cols, want.dtype)
        k.k1d.dispatcher(want_r, full.reshape(-1), *[np.tile(r, (rows, 1)).reshape(-1) for r in row_ops],
                         *numbers, zero)
        got_r = np.empty((rows, cols), want.dtype)
        args = [full, 1] + [v for r in row_ops for v in (r, 0)]
        k.rows.interpreted(got_r, *args, *numbers, zero)
        _assert_same(got_r, want_r.reshape(rows, cols), dtype, f"{name} _rows")


def test_an_interpreted_call_raises_no_floating_point_warning():
    k = KERNELS["log_forward"]
    x = np.array([-1.0, 0.0, 1.0])
    out = np.empty(3)
    with np.errstate(all="raise"):
        k.k1d.interpreted(out, x, np.float64(0))
    np.testing.assert_array_equal(np.isnan(out), [True, False, False])
    assert out[1] == -np.inf


_FRESH = """
import json, sys
import numpy as np
import derivgen as torch
from derivgen.kernels import interpreted
x = torch.tensor(np.linspace(-2, 2, 8), requires_grad=True)
loss = (x.sigmoid() * x.tanh() + (-(x * x)).exp()).sum()
loss.backward()
first = {"numba": "numba" in sys.modules, "active": interpreted.state.active, "calls_left": interpreted.state.calls,
         "grad": x.grad.tolist(), "loss": loss.item()}
rest = []
for step in range(40):
    x.grad = None
    (x.sigmoid() * x.tanh() + (-(x * x)).exp()).sum().backward()
    rest.append("numba" in sys.modules)
first["numba_after"] = rest
first["grad_after"] = x.grad.tolist()
float((torch.ones(200000, dtype=torch.float64) * 2).sum())
first["big_numba"] = "numba" in sys.modules
print(json.dumps(first))
"""


def _fresh(python_runner, env):
    res = python_runner(_FRESH, env=env)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def _reference():
    import derivgen as torch
    x = torch.tensor(np.linspace(-2, 2, 8), requires_grad=True)
    loss = (x.sigmoid() * x.tanh() + (-(x * x)).exp()).sum()
    loss.backward()
    return loss.item(), x.grad.tolist()


def test_a_fresh_process_runs_small_programs_without_numba_until_the_budget_is_spent(python_runner):
    out = _fresh(python_runner, {"DERIVGEN_INTERPRETED_CALLS": "100"})
    loss, grad = _reference()
    assert out["numba"] is False and out["active"] is True
    # each elementwise forward and each elementwise VJP of the expression is one call
    assert 8 <= 100 - out["calls_left"] <= 20
    np.testing.assert_allclose(out["grad"], grad, rtol=1e-12)
    assert out["loss"] == pytest.approx(loss, rel=1e-12)
    # once the 100 calls are spent, the next call loads Numba, and every later step runs compiled
    spent = out["numba_after"].index(True)
    assert 0 < spent < 40 and all(out["numba_after"][spent:])
    np.testing.assert_allclose(out["grad_after"], grad, rtol=1e-12)


def test_a_large_call_or_a_zero_budget_loads_numba_at_once(python_runner):
    out = _fresh(python_runner, {"DERIVGEN_INTERPRETED_CALLS": "0"})
    assert out["numba"] is True and out["active"] is False
    out = _fresh(python_runner, {"DERIVGEN_INTERPRETED_CALLS": "100000"})
    assert out["numba"] is False and out["numba_after"] == [False] * 40
    assert out["big_numba"] is True  # 200,000 elements: past settings.small_array, so compiled


def test_admit_counts_calls_and_elements_and_refuses_what_the_forms_do_not_cover(monkeypatch):
    monkeypatch.setattr(interpreted, "state", interpreted._Budget())
    interpreted.state.active, interpreted.state.calls, interpreted.state.elements = True, 3, 100
    f8 = np.empty(10)
    assert interpreted.admit((f8, f8, np.float64(0)))
    assert interpreted.state.calls == 2 and interpreted.state.elements == 90
    assert not interpreted.admit((np.empty(10, np.int64), f8, np.int64(0)))      # an integer kernel
    assert not interpreted.admit((f8, np.empty(10, np.int32), np.float64(0)))    # an integer operand
    assert not interpreted.admit((np.empty(10, np.float16), np.float16(0)))      # float16
    assert interpreted.state.calls == 2 and interpreted.state.active
    assert not interpreted.admit((np.empty(95), np.float64(0)))                  # past the elements left
    assert not interpreted.state.active
    assert not interpreted.admit((f8, f8, np.float64(0)))                        # and nothing after


def test_making_a_dispatcher_ends_the_interpreted_calls(monkeypatch):
    monkeypatch.setattr(interpreted, "state", interpreted._Budget())
    interpreted.state.active = True
    k = KERNELS["sigmoid_forward"]
    LazyKernel(k.k1d.py_func, {}).dispatcher
    assert not interpreted.state.active


# ---- the runtime's hand-written loops ---------------------------------------------------------------

def _specials(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    base = np.concatenate([np.array(_SPECIAL), rng.uniform(-4, 4, max(0, n - len(_SPECIAL)))])[:n]
    return rng.permutation(base).astype(dtype).reshape(shape)


def _both(loop, make_args):
    """The loop's compiled and array-form results on two fresh copies of the same arguments: (returned
    value, arguments after the call) for each."""
    results = []
    for run in (loop.dispatcher, loop.interpreted):
        args = make_args()
        results.append((run(*args), args))
    return results


def _same_bits(got, want, what):
    assert got.dtype == want.dtype, what
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=what)


_DTYPES = pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])


@_DTYPES
@pytest.mark.parametrize("rows", [1, 7])
def test_column_sums_form_adds_the_rows_bit_for_bit_as_the_loop(dtype, rows):
    from derivgen.kernels.loops import column_sums
    g = _specials(dtype, (rows, 9), seed=rows)
    g[:, 0] = np.linspace(1e7, 1, rows)  # a column whose sum depends on the order of the additions
    (_, (_, want)), (_, (_, got)) = _both(column_sums, lambda: (g.copy(), np.empty(9, dtype)))
    _same_bits(got, want, "column_sums")


_BOUNDS = [(-1.0, 1.0, True, True), (0.0, 0.0, True, False), (0.0, 0.5, False, True), (2.0, -2.0, True, True),
           (-0.0, 0.0, True, True), (np.nan, 1.0, True, True), (0.0, 0.0, False, False)]


@_DTYPES
@pytest.mark.parametrize("bounds", _BOUNDS, ids=lambda b: f"{b[0]}_{b[1]}_{int(b[2])}{int(b[3])}")
def test_clamp_forms_select_as_the_loops(dtype, bounds):
    from derivgen.kernels import loops
    t = np.dtype(dtype).type
    lo, hi, has_lo, has_hi = t(bounds[0]), t(bounds[1]), bounds[2], bounds[3]
    x = _specials(dtype, (40,), seed=3)
    g = _specials(dtype, (40,), seed=4)
    (_, (*_, want)), (_, (*_, got)) = _both(
        loops._clamp_flat, lambda: (x.copy(), lo, hi, has_lo, has_hi, np.empty(40, dtype)))
    _same_bits(got, want, "clamp")
    (_, (want, *_)), (_, (got, *_)) = _both(loops._clamp_flat_inplace, lambda: (x.copy(), lo, hi, has_lo, has_hi))
    _same_bits(got, want, "clamp_")
    (_, (*_, want)), (_, (*_, got)) = _both(
        loops._clamp_grad_flat, lambda: (g.copy(), x.copy(), lo, hi, has_lo, has_hi, t(0), np.empty(40, dtype)))
    _same_bits(got, want, "clamp gradient")


def _logits(dtype):
    x = _specials(dtype, (6, 10), seed=5)
    x[0] = np.linspace(-3, 3, 10)                    # an ordinary row
    x[1] = -np.inf                                   # every class impossible
    x[2, 3] = np.inf
    x[3] = np.linspace(80, 90, 10) if dtype == np.float32 else np.linspace(700, 720, 10)  # exp overflows unshifted
    x[4, :] = 1.0                                    # equal logits
    return x


@_DTYPES
def test_log_softmax_row_forms_match_the_loops(dtype):
    from derivgen.ops.forwards import _nn_kernels as nn
    x = _logits(dtype)
    (_, (_, want)), (_, (_, got)) = _both(nn.log_softmax_rows, lambda: (x.copy(), np.empty_like(x)))
    _assert_same(got, want, dtype, "log_softmax rows")
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    grad = _specials(dtype, x.shape, seed=6)
    grad[0] = np.linspace(-1, 1, 10)
    out = np.where(np.isfinite(want), want, dtype(-1.0)).astype(dtype)
    (_, (*_, want_b)), (_, (*_, got_b)) = _both(nn.log_softmax_backward_rows,
                                               lambda: (grad.copy(), out.copy(), np.empty_like(x)))
    _assert_same(got_b, want_b, dtype, "log_softmax backward rows")


@_DTYPES
@pytest.mark.parametrize("targets", [[3, 0, 9, -100, 2, 9], [-100] * 6, [1, 2, 10, 0, -1, 3], [4, -3, 0, 0, 0, 0]],
                         ids=["valid", "all_ignored", "out_of_range", "negative"])
def test_nll_row_forms_match_the_loops(dtype, targets):
    from derivgen.ops.forwards import _nn_kernels as nn
    x = _specials(dtype, (30, 10), seed=7)
    # column 0, which the rows after the sixth pick, holds a sum whose value depends on its order
    x[:, 0] = np.resize(np.array([1e8, 1, -1e8, 3, 0.25, 1e-8, -7, 1e6], dtype), 30)
    target = np.array(targets + [0] * 24, np.int64)
    (want, _), (got, _) = _both(nn.nll_sum_rows, lambda: (x.copy(), target, -100))
    assert type(got[0]) is float and got[1:] == want[1:]
    assert np.float64(got[0]).tobytes() == np.float64(want[0]).tobytes()
    t = np.dtype(dtype).type
    for g in (_specials(dtype, (30,), seed=8), np.array([2.5], dtype)):
        (want, (want_out, *_)), (got, (got_out, *_)) = _both(
            nn.nll_scatter_rows, lambda: (np.zeros(x.shape, dtype), target, g, t(-1 / 3), -100))
        assert got == want
        _same_bits(got_out, want_out, "nll scatter")


# a*b = 2**-24 + 243451 * 2**-71 exactly, so 1 + a*b lies just above float32's halfway point between 1
# and 1 + 2**-23 but rounds to that halfway point in float64: rounding to float64 first, then to
# float32, gives 1.0; the one rounding of fma gives 1 + 2**-23
_DOUBLE_ROUNDING = (np.float32(11663283 / 2**23), np.float32(12066713 / 2**48), np.float32(1.0))


def test_fma32_rounds_once_where_rounding_through_float64_rounds_twice():
    from derivgen.kernels.array_helpers import _fma32
    from derivgen.optim._kernels import add_scaled
    a, b, c = _DOUBLE_ROUNDING
    assert np.float32(np.float64(a) * np.float64(b) + np.float64(c)) == 1.0  # the twice-rounded sum
    assert _fma32(a, b, c) == np.float32(1 + 2**-23)
    # against the compiled fma on that case, its mirror images and a spread of ordinary and special values
    rng = np.random.default_rng(11)
    n = 4000
    x = np.concatenate([[a, -a, a, -a], rng.standard_normal(n).astype(np.float32), _specials(np.float32, (18,), 1)])
    y = np.concatenate([[b, b, -b, -b], (rng.standard_normal(n) * 1e-3).astype(np.float32),
                        _specials(np.float32, (18,), 2)])
    z = np.concatenate([[c, -c, -c, c], rng.standard_normal(n).astype(np.float32), _specials(np.float32, (18,), 3)])
    for alpha in (np.float32(1.0), np.float32(-0.37), np.float32(3e-8)):
        want = z.copy()
        add_scaled.dispatcher(want, x * y, alpha)  # fma(x*y, alpha, z)
        got = _fma32(x * y, alpha, z)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        finite = ~np.isnan(want)
        _same_bits(got[finite], want[finite], f"fma alpha {alpha}")
    want = z.copy()
    got = _fma32(x, y, z)
    for i in range(x.size):  # one element at a time through the loop, for two array operands
        cell = z[i:i + 1].copy()
        add_scaled.dispatcher(cell, x[i:i + 1], y[i])
        want[i] = cell[0]
    finite = ~np.isnan(want)
    _same_bits(got[finite], want[finite], "fma of three arrays")


def _optimizer_state(seed, n=300):
    rng = np.random.default_rng(seed)
    param = np.concatenate([_specials(np.float32, (18,), seed), rng.standard_normal(n - 18)]).astype(np.float32)
    grad = np.concatenate([_specials(np.float32, (18,), seed + 1), rng.standard_normal(n - 18)]).astype(np.float32)
    avg = np.abs(rng.standard_normal(n)).astype(np.float32)
    return param, grad, rng.standard_normal(n).astype(np.float32), avg


def _bits_or_nan(got, want, what):
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=what)
    _same_bits(got[~np.isnan(want)], want[~np.isnan(want)], what)


@pytest.mark.parametrize("momentum,nesterov,first",
                         [(0.0, False, False), (0.9, False, True), (0.9, False, False), (0.9, True, False)],
                         ids=["plain", "first", "momentum", "nesterov"])
@pytest.mark.parametrize("weight_decay,maximize", [(0.0, False), (0.01, False), (0.01, True)],
                         ids=["no_decay", "decay", "maximize"])
def test_sgd_form_updates_float32_bit_for_bit_as_the_loop(momentum, nesterov, first, weight_decay, maximize):
    from derivgen.optim._kernels import sgd_update
    f = np.float32
    param, grad, buf, _ = _optimizer_state(1)
    buf = buf if momentum else np.empty(0, f)
    lr, dampening = f(0.1), 0.1

    def args():
        return (param.copy(), grad.copy(), buf.copy(), lr, f(weight_decay), f(momentum), f(1 - dampening),
                nesterov, maximize, first)
    (_, want), (_, got) = _both(sgd_update, args)
    _bits_or_nan(got[0], want[0], "param")
    _bits_or_nan(got[2], want[2], "momentum buffer")


@pytest.mark.parametrize("amsgrad", [False, True], ids=["adam", "amsgrad"])
@pytest.mark.parametrize("weight_decay,decoupled,maximize", [(0.0, False, False), (0.01, False, False),
                                                             (0.01, True, False), (0.0, False, True)],
                         ids=["plain", "l2", "adamw", "maximize"])
@pytest.mark.parametrize("beta1", [0.9, 0.3], ids=["beta1_0.9", "beta1_0.3"])  # both branches of lerp
def test_adam_form_updates_float32_bit_for_bit_as_the_loop(amsgrad, weight_decay, decoupled, maximize, beta1):
    from derivgen.optim._kernels import adam_update
    f = np.float32
    param, grad, exp_avg, exp_avg_sq = _optimizer_state(2)
    max_sq = (exp_avg_sq * f(1.5)) if amsgrad else np.empty(0, f)
    max_sq[:3] = np.nan if amsgrad else max_sq[:3]
    lr, beta2, step = 1e-3, 0.999, 3

    def args():
        w1 = f(1 - beta1)
        return (param.copy(), grad.copy(), exp_avg.copy(), exp_avg_sq.copy(), max_sq.copy(), amsgrad, maximize,
                f(weight_decay), decoupled, f(1 - lr * weight_decay), w1, f(1) - w1, f(beta2), f(1 - beta2),
                f(np.sqrt(1 - beta2 ** step)), f(1e-8), f(-lr / (1 - beta1 ** step)))
    (_, want), (_, got) = _both(adam_update, args)
    for k, what in ((0, "param"), (2, "exp_avg"), (3, "exp_avg_sq"), (4, "max_exp_avg_sq")):
        _bits_or_nan(got[k], want[k], what)


def test_optimizer_forms_take_float32_only():
    from derivgen.optim._kernels import adam_update, sgd_update
    f8 = np.empty(4)
    assert not sgd_update.interpreted.admits((f8,))
    assert not adam_update.interpreted.admits((f8,))


_FIRST_PROGRAMS = """
import json, sys
import numpy as np
import derivgen as torch
rng = np.random.default_rng(0)
# the two-layer-net tutorial: mm, clamp, pow, sum, and the manual update
x = torch.from_numpy(rng.standard_normal((64, 100)).astype(np.float32))
y = torch.from_numpy(rng.standard_normal((64, 10)).astype(np.float32))
w1 = torch.from_numpy((rng.standard_normal((100, 30)) * 0.1).astype(np.float32)).requires_grad_()
w2 = torch.from_numpy((rng.standard_normal((30, 10)) * 0.1).astype(np.float32)).requires_grad_()
losses = []
for step in range(3):
    loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
    loss.backward()
    with torch.no_grad():
        w1 -= 1e-4 * w1.grad
        w2 -= 1e-4 * w2.grad
        w1.grad.zero_()
        w2.grad.zero_()
    losses.append(loss.item())
# a classifier: Linear layers with biases (their gradients are column sums), ReLU, cross entropy
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(20, 16), torch.nn.ReLU(), torch.nn.Linear(16, 5))
data = torch.from_numpy(rng.standard_normal((32, 20)).astype(np.float32))
labels = torch.from_numpy(rng.integers(0, 5, 32))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(2):
    opt.zero_grad()
    ce = torch.nn.functional.cross_entropy(model(data), labels)
    ce.backward()
    opt.step()
adam = torch.optim.AdamW([w1], lr=1e-3)
w1.grad = torch.ones_like(w1)
adam.step()
print(json.dumps({"numba": "numba" in sys.modules, "losses": losses, "ce": ce.item(),
                  "grads": [p.grad.numpy().astype(float).ravel().tolist() for p in model.parameters()],
                  "w1": w1.detach().numpy().astype(float).ravel().tolist()}))
"""


def test_first_training_steps_run_without_numba(python_runner):
    """The tutorial's loop, a classifier's training steps (SGD with momentum) and an AdamW step meet only
    loops that have array forms, and give what the compiled loops give (a budget of 0: compiled from the
    first call)."""
    def run(calls):
        res = python_runner(_FIRST_PROGRAMS, env={"DERIVGEN_INTERPRETED_CALLS": calls})
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout.strip().splitlines()[-1])
    fresh, compiled = run("2000"), run("0")
    assert fresh["numba"] is False and compiled["numba"] is True
    np.testing.assert_allclose(fresh["losses"], compiled["losses"], rtol=1e-5)
    assert fresh["ce"] == pytest.approx(compiled["ce"], rel=1e-5)
    for got, want in zip(fresh["grads"], compiled["grads"]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(fresh["w1"], compiled["w1"], rtol=1e-5, atol=1e-7)


@_DTYPES
def test_erf_form_matches_the_loop(dtype):
    from derivgen.kernels.loops import _erf_flat
    x = np.concatenate([_specials(dtype, (18,), 9), np.linspace(-6, 6, 301).astype(dtype),
                        np.array([1e-30, -1e-30, 5e-324 if dtype == np.float64 else 1e-45], dtype)])
    (_, (_, want)), (_, (_, got)) = _both(_erf_flat, lambda: (x.copy(), np.empty_like(x)))
    _assert_same(got, want, dtype, "erf")
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
